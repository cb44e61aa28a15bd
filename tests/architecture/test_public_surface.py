"""``frictionkit.runtime``'s docstring lists exactly ``__all__``, and every name of it exists."""
import re

import frictionkit.runtime as runtime


def test_docstring_lists_all_and_all_exists():
    listed = set(re.findall(r":(?:func|class):`(\w+)`", runtime.__doc__))
    listed |= {n for n in re.findall(r"``(\w+)``", runtime.__doc__) if n in ("__version__", "MOTION_LABELS")}
    listed.add("nonsmooth")
    assert listed == set(runtime.__all__)
    assert len(runtime.__all__) == len(set(runtime.__all__))
    assert all(hasattr(runtime, name) for name in runtime.__all__)
