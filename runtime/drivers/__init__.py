"""Drivers: what a user calls.  Each composes an engine run with the analysis passes
(equilibrium and periodic branches and their starts, forced responses and their resonance peaks,
branch switching, the convergence study)."""
from ._branches import (
    equilibrium_branch,
    periodic_branch,
    periodic_start_from_hopf,
    periodic_start_from_orbit,
    periodic_start_from_simulation,
    restart_branch,
)
from ._continue import continuation
from ._forced import frequency_response, resonance_peaks
from ._orbits import collocation_orbit, find_periodic_orbit, locate_period_doubling, periodic_orbit_from_simulation
from ._orbits import solve_collocation, switch_period_doubling
from ._study import convergence_study
from ._switching import switch_branch, switch_period_doubling_collocation, switch_period_doubling_hbm

__all__ = ["continuation", "find_periodic_orbit", "periodic_orbit_from_simulation", "locate_period_doubling",
           "switch_period_doubling", "collocation_orbit", "solve_collocation", "equilibrium_branch", "periodic_branch",
           "periodic_start_from_hopf",
           "periodic_start_from_orbit", "periodic_start_from_simulation", "switch_branch",
           "switch_period_doubling_collocation", "switch_period_doubling_hbm", "convergence_study",
           "restart_branch", "frequency_response", "resonance_peaks"]
