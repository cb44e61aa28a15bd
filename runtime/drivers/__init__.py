"""Drivers: what a user calls.  Each composes an engine run with the analysis passes
(equilibrium and periodic branches and their starts, forced responses and their resonance peaks, nonlinear modes,
branch switching, the convergence study)."""
import lazy_loader

# imported at first use (SPEC 1 lazy loading): see frictionkit.runtime's __init__
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_branches": ["equilibrium_branch", "periodic_branch", "periodic_start_from_hopf", "periodic_start_from_orbit",
                  "periodic_start_from_simulation", "restart_branch", "attach_discretization"],
    "_continue": ["continuation"],
    "_forced": ["frequency_response", "resonance_peaks"],
    "_nlmode": ["nonlinear_mode", "save_nonlinear_mode"],
    "_orbits": ["collocation_orbit", "find_periodic_orbit", "locate_period_doubling",
                "periodic_orbit_from_simulation", "solve_collocation", "switch_period_doubling"],
    "_saved_curves": ["fold_curve", "pd_curve", "ns_curve"],
    "_study": ["convergence_study"],
    "_torus": ["continue_torus", "torus", "torus_from_simulation"],
    "_switching": ["switch_branch", "switch_period_doubling_collocation", "switch_period_doubling_hbm"],
})

__all__ = ["continuation", "find_periodic_orbit", "periodic_orbit_from_simulation", "locate_period_doubling",
           "switch_period_doubling", "collocation_orbit", "solve_collocation", "equilibrium_branch", "periodic_branch",
           "periodic_start_from_hopf",
           "periodic_start_from_orbit", "periodic_start_from_simulation", "switch_branch",
           "switch_period_doubling_collocation", "switch_period_doubling_hbm", "convergence_study",
           "restart_branch", "frequency_response", "resonance_peaks", "nonlinear_mode", "save_nonlinear_mode",
           "attach_discretization", "fold_curve", "pd_curve", "ns_curve", "torus", "continue_torus", "torus_from_simulation"]
