"""SO-Enum for ``textattack attack --attack-from-file robustlab/recipes/so_enum.py^build``.

A stable file path for TextAttack's CLI; the recipe itself is
:mod:`robustlab.studies.second_order.so_enum`. From an installed package, ``robustlab recipe-path
so-enum`` prints this file's path.
"""

from robustlab.studies.second_order.so_enum import NAME, build

__all__ = ["NAME", "build"]
