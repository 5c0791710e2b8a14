"""robustlab's version, in a module of its own: every layer records it (signatures, the run store,
reports), while the package's ``__init__`` is the façade above them all (``robustlab.run``)."""

__version__ = "0.1.0"
