"""TextAttack recipe files: ``build(model_wrapper)`` for ``textattack attack --attack-from-file``.

``so_beam.py``, ``so_enum.py`` and ``so_random.py`` stay here as stable file paths ("recipe" is
TextAttack's word); the attacks themselves are in :mod:`robustlab.studies.second_order`.
``robustlab recipe-path so-beam`` prints the installed file's path.
"""
