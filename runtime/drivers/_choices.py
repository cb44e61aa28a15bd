"""What the command line shows of the drivers: the names users type for the periodic-orbit
methods (``_methods.py`` says what each means) and the default accuracy of a frequency
response (``_forced.py``).

A module of its own, importing nothing: ``frictionkit continue --help`` and ``frictionkit frf
--help`` list these as choices and defaults, and must not import the discretizations."""

__all__ = ["PERIODIC_METHODS", "TOLERANCE"]

# the names users type (CLI choices), the default first
PERIODIC_METHODS = ("aft", "hbm", "collocation", "collocation-recast", "aft-full")

#: default relative accuracy of a forced orbit's coefficients (the harmonic count is chosen for it)
TOLERANCE = 1e-8
