"""Consistency across domains (paper 004): variance, CoV, (ε,γ)-robustness and bagging.

Submodules: ``consistency`` (the analysis of one score matrix: its options and tables),
``study`` (MT systems scored with sacreBLEU, score tables), ``clf`` (classifiers trained on one domain and tested on the others), ``report``
(tables, rankings, plots). The names below are re-exported lazily.
"""

from robustlab.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("robustlab.studies.cross_domain", {
    **dict.fromkeys(("ConsistencyConfig", "consistency_tables"), "consistency"),
    **dict.fromkeys(("MTStudy", "run_mt", "run_scores"), "study"),
    "ClfStudy": "clf", "run_clf": "clf",
})

from robustlab.studies.kind import StudyKind  # noqa: E402

#: the kind this package runs (robustlab.studies.kind)
KINDS = (
    StudyKind("cross-domain", __name__, "clf:from_stored",
              title="Cross-domain consistency (paper 004)",
              section="section:cross_domain_section", screen="screen:CrossDomainScreen",
              command="command"),
)
