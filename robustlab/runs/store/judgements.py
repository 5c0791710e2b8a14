"""The ``judgements`` table of a run store: paper 001's human check of perturbed samples.

Moradi & Samwald (2021, section 6 and Table 4's note) judged 200 perturbed samples per
perturbation and dataset by hand — consistent with the label, relabelled, or dropped — and scored
the model on those. ``robustlab judge`` draws such a sample from an eval run and keeps each
sample and its verdict here, one row per sample (``verdict`` NULL until judged).

The table is created on demand by the first writer (:meth:`JudgementOps.add_samples`): an older
store opens and resumes unchanged, and a reader of a store without it sees no judgements. Each
row carries a CRC-32 of its values (:func:`robustlab.runs.payloads.checksum`), verified when read
like every other payload of the store; a damaged row raises :class:`StoreError` naming it (a
judgement is never silently dropped or used).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from robustlab.metrics.judged import judged_scores
from robustlab.runs import payloads
from robustlab.runs.store.base import StoreBase
from robustlab.runs.store.schema import StoreError

#: the stored values of one judged sample, in checksum order
JUDGEMENT_FIELDS = ("sample", "cell", "idx", "perturbation", "original", "perturbed", "label",
                    "verdict", "who", "at")

_TABLE = """CREATE TABLE IF NOT EXISTS judgements (
    sample TEXT PRIMARY KEY,
    cell TEXT NOT NULL,
    idx INTEGER NOT NULL,
    perturbation TEXT NOT NULL,
    original TEXT NOT NULL,
    perturbed TEXT NOT NULL,
    label INTEGER NOT NULL,
    verdict TEXT,
    who TEXT,
    at REAL,
    crc INTEGER NOT NULL
)"""


def judgement_checksum(row: Mapping[str, Any]) -> int:
    """CRC-32 of one row's values (:data:`JUDGEMENT_FIELDS`), as SQLite gives them back."""
    values = [row.get(f) for f in JUDGEMENT_FIELDS]
    values[JUDGEMENT_FIELDS.index("idx")] = int(row["idx"])
    values[JUDGEMENT_FIELDS.index("label")] = int(row["label"])
    at = row.get("at")
    values[JUDGEMENT_FIELDS.index("at")] = None if at is None else float(at)
    return payloads.checksum(json.dumps(values, ensure_ascii=False))


class JudgementOps(StoreBase):
    """Samples drawn for judging and their verdicts (module docstring)."""

    def has_judgements_table(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                 "name='judgements'").fetchone() is not None

    def judgements(self) -> list[dict[str, Any]]:
        """Every sample with its verdict (None: not judged yet), verified, in sample order."""
        if not self.has_judgements_table():
            return []
        rows = self.conn.execute(f"SELECT {', '.join(JUDGEMENT_FIELDS)}, crc FROM judgements "
                                 "ORDER BY perturbation, cell, idx")
        out = []
        for r in rows:
            value = dict(r)
            crc = value.pop("crc")
            try:
                ok = judgement_checksum(value) == crc
            except (TypeError, ValueError, KeyError):
                ok = False
            if not ok:
                raise StoreError(f"{self.path}: judgement {value.get('sample')!r} fails its "
                                 "checksum (the stored data is damaged); export the other "
                                 "judgements and judge it again")
            out.append(value)
        return out

    def add_samples(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Store drawn samples (not judged yet); a sample already stored keeps its verdict
        unless its texts changed. Returns how many were new or replaced."""
        if self.readonly:
            raise StoreError(f"{self.path} is open read-only")
        new = 0
        with self.transaction() as c:
            c.execute(_TABLE)
            for r in rows:
                row = {**{f: None for f in JUDGEMENT_FIELDS}, **r}
                # a stored sample keeps its verdict unless its texts changed (its cell was
                # recomputed): then it is stale and replaced, to be judged again
                cur = c.execute(
                    f"INSERT INTO judgements ({', '.join(JUDGEMENT_FIELDS)}, crc) "
                    f"VALUES ({', '.join('?' * (len(JUDGEMENT_FIELDS) + 1))}) "
                    "ON CONFLICT(sample) DO UPDATE SET "
                    + ", ".join(f"{f}=excluded.{f}" for f in (*JUDGEMENT_FIELDS[1:], "crc"))
                    + " WHERE original IS NOT excluded.original OR perturbed IS NOT "
                    "excluded.perturbed",
                    [*(row[f] for f in JUDGEMENT_FIELDS), judgement_checksum(row)])
                new += cur.rowcount
        return new

    def set_verdicts(self, verdicts: Sequence[tuple[str, str | None, str | None]]) -> None:
        """(sample, verdict, who) for each: all in one transaction (all or nothing); every
        sample must exist (validate first: :mod:`robustlab.studies.eval.judge`)."""
        if self.readonly:
            raise StoreError(f"{self.path} is open read-only")
        now = time.time()
        with self.transaction() as c:
            for sample, verdict, who in verdicts:
                r = c.execute(f"SELECT {', '.join(JUDGEMENT_FIELDS)} FROM judgements "
                              "WHERE sample=?", (sample,)).fetchone()
                if r is None:
                    raise StoreError(f"{self.path}: no sample {sample!r} to judge")
                row = {**dict(r), "verdict": verdict, "who": who,
                       "at": None if verdict is None else now}
                c.execute("UPDATE judgements SET verdict=?, who=?, at=?, crc=? WHERE sample=?",
                          (row["verdict"], row["who"], row["at"], judgement_checksum(row),
                           sample))


    def judged_results(self) -> dict[str, dict[str, Any]]:
        """perturbation spec -> its :func:`judged_scores` once every drawn row is judged, else
        ``{"judging": {"judged": k, "sampled": n}}``; perturbations without a drawn sample are
        absent. The judged rows are joined with the stored predictions by cell and index; when a
        row's texts no longer match (its cell was recomputed), the perturbation is not rescored and
        its ``judging`` entry counts the ``stale`` rows (judge them again after ``--sample``)."""
        by: dict[str, list[dict[str, Any]]] = {}
        for j in self.judgements():
            by.setdefault(j["perturbation"], []).append(j)
        out: dict[str, dict[str, Any]] = {}
        for spec, js in by.items():
            done = sum(j["verdict"] is not None for j in js)
            if done < len(js):
                out[spec] = {"judging": {"judged": done, "sampled": len(js)}}
                continue
            preds = {}
            for cell in sorted({j["cell"] for j in js}):
                preds.update({(cell, p["idx"]): p for p in self.predictions(cell)})
            scored = []
            for j in js:
                p = preds.get((j["cell"], j["idx"]))
                if p is None or p["perturbed"] != j["perturbed"] or p["original"] != j["original"]:
                    continue  # stale: its cell was recomputed with other texts
                scored.append({**j, "pred_before": p["pred_before"], "pred_after": p["pred_after"]})
            if len(scored) < len(js):  # never scored on part of the sample; said, not raised
                out[spec] = {"judging": {"judged": len(scored), "sampled": len(js),
                                         "stale": len(js) - len(scored)}}
                continue
            out[spec] = judged_scores(scored)
        return out


__all__ = ["JUDGEMENT_FIELDS", "JudgementOps", "judgement_checksum"]
