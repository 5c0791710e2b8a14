"""Old import path, kept for code written against robustlab 0.1.

Perturbations now live in :mod:`robustlab.perturbations` and the adapters to the other libraries
in :mod:`robustlab.integrations`. ``from robustlab.adapters import make`` and the three adapter
modules (``robustlab.adapters.textattack_adapter`` …) still import; new code should use the new
paths. Nothing here defines anything: each name is the new module's own object.
"""

import sys as _sys

from robustlab.integrations import checklist as _checklist
from robustlab.integrations import nlaugmenter as _nlaugmenter
from robustlab.integrations import textattack as _textattack
from robustlab.perturbations import *  # noqa: F403
from robustlab.perturbations import __all__  # noqa: F401
from robustlab.perturbations import base as _base
from robustlab.perturbations import registry as _registry

for _old, _mod in (("textattack_adapter", _textattack), ("nlaugmenter_adapter", _nlaugmenter),
                   ("checklist_adapter", _checklist), ("base", _base), ("registry", _registry)):
    _sys.modules[f"{__name__}.{_old}"] = _mod
