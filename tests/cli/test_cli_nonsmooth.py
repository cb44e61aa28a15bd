"""`frictionkit coulomb`, `compare coulomb`, `twophase`, `calibrate` command lines."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.nonsmooth import coulomb_cycle, max_belt_speed, coulomb_branch


def test_coulomb_command_prints_the_exact_values():
    r = CliRunner().invoke(main, ["coulomb", "--set", "Vb=0.5", "FN=5", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["period"] == coulomb_cycle(Vb=0.5, FN=5).period
    assert out["V_max"] == max_belt_speed(FN=5)[0]
    # the scaling V_max / F_N = V_b / F_min holds between the two printed limits
    assert out["F_min"] == pytest.approx(0.5 * 5 / out["V_max"], rel=1e-8)


def test_coulomb_command_rejects_unknown_parameter():
    r = CliRunner().invoke(main, ["coulomb", "--set", "n=10"])
    assert r.exit_code != 0 and "unknown belt parameter 'n'" in r.output
    r = CliRunner().invoke(main, ["coulomb", "--set", "Vb=-1"])
    assert r.exit_code != 0 and "Vb" in r.output


def test_coulomb_old_spellings_still_work_with_a_deprecation_warning():
    old = CliRunner().invoke(main, ["coulomb", "--vb", "0.5", "--fn", "5"])
    new = CliRunner().invoke(main, ["coulomb", "--set", "Vb=0.5", "FN=5"])
    assert old.exit_code == 0 and "deprecated" in old.output and "--set Vb=VALUE" in old.output
    assert old.output.splitlines()[-6:] == new.output.splitlines()[-6:]


def test_compare_coulomb_overlays_a_branch_file(tmp_path):
    # a branch file with the issue-3 layout (here another Coulomb branch stands in for a
    # regularized one written by `frictionkit continue --out`)
    reg = coulomb_branch("Vb", np.linspace(0.05, 0.9, 20), mud=0.25).save(tmp_path / "reg.h5")
    prefix = tmp_path / "cmp"
    r = CliRunner().invoke(main, ["compare", "coulomb", "--param", "Vb", "--points", "40",
                                  "--branch", str(reg), "--label", "mud=0.25", "--out-prefix", str(prefix),
                                  "--out", str(tmp_path / "c.h5"), "-q"])
    assert r.exit_code == 0, r.output
    for name in ("cmp_amplitude_Vb.png", "cmp_pulsation_Vb.png", "cmp_phase.png", "c.h5"):
        assert (tmp_path / name).stat().st_size > 1000
    r = CliRunner().invoke(main, ["compare", "coulomb", "--param", "FN", "--branch", str(reg),
                                  "--out-prefix", str(prefix)])
    assert r.exit_code != 0 and "continued in 'Vb'" in r.output
    r = CliRunner().invoke(main, ["compare", "coulomb", "--branch", str(tmp_path / "missing.h5")])
    assert r.exit_code != 0 and "does not exist" in r.output


def test_twophase_command(tmp_path):
    r = CliRunner().invoke(main, ["twophase", "--h", "1e-3", "--t-end", "14", "--out", str(tmp_path / "f1.png")])
    assert r.exit_code == 0, r.output
    assert "event-driven reference" in r.output and (tmp_path / "f1.png").exists()
    r = CliRunner().invoke(main, ["twophase", "--h", "1e-3", "--t-end", "10", "--ou", "--seed", "3",
                                  "--out", str(tmp_path / "f2.png")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["twophase", "--h", "0"])
    assert r.exit_code != 0 and "time step" in r.output


def test_regularized_orbit_overlay_from_a_branch_file(tmp_path):
    # a one-harmonic branch y = a cos(w t), v = -a w sin(w t) with growing a, written by the
    # runtime core's Branch.save: the overlay picks the first point reaching the amplitude
    from frictionkit.runtime.results._branch import Branch
    from frictionkit.runtime.cli._nonsmooth import _orbit_at_amplitude
    a = np.array([1e-4, 2e-4, 3e-4, 4e-4, 2.6e-4])
    w = 1200.0
    Z = np.array([[0, ak, 0, 0, 0, -ak * w, w, 0.1 * k] for k, ak in enumerate(a)])
    br = Branch(kind="periodic", states=("y", "v"), variables=("y", "v"), harmonics=1, index_omega=6,
                solutions=Z, tangents=np.zeros_like(Z), param=Z[:, -1], omega=np.full(5, w),
                ptp={"y": 2 * a, "v": 2 * a * w}, vmin={"y": -a, "v": -a * w}, vmax={"y": a, "v": a * w},
                mean={"y": 0 * a, "v": 0 * a}, provenance={"continuation_parameter": "Vb"})
    br.save(tmp_path / "b.h5")
    param, y, v = _orbit_at_amplitude(tmp_path / "b.h5", 5.5e-4)
    assert param == pytest.approx(0.2)          # 2a = 6e-4 at index 2 (not the last point)
    assert np.ptp(y) == pytest.approx(6e-4, rel=1e-4)
    assert np.ptp(v) == pytest.approx(6e-4 * w, rel=1e-4)
