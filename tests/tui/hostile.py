"""Run directories whose texts are hostile to a terminal (issue 21 items 5-6).

Every text a run directory can carry (example texts, perturbation and model names, pair and
system names, cell errors, worker.log lines, the run directory's own name, the stored command)
holds :data:`PAYLOAD`: OSC 0/2 (retitle the terminal), OSC 52 (write the clipboard), ``ESC[2J``
(clear the screen), U+009B (an 8-bit CSI), bidi overrides and U+2028, and Rich markup (``[/b]``
raised ``MarkupError``; ``[link=…]`` made a link). :func:`raw_controls` finds what must never be
printed raw; :data:`SHOWN` is what the escaped payload looks like.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from robustlab.procs import process_start
from robustlab.runs.store import RunStore
from tui import fixtures

OSC_TITLE = "\x1b]0;pwned-title\x07"
OSC_TITLE2 = "\x1b]2;pwned-title2\x1b\\"
OSC52 = "\x1b]52;c;cHduZWQ=\x07"  # base64 of "pwned" into the clipboard
CLEAR = "\x1b[2J"
CSI8 = "\x9b2J"
BIDI = "\u202eevil\u202c"
LSEP = "\u2028"
MARKUP = "[/b]"
LINK = "[link=https://evil.example]click[/link]"
PAYLOAD = OSC_TITLE + OSC_TITLE2 + OSC52 + CLEAR + CSI8 + BIDI + LSEP + MARKUP + LINK
#: how the payload's parts look once escaped (each must be on screen / in the output)
SHOWN = ("\\x1b]0;pwned-title\\x07", "\\x1b]2;pwned-title2\\x1b\\", "\\x1b]52;c;cHduZWQ=\\x07",
         "\\x1b[2J", "\\x9b2J", "\\u202eevil\\u202c", "\\u2028", "[/b]",
         "[link=https://evil.example]click[/link]")
#: the escaped payload as one string (what printable(PAYLOAD) gives)
SHOWN_ALL = "".join(SHOWN)
#: a run directory's name (no "/" in a name: the markup is a Textual action link instead)
NAMED = f"named-{OSC_TITLE}[@click=app.quit]x"
NAMED_SHOWN = "named-\\x1b]0;pwned-title\\x07[@click=app.quit]x"


def raw_controls(text: str, allow: str = "\n") -> list[str]:
    """Characters of ``text`` a terminal would interpret or that reorder/hide text: C0/C1
    controls, DEL, format characters (bidi), line/paragraph separators, surrogates."""
    return sorted({c for c in text if c not in allow and unicodedata.category(c) in (
        "Cc", "Cf", "Zl", "Zp", "Cs")})


@contextlib.contextmanager
def _sentences(texts: list[str]) -> Iterator[None]:
    saved = fixtures.SENTENCES
    fixtures.SENTENCES = texts
    try:
        yield
    finally:
        fixtures.SENTENCES = saved


HOSTILE_SENTENCES = [f"the film {PAYLOAD} is a charming story",
                     f"an utterly tedious movie {PAYLOAD} with nothing new",
                     f"he delivers a warm {PAYLOAD} performance"]


def learnability(run_dir: Path) -> Path:
    """A finished learnability run: a hostile perturbation and model name, hostile example
    texts in its stored predictions (failing examples)."""
    with _sentences(HOSTILE_SENTENCES):
        return fixtures.learnability(run_dir, models=("bow", f"cnn{PAYLOAD}"),
                                     perts=(f"typo{PAYLOAD}", "negate"), seeds=(0,))


def attack(run_dir: Path) -> Path:
    """A finished attack run whose example texts (original, perturbed, patched) are hostile."""
    with _sentences(HOSTILE_SENTENCES):
        return fixtures.attack(run_dir, n=6)


def died(run_dir: Path) -> Path:
    """A run whose worker died: hostile worker.log lines and a hostile cell error."""
    with _sentences(HOSTILE_SENTENCES):
        fixtures.attack(run_dir, n=6, status="running", done=3)
    with RunStore(run_dir) as store:
        store.claim("ex=000004", "fixture:1")
        store.fail("ex=000004", f"Traceback (most recent call last):\nValueError: {PAYLOAD}\n")
    conn = sqlite3.connect(run_dir / "store.sqlite", isolation_level=None)
    conn.execute("UPDATE run SET pid=?", (fixtures.dead_pid(),))
    conn.close()
    (run_dir / "worker.log").write_text(
        f"loading {PAYLOAD}\nTraceback (most recent call last):\n"
        f"RuntimeError: worker died {PAYLOAD}\n")
    return run_dir


def bias(run_dir: Path) -> Path:
    pairs = [("he", f"she{PAYLOAD}"), ("his", "her")]
    cells = [(f"pair={a}/{b}|k={k}", {"pair": [a, b], "k": k},
              {"pair": [a, b], "k": k, "B": 0.01 * (k + 1), "std": 0.01, "n": 3},
              [{"text": f"sentence {PAYLOAD}", "f_soft": 0.01 * i} for i in range(3)])
             for a, b in pairs for k in (0, 1)]
    fixtures._write(run_dir, "bias", {"pairs": ["/".join(p) for p in pairs]}, "--model bow",
                    cells)
    return run_dir


def cross_domain(run_dir: Path) -> Path:
    systems = ["sysA", f"sys{PAYLOAD}"]
    domains = ["news", f"dom{PAYLOAD}"]
    cells = []
    for s, name in enumerate(systems):
        per = {d: 30.0 + s + i for i, d in enumerate(domains)}
        result = {"system": name, "per_domain": per, "mean": 31.0 + s, "variance": 0.25,
                  "cov": 0.02, "gamma": {"1": 0.1, "10": 0.5},
                  "leave_one_out": [{"left_out": d, "mean": 31.0, "variance": 0.1, "cov": 0.01}
                                    for d in domains]}
        cells.append((f"system={name}", {"system": name}, result, []))
    fixtures._write(run_dir, "cross-domain", {"mode": "scores"}, "scores t.tsv", cells)
    return run_dir


def generic(run_dir: Path) -> Path:
    """A run of an unknown kind (the generic screen) with hostile kind, result keys and values."""
    cells = [(f"c={i}", {"i": i}, {f"col{PAYLOAD}": f"value {PAYLOAD}", "x": 0.5 * i}, [])
             for i in range(2)]
    fixtures._write(run_dir, f"kind{PAYLOAD}", {}, "--x", cells)
    return run_dir


def make_all(root: Path) -> dict[str, Path]:
    """One hostile run of each kind under ``root``; one has a hostile directory name too."""
    root.mkdir(parents=True, exist_ok=True)
    return {"learn": learnability(root / "learn"), "attack": attack(root / "attack"),
            "died": died(root / "died"), "bias": bias(root / "bias"),
            "xd": cross_domain(root / "xd"), "generic": generic(root / "generic"),
            "named": attack(root / NAMED)}


# ---- a worker that ignores SIGINT (issue 21 item 12) ---------------------------------------------

_STUBBORN = """\
import os, signal, sys, time
args = sys.argv[1:]
ignore = args[args.index("--ignore") + 1].split(",") if "--ignore" in args else []
# as robustlab's entry point does (robustlab.procs.answer_ctrl_c): SIGINT raises
# KeyboardInterrupt even when this process inherited it ignored (started from a background job)
signal.signal(signal.SIGINT, signal.default_int_handler)
for name in ignore:
    signal.signal(getattr(signal, "SIG" + name), signal.SIG_IGN)
if "--child" in args and os.fork() == 0:  # a member of the same process group that ignores all
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(args[args.index("--ready") + 1] + ".child", "w").close()
    time.sleep(120)
    os._exit(0)
open(args[args.index("--ready") + 1], "w").close()
time.sleep(120)
"""


def stubborn_argv(tmp_path: Path, run_dir: Path, ignore: str = "", child: bool = False
                  ) -> tuple[list[str], Path]:
    """The argv of a process that looks like ``robustlab learnability --out RUN_DIR`` (a script
    named robustlab), ignores the signals in ``ignore`` ("INT", "INT,TERM") as a worker started
    with ``&`` from a script ignores SIGINT, and sleeps; ``child`` adds a group member that
    ignores SIGINT and SIGTERM. Returns it with the file that appears once the handlers are set
    (and ``.child`` beside it for the child)."""
    script = tmp_path / "bin" / "robustlab"
    script.parent.mkdir(exist_ok=True)
    script.write_text(_STUBBORN)
    ready = tmp_path / f"ready-{run_dir.name}"
    argv = [sys.executable, str(script), "learnability", "--out", str(run_dir), "--ready",
            str(ready)]
    return argv + (["--ignore", ignore] if ignore else []) + (["--child"] if child else []), ready


def wait_file(path: Path, seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.02)


def wait_until(condition, seconds: float = 60.0, still=lambda: True) -> bool:
    """Poll ``condition`` until it holds (True) or ``seconds`` pass or ``still()`` turns false
    (False): a ceiling, not a clock."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and still():
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def record_worker(run_dir: Path, pid: int) -> None:
    """A run store that names ``pid`` (with its start time) as the run's worker."""
    store = RunStore(run_dir)
    store.init_run("learnability", run_dir.name, {"n": 1},
                   command=f"robustlab learnability --out {run_dir}")
    store.conn.execute("UPDATE run SET pid=?", (pid,))
    store.conn.execute("UPDATE meta SET value=? WHERE key='worker_start'", (process_start(pid),))
    store.close()
