"""Analysis: equilibria and Hopf points, Floquet/Hill stability, the Lyapunov coefficient,
stability along a branch, branch points, two-parameter curves, motion type, energy bounds."""
from ._branch_points import (
    bordered_det_sign,
    branch_point_tangents,
    detect_branch_points,
    locate_branch_point,
)
from ._curves import BifurcationCurve, fold_curve, hopf_curve
from ._energy import energy_ratio, energy_ratio_exponential, v_lw, v_lw_exponential, v_up
from ._equilibria import eigenvalues, find_equilibrium
from ._floquet import FloquetResult, floquet_collocation, floquet_from_orbit, floquet_variational
from ._hill import hill_matrix, hill_multipliers, hill_multipliers_hbm, select_exponents
from ._lyapunov import LyapunovResult, first_lyapunov
from ._motion import MOTION_LABELS, MotionResult, classify_motion, limit_velocity
from ._pass import analyse_branch
from ._pd_ns_curves import ns_curve, pd_curve
from ._stability import (
    PeriodDoublingPoint,
    branch_stability,
    multiplier_crossings,
    orbit_stability,
    point_stability,
)

__all__ = ["eigenvalues", "find_equilibrium", "FloquetResult", "floquet_collocation", "floquet_from_orbit",
           "floquet_variational", "hill_matrix", "hill_multipliers", "hill_multipliers_hbm", "select_exponents",
           "LyapunovResult", "first_lyapunov", "PeriodDoublingPoint", "branch_stability", "multiplier_crossings",
           "orbit_stability", "point_stability", "bordered_det_sign",
           "branch_point_tangents", "detect_branch_points", "locate_branch_point", "analyse_branch",
           "BifurcationCurve", "fold_curve", "hopf_curve", "pd_curve", "ns_curve", "MOTION_LABELS", "MotionResult", "classify_motion",
           "limit_velocity", "energy_ratio", "energy_ratio_exponential", "v_lw", "v_lw_exponential", "v_up"]
