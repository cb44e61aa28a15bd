"""The top-level package ``frictionkit``: the one import name of the four folders
``modelspec``, ``codegen``, ``generated`` and ``runtime`` (``pyproject.toml`` maps them to
``frictionkit.<folder>``, and this folder to ``frictionkit`` itself: no fifth top-level folder).

It holds the version, the one source of truth: ``pyproject.toml`` reads it from here
(``[tool.setuptools.dynamic] version = {attr = "frictionkit.__version__"}``; setuptools reads
the literal without importing anything), and ``frictionkit.runtime.__version__``, the
installed metadata and ``frictionkit --version`` all say the same.  It imports nothing:
``import frictionkit`` stays cheap.
"""
__version__ = "0.1.0"

__all__ = ["__version__"]
