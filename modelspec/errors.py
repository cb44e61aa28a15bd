"""Errors raised while declaring or validating a model.

Every message names the equation and the symbol at fault and says what to do.

:class:`FrictionkitError` is the root of every error frictionkit raises on purpose; the
runtime's own errors (``frictionkit.runtime.errors``) import it from here, so that
``except FrictionkitError`` catches every expected failure and nothing else.
"""


class FrictionkitError(Exception):
    """Root of every error frictionkit raises on purpose (bad model, bad input, failed build)."""


class ModelSpecError(FrictionkitError, ValueError):
    """Base class: a model declaration is not valid.

    Typical causes: a symbol used but never declared, a state without an equation, a
    name declared twice, a non-analytic function in an equation, an unknown continuation
    parameter.
    """


class UndeclaredSymbolError(ModelSpecError):
    """An equation uses a symbol that is neither a state, a parameter nor a definition."""


class MissingEquationError(ModelSpecError):
    """A state or algebraic variable has no equation."""


class UnknownStateError(ModelSpecError):
    """An equation is given for something that is not a declared state or variable."""


class DuplicateNameError(ModelSpecError):
    """A name is declared twice (as parameter, state, definition or contact).

    Names are compared after Unicode NFKC normalisation (Python folds ``ﬁ`` into ``fi``
    and ``𝐲`` into ``y`` in source code), and a name may not collide with an identifier
    the generator makes (e.g. ``<param>_c``, the constant-in-time variable of a
    continuation parameter that enters non-linearly).
    """


class NonAnalyticError(ModelSpecError):
    """A non-analytic function (sign, Abs, Heaviside, Piecewise, Min, Max, floor...) appears.

    The message suggests a smooth regularization; models that really need such a law
    are routed to the sampled path (DESIGN §5.4) with ``allow_nonanalytic=True``.
    """


class UnknownParameterError(ModelSpecError):
    """A continuation parameter (or an override) names no declared parameter."""


class ForcingError(ModelSpecError):
    """Time appears in a way the model cannot use (non-harmonic, or inside a nonlinearity)."""


class InvalidConstantError(ModelSpecError):
    """An equation holds a complex constant (``I``, ``sqrt(-2)``) or a non-finite one
    (``oo``, ``nan``, ``zoo`` from ``1/0``); frictionkit models are real and finite."""


class InvalidTextError(ModelSpecError):
    """A description, unit or doc string is not text (or cannot be written as UTF-8)."""


class ParameterValueError(ModelSpecError):
    """Parameter values the model cannot be evaluated at: not finite, a zero mass, a zero
    denominator or a negative square-root argument in a parameter-only sub-expression.

    Raised at validation for the defaults and by a generated module's
    ``check_parameters(p)`` when a model is loaded with other values.
    """


class UnclassifiableLawWarning(FrictionkitError, UserWarning):
    """A friction law takes states besides the relative velocity (an internal state such as a
    LuGre bristle deflection) and its steady sliding cannot be solved for in closed form.

    The model is valid and its branches are computed as usual; only the motion labels of the
    contact's orbits, which need the law as a function of the relative velocity alone
    (``ModelSpec.steady_sliding_law``), are ``"unknown"``.  A warning (under the one root, so
    that ``-W error`` turns it into a :class:`FrictionkitError`).
    """


#: how a declared domain (``ModelSpec.parameter(..., positive=True, bounds=...)``) is named
DECLARED = "the declaration"

#: kinds of parameter conditions (``ModelSpec.parameter_conditions``) and what they require
CONDITION_TEXT = {"nonzero": "must not be 0", "nonnegative": "must not be negative",
                  "positive": "must be positive"}
_ROLE = {"nonzero": "is a denominator (or a mass)", "nonnegative": "is under a square root",
         "positive": "is under a root or a logarithm"}


def parameter_message(where, kind, expr_text, names, value, values, what="value"):
    """Message of a failed parameter condition, naming the parameters involved.

    Plain strings only: generated modules format their ``check_parameters`` errors with it.
    """
    given = ", ".join(f"{n} = {values[n]!r}" for n in names if n in values)
    plural = "s" if len(names) > 1 else ""
    role = f", as {where} requires" if where.startswith(DECLARED) else f"; it {_ROLE[kind]} in {where}"
    return (f"parameter{plural} {', '.join(repr(n) for n in names)} ({what}{plural} {given}): "
            f"{expr_text} = {value:.6g} {CONDITION_TEXT[kind]}{role}; choose other values")
