"""frictionkit runtime: periodic solutions, continuation, stability and non-smooth references.

The runtime talks to a model only through the generated-model interface
(:mod:`frictionkit.runtime.model._interface`).  The public surface, by layer (lowest first;
imports only go down, ``tests/architecture/test_layers.py``); it is ``__all__``:

* errors: :class:`FrictionkitError`, :class:`InputError`, :class:`ModelInterfaceError`,
  :class:`ConvergenceError`; the version ``__version__``
* model: :func:`load_model`, :class:`Model`; time simulation :func:`simulate`,
  :func:`check_orbit`, :func:`check_branch_point`, :class:`OrbitCheck`; structures
  :func:`reduce_structure`
* discretizations: :class:`Discretization` (the contract), :class:`HBMDiscretization`,
  :func:`to_subharmonic`, :class:`AFTDiscretization`, :class:`CollocationDiscretization`,
  :class:`StateCollocationDiscretization`, :class:`ShootingDiscretization`, :class:`PeriodicOrbit`,
  :class:`CondensedAFTDiscretization` (a structure's, condensed onto its contacts)
* results: :class:`Branch`, :class:`SpecialPoint`, :func:`load_branch`, :func:`plot_branches`,
  :func:`plot_frequency_response` (with backbones), :func:`plot_nonlinear_mode`, :func:`plot_orbit`,
  the interactive :func:`report` and :func:`load_sweep_map` (a sweep store for it)
* engine: :class:`ContinuationProblem`, :class:`ANMOptions`, :class:`NewtonOptions`,
  :func:`locate_fold_near`
* analysis: equilibria :func:`find_equilibrium`; stability :func:`floquet_variational`,
  :func:`floquet_collocation`, :func:`hill_multipliers`, :func:`hill_multipliers_hbm`,
  :class:`FloquetResult`, :func:`orbit_stability`, :func:`branch_stability`,
  :func:`multiplier_crossings`, :func:`first_lyapunov`; branch points :func:`detect_branch_points`,
  :func:`locate_branch_point`; two-parameter curves :func:`hopf_curve`, :class:`BifurcationCurve`
  (:func:`fold_curve`, :func:`pd_curve`, :func:`ns_curve` come through the drivers, which
  accept branches loaded from files: :func:`attach_discretization`); motion :func:`classify_motion`, :func:`limit_velocity`,
  ``MOTION_LABELS``; seed-002 bounds :func:`energy_ratio`, :func:`energy_ratio_exponential`,
  :func:`v_lw`, :func:`v_lw_exponential`, :func:`v_up`
* drivers: :func:`continuation` (``"anm"`` or ``"newton"``, then the analysis of the branch),
  orbits at fixed parameter by shooting :func:`find_periodic_orbit`,
  :func:`periodic_orbit_from_simulation`, :func:`locate_period_doubling`,
  :func:`switch_period_doubling`, and by collocation :func:`collocation_orbit`, :func:`solve_collocation`,
  :func:`equilibrium_branch`, :func:`periodic_branch`, :func:`periodic_start_from_hopf`,
  :func:`periodic_start_from_orbit`, :func:`periodic_start_from_simulation`,
  :func:`switch_branch`, :func:`switch_period_doubling_hbm` (omega/2 basis),
  :func:`switch_period_doubling_collocation`; forced responses :func:`frequency_response`,
  :func:`resonance_peaks`; nonlinear modes (extended periodic motion concept)
  :func:`nonlinear_mode`, :func:`save_nonlinear_mode`; quasi-periodic solutions (tori) from a
  Neimark-Sacker point :func:`torus`, :func:`continue_torus`
* nonsmooth: the subpackage :mod:`frictionkit.runtime.nonsmooth` (exact and event-driven
  references)
* cli: ``frictionkit <command>`` (:mod:`frictionkit.runtime.cli`, not imported here)
"""
import lazy_loader

# The public names are imported at first use (SPEC 1 lazy loading, PEP 562 ``__getattr__``):
# ``frictionkit.runtime.cli`` and every ``frictionkit.runtime.<layer>`` import this package
# first, and the whole runtime (SciPy, pandas, matplotlib, the non-smooth references) would
# cost ``frictionkit --version`` about 2 s of CPU.  ``from frictionkit.runtime import X``
# works as before; ``tests/architecture/test_public_surface.py`` checks every name resolves.
_lazy_getattr, __dir__, _ = lazy_loader.attach(__name__, submodules=["nonsmooth"], submod_attrs={
    "analysis": ["MOTION_LABELS", "BifurcationCurve", "FloquetResult", "branch_stability", "classify_motion",
                 "detect_branch_points", "energy_ratio", "energy_ratio_exponential", "find_equilibrium",
                 "first_lyapunov", "floquet_collocation", "floquet_variational",
                 "hill_multipliers", "hill_multipliers_hbm", "hopf_curve", "limit_velocity",
                 "locate_branch_point", "multiplier_crossings", "orbit_stability", "v_lw", "v_lw_exponential",
                 "v_up"],
    "discretizations": ["AFTDiscretization", "CollocationDiscretization", "CondensedAFTDiscretization",
                        "Discretization", "HBMDiscretization", "PeriodicOrbit", "ShootingDiscretization",
                        "StateCollocationDiscretization", "to_subharmonic"],
    "drivers": ["collocation_orbit", "continuation", "find_periodic_orbit", "locate_period_doubling",
                "periodic_orbit_from_simulation", "solve_collocation", "switch_period_doubling",
                "equilibrium_branch", "periodic_branch", "periodic_start_from_hopf", "periodic_start_from_orbit",
                "periodic_start_from_simulation", "switch_branch", "switch_period_doubling_collocation",
                "switch_period_doubling_hbm", "frequency_response", "resonance_peaks", "nonlinear_mode",
                "save_nonlinear_mode", "attach_discretization", "fold_curve", "pd_curve", "ns_curve", "torus",
                "continue_torus"],
    "engine": ["ANMOptions", "ContinuationProblem", "NewtonOptions", "locate_fold_near"],
    "errors": ["ConvergenceError", "FrictionkitError", "InputError", "ModelInterfaceError"],
    "model": ["Model", "OrbitCheck", "check_branch_point", "check_orbit", "load_model", "reduce_structure",
              "simulate"],
    "results": ["Branch", "SpecialPoint", "load_branch", "load_sweep_map", "plot_branches", "plot_frequency_response",
                "plot_nonlinear_mode", "plot_orbit", "report"],
})
from ._version import __version__

_RESULTS = frozenset(("Branch", "SpecialPoint", "load_branch", "load_sweep_map", "plot_branches",
                      "plot_frequency_response", "plot_nonlinear_mode", "plot_orbit", "report"))


def __getattr__(name):
    """A public name, imported at first use; a branch handed out here can be restarted
    (:meth:`Branch.restart` is registered by the drivers, a higher layer than the results:
    they are loaded with the results' names, as they were with the whole runtime before)."""
    if name in _RESULTS:
        from .drivers import _branches  # noqa: F401  (registers Branch.restart; laziness, not a cycle)
    return _lazy_getattr(name)

__all__ = [
    # errors
    "FrictionkitError", "InputError", "ModelInterfaceError", "ConvergenceError", "__version__",
    # model
    "load_model", "Model", "simulate", "check_orbit", "check_branch_point", "OrbitCheck", "reduce_structure",
    # discretizations
    "Discretization", "HBMDiscretization", "to_subharmonic", "AFTDiscretization", "CollocationDiscretization",
    "StateCollocationDiscretization", "ShootingDiscretization", "PeriodicOrbit", "CondensedAFTDiscretization",
    # results
    "Branch", "SpecialPoint", "load_branch", "plot_branches", "plot_frequency_response", "plot_nonlinear_mode",
    "plot_orbit", "report", "load_sweep_map",
    # engine
    "ContinuationProblem", "ANMOptions", "NewtonOptions", "locate_fold_near",
    # analysis
    "find_equilibrium", "floquet_variational", "floquet_collocation", "hill_multipliers", "hill_multipliers_hbm",
    "FloquetResult", "orbit_stability", "branch_stability", "multiplier_crossings", "first_lyapunov",
    "detect_branch_points", "locate_branch_point",
    "hopf_curve", "BifurcationCurve", "classify_motion", "limit_velocity", "MOTION_LABELS",
    "energy_ratio", "energy_ratio_exponential", "v_lw", "v_lw_exponential", "v_up",
    # drivers
    "continuation", "find_periodic_orbit", "periodic_orbit_from_simulation", "locate_period_doubling",
    "switch_period_doubling", "collocation_orbit", "solve_collocation", "equilibrium_branch", "periodic_branch", "periodic_start_from_hopf", "periodic_start_from_orbit",
    "periodic_start_from_simulation", "switch_branch", "switch_period_doubling_hbm",
    "switch_period_doubling_collocation", "frequency_response", "resonance_peaks", "nonlinear_mode",
    "save_nonlinear_mode", "attach_discretization", "fold_curve", "pd_curve", "ns_curve", "torus", "continue_torus",
    # nonsmooth
    "nonsmooth",
]
