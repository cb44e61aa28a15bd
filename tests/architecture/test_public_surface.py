"""``frictionkit.runtime``'s docstring lists exactly ``__all__``, and every name of it exists; one version everywhere."""
import re

import frictionkit.runtime as runtime


def test_docstring_lists_all_and_all_exists():
    listed = set(re.findall(r":(?:func|class):`(\w+)`", runtime.__doc__))
    listed |= {n for n in re.findall(r"``(\w+)``", runtime.__doc__) if n in ("__version__", "MOTION_LABELS")}
    listed.add("nonsmooth")
    assert listed == set(runtime.__all__)
    assert len(runtime.__all__) == len(set(runtime.__all__))
    assert all(hasattr(runtime, name) for name in runtime.__all__)


def test_one_version_everywhere():
    """``frictionkit`` is a regular package carrying the version; the runtime, the installed
    metadata (pyproject reads the same attribute) and ``frictionkit --version`` agree."""
    import importlib.metadata
    import subprocess
    import sys
    from pathlib import Path

    import frictionkit
    assert frictionkit.__version__ == runtime.__version__ == importlib.metadata.version("frictionkit")
    assert frictionkit.__file__ is not None                      # not an implicit namespace package
    exe = Path(sys.executable).with_name("frictionkit")
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"frictionkit, version {frictionkit.__version__}"


def test_lazy_packages_export_exactly_all():
    """The packages that load their names at first use (``lazy_loader.attach``) list in
    ``__all__`` exactly the names they attach, and each name resolves."""
    import importlib
    lazy = ["frictionkit.runtime"] + [f"frictionkit.runtime.{p}"
                                      for p in ("model", "results", "drivers", "sweeps", "nonsmooth")]
    for name in lazy:
        pkg = importlib.import_module(name)
        attached = set(pkg.__dir__())                 # lazy_loader's __dir__: the attached names
        assert attached - {"__version__"} <= set(pkg.__all__), (name, attached - set(pkg.__all__))
        assert set(pkg.__all__) - {"__version__"} <= attached, (name, set(pkg.__all__) - attached)
        assert all(getattr(pkg, n) is not None for n in pkg.__all__), name
