"""One module per ``robustlab`` subcommand, each with ``register(subparsers)``.

Modules here must import heavy libraries (torch, textattack, textual) inside their handlers, not
at module level, so ``robustlab --help`` stays fast.
"""
