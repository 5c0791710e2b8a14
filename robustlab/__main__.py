import sys

from robustlab.cli import main

sys.exit(main())
