"""The emitted ``dfdlam`` (contract item 11): the exact ``df/dlam`` of the original ODE.

Checked (both backends) against central differences of the emitted ``rhs`` in the continuation parameter,
and the runtime's numerical fallback (a module without ``dfdlam``) against the exact one.
"""
from types import ModuleType

import numpy as np
import pytest

from frictionkit.codegen import generate_module
from frictionkit.modelspec import ZOO
from frictionkit.runtime import load_model
from tests.codegen.zoo_cases import SAMPLED, random_point

SHIPPED = [(name, c) for name, (_, params) in sorted(ZOO.items()) for c in params]


@pytest.mark.parametrize("backend", ["numpy", "cython"])
@pytest.mark.parametrize("name,cont", SHIPPED)
def test_dfdlam_agrees_with_finite_differences_of_rhs(name, cont, backend):
    """The NumPy and the compiled ``dfdlam`` (a sampled model has no compiled module)."""
    mod = generate_module(name, cont, backend="numpy" if name in SAMPLED else backend)
    if mod.dfdlam is None:               # a non-analytic law: the runtime differentiates
        assert mod.SAMPLED
        return
    rng = np.random.default_rng(6)
    p, x, t = random_point(mod, rng, m=5)
    k = mod.PARAMETERS.index(mod.CONTINUATION)
    h = 1e-6 * (1 + abs(p[k]))
    pp, pm = p.copy(), p.copy()
    pp[k] += h
    pm[k] -= h
    fd = (mod.rhs(t, x, pp) - mod.rhs(t, x, pm)) / (2 * h)
    exact = mod.dfdlam(t, x, p)
    assert exact.shape == x.shape
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-6 * (1 + np.abs(fd).max()))
    np.testing.assert_allclose(mod.dfdlam(t[0], x[:, 0], p), exact[:, 0], rtol=1e-14, atol=0)


def test_model_falls_back_to_central_differences_without_dfdlam():
    model = load_model("belt", continuation="Vb", backend="numpy")
    plain = ModuleType("belt_without_dfdlam")
    plain.__dict__.update({k: v for k, v in vars(model.module).items() if k not in ("dfdlam", "__name__")})
    bare = load_model(plain).with_params(**dict(zip(model.parameters, model.param_vector())))
    x = np.array([1e-3, 0.2])
    # the central difference with step eps**(1/3) is accurate to about 1e-7 here
    np.testing.assert_allclose(bare.dfdlam(0.0, x), model.dfdlam(0.0, x), rtol=1e-6)
