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
from .errors import FrictionkitError, InputError, ModelInterfaceError, ConvergenceError
from ._model import Model
from ._load import load_model
from ._hbm import HBMDiscretization, to_subharmonic
from ._aft import AFTDiscretization
from ._continuation import ANMOptions, ContinuationProblem, NewtonOptions, continuation, locate_fold_near
from ._equilibria import (equilibrium_branch, find_equilibrium, periodic_branch, periodic_start_from_hopf,
                          periodic_start_from_orbit, periodic_start_from_simulation)
from ._branch import Branch, SpecialPoint, load_branch
from ._plots import plot_branches, plot_orbit
from ._shooting import (PeriodicOrbit, ShootingDiscretization, find_periodic_orbit,
                        periodic_orbit_from_simulation)
from ._collocation import CollocationDiscretization, collocation_orbit
from ._stability import (FloquetResult, first_lyapunov, floquet_collocation, floquet_variational,
                         hill_multipliers, locate_period_doubling, multiplier_crossings, orbit_stability,
                         switch_period_doubling, branch_stability, hill_multipliers_hbm)
from ._curves import BifurcationCurve, fold_curve, hopf_curve
from ._switching import (detect_branch_points, locate_branch_point, switch_branch, switch_period_doubling_hbm,
                         switch_period_doubling_collocation)
from ._motion import MOTION_LABELS, classify_motion, limit_velocity
from ._simulate import OrbitCheck, check_branch_point, check_orbit, simulate
from ._energy import energy_ratio, energy_ratio_exponential, v_lw, v_lw_exponential, v_up
from . import nonsmooth

__version__ = "0.1.0"

__all__ = [
    "Model", "load_model", "HBMDiscretization", "AFTDiscretization", "ANMOptions", "NewtonOptions", "ContinuationProblem",
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
