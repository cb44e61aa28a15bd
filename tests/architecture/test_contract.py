"""The discretization contract and the model door (issue 11).

* every discretization (HBM, AFT, collocation, shooting, the scaled, Hopf and fold systems)
  subclasses the abstract :class:`Discretization` and implements every abstract member;
* engines, analyses, results and drivers read a discretization only through the contract:
  no ``isinstance``/``hasattr``/``getattr`` on one, and no ``model.module`` outside ``model/``;
* ``Branch.time_series`` works on collocation and shooting branches: compared with an
  independent time integration (``solve_ivp``, another integrator) of the model from the
  same point;
* every result object carries ``success``, ``status`` and ``message``.
"""
import ast
import inspect
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime import discretizations
from frictionkit.runtime.analysis import _curves
from frictionkit.runtime.analysis._lyapunov import first_lyapunov
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.discretizations import (
    AFTDiscretization,
    CollocationDiscretization,
    Discretization,
    HBMDiscretization,
    ScaledDiscretization,
    ShootingDiscretization,
)
from frictionkit.runtime.drivers._continue import continuation
from frictionkit.runtime.engine._options import ContinuationProblem
from frictionkit.runtime.errors import InputError
from tests.models._orbits import vdp, vdp_orbit
from frictionkit.runtime.drivers._orbits import solve_collocation

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
CLASSES = [HBMDiscretization, AFTDiscretization, CollocationDiscretization, ShootingDiscretization,
           ScaledDiscretization, _curves._HopfSystem, _curves._FoldSystem]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_discretization_implements_the_abstract_members(cls):
    assert issubclass(cls, Discretization)
    assert not inspect.isabstract(cls), f"{cls.__name__} leaves {sorted(cls.__abstractmethods__)} abstract"
    for name in Discretization.__abstractmethods__:
        assert getattr(cls, name) is not getattr(Discretization, name), name


def test_the_contract_is_abstract_and_lists_its_members():
    assert Discretization.__abstractmethods__ == {"kind", "residual", "jacobian"}
    with pytest.raises(TypeError):
        Discretization()
    doc = discretizations._base.__doc__
    for name in ("kind", "residual", "jacobian", "has_quadratic", "quadratic", "series_rhs", "unpack", "samples",
                 "omega_index", "phase_index", "amplitude_weights", "noise_floor", "n_residuals", "n_jacobians",
                 "floquet_route", "monodromy", "jacobian_accepts_out"):
        assert f"``{name}" in doc, name


def test_kinds_of_the_concrete_discretizations():
    model = vdp()
    orbit = vdp_orbit(1.0)
    hbm = HBMDiscretization(model, 5)
    assert (hbm.kind, hbm.has_quadratic, hbm.floquet_route) == ("hbm", True, "hill")
    assert HBMDiscretization(model, 0).kind == "equilibria" and not HBMDiscretization(model, 0).supports_stability
    aft = AFTDiscretization(model, 5)
    assert (aft.kind, aft.has_quadratic) == ("aft", False)
    col = CollocationDiscretization(model, 10, 3)
    assert (col.kind, col.has_quadratic, col.floquet_route) == ("collocation-recast", True, "collocation")
    sh = ShootingDiscretization(model)
    assert (sh.kind, sh.has_quadratic, sh.floquet_route) == ("shooting", False, "monodromy")
    np.testing.assert_allclose(sh.monodromy(sh.from_orbit(orbit)), orbit.monodromy, rtol=1e-6, atol=1e-8)
    assert ScaledDiscretization(sh, np.ones(sh.size)).kind == "scaled"


def _sources(*folders):
    for folder in folders:
        yield from sorted((RUNTIME / folder).rglob("*.py"))


def test_model_module_only_inside_the_model_interface():
    offenders = []
    for path in RUNTIME.rglob("*.py"):
        if path.relative_to(RUNTIME).parts[0] == "model":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "module":
                offenders.append(f"{path.relative_to(RUNTIME)}:{node.lineno}")
    assert not offenders, "model.module outside runtime/model/: " + ", ".join(offenders)


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def test_no_class_dispatch_on_discretizations():
    """No isinstance on a discretization class and no getattr/hasattr on a discretization."""
    concrete = {c.__name__ for c in CLASSES}
    offenders = []
    for path in _sources("engine", "analysis", "results", "drivers"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            where = f"{path.relative_to(RUNTIME)}:{node.lineno}"
            if node.func.id == "isinstance" and _names(node.args[1]) & concrete:
                offenders.append(where)
            if node.func.id in ("getattr", "hasattr") and _names(node.args[0]) & {"disc", "discretization"}:
                if not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                        and node.args[1].value in ("__dict__", "_bordered_workspace")):   # the engine's buffer
                    offenders.append(where)
    assert not offenders, "dispatch on a discretization: " + ", ".join(offenders)


def _integrated(model, lam, x0, t):
    """The ODE from ``x0`` by DOP853 (the shooting discretization integrates with LSODA)."""
    sol = solve_ivp(lambda s, x: model.rhs(s, x, lam), (0.0, t[-1]), x0, method="DOP853", t_eval=t,
                    rtol=1e-12, atol=1e-12)
    assert sol.success
    return sol.y


def test_time_series_of_a_collocation_branch_is_the_integrated_orbit():
    orbit = vdp_orbit(1.0)
    disc = CollocationDiscretization(orbit.model, 120, 4)
    Z0, _ = solve_collocation(disc, disc.from_orbit(orbit))
    br = continuation(ContinuationProblem(disc, Z0, 1.0), "anm", dict(lam_min=0.5, lam_max=1.3, max_step=5.0))
    assert br.success and br.harmonics == -1
    i = len(br) - 1
    T = 2 * np.pi / br.omega[i]
    for periods in (1, 2):
        t, x = br.time_series(i, n_t=64, periods=periods)
        assert t.shape == (64,) and x.shape == (2, 64)
        np.testing.assert_allclose(t, periods * T * np.arange(64) / 64, rtol=1e-14)
        ref = _integrated(orbit.model, br.param[i], x[:, 0], t)
        # measured 4.6e-8 (one period) and 1.5e-8 (two) of the amplitude: the collocation
        # error of 120 intervals of degree 4 (60 intervals: 1.8e-6, about 2^-5 of it)
        assert np.max(np.abs(x - ref)) < 2e-7 * np.max(np.abs(x))
    with pytest.raises(InputError, match="whole number of periods"):
        br.time_series(i, n_t=64, periods=1.5)


def test_time_series_of_a_shooting_branch_is_the_integrated_orbit():
    orbit = vdp_orbit(1.0)
    disc = ShootingDiscretization(orbit.model, rtol=1e-11, atol=1e-12)
    br = continuation(ContinuationProblem(disc, disc.from_orbit(orbit), 1.0), "newton",
                      dict(lam_min=0.5, lam_max=1.1, max_steps=4, step=0.05))
    assert br.harmonics == -1 and len(br) > 1
    i = len(br) - 1
    t, x = br.time_series(i, n_t=50)
    Zi = br.solutions[i]
    np.testing.assert_allclose(x[:, 0], Zi[:2], rtol=1e-12)
    np.testing.assert_allclose(t[1] * 50, Zi[2], rtol=1e-12)          # one period T
    ref = _integrated(orbit.model, br.param[i], Zi[:2], t)
    # measured 4.8e-10 of the amplitude (LSODA at rtol 1e-11 against DOP853 at 1e-12)
    assert np.max(np.abs(x - ref)) < 1e-8 * np.max(np.abs(x))


def test_results_carry_success_status_message():
    res = first_lyapunov(vdp(), 0.0, [0.0, 0.0])
    assert (res.success, res.status) == (True, "computed") and "supercritical" in res.message
    assert res["l1"] == res.l1 and "criticality" in res
    assert dict(res)["omega0"] == res.omega0 and list(res)[:2] == ["l1", "omega0"]
    with pytest.raises(KeyError):
        res["nothing"]
    orbit = vdp_orbit(1.0)
    assert (orbit.success, orbit.status) == (True, "converged")
    sh = ShootingDiscretization(orbit.model)
    floquet = orbit_stability(sh, sh.from_orbit(orbit))
    assert (floquet.success, floquet.status) == (True, "computed") and floquet["method"] == "variational"
    from frictionkit.runtime.analysis._curves import BifurcationCurve
    from frictionkit.runtime.results._branch import Branch
    for cls in (Branch, BifurcationCurve):
        src = inspect.getsource(cls)
        assert all(k in src for k in ("success", "status", "message")), cls.__name__
