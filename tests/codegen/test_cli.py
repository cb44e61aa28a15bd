"""`frictionkit codegen` command line."""
from click.testing import CliRunner

from frictionkit.runtime.cli import main


def test_codegen_explain_prints_the_recast_and_validity(tmp_path):
    r = CliRunner().invoke(main, ["codegen", "belt", "--param", "Vb", "--explain", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "6 variables (2 states, 4 auxiliaries), 5 quadratic terms" in r.output
    assert "R1 > 0" in r.output and "a1 != 0" in r.output
    assert (tmp_path / "belt__Vb.py").exists() and (tmp_path / "belt__Vb.pyx").exists()


def test_codegen_user_model_file(tmp_path):
    f = tmp_path / "duffing.py"
    f.write_text("from frictionkit.modelspec import ModelSpec\n"
                 "def model():\n"
                 "    m = ModelSpec('duffing')\n"
                 "    k3 = m.parameter('k3', 1.0)\n"
                 "    x, v = m.second_order('x', velocity='v')\n"
                 "    m.ode(v, -x - k3 * x**3 - 0.1 * v)\n"
                 "    return m\n")
    r = CliRunner().invoke(main, ["codegen", str(f), "--param", "k3", "--backend", "numpy", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "duffing__k3.py").exists()


def test_codegen_bad_parameter_names_it():
    r = CliRunner().invoke(main, ["codegen", "belt", "--param", "Vbelt"])
    assert r.exit_code != 0
    assert "continuation parameter 'Vbelt' is not a parameter of model 'belt'" in r.output


def test_codegen_unknown_model_names_it():
    r = CliRunner().invoke(main, ["codegen", "beltt", "--param", "Vb"])
    assert r.exit_code != 0 and "unknown zoo model 'beltt'" in r.output


def test_codegen_help_is_readable():
    r = CliRunner().invoke(main, ["codegen", "--help"])
    assert r.exit_code == 0 and "--explain" in r.output and "frictionkit codegen belt --param Vb" in r.output
