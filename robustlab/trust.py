"""What robustlab trusts, in one place (the threat model is in docs/run-directory.md).

The command line the user types and the packages installed in the environment are trusted: a
spec typed there may name a class by its import path (``package.module:Class``). Everything
else is data: a run directory (its store, stored configuration and command, ``worker.json``), a
plan from elsewhere, a dataset, a model folder and what a TUI form holds. A spec from data may
only name registered things (built-ins, entry points, NL-Augmenter folders, TextAttack names);
whoever names a class, it is checked to be of the slot's kind before it is called.
"""

from __future__ import annotations

#: set to "1" in the environment of a process the TUI launches from a form: its command line
#: came from a form, so its specs are data (registered names only); it can only remove trust
REGISTERED_ONLY_ENV = "ROBUSTLAB_REGISTERED_ONLY"
