"""The serial reference of a sweep task: the model loaded directly and ``run_continuation``
called in this process, with the options the sweep gives its tasks."""
from __future__ import annotations

import warnings

import numpy as np

from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.model._load import load_model


def serial_continuation(param, start, stop, fixed, point, harmonics, from_hopf=1):
    model = load_model("belt", continuation=param, **fixed, **point)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return run_continuation(model, start, stop, start="hopf", hopf_index=from_hopf, harmonics=harmonics,
                                options=dict(max_steps=5000), progress=False, echo=lambda s: None)


def assert_same_branch(a, b):
    """Bit-for-bit equality of two branches' solutions, parameters, stability and special points."""
    for attr in ("solutions", "param", "omega", "stable"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr), equal_nan=True), attr
    assert [(s.kind, s.param) for s in a.special] == [(s.kind, s.param) for s in b.special]
