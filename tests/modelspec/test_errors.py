"""Malformed model declarations: each raises a specific error whose message names the culprit."""
import pytest
import sympy as sp

from frictionkit.codegen import RecastError, recast
from frictionkit.modelspec import (DuplicateNameError, ForcingError, MissingEquationError, ModelSpec,
                                   ModelSpecError, NonAnalyticError, UndeclaredSymbolError,
                                   UnknownParameterError, UnknownStateError, laws)


def base():
    m = ModelSpec("osc")
    k = m.parameter("k", 1.0)
    x, v = m.second_order("x", velocity="v")
    return m, k, x, v


def test_undeclared_symbol_names_equation_and_symbol():
    m, k, x, v = base()
    c = sp.Symbol("c")
    m.ode(v, -k * x - c * v)
    with pytest.raises(UndeclaredSymbolError, match=r"equation for 'v'.*'c'.*m.parameter\('c'"):
        m.validate()


def test_state_without_equation():
    m, k, x, v = base()
    with pytest.raises(MissingEquationError, match=r"state 'v'.*no equation.*m.ode\(v"):
        m.validate()


def test_equation_for_unknown_state():
    m, k, x, v = base()
    z = sp.Symbol("z", real=True)
    with pytest.raises(UnknownStateError, match=r"'z' is not a declared state"):
        m.ode(z, x)


def test_duplicate_name():
    m, k, x, v = base()
    with pytest.raises(DuplicateNameError, match=r"parameter 'k' is already declared as a parameter"):
        m.parameter("k", 2.0)


def test_state_named_like_a_parameter():
    m, k, x, v = base()
    with pytest.raises(DuplicateNameError, match=r"state 'k' is already declared as a parameter"):
        m.state("k")


def test_parameter_used_as_state():
    m, k, x, v = base()
    with pytest.raises(UnknownStateError, match=r"'k' is a parameter, not a state"):
        m.ode(k, x)


@pytest.mark.parametrize("func,name,hint", [
    (sp.sign, "sign", r"v/sqrt\(v\*\*2 \+ delta\*\*2\)"),
    (sp.Abs, "Abs", r"sqrt\(v\*\*2 \+ delta\*\*2\)"),
    (sp.Heaviside, "Heaviside", r"\(1 \+ v/sqrt"),
    (sp.floor, "floor", "sampled path"),
])
def test_non_analytic_function_is_refused_with_a_regularization(func, name, hint):
    m, k, x, v = base()
    m.ode(v, -k * x - func(v))
    with pytest.raises(NonAnalyticError, match=rf"equation for 'v': {name} .*{hint}"):
        m.validate()


def test_piecewise_law_is_refused():
    m, k, x, v = base()
    th = m.parameter("theta", 1.0)
    ka = m.parameter("kappa", 0.1)
    mu = m.friction("bit", laws.drill_string, v, theta=th, kappa=ka)
    m.ode(v, -k * x + mu)
    with pytest.raises(NonAnalyticError, match=r"definition 'mu_bit': Piecewise"):
        m.validate()
    m.validate(allow_nonanalytic=True)  # accepted for the sampled path
    m.sampled = True
    assert recast(m, "k").sampled


@pytest.mark.parametrize("func", [sp.Min, sp.Max])
def test_min_max_refused(func):
    m, k, x, v = base()
    m.ode(v, -k * x + func(v, 0))
    with pytest.raises(NonAnalyticError, match=rf"{func.__name__}"):
        m.validate()


def test_unknown_continuation_parameter():
    m, k, x, v = base()
    m.ode(v, -k * x)
    with pytest.raises(UnknownParameterError, match=r"continuation parameter 'Vb' is not a parameter of model "
                                                    r"'osc'; its parameters are k"):
        recast(m, "Vb")


def test_invalid_and_reserved_names():
    m = ModelSpec("osc")
    with pytest.raises(ModelSpecError, match=r"'2x' is not a valid identifier"):
        m.state("2x")
    with pytest.raises(ModelSpecError, match=r"'t' is reserved"):
        m.parameter("t", 1.0)
    with pytest.raises(ModelSpecError, match=r"model name 'my model'"):
        ModelSpec("my model")


def test_non_numeric_default():
    m = ModelSpec("osc")
    with pytest.raises(ModelSpecError, match=r"parameter 'k': default 'stiff' is not a number"):
        m.parameter("k", "stiff")
    with pytest.raises(ModelSpecError, match=r"parameter 'k': default .* must be finite"):
        m.parameter("k", float("nan"))


def test_equation_that_is_not_an_expression():
    m, k, x, v = base()
    with pytest.raises(ModelSpecError, match=r"equation for 'v': .* is not a"):
        m.ode(v, [x, k])


def test_time_without_forcing_declaration():
    m, k, x, v = base()
    m.ode(v, -k * x + sp.cos(m.t))
    with pytest.raises(ForcingError, match=r"equation for 'v': time t appears but no forcing frequency"):
        m.validate()


def test_forcing_at_another_frequency():
    m, k, x, v = base()
    w = m.parameter("w", 1.0)
    m.forcing(w)
    m.ode(v, -k * x + sp.cos(2 * w * m.t))
    with pytest.raises(ForcingError, match=r"cos\(2\*t\*w\) is not a forcing at the declared frequency"):
        m.validate()


def test_parametric_forcing_is_refused_by_the_recast():
    m, k, x, v = base()
    w = m.parameter("w", 1.0)
    m.forcing(w)
    m.ode(v, -k * x * sp.cos(w * m.t))
    with pytest.raises(RecastError, match=r"equation for 'v': the forcing .* must enter additively"):
        recast(m, "k")


def test_function_without_a_quadratic_recast_is_named():
    m, k, x, v = base()
    m.ode(v, -k * x - sp.erf(v))
    with pytest.raises(RecastError, match=r"equation for 'v': erf in erf\(v\) .*no quadratic recast; supported: exp"):
        recast(m, "k")


def test_law_with_wrong_parameters():
    m, k, x, v = base()
    with pytest.raises(ModelSpecError, match=r"contact 'c': law regularized rejected its parameters"):
        m.friction("c", laws.regularized, v, mus=0.4)


def test_algebraic_variable_without_constraint():
    m, k, x, v = base()
    z = m.algebraic_variable("z")
    m.ode(v, -k * x + z)
    with pytest.raises(MissingEquationError, match=r"algebraic variable 'z'.*m.constraint\(z"):
        m.validate()


def test_mass_depending_on_a_state():
    m, k, x, v = base()
    m.ode(v, -k * x, mass=1 + x**2)
    with pytest.raises(ModelSpecError, match=r"mass of 'v' depends on \['x'\]"):
        m.validate()


def test_second_order_position_equation_is_automatic():
    m, k, x, v = base()
    with pytest.raises(ModelSpecError, match=r"'x' is the position of a second-order coordinate"):
        m.ode(x, v)


def test_model_file_without_model_function(tmp_path):
    from frictionkit.codegen import resolve_spec
    f = tmp_path / "empty_model.py"
    f.write_text("x = 1\n")
    with pytest.raises(ModelSpecError, match=r"empty_model.py' defines neither model\(\) nor MODEL"):
        resolve_spec(str(f))
