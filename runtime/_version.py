"""The package version: one source of truth, ``pyproject.toml``, read from the installed metadata."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("frictionkit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
