"""The eval study: a trained model tested as it is (``robustlab eval``, issue 23).

Nothing is trained. A model — a directory saved by ``robustlab train``, a Hugging Face checkpoint
with a trained sequence-classification head, or from Python any object with a batch
``predict_proba``, a TextAttack ``ModelWrapper`` or a ``transformers`` text-classification
pipeline — predicts a dataset clean and under each perturbation; per perturbation the study
reports clean accuracy A0, perturbed accuracy A1, A1 − A0, CheckList's INV failure rate and the
no-op rate, and keeps every example's predictions in the run store.

* :mod:`robustlab.studies.eval.config` — :class:`EvalConfig` (the run's identity) and the
  command-line options derived from it;
* :mod:`robustlab.studies.eval.predict` — models as batch probability functions, each distinct
  text predicted once;
* :mod:`robustlab.studies.eval.study` — the cells, their function, the summary and outputs
  (:class:`Eval`, :func:`evaluate` for Python);
* :mod:`robustlab.studies.eval.report` — its report section;
* :mod:`robustlab.studies.eval.tasks` — the same study on NER, sentence pairs, similarity and
  answer selection (:mod:`robustlab.tasks`), and the stored run's study of either kind.
"""

from robustlab.studies.kind import StudyKind

#: the kind this package runs (robustlab.studies.kind)
KINDS = (
    StudyKind("eval", __name__, "tasks:from_stored",
              title="A trained model under perturbations (robustlab eval)",
              section="report:eval_section", screen="screen:EvalScreen", command="command"),
)
