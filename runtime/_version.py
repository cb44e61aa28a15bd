"""The package version, ``frictionkit.__version__`` (its one source: ``runtime/_package``,
the top-level package's ``__init__``, which imports nothing), for the runtime's provenance."""
from frictionkit import __version__

__all__ = ["__version__"]
