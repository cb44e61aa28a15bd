"""One exception root: every error class frictionkit defines derives from FrictionkitError."""
import importlib
import inspect
import pkgutil

import frictionkit.codegen
import frictionkit.modelspec
import frictionkit.runtime
from frictionkit.modelspec.errors import FrictionkitError


def _error_classes():
    for pkg in (frictionkit.modelspec, frictionkit.codegen, frictionkit.runtime):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if ".cli" in info.name:
                continue
            mod = importlib.import_module(info.name)
            for name, obj in inspect.getmembers(mod, inspect.isclass):
                if (issubclass(obj, BaseException) and obj.__module__ == mod.__name__
                        and not name.startswith("_")):      # private control flow, never raised to a user
                    yield f"{mod.__name__}.{name}", obj


def test_every_frictionkit_error_has_the_one_root():
    classes = dict(_error_classes())
    assert len(classes) >= 8, sorted(classes)     # the walk found the hierarchy
    orphans = sorted(name for name, cls in classes.items() if not issubclass(cls, FrictionkitError))
    assert not orphans, f"error classes outside FrictionkitError: {orphans}"


def test_runtime_and_modelspec_share_the_root():
    from frictionkit.runtime.errors import FrictionkitError as runtime_root
    assert runtime_root is FrictionkitError
