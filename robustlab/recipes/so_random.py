"""the random second-order baseline for ``textattack attack --attack-from-file robustlab/recipes/so_random.py^build``.

A stable file path for TextAttack's CLI; the recipe itself is
:mod:`robustlab.studies.second_order.so_random`. From an installed package, ``robustlab recipe-path
so-random`` prints this file's path.
"""

from robustlab.studies.second_order.so_random import NAME, build

__all__ = ["NAME", "build"]
