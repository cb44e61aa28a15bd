"""The one ``--set NAME=VALUE`` type of the CLI: values, and errors that name the bad item."""
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.cli._params import ASSIGNMENT, param_values


def test_items_split_on_commas_and_spaces_later_wins():
    groups = (ASSIGNMENT.convert("n=10,FN=5", None, None), ASSIGNMENT.convert(" FN=2.5e-1 ", None, None))
    assert groups[0] == (("n", 10.0), ("FN", 5.0))
    assert param_values(groups) == {"n": 10.0, "FN": 0.25}


@pytest.mark.parametrize("command", [
    ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "1"],
    ["hopf-curve", "belt", "--param", "Vb", "--start", "0.05", "--stop", "1", "--second", "FN", "--min", "1",
     "--max", "5"],
    ["study", "convergence", "belt", "--param", "Vb", "--at", "0.5"],
    ["coulomb"],
])
@pytest.mark.parametrize("item, words", [("n10", "expected NAME=VALUE"), ("FN=five", "'five' is not a number"),
                                         ("=3", "expected NAME=VALUE")])
def test_every_command_names_the_bad_item(command, item, words):
    r = CliRunner().invoke(main, command + ["--set", item])
    assert r.exit_code == 2 and "--set" in r.output and repr(item) in r.output and words in r.output


def test_positional_assignments_use_the_same_type():
    r = CliRunner().invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "1",
                                  "--set", "n=10", "FN=x"])
    assert r.exit_code == 2 and "'FN=x'" in r.output and "is not a number" in r.output
