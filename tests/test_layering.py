"""The import graph says what the layout promises: data flows one way, so imports go one way.

Read from the source with ``ast`` (nothing is imported): every ``import``/``from … import`` of a
robustlab module, at the top of a file or inside a function (a lazy import is still a
dependency), and every *string import*: a string constant that names a robustlab module
(``"robustlab.integrations.textattack"``, ``"robustlab.studies.eval.report:eval_section"``) is
code loaded by name (``importlib.import_module``, a registry of plugins, ``lazy_exports``), so it
is a dependency too. Docstrings are prose, not imports. Four rules:

* no cycles between modules;
* no private name (``_x``) imported from another module: what is shared is public;
* packages are layered: each may import only packages listed before it in :data:`LAYERS`
  (the package itself aside). A new package must be placed in the list;
* study slices (``robustlab.studies.<kind>``) never import each other: what two kinds share
  lives below them (``runs``, ``options``, ``models``, …), so a kind can be added, moved or
  removed as one package.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "robustlab"

#: lowest first: a package imports only packages before it
LAYERS = (
    "version",  # robustlab.version: recorded by every layer
    "errors", "textfmt", "lazy", "trust", "procs", "signature", "resources",
    "outputs",
    "perturbations",  # the perturbations themselves and the table they register in
    "integrations",  # TextAttack / NL-Augmenter / CheckList perturbations both ways
    "perturbation-registry",  # perturbations.registry: loads the built-ins and integrations by name
    "metrics", "data", "tasks",
    "endpoints",  # a model behind HTTP: its card, kinds and client (the store is handed in)
    "models",
    "victims",  # integrations.victims: a robustlab classifier as a TextAttack model wrapper
    "options",
    "runs", "plots",
    "report-blocks",  # report.doc/load/format/sections: the blocks every study's section is made of
    "studies", "recipes", "api",
    "report", "tui", "commands", "cli", "__main__",
    "adapters",  # the old import paths of integrations/perturbations, kept for users
    "robustlab",  # the package's own __init__: the façade (its version, robustlab.run)
)


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = f.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are prose (docstrings, bare string statements) or
    name something other than a module (an entry-point ``group=``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "group" and \
                isinstance(node.value, ast.Constant):
            out.add(id(node.value))
        for stmt in getattr(node, "body", ()) if isinstance(getattr(node, "body", None),
                                                             list) else ():
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                out.add(id(stmt.value))
    return out


def _string_import(text: str, modules: dict[str, Path], *, prefix: bool = False) -> str | None:
    """The robustlab module a string loads by name: ``robustlab.a.b``, ``robustlab.a.b:Name``,
    ``robustlab.a.b.Name``, or (``prefix``) the fixed start of an f-string naming a module in a
    package (``f"robustlab.commands.{name}"``). A file name (``robustlab.tcss``) or a message
    (``"robustlab.run: unknown …"``) is not a module path."""
    pattern = r"robustlab(\.\w+)*\.$" if prefix else r"robustlab(\.\w+)+(:\w+)?$"
    if not re.fullmatch(pattern, text):
        return None
    name = text.split(":", 1)[0].rstrip(".")
    if name in modules and name != "robustlab":
        return name
    parent = name.rpartition(".")[0]  # robustlab.a.b.Name: an attribute of a module
    return parent if parent in modules and parent != "robustlab" and not prefix else None


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str]]:
    """(imported module, imported name or '') for each robustlab import in ``path``: import
    statements anywhere in the file, and strings naming a module (module docstring)."""
    is_pkg = path.name == "__init__.py"
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values and \
                isinstance(node.values[0], ast.Constant):  # f"robustlab.commands.{name}"
            target = _string_import(str(node.values[0].value), modules, prefix=True)
            if target:
                found.append((target, ""))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                id(node) not in prose:
            target = _string_import(node.value, modules)
            if target:
                found.append((target, ""))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")[: None if is_pkg else -1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([base] if base else [])])
            if base.split(".")[0] != "robustlab":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub, "") if sub in modules else (base, alias.name))
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.split(".")[0] == "robustlab"]
    return found


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    private = []
    for name, path in modules.items():
        for target, imported in _imports(name, path, modules):
            if target != name and target in modules:
                edges[name].add(target)
            if imported.startswith("_") and not imported.startswith("__") and target != name:
                private.append(f"{name} imports {target}.{imported}")
    return edges, private


#: modules that form a layer of their own inside a package
SUBLAYERS = {
    **dict.fromkeys(("robustlab.report.doc", "robustlab.report.load", "robustlab.report.format",
                     "robustlab.report.sections"),
                    "report-blocks"),
    **dict.fromkeys(("robustlab.perturbations", "robustlab.perturbations.registry"),
                    "perturbation-registry"),
    "robustlab.integrations.victims": "victims",
}


def _package(module: str) -> str:
    if module in SUBLAYERS:
        return SUBLAYERS[module]
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "studies":  # a study package's own screen, view (the
        if parts[-1] in ("screen", "view") or parts[-1].endswith(("_screen", "_view")):  # TUI
            return "tui"  # screen's reader) and command are TUI / command code
        if parts[-1] == "command" or parts[-1].endswith("_command"):
            return "commands"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "robustlab"


def test_no_import_cycles():
    edges, _ = _graph()
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_private_names_across_modules():
    _, private = _graph()
    assert not private, "\n".join(private)


def test_packages_import_only_lower_layers():
    edges, _ = _graph()
    rank = {p: i for i, p in enumerate(LAYERS)}
    unknown = sorted({_package(m) for m in edges} - set(rank))
    assert not unknown, f"place these packages in LAYERS: {unknown}"
    upward = sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                    if _package(a) != _package(b) and rank[_package(b)] >= rank[_package(a)])
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def _slice(module: str) -> str | None:
    """The study slice of ``module`` (``robustlab.studies.eval.study`` -> ``eval``), or None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "studies" and \
        (ROOT / "studies" / parts[2]).is_dir() else None


def test_study_slices_do_not_import_each_other():
    edges, _ = _graph()
    across = sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                    if _slice(a) and _slice(b) and _slice(a) != _slice(b))
    assert not across, ("study slices importing each other (move what they share below "
                        "studies/):\n" + "\n".join(across))


def test_the_reader_sees_lazy_and_string_imports(tmp_path):
    """The rules above are only as good as the reader: an import inside a function, a module
    named in a registry string or an ``import_module`` f-string are dependencies; a docstring
    naming a module and an entry-point group are not."""
    modules = _modules()
    src = tmp_path / "mod.py"
    src.write_text('''"""Mentions robustlab.tui.app in prose."""
import importlib
PLUGINS = {"x": "robustlab.integrations.textattack"}


def load(name):
    from robustlab.studies.eval import config  # noqa: F401
    importlib.import_module(f"robustlab.commands.{name}")
    return "robustlab.report.load:load_run", entry_points(group="robustlab.perturbations")
''', encoding="utf-8")
    found = {t for t, _ in _imports("robustlab.studies.learnability.fake", src, modules)}
    assert found == {"robustlab.integrations.textattack", "robustlab.studies.eval.config",
                     "robustlab.commands", "robustlab.report.load"}
    assert _slice("robustlab.studies.learnability.fake") != _slice("robustlab.studies.eval.config")
    rank = {p: i for i, p in enumerate(LAYERS)}
    assert rank[_package("robustlab.report.load")] < rank[_package("robustlab.studies.eval")] \
        < rank[_package("robustlab.commands")]  # the f-string import above would be upward
