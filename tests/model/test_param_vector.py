"""``Model.param_vector`` keeps the vector of its parameter values between calls: a change of
``params`` (in place or by ``with_params``) must show, and a returned vector is the caller's."""
import numpy as np

from frictionkit.runtime import load_model


def test_param_vector_follows_params():
    model = load_model("belt", continuation="Vb", backend="numpy")
    names = model.parameters
    p = model.param_vector()
    assert list(p) == [model.value(k) for k in names] and p[names.index("FN")] == 5.0
    p[:] = -1.0                                              # the caller's copy, not the cache
    assert model.param_vector(0.7)[names.index("Vb")] == 0.7
    assert model.param_vector()[names.index("Vb")] == 0.2
    model.params["FN"] = 7.5                                 # changed in place
    assert model.param_vector()[names.index("FN")] == 7.5
    other = model.with_params(mus=0.5)
    assert other.param_vector()[names.index("mus")] == 0.5 and model.param_vector()[names.index("mus")] == 0.4
    np.testing.assert_array_equal(other.param_vector(), [7.5 if k == "FN" else 0.5 if k == "mus" else d
                                                         for k, d in zip(names, model.module.DEFAULTS)])
