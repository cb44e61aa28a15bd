"""Issue 28: a long code generation shows where it is inside its stages (the recast's equations
and rows, the parts of each backend's sources), on request or on a terminal; quiet otherwise."""
from frictionkit.codegen import _progress, generate_sources
from tests.models import chain_spec


def test_progress_true_names_the_equations_rows_and_parts(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "INTERVAL", 0.0)          # every report refreshes the bar
    spec = chain_spec.chain(3, name="chain_inside")
    generate_sources(spec, "Vb", backends=("numpy", "cython"), progress=True)
    err = capsys.readouterr().err
    assert "generating chain_inside (6 states)" in err
    assert "recast: equation 5/6" in err, err                 # 0-based: the sixth equation started
    assert "recast: quadratic terms of row" in err, err
    for part in ("NumPy sources: Jacobian", "Cython sources: C Jacobian"):
        assert part in err, err


def test_default_off_a_terminal_shows_no_progress_inside_stages(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "INTERVAL", 0.0)
    monkeypatch.setattr("frictionkit.codegen.api.PROGRESS_MIN_STATES", 2)      # the bar itself shown
    generate_sources(chain_spec.chain(2, name="chain_inside_log"), "Vb", backends=("numpy",))
    err = capsys.readouterr().err
    assert "generating chain_inside_log" in err and "recast: equation" not in err, err
    assert _progress._REPORTER.get() is None                  # nothing left installed


def test_no_bar_no_reporter(capsys):
    generate_sources(chain_spec.chain(1, name="chain_inside_quiet"), "Vb", backends=("numpy",), progress=False)
    assert capsys.readouterr().err == "" and _progress._REPORTER.get() is None
