"""Branch results: HDF5 layout of issue 3, round trip, and plots."""
import json

import h5py
import numpy as np
import pytest

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._branch import Branch, load_branch, load_run, save_run
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.results._plots import plot_branches, plot_orbit
from tests.models import belt_handwritten


@pytest.fixture(scope="module")
def branches():
    m = Model(belt_handwritten, {"n": 10, "FN": 5})
    eq = equilibrium_branch(m, 0.05, 12)
    disc, Z, d = periodic_start_from_hopf(m, eq.special_points("hopf")[0], 5)
    per = periodic_branch(disc, Z, 0.0, 12, d)
    return eq, per


def test_hdf5_layout_readable_without_frictionkit(branches, tmp_path):
    eq, per = branches
    path = tmp_path / "branch.h5"
    per.save(path)
    with h5py.File(path, "r") as f:
        for key in ("model", "model_hash", "continuation_parameter", "method", "frictionkit_version"):
            assert key in f.attrs
        assert f.attrs["model"] == "belt" and f.attrs["continuation_parameter"] == "Vb"
        assert f.attrs["method"] == "anm"
        n = len(f["param"])
        assert f["omega"].shape == (n,) and set(f["ptp"]) == {"y", "v"}
        stable = f["stable"][()]
        # B1 is supercritical: stable cycles first, unstable ones past the fold (seed 000 Fig. 4);
        # NaN (uncertain) only beside the fold, where at H = 5 the multiplier that crosses +1 is
        # nearer the circle than the trivial one's error (the branch's message says so)
        finite = np.isfinite(stable)
        assert set(np.unique(stable[finite])) == {0.0, 1.0} and stable[0] == 1.0 and stable[-1] == 0.0
        fold = f["special/param"][()][[k.decode() == "fold" for k in f["special/kind"][()]]]
        assert all(np.min(np.abs(fold - v)) < 0.01 for v in f["param"][()][~finite])
        assert finite.all() or "uncertain" in str(f.attrs["message"])
        kinds = [k.decode() if isinstance(k, bytes) else k for k in f["special/kind"][()]]
        assert kinds == ["fold", "hopf"]
        assert f["special/param"].shape == f["special/omega"].shape == (2,)
        sol = f["solution"]
        H = int(sol.attrs["harmonics"])
        variables = json.loads(sol.attrs["variables"])
        assert H == 5 and sol.shape == (n, len(variables) * (2 * H + 1) + 2)
        assert sol.attrs["index_omega"] == sol.shape[1] - 2 and sol.attrs["index_lam"] == sol.shape[1] - 1
        # the documented layout is enough to rebuild the peak-to-peak amplitude of y
        Z = sol[n // 2]
        c = Z[: 2 * H + 1]
        th = np.linspace(0, 2 * np.pi, 200001)
        k = np.arange(1, H + 1)
        y = c[0] + c[1::2] @ np.cos(np.outer(k, th)) + c[2::2] @ np.sin(np.outer(k, th))
        assert np.ptp(y) == pytest.approx(f["ptp/y"][n // 2], rel=1e-9)
        assert Z[-1] == f["param"][n // 2] and Z[-2] == f["omega"][n // 2]


def test_round_trip(branches, tmp_path):
    for br in branches:
        path = tmp_path / f"{br.kind}.h5"
        br.save(path)
        back = load_branch(path)
        assert isinstance(back, Branch) and back.kind == br.kind and back.status == br.status
        np.testing.assert_array_equal(back.param, br.param)
        np.testing.assert_array_equal(back.solutions, br.solutions)
        np.testing.assert_array_equal(back.ptp["y"], br.ptp["y"])
        assert [(s.kind, s.param) for s in back.special] == [(s.kind, s.param) for s in br.special]
        assert back.counters == br.counters
        assert back.provenance["parameters"]["n"] == 10.0
    eq = load_branch(tmp_path / "equilibrium.h5")
    assert np.all(np.isnan(eq.omega)) and eq.eigenvalues.dtype == complex
    assert set(np.unique(eq.stable)) == {0.0, 1.0}


def test_plots(branches, tmp_path):
    eq, per = branches
    per.stable[:] = np.where(np.arange(len(per)) < 10, 1.0, 0.0)   # pretend stability is known
    fig = plot_branches([eq, per])
    ax = fig.axes[0]
    styles = {line.get_linestyle() for line in ax.get_lines() if len(line.get_xdata()) > 1}
    assert "--" in styles and "-" in styles                     # unstable dashed, stable solid
    plot_branches([eq, per], path=tmp_path / "b.png")
    plot_orbit(per, len(per) // 2, path=tmp_path / "o.png")
    assert (tmp_path / "b.png").stat().st_size > 10_000 and (tmp_path / "o.png").stat().st_size > 10_000
    per.stable[:] = np.nan
    t, x = per.time_series(len(per) // 2, n_t=400)
    assert t[-1] == pytest.approx(2 * np.pi / per.omega[len(per) // 2] * 399 / 400)
    assert np.ptp(x[0]) == pytest.approx(per.ptp["y"][len(per) // 2], rel=1e-3)


def test_run_file_keeps_both_branches_in_groups(branches, tmp_path):
    eq, per = branches
    path = tmp_path / "run.h5"
    save_run(path, equilibria=eq, periodic=per)
    with h5py.File(path, "r") as f:                # the documented layout, with h5py alone
        assert f.attrs["layout"] == "run" and f.attrs["main"] == "periodic"
        assert set(f) == {"equilibria", "periodic"}
        assert f["periodic"].attrs["kind"] == "periodic" and f["equilibria"].attrs["kind"] == "equilibrium"
        re, im = f["periodic/multipliers_re"][()], f["periodic/multipliers_im"][()]
        assert re.dtype == im.dtype == np.float64 and "multipliers" not in f["periodic"]
        # |mu| of the plain parts is the saved largest non-trivial modulus's bound (the trivial one is 1)
        mx = f["periodic/max_multiplier"][()]
        done = np.isfinite(mx)                     # NaN where not computed (inherited stable flag)
        assert done.any() and np.all(np.abs(re + 1j * im)[done].max(axis=1) >= mx[done] - 1e-12)
    main, other = load_branch(path), load_branch(path, "equilibria")
    assert main.kind == "periodic" and other.kind == "equilibrium"
    np.testing.assert_array_equal(main.multipliers, per.multipliers)
    np.testing.assert_array_equal(other.param, eq.param)
    assert [b.kind for b in load_run(path)] == ["equilibrium", "periodic"]
    only_eq = tmp_path / "eq_run.h5"
    save_run(only_eq, equilibria=eq)
    assert load_branch(only_eq).kind == "equilibrium"
    with pytest.raises(InputError, match=r"eq_run.h5: holds only the equilibria branch, not 'periodic'"):
        load_branch(only_eq, "periodic")
    with pytest.raises(InputError, match="no branch 'orbits'"):
        load_branch(path, "orbits")


def test_old_single_branch_file_with_complex_multipliers_still_loads(branches, tmp_path):
    _, per = branches
    path = tmp_path / "old.h5"
    per.save(path)
    with h5py.File(path, "a") as f:                # rewrite as files before issue 16 were
        method = f["multipliers_re"].attrs["method"]
        mult = f["multipliers_re"][()] + 1j * f["multipliers_im"][()]
        del f["multipliers_re"], f["multipliers_im"]
        f["multipliers"] = mult
        f["multipliers"].attrs["method"] = method
    back = load_branch(path)
    np.testing.assert_array_equal(back.multipliers, per.multipliers)
    assert back.stability_method == per.stability_method
    assert load_branch(path, "periodic").kind == "periodic"
    with pytest.raises(InputError, match="holds only the periodic branch"):
        load_branch(path, "equilibria")
