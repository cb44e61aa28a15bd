"""frictionkit runtime: discretizations, continuation, stability, results, plots, CLI.

The runtime talks to a model only through the generated-model interface
(:mod:`frictionkit.runtime._model`).  Public surface (private modules behind it):

* models: :func:`load_model`, :class:`Model`
* harmonic balance and continuation: :class:`HBMDiscretization`, :func:`continuation`
  (``"anm"`` or ``"newton"``), :func:`equilibrium_branch`, :func:`periodic_start_from_hopf`,
  :func:`periodic_start_from_simulation`, :func:`periodic_branch`; results :class:`Branch`,
  :func:`load_branch`; plots :func:`plot_branches`, :func:`plot_orbit`
* two-parameter continuation: :func:`hopf_curve` (Hopf points of equilibria), :func:`fold_curve`
  (folds of periodic HBM branches), both :class:`BifurcationCurve`
* orbits by shooting and collocation: :func:`find_periodic_orbit`,
  :func:`periodic_orbit_from_simulation`, :class:`ShootingDiscretization`,
  :class:`CollocationDiscretization`, :func:`collocation_orbit`
* stability: :func:`floquet_variational`, :func:`floquet_collocation`, :func:`hill_multipliers`,
  :func:`orbit_stability`, :func:`multiplier_crossings`, :func:`first_lyapunov`,
  :func:`locate_period_doubling`, :func:`switch_period_doubling` (shooting),
  :func:`switch_period_doubling_hbm` (HBM, omega/2 basis), :func:`switch_branch` (branch points)
* motion labels: :func:`classify_motion`, :func:`limit_velocity`
* time simulation: :func:`simulate`, :func:`check_orbit`, :func:`check_branch_point`
* seed-002 bounds: :func:`energy_ratio`, :func:`v_lw`, :func:`v_up`
* non-smooth references: the subpackage :mod:`frictionkit.runtime.nonsmooth`
"""
from . import nonsmooth
from .analysis import (
    MOTION_LABELS,
    BifurcationCurve,
    FloquetResult,
    branch_stability,
    classify_motion,
    detect_branch_points,
    energy_ratio,
    energy_ratio_exponential,
    find_equilibrium,
    first_lyapunov,
    floquet_collocation,
    floquet_variational,
    fold_curve,
    hill_multipliers,
    hill_multipliers_hbm,
    hopf_curve,
    limit_velocity,
    locate_branch_point,
    locate_period_doubling,
    multiplier_crossings,
    orbit_stability,
    switch_period_doubling,
    v_lw,
    v_lw_exponential,
    v_up,
)
from .discretizations import (
    AFTDiscretization,
    CollocationDiscretization,
    Discretization,
    HBMDiscretization,
    PeriodicOrbit,
    ShootingDiscretization,
    collocation_orbit,
    find_periodic_orbit,
    periodic_orbit_from_simulation,
    to_subharmonic,
)
from .drivers import (
    continuation,
    equilibrium_branch,
    periodic_branch,
    periodic_start_from_hopf,
    periodic_start_from_orbit,
    periodic_start_from_simulation,
    switch_branch,
    switch_period_doubling_collocation,
    switch_period_doubling_hbm,
)
from .engine import ANMOptions, ContinuationProblem, NewtonOptions, locate_fold_near
from .errors import ConvergenceError, FrictionkitError, InputError, ModelInterfaceError
from .model import Model, OrbitCheck, check_branch_point, check_orbit, load_model, simulate
from .results import Branch, SpecialPoint, load_branch, plot_branches, plot_orbit


__all__ = [
    "Model", "load_model", "Discretization", "HBMDiscretization", "AFTDiscretization", "ANMOptions", "NewtonOptions", "ContinuationProblem",
    "continuation", "locate_fold_near", "equilibrium_branch", "find_equilibrium", "periodic_branch",
    "periodic_start_from_hopf", "periodic_start_from_orbit", "periodic_start_from_simulation", "Branch",
    "SpecialPoint", "load_branch", "plot_branches", "plot_orbit", "FrictionkitError", "InputError", "ModelInterfaceError", "ConvergenceError",
    "PeriodicOrbit", "ShootingDiscretization", "find_periodic_orbit", "periodic_orbit_from_simulation",
    "CollocationDiscretization", "collocation_orbit",
    "FloquetResult", "first_lyapunov", "floquet_collocation", "floquet_variational", "hill_multipliers",
    "locate_period_doubling", "multiplier_crossings", "orbit_stability", "switch_period_doubling",
    "branch_stability", "hill_multipliers_hbm", "detect_branch_points", "locate_branch_point", "switch_branch",
    "switch_period_doubling_hbm", "switch_period_doubling_collocation", "to_subharmonic",
    "MOTION_LABELS", "classify_motion", "limit_velocity",
    "OrbitCheck", "check_branch_point", "check_orbit", "simulate",
    "energy_ratio", "energy_ratio_exponential", "v_lw", "v_lw_exponential", "v_up",
    "nonsmooth", "__version__",
]
