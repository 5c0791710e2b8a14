"""Paper 001's human check of perturbed samples (Moradi & Samwald 2021, section 6, Table 4's
note), on an eval run: which perturbations need it, the seeded sample, verdicts, CSV exchange and
the scores on the judged samples.

The paper drew 200 perturbed samples per perturbation and dataset for Deletion, Negation and
Replacement with synonyms, had people judge each (still meaningful? consistent with the label?),
relabelled where the label had to change, dropped the rest, and evaluated on what remained. Here:

* **which**: ``word_delete``, ``negation``, ``word_synonym`` and any perturbation that declares
  ``label_preserving = False`` (:func:`needs_judging`);
* **the sample**: :data:`PER_PERTURBATION` rows per perturbation, drawn with a seeded
  ``random.Random`` from the rows the perturbation changed (perturbed text differs from the
  original) over every seed and sample of the run (:func:`draw_sample`);
* **verdicts**: ``consistent`` (the original label holds), ``relabel:<label>`` (it holds for
  another label of the model's label set), ``drop`` (not meaningful) (:func:`parse_verdict`);
* **scores** (:func:`judged_scores`): once every sampled row of a perturbation is judged, it is
  scored as a CheckList INV test against the corrected labels on the kept rows — A0 the clean
  accuracy of their originals (original labels), A1 the accuracy of the perturbed texts against
  the corrected labels, A1 − A0, and the failure rate: among kept rows whose clean prediction was
  right, those whose perturbed prediction is not the corrected label. The eval summary, report
  and ``robustlab check`` then use these and say ``judged n=…``.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from robustlab.errors import InputError, RobustlabError
from robustlab.metrics.judged import (
    RELABEL,
    VERDICTS,
    corrected_label,
    judged_marker,
    judged_scores,
)

#: rows drawn per perturbation (the paper's 200 per perturbation and dataset)
PER_PERTURBATION = 200
#: the perturbations the paper judged (Deletion, Negation, Replacement with synonyms)
PAPER_JUDGED = ("word_delete", "negation", "word_synonym")
CSV_COLUMNS = ("sample", "perturbation", "label", "original", "perturbed", "verdict", "who")


def needs_judging(spec: str) -> bool:
    """Whether the paper's human check applies to the perturbation ``spec``."""
    from robustlab.perturbations.registry import parse_spec, split_label

    body, _ = split_label(spec)
    if body.partition(":")[0] in PAPER_JUDGED:
        return True
    try:
        return not getattr(parse_spec(spec), "label_preserving", True)
    except RobustlabError:  # a spec this install cannot build: judged only by name
        return False


def sample_id(cell: str, idx: int) -> str:
    return f"{cell}/{int(idx)}"


def draw_sample(predictions: Sequence[Mapping[str, Any]], cell_perturbation: Mapping[str, str],
                seed: int, per: int = PER_PERTURBATION) -> list[dict[str, Any]]:
    """Up to ``per`` changed rows per judged perturbation, drawn with ``seed`` (stable: the
    rows are sorted by cell and index before drawing). ``predictions``: the store's rows (cell,
    idx, original, perturbed, label); ``cell_perturbation``: cell key -> perturbation spec."""
    pools: dict[str, list[Mapping[str, Any]]] = {}
    for p in predictions:
        spec = cell_perturbation.get(p["cell"])
        if spec is None or p["original"] == p["perturbed"]:
            continue
        pools.setdefault(spec, []).append(p)
    out = []
    for spec in sorted(pools):
        if not needs_judging(spec):
            continue
        pool = sorted(pools[spec], key=lambda p: (p["cell"], int(p["idx"])))
        rng = random.Random(f"{seed}|{spec}")
        chosen = rng.sample(pool, min(per, len(pool)))
        for p in sorted(chosen, key=lambda p: (p["cell"], int(p["idx"]))):
            out.append({"sample": sample_id(p["cell"], p["idx"]), "cell": p["cell"],
                        "idx": int(p["idx"]), "perturbation": spec, "original": p["original"],
                        "perturbed": p["perturbed"], "label": int(p["label"])})
    return out


def draw_into(store: Any, seed: int = 0, per: int = PER_PERTURBATION) -> tuple[int, int]:
    """Draw the sample of an eval run's store (:func:`draw_sample`) and store it (a sample
    already stored keeps its verdict). Returns (drawn, new); InputError when nothing is to be
    judged."""
    if per < 1:
        raise InputError(f"--per {per}: must be at least 1")
    refuse_task_run(store)
    cells = {c.key: c.params["perturbation"] for c in store.cells("done")}
    drawn = draw_sample(store.predictions(), cells, seed, per)
    if not drawn:
        raise InputError(f"{store.run_dir}: no changed rows of word_delete, negation, "
                         "word_synonym or a label-changing perturbation to judge")
    return len(drawn), store.add_samples(drawn)


def refuse_task_run(store: Any) -> None:
    """InputError for the run of a task's model (robustlab.tasks): its labels are tags,
    scores or candidate rankings, not a class a person relabels here."""
    task = next(((c.result or {}).get("task") for c in store.cells("done")
                 if (c.result or {}).get("task")), None)
    if task:
        raise InputError(f"{store.run_dir}: a {task} run; robustlab judge relabels the samples "
                         "of a text classifier's run (its labels are classes)")


def n_classes_of(store: Any) -> int:
    """The model's number of labels, from the run's finished cells."""
    refuse_task_run(store)
    for c in store.cells("done"):
        if c.result and c.result.get("n_classes"):
            return int(c.result["n_classes"])
    raise InputError(f"{store.run_dir}: no finished eval cell yet; run robustlab eval first")


def label_names_of(store: Any, n_classes: int) -> list[str] | None:
    """The names of the model's labels (0..n_classes-1) where the model has them: a Hugging
    Face checkpoint's ``id2label`` (not its generic ``LABEL_0``...). None otherwise (a model
    trained by robustlab stores integer labels only, as the data files do)."""
    import json
    import re

    info = store.run_info()
    model = str((info.config or {}).get("model") or "") if info is not None else ""
    folder = Path(model.removeprefix("hf:")).expanduser() if model else None
    if folder is None or not (folder / "config.json").is_file():
        return None
    try:
        id2label = json.loads((folder / "config.json").read_text(encoding="utf-8"))["id2label"]
        names = [str(id2label.get(str(i), id2label.get(i, ""))) for i in range(n_classes)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not all(names) or all(re.fullmatch(r"LABEL_\d+", n) for n in names):
        return None
    return names


def label_text(label: int | str, names: Sequence[str] | None) -> str:
    """A label as the judge shows it: "1 (positive)" where the names are known, else "1"."""
    k = int(label)
    return f"{k} ({names[k]})" if names and 0 <= k < len(names) else str(k)


def labels_help(n_classes: int, names: Sequence[str] | None) -> str:
    """The labels a relabel may name: "0 negative, 1 positive" or "0..1"."""
    if names:
        return ", ".join(f"{i} {n}" for i, n in enumerate(names))
    return f"0..{n_classes - 1}"


def parse_verdict(text: str, n_classes: int) -> str:
    """The verdict as stored, or :class:`InputError` naming what is accepted."""
    v = text.strip().lower()
    if v in VERDICTS:
        return v
    if v.startswith(RELABEL):
        lab = v[len(RELABEL):].strip()
        if lab.isdigit() and int(lab) < n_classes:
            return f"{RELABEL}{int(lab)}"
        raise InputError(f"verdict {text!r}: the label must be one of the model's labels "
                         f"0..{n_classes - 1}")
    raise InputError(f"verdict {text!r}: expected consistent, drop or relabel:<label> "
                     f"(label 0..{n_classes - 1})")


def _one(v: float | None) -> dict[str, Any]:
    return {"mean": v, "std": None if v is None else 0.0, "n": 0 if v is None else 1,
            "values": [v]}


#: the fields of a summary row that judging replaces (kept under ``raw``)
_RESCORED = ("test", "expectation", "a0", "a1", "delta", "failure_rate")


def apply_judgements(store: Any, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The eval summary's rows with each fully judged perturbation rescored on its judged
    samples (corrected labels, INV test) and marked ``judged``; a partly judged one keeps its
    raw scores and is marked ``judging`` (k of n). Idempotent: a row judged before is restored
    from its ``raw`` fields first."""
    results = store.judged_results()
    out = []
    for row in rows:
        row = dict(row)
        raw = row.pop("raw", None)
        row.pop("judged", None)
        row.pop("judging", None)
        if raw:
            row.update(raw)
        res = results.get(row["perturbation"])
        if res is None:
            out.append(row)
        elif "judging" in res:
            out.append({**row, "judging": res["judging"]})
        else:
            out.append({**row, "test": "INV", "expectation": None,
                        "judged": {k: res[k] for k in ("sampled", "n", "dropped", "relabelled")},
                        "raw": {m: row.get(m) for m in _RESCORED},
                        "a0": _one(res["a0"]), "a1": _one(res["a1"]),
                        "delta": _one(res["delta"]),
                        "failure_rate": _one(res["failure_rate"])})
    return out


# ---- CSV exchange ------------------------------------------------------------------------------


def refresh_outputs(store: Any) -> list[str]:
    """Rescore a finished eval run's outputs on the judgements now stored -- summary.json's
    table, eval.csv and (when the run drew it) eval.png -- as eval writes them on a resume, so
    they never lag the judgements (robustlab judge, the TUI's judge screen). Returns the files
    rewritten; none when the run has no summary yet (eval writes them when it finishes)."""
    import json

    from robustlab.outputs import save_figure, write_json
    from robustlab.studies.eval.study import accuracy_figure, by_harm, write_csv

    out = Path(store.run_dir)
    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        rows = summary["perturbations"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    rows = by_harm(apply_judgements(store, rows))
    summary["perturbations"] = rows
    write_json(out / "summary.json", summary)
    write_csv(out / "eval.csv", rows)
    files = ["summary.json", "eval.csv"]
    if (out / "eval.png").exists() and rows:
        save_figure(accuracy_figure(rows, summary.get("clean_accuracy")), out / "eval.png")
        files.append("eval.png")
    return files


def export_csv(samples: Sequence[Mapping[str, Any]]) -> str:
    """The samples (with any verdicts) as CSV text, :data:`CSV_COLUMNS`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in samples:
        w.writerow([s["sample"], s["perturbation"], s["label"], s["original"], s["perturbed"],
                    s.get("verdict") or "", s.get("who") or ""])
    return buf.getvalue()


def read_csv(path: str | Path, samples: Sequence[Mapping[str, Any]], n_classes: int,
             who: str) -> list[tuple[str, str | None, str | None]]:
    """(sample, verdict, who) for every row of the CSV with a verdict, each validated: a known
    sample id, the sample's own texts, a verdict spelled as :func:`parse_verdict` accepts with a
    label of the model's label set. The first bad row raises :class:`InputError` (one line,
    naming the file and line), so nothing is imported from a file with a bad row."""
    known = {s["sample"]: s for s in samples}
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--import {path}: cannot read it ({exc})") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("sample", "verdict") if c not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"--import {path}: no {', '.join(missing)} column (expected the "
                         f"columns of --export: {', '.join(CSV_COLUMNS)})")
    out, seen = [], set()
    for line, r in enumerate(reader, start=2):
        where = f"--import {path}, line {line}"
        sid = (r.get("sample") or "").strip()
        s = known.get(sid)
        if s is None:
            raise InputError(f"{where}: unknown sample {sid!r} (not in this run's drawn sample)")
        if sid in seen:
            raise InputError(f"{where}: sample {sid!r} appears twice")
        seen.add(sid)
        for f in ("original", "perturbed"):
            if r.get(f) is not None and r[f] != s[f]:
                raise InputError(f"{where}: sample {sid!r}: the {f} text differs from the run's")
        if r.get("label") not in (None, "") and r["label"].strip() != str(s["label"]):
            raise InputError(f"{where}: sample {sid!r}: label {r['label']!r} is not the run's "
                             f"label {s['label']} (relabel in the verdict: relabel:<label>)")
        raw = (r.get("verdict") or "").strip()
        if not raw:
            continue  # not judged in this file
        try:
            verdict = parse_verdict(raw, n_classes)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        out.append((sid, verdict, (r.get("who") or "").strip() or who))
    return out


__all__ = ["CSV_COLUMNS", "PAPER_JUDGED", "PER_PERTURBATION", "apply_judgements",
           "corrected_label", "draw_into", "refuse_task_run", "draw_sample", "export_csv", "judged_marker",
           "judged_scores", "n_classes_of", "needs_judging", "parse_verdict", "read_csv",
           "label_names_of", "label_text", "labels_help", "refresh_outputs",
           "sample_id"]
