"""Seed 001: b(x, x', t) declared in modelspec and generated gives the same two-phase motion."""
import numpy as np

from frictionkit.runtime import load_model
from frictionkit.runtime.nonsmooth import (SHAW_P, force_from_model, shaw_forcing, two_phase_event_driven,
                                           two_phase_explicit)


def test_generated_force_matches_the_hand_written_one():
    model = load_model("shaw_free", continuation="beta", backend="numpy")
    b_gen = force_from_model(model)
    b_ref = shaw_forcing(beta=6.0, omega=0.5, alpha=0.0)
    for x, v, t in [(1.0, 0.5, 0.3), (-2.0, 1.5, 7.0), (0.0, 0.0, 0.0)]:
        assert abs(b_gen(x, v, t) - b_ref(x, v, t)) <= 1e-13 * (1 + abs(b_ref(x, v, t)))
    m, fd, fs = 1.0, 1.0, 1.2   # seed 001 set (P)
    r_gen = two_phase_explicit(b_gen, m, fd, fs, x0=5.0, t_end=28.0, h=1e-3)
    r_ref = two_phase_explicit(b_ref, m, fd, fs, x0=5.0, t_end=28.0, h=1e-3)
    np.testing.assert_allclose(r_gen.x, r_ref.x, rtol=0, atol=1e-10)
    e_gen = two_phase_event_driven(b_gen, m, fd, fs, x0=5.0, t_end=28.0)
    e_ref = two_phase_event_driven(b_ref, m, fd, fs, x0=5.0, t_end=28.0)
    np.testing.assert_allclose(e_gen.tau_static, e_ref.tau_static, rtol=1e-9)
