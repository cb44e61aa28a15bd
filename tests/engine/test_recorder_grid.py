"""The recorder's event search on a step's series (engine/_recorder.py ``clip``): its shortcuts
decide as the plain definitions do.

* ``_crossings`` (two reductions before the signs' products) against the definition, strictly
  opposite signs of neighbours, on arrays with zeros, NaN and infinities;
* the grid ``a_max * _UNIT_GRID`` against ``numpy.linspace(0, a_max, 65)``, bit for bit.
"""
import numpy as np
from hypothesis import given, settings, strategies as st

from frictionkit.runtime.engine._recorder import Recorder, _UNIT_GRID


def _definition(values):
    s = [np.sign(v) for v in values]       # (a product of the values could underflow)
    return [i for i in range(len(values) - 1) if s[i] * s[i + 1] < 0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -1e-300, -0.0, 0.0, 1e-300, 3.0, np.nan, np.inf, -np.inf]),
                min_size=2, max_size=12))
def test_crossings_are_the_sign_changes_of_neighbours(values):
    values = np.array(values)
    assert list(Recorder._crossings(values)) == _definition(values)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-290, max_value=1e12, allow_nan=False))
def test_the_event_grid_is_linspace(a_max):
    np.testing.assert_array_equal(a_max * _UNIT_GRID, np.linspace(0.0, a_max, 65))
