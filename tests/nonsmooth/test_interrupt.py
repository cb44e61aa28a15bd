"""Ctrl-C keeps what was computed (issue 6 / STYLE: a failed or interrupted run keeps its work)."""
import numpy as np
import pytest

from frictionkit.runtime.nonsmooth import (two_phase_explicit, shaw_forcing, BeltChain, integrate_stick_slip,
                                          coulomb_branch, coulomb_cycle, belt_oscillator, stick_slip_period)
from frictionkit.runtime.nonsmooth import _results


def _interrupt_after(n, fun):
    calls = {"n": 0}

    def wrapped(*args, **kw):
        calls["n"] += 1
        if calls["n"] > n:
            raise KeyboardInterrupt
        return fun(*args, **kw)
    return wrapped


def test_explicit_scheme_keeps_steps():
    b = _interrupt_after(500, shaw_forcing())
    full = two_phase_explicit(shaw_forcing(), 1.0, 1.0, 1.2, 5.0, 2.0, 1e-3)
    part = two_phase_explicit(b, 1.0, 1.0, 1.2, 5.0, 2.0, 1e-3)
    assert part.status == "interrupted" and part.t.size == 500  # 1 initial check + 499 steps
    np.testing.assert_array_equal(part.x, full.x[:part.t.size])


def test_event_driven_keeps_trajectory():
    law = _interrupt_after(3000, lambda s: 1.0 / (1.0 + 3.0 * s))
    chain = BeltChain([1.0], [[0.0]], [[1.0]], [1.0], [1.0], [law], 0.2)
    res = integrate_stick_slip(chain, [0.0], [0.2], 100.0)
    assert res.status == "interrupted" and 0 < res.t[-1] < 100.0
    assert res.t.size == res.x.shape[1] == res.v.shape[1]


def test_coulomb_branch_keeps_points(monkeypatch):
    monkeypatch.setattr(_results, "coulomb_cycle", _interrupt_after(5, coulomb_cycle))
    br = coulomb_branch("Vb", np.linspace(0.1, 0.5, 20))
    assert br.status == "interrupted" and br.param.size == 5
    # the kept point is the cycle: its frequency against the event-driven period (test_coulomb)
    period, _ = stick_slip_period(belt_oscillator(Vb=br.param[4]))
    assert br.omega[4] == pytest.approx(2 * np.pi / period, rel=1e-10)
    assert br.to_branch().status == "interrupted"
