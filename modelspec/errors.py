"""Errors raised while declaring or validating a model.

Every message names the equation and the symbol at fault and says what to do.
"""


class ModelSpecError(ValueError):
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
    """A name is declared twice (as parameter, state, definition or contact)."""


class NonAnalyticError(ModelSpecError):
    """A non-analytic function (sign, Abs, Heaviside, Piecewise, Min, Max, floor...) appears.

    The message suggests a smooth regularization; models that really need such a law
    are routed to the sampled path (DESIGN §5.4) with ``allow_nonanalytic=True``.
    """


class UnknownParameterError(ModelSpecError):
    """A continuation parameter (or an override) names no declared parameter."""


class ForcingError(ModelSpecError):
    """Time appears in a way the model cannot use (non-harmonic, or inside a nonlinearity)."""
