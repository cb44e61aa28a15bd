"""Motion classification (seed 000 eq. (26), seed 003 eqs. (7)-(8)) on belt orbits and synthetic signals."""
import numpy as np
import pytest

from frictionkit.runtime.analysis._motion import classify_motion, limit_velocity
from frictionkit.runtime.errors import InputError
from tests.models._orbits import belt, belt_orbit, belt_orbit_near_hopf, vdp


@pytest.mark.parametrize("n", [10, 100])
def test_limit_velocity_analytic(n):
    # eps -> 0: for V < 0, g(V) = (mud V^2 - 2 alpha V)/(V^2 + 1) is largest where
    # V^2 + (mud/alpha) V - 1 = 0, i.e. V* = -sqrt(2) for mus = 0.4, mud = 0.2, and g(V*) = mus;
    # mu_n(V) = g(n V) so V_n = -sqrt(2)/n.  eps = 1e-4 shifts it by O(eps / V*^2) ~ 1e-5.
    model = belt(n)
    v_n = limit_velocity(model, 0.5)
    assert v_n.shape == (1,)
    assert v_n[0] == pytest.approx(-np.sqrt(2) / n, rel=1e-4)
    assert model.contact_law(v_n, model.param_vector()).item() == pytest.approx(0.4, rel=1e-4)


@pytest.mark.parametrize("Vb", [0.5, 2.0])
def test_w1_w2_are_stick_slip(Vb):
    # seed 000 Fig. 4 / seed 003 Figs. 3, 6: Helmholtz (stick-slip) motion on the upper branch
    orbit = belt_orbit(Vb)
    res = classify_motion(orbit.model, Vb, orbit.samples, n_t=1024)
    assert res.label == "stick-slip" and res.stick_intervals == (1,)
    assert 0 < res.stick_fraction[0] < 1


def test_slipping_right_after_b1_and_on_the_lower_branch_near_b3():
    # B1 lies only ~3e-4 m/s above |V_n|, so the orbit slips only while its velocity amplitude
    # is below that gap: Vb - B1 = 1e-7 (v ptp 3.4e-4).  Near B3 the small unstable cycles
    # oscillate around V_r = -3.66, far from |V_n| = 0.14: slipping (seed 000 §4.2).
    for which, dV in [(1, 1e-7), (3, 1e-3)]:
        orbit, _, _ = belt_orbit_near_hopf(which, dV)
        assert classify_motion(orbit.model, orbit.lam, orbit.samples, n_t=512).label == "slipping"


def test_counting_is_cyclic_and_detects_multiple_stick():
    # synthetic states (y, v) with V_r = v - Vb; |V_n| = 0.1414 for n = 10
    model = belt(10)
    Vb = 0.5
    theta = 2 * np.pi * np.arange(400) / 400
    y = np.zeros_like(theta)

    def label(vr):
        return classify_motion(model, Vb, np.vstack([y, vr + Vb]))

    assert label(-0.3 + 0.05 * np.cos(theta)).label == "slipping"
    one = label(-0.3 + 0.25 * np.cos(theta))          # one stick interval wrapping t = 0
    assert one.label == "stick-slip" and one.stick_intervals == (1,)
    two = label(-0.3 + 0.25 * np.cos(2 * theta))
    assert two.label == "multiple stick" and two.stick_intervals == (2,)
    assert label(-0.05 + 0.01 * np.cos(theta)).label == "sticking"


def test_model_without_contact_is_refused():
    with pytest.raises(InputError, match="no contact"):
        classify_motion(vdp(), 1.0, np.zeros((2, 10)))
    with pytest.raises(InputError, match="shape"):
        classify_motion(belt(), 0.5, np.zeros((3, 10)))


def test_generated_belt_gives_the_same_limit_velocity_and_labels():
    # generated modules take contact_law's velocities with the contact axis first (vr[c]);
    # the generated belt and the hand-written one must give the same V_n and labels
    from frictionkit.runtime import load_model

    gen = load_model("belt", continuation="Vb", n=10, FN=5)
    assert limit_velocity(gen, 0.5)[0] == pytest.approx(limit_velocity(belt(10), 0.5)[0], rel=1e-9)
    orbit = belt_orbit(0.5)
    assert classify_motion(gen, 0.5, orbit.samples, n_t=512).label == "stick-slip"
