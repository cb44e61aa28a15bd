"""Issue 28: a model parameter named like an option of ``load_model`` (``progress``,
``backend``, ...) is usable: its value goes through ``params={...}``; a value that would be
misread as the option is refused with the way to write it."""
import pytest

from frictionkit.modelspec import ModelSpec
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model


def _spec():
    """``x'' = -k x - progress x' + backend``: parameters named after load_model's options."""
    m = ModelSpec("reserved_names", "a linear oscillator whose parameters are named progress and backend")
    k = m.parameter("k", 1.0, positive=True)
    progress = m.parameter("progress", 0.1)
    backend = m.parameter("backend", 0.0)
    x, v = m.second_order("x", velocity="v")
    m.ode(v, -k * x - progress * v + backend)
    return m


def test_params_mapping_sets_a_parameter_named_like_an_option():
    m = load_model(_spec(), continuation="k", backend="numpy", progress=False,
                   params={"progress": 0.3, "backend": 2.0})
    assert m.value("progress") == 0.3 and m.value("backend") == 2.0
    # x'' = -k x - progress v + backend at k = 1.5, x = 1, v = 2: -1.5 - 0.6 + 2 = -0.1 (by hand)
    f = m.rhs(0.0, [1.0, 2.0], 1.5)
    assert f[0] == pytest.approx(2.0) and f[1] == pytest.approx(-0.1)
    # params and keywords join
    both = load_model(_spec(), continuation="k", backend="numpy", params={"progress": 0.3}, k=2.0)
    assert both.value("progress") == 0.3 and both.value("k") == 2.0 and both.value("backend") == 0.0


def test_a_number_given_for_the_progress_option_is_refused_with_the_way():
    with pytest.raises(InputError, match=r"progress=0\.3 is load_model's option.*params=\{'progress': 0\.3\}"):
        load_model(_spec(), continuation="k", backend="numpy", progress=0.3)


def test_params_must_be_a_mapping_and_a_name_given_once():
    with pytest.raises(InputError, match=r"params=5\.0 is not a mapping.*params=\{'params': 5\.0\}"):
        load_model("belt", continuation="Vb", params=5.0)
    with pytest.raises(InputError, match="parameter FN given both in params= and as a keyword"):
        load_model("belt", continuation="Vb", params={"FN": 5.0}, FN=6.0)


def test_keywords_still_work():
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    assert m.value("n") == 10 and m.value("FN") == 5
