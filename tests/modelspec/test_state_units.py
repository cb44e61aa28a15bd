"""State and time units (issue 16): declared on the spec, written escaped into the generated
module (never run as code), and read back by ``Model.units``."""
import pytest

from frictionkit.modelspec import ModelSpec
from frictionkit.modelspec.errors import InvalidTextError
from frictionkit.runtime import load_model

NASTY = '"""\nraise SystemExit(3)\n"""\\\u2028'


def oscillator(x_unit, v_unit, time_unit=None):
    m = ModelSpec("units_demo", time_unit=time_unit)
    k = m.parameter("k", 2.0, unit="N/m")
    x, v = m.second_order("x", velocity="v", unit=x_unit, velocity_unit=v_unit, doc="position")
    m.ode(v, -k * x - 0.1 * v)
    return m


@pytest.mark.parametrize("time_unit, expected", [("s", "s"), (None, ""), (NASTY, NASTY)])
def test_units_reach_the_model_verbatim(time_unit, expected):
    model = load_model(oscillator("m", NASTY, time_unit), "k", backend="numpy")
    units = model.units
    assert (units["x"], units["v"], units["k"], units["t"]) == ("m", NASTY, "N/m", expected)


def test_states_without_units_are_dimensionless():
    spec = ModelSpec("bare")
    spec.state("q", doc="a coordinate")
    assert spec.state_units == {"q": ""} and spec.state_docs == {"q": "a coordinate"}


@pytest.mark.parametrize("bad", [3, b"m", "\ud800"])
def test_unwritable_state_unit_is_refused_with_its_name(bad):
    with pytest.raises(InvalidTextError, match="unit of state 'x'"):
        oscillator(bad, "m/s")
    with pytest.raises(InvalidTextError, match="time unit of model"):
        oscillator("m", "m/s", time_unit=bad)
