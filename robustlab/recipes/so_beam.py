"""SO-Beam for ``textattack attack --attack-from-file robustlab/recipes/so_beam.py^build``.

A stable file path for TextAttack's CLI; the recipe itself is
:mod:`robustlab.studies.second_order.so_beam`. From an installed package, ``robustlab recipe-path
so-beam`` prints this file's path.
"""

from robustlab.studies.second_order.so_beam import NAME, build

__all__ = ["NAME", "build"]
