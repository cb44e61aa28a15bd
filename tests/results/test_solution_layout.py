"""The documented layout of ``solution`` in a saved branch (``results/_branch.py``, README
"Results"), read with h5py alone: ``variables`` names exactly the rows of ``Y`` (the recast's
variables for its harmonic balance, the states for the AFT of the states), and the orbit
rebuilt from the coefficients by the documented formula has the peak-to-peak amplitudes the
file's ``ptp`` columns hold (computed by the code from the discretization, not from the file).
Collocation branches say their unknowns are the discretization's own (``harmonics`` = -1)."""
import json

import h5py
import numpy as np
import pytest

from frictionkit.runtime import load_model
from frictionkit.runtime.drivers._compose import run_continuation


@pytest.mark.parametrize("method", ["aft", "hbm", "collocation"])
def test_solution_rows_are_what_variables_names(method, tmp_path):
    m = load_model("belt", "Vb")
    _, per = run_continuation(m, 0.05, 1.0, start="hopf", harmonics=10, discretization=method, progress=False,
                              options=dict(max_steps=5, stability=False))
    per.save(tmp_path / "b.h5")
    with h5py.File(tmp_path / "b.h5") as f:
        g = f["periodic"] if "periodic" in f else f
        sol = g["solution"]
        names = json.loads(sol.attrs["variables"])
        H, i_om, i_lam = int(sol.attrs["harmonics"]), int(sol.attrs["index_omega"]), int(sol.attrs["index_lam"])
        Z = sol[()]
        ptp = g["ptp/y"][()]
        layout = str(sol.attrs["layout"])
    assert i_lam == Z.shape[1] - 1
    if method == "collocation":
        assert H == -1 and names == ["y", "v"] and layout.startswith("the unknowns of the discretization")
        return
    assert names == (["y", "v"] if method == "aft" else list(m.variables))
    assert len(names) * (2 * H + 1) + 1 + (i_om >= 0) == Z.shape[1]
    # the documented formula: Y[i*(2H+1)+k], k = 0 mean, 2j-1 cos(j omega t), 2j sin(j omega t)
    Y = Z[:, :len(names) * (2 * H + 1)].reshape(len(Z), len(names), 2 * H + 1)
    th = 2 * np.pi * np.arange(4096) / 4096
    j = np.arange(1, H + 1)[:, None]
    y = (Y[:, 0, :1] + Y[:, 0, 1::2] @ np.cos(j * th) + Y[:, 0, 2::2] @ np.sin(j * th))
    # the file's ptp are the exact extrema of the series; 4096 samples of it give them to 6.1e-10
    # (AFT) and 6.0e-10 (HBM) relative, measured, the same with 65536
    np.testing.assert_allclose(y.max(axis=1) - y.min(axis=1), ptp, rtol=1e-8, atol=1e-12)
