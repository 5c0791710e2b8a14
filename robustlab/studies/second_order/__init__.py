"""Second-order attacks (SO-Enum, SO-Beam, a random baseline) and counterfactual bias (paper 002).

Submodules: ``components`` (the TextAttack goal function, transformation and constraints),
``assemble`` (:func:`build_attack`: components + results + a search), ``search`` (the search methods), the recipes ``so_beam``, ``so_enum`` and
``so_random`` (each a TextAttack ``build(model_wrapper)``), ``neighbourhood`` (Neighbor_1
sources), ``patch_words`` (the symmetric pairs p), ``study`` (attacks into a run directory) and
``bias`` (B(p, k)). ``components`` depends on nothing here; ``search`` builds on it. The names
below are re-exported lazily: importing this package loads neither torch nor textattack.
"""

from robustlab.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports("robustlab.studies.second_order", {
    **dict.fromkeys(("AttackState", "NeighbourSwap", "NonFiniteOutput", "PatchFrozen",
                     "SecondOrderGoal", "apply_patch", "beam_loss", "f_soft",
                     "patched_input", "prediction_change", "soft_change"), "components"),
    "build_attack": "assemble",
    **dict.fromkeys(("BeamSearch", "Enumerate", "RandomWalks", "l0"), "search"),
    "RECIPES": "study", "run_attack_study": "study",
    "run_bias_study": "bias", "resolve_pairs": "pairs",
    "make_source": "neighbourhood", "load_table": "neighbourhood",
})

from robustlab.studies.kind import StudyKind  # noqa: E402

#: the kinds this package runs (robustlab.studies.kind)
KINDS = (
    StudyKind("attack", __name__, "study:from_stored", title="Second-order attacks (paper 002)",
              section="section:attack_section", screen="attack_screen:AttackScreen",
              command="attack_command"),
    StudyKind("bias", __name__, "bias:from_stored",
              title="Counterfactual bias (paper 002, Sec. 4)",
              section="section:bias_section", screen="bias_screen:BiasScreen", records=True,
              command="bias_command"),
)
