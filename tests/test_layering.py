"""The import graph says what the layout promises: data flows one way, so imports go one way.

Read from the source with ``ast`` (nothing is imported): every ``import``/``from … import`` of a
robustlab module, at the top of a file or inside a function (a lazy import is still a
dependency). Three rules:

* no cycles between modules;
* no private name (``_x``) imported from another module: what is shared is public;
* packages are layered: each may import only packages listed before it in :data:`LAYERS`
  (the package itself aside). A new package must be placed in the list.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "robustlab"

#: lowest first: a package imports only packages before it
LAYERS = (
    "robustlab",  # the package's own __init__ (its version)
    "errors", "textfmt", "lazy", "trust", "procs", "signature", "resources",
    "outputs", "perturbations", "metrics",
    "data", "tasks", "models", "integrations", "options",
    "runs", "plots",
    "report-blocks",  # report.doc/load/format: the blocks every study's report section builds on
    "studies", "recipes",
    "report", "tui", "commands", "cli", "__main__",
    "adapters",  # the old import paths of integrations/perturbations, kept for users
)


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = f.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str]]:
    """(imported module, imported name or '') for each robustlab import in ``path``."""
    is_pkg = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
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
BLOCKS = {"robustlab.report.doc", "robustlab.report.load", "robustlab.report.format"}


def _package(module: str) -> str:
    if module in BLOCKS:
        return "report-blocks"
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
