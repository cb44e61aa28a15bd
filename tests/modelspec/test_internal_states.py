"""Friction laws that take states besides the relative velocity (issue 26).

A LuGre law takes its bristle deflection ``z``: the motion labels use it in steady sliding
(``z`` at rest), which must be the steady-state (Stribeck) curve of Canudas de Wit et al.
(1995), written by hand in ``tests/models/state_law_specs.py``.  A law whose steady sliding
has no closed form is accepted (the model is valid) and validation says, naming the contact
and the state, that its motion labels will be unknown.
"""
import warnings

import numpy as np
import pytest
import sympy as sp

from frictionkit.codegen import recast
from frictionkit.modelspec import UnclassifiableLawWarning
from tests.models.state_law_specs import DEFAULTS, belt_with_state_law, lugre, steady_sliding_mu

VR = sp.Symbol("_vr", real=True)


def test_lugre_law_in_steady_sliding_is_the_stribeck_curve():
    spec = lugre()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnclassifiableLawWarning)
        spec.validate("vb")
    law, reason = spec.steady_sliding_law(spec.contacts[0], VR)
    assert reason is None
    params = {spec.parameters[k].symbol: v for k, v in DEFAULTS.items()}
    assert law.free_symbols <= {VR} | set(params)
    f = sp.lambdify(VR, law.xreplace(params), "numpy")
    v = np.concatenate([-np.logspace(-6, 1, 300), [0.0], np.logspace(-6, 1, 300)])
    np.testing.assert_allclose(f(v), steady_sliding_mu(v), rtol=1e-13, atol=1e-16)
    # the recast's contact carries the same law, and the original ODE still has z
    system = recast(spec, "vb")
    assert system.contacts[0][2] == law
    assert [x.name for x in system.states] == ["x", "v", "z"]


def test_law_of_the_position_is_valid_and_validation_says_its_labels_are_unknown():
    # y' = v does not vanish in steady sliding (v = vr + Vb): y has no rest point
    spec = belt_with_state_law(lambda y, v, w: y)
    with pytest.warns(UnclassifiableLawWarning, match=r"contact 'belt'.*state\(s\) y.*'unknown'"):
        spec.validate("Vb")
    law, reason = spec.steady_sliding_law(spec.contacts[0], VR)
    assert law is None and "no unique rest point" in reason


def test_law_of_a_nonlinear_internal_state_is_unclassifiable():
    spec = belt_with_state_law(lambda y, v, w: w, extra_state=True)
    law, reason = spec.steady_sliding_law(spec.contacts[0], VR)
    assert law is None and "not linear in w" in reason
    with pytest.warns(UnclassifiableLawWarning, match="contact 'belt'"):
        spec.validate("Vb")


def test_law_of_the_relative_velocity_only_is_unchanged():
    # the zoo's laws take no state: the law itself, as before
    spec = belt_with_state_law(lambda y, v, w: 0)
    law, reason = spec.steady_sliding_law(spec.contacts[0], VR)
    c = spec.contacts[0]
    assert reason is None and law == c.law(VR, **c.law_params)


def test_law_of_the_velocity_of_the_relative_velocity_is_a_law_of_the_relative_velocity():
    # v = Vr + Vb: no internal state, the law of the relative velocity and Vb
    spec = belt_with_state_law(lambda y, v, w: v)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnclassifiableLawWarning)
        spec.validate("Vb")
    law, reason = spec.steady_sliding_law(spec.contacts[0], VR)
    P = {name: spec.parameters[name].symbol for name in spec.parameters}
    assert reason is None
    values = {P["kx"]: 0.7, P["Vb"]: 0.3, P["mus"]: 0.4, P["mud"]: 0.2, P["eps"]: 1e-4, P["n"]: 10.0}
    f = sp.lambdify(VR, law.xreplace(values), "numpy")
    v = np.linspace(-2, 2, 101)
    alpha = np.sqrt(0.4 * 0.2)
    mu_n = (-0.2 * v * np.sqrt(v ** 2 + 1e-6) - 2 * alpha / 10 * v) / (v ** 2 + 1e-2)   # seed 000 eq. (2)
    np.testing.assert_allclose(f(v), mu_n * (1 + 0.7 * (v + 0.3)), rtol=1e-13, atol=1e-16)
