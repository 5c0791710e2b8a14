"""Perturbation learnability / CENT, robustness and augmentation Δ (papers 000 and 001).

Submodules: ``study`` (the grid of cells and :func:`run_study`), ``data`` (splits, models, the
shared clean fit), ``estimate`` (the quick learnability estimate), ``report`` (tables, Spearman
tests, plots), ``predictions`` (per-example predictions and failures), ``thresholds`` (gates and
``robustlab check`` plans). The names below are re-exported lazily: importing this package loads
no torch.
"""

from robustlab.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("robustlab.studies.learnability", {
    "LearnabilityStudy": "study", "run_study": "study", "EXPERIMENTS": "study",
    "ROBUSTNESS_EXPERIMENTS": "study", "PAPER_PERTURBATIONS": "study",
    "perturb_examples": "study", "label_randomness": "study",
    "load_splits": "data", "build_model": "data",
    "correlate_dirs": "report", "summarize_pairs": "summary", "load_summary": "report",
    "correlate_estimate": "estimate",
    "failing_examples": "predictions", "failure_summary": "predictions",
    "load_plan": "thresholds", "evaluate": "thresholds",
})

from robustlab.studies.kind import StudyKind  # noqa: E402

#: the kinds this package runs (robustlab.studies.kind): ``robustness`` is the same study
#: without the learnability experiments, and ``cent`` what earlier versions called it
KINDS = (
    StudyKind("learnability", __name__, "study:from_stored", aliases=("robustness", "cent"),
              title="Learnability / CENT, robustness and augmentation (paper 000, 003)",
              section="section:learnability_section", screen="screen:LearnabilityScreen",
              command="command"),
)
