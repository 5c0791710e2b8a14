import sys

from robustlab.trust import harden_process

# `python -m robustlab` put the working directory first on sys.path: drop it before anything
# else is imported (a `transformations/` or `nlaugmenter/` folder there is never imported)
harden_process(module_main=True)

from robustlab.cli import main  # noqa: E402

sys.exit(main())
