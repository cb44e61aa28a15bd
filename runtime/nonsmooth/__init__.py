"""Non-smooth reference solvers (DESIGN §5.6, issue 6).

Exact damped Coulomb stick-slip of the belt oscillator (seed 000 §3), event-driven
integration of stick-slip belt chains (seeds 000, 004), the two-phase scheme and the
quasi-static model of seed 001 with its calibration.  These are the references that
regularized (smooth) results are compared against.
"""
import lazy_loader

# imported at first use (SPEC 1 lazy loading): see frictionkit.runtime's __init__
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_coulomb": ["BeltParameters", "CoulombCycle", "coulomb_cycle", "stick_slip_margin", "stick_slip_exists",
                 "max_belt_speed", "min_normal_force"],
    "_eventdriven": ["BeltChain", "EventDrivenResult", "integrate_stick_slip", "belt_oscillator", "two_mass_belt",
                     "weakening_strengthening_belt", "stick_slip_period", "one_mass_cycle", "orbit_error"],
    "_henon": ["HenonResult", "henon_stick_slip"],
    "_twophase": ["TwoPhaseResult", "two_phase_explicit", "two_phase_event_driven", "shaw_forcing", "SHAW_P",
                  "OrnsteinUhlenbeck", "thermal_forcing"],
    "_quasistatic": ["QuasiStaticResponse", "quasi_static_response"],
    "_calibration": ["CALIBRATION_PARAMETERS", "CalibrationResult", "calibrate_quasi_static", "calibration_table",
                     "synthetic_record"],
    "_results": ["CoulombBranch", "coulomb_branch", "load_coulomb_branch"],
    "_declared": ["force_from_model"],
})

__all__ = [
    # exact damped Coulomb stick-slip (seed 000 §3)
    "BeltParameters", "CoulombCycle", "coulomb_cycle", "stick_slip_margin", "stick_slip_exists",
    "max_belt_speed", "min_normal_force", "CoulombBranch", "coulomb_branch", "load_coulomb_branch",
    # event-driven stick-slip (seeds 000, 004)
    "BeltChain", "EventDrivenResult", "integrate_stick_slip", "belt_oscillator", "two_mass_belt", "weakening_strengthening_belt",
    "stick_slip_period", "one_mass_cycle", "orbit_error", "HenonResult", "henon_stick_slip",
    # two-phase model of seed 001
    "TwoPhaseResult", "two_phase_explicit", "two_phase_event_driven", "shaw_forcing", "SHAW_P",
    "OrnsteinUhlenbeck", "thermal_forcing", "force_from_model",
    # quasi-static model and calibration (seed 001 §2.7, §4)
    "QuasiStaticResponse", "quasi_static_response", "CALIBRATION_PARAMETERS", "CalibrationResult",
    "calibrate_quasi_static", "calibration_table", "synthetic_record",
]
