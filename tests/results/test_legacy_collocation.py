"""Branch files written before issue 12 say ``discretization = "collocation"`` for the
quadratic-recast collocation (since then ``"collocation-recast"``, while the method name
``"collocation"`` means the collocation of the states): a restart reads them as the recast."""
import h5py
import numpy as np
import pytest

from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_branch


def test_a_saved_collocation_branch_restarts_as_the_recast_collocation(tmp_path):
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    _, per = run_continuation(m, 0.5, 0.6, start="simulation", harmonics=20, discretization="collocation-recast",
                              intervals=20, degree=3, progress=False, echo=lambda s: None,
                              options=dict(max_steps=3, stability=False))
    assert per.provenance["discretization"] == "collocation-recast"
    path = tmp_path / "old.h5"
    per.save(path)
    with h5py.File(path, "a") as f:            # what the file said before the rename
        f.attrs["discretization"] = "collocation"
    old = load_branch(path)
    assert old.provenance["discretization"] == "collocation"
    again = old.restart(1, stop=0.6, options=dict(max_steps=2, stability=False))
    assert again.provenance["discretization"] == "collocation-recast"
    assert again.provenance["sizes"]["n_intervals"] == 20
    np.testing.assert_allclose(again.solutions[0][:-1], old.solutions[1][:-1], rtol=0, atol=1e-8)
    assert again.param[0] == pytest.approx(old.param[1], abs=1e-12)
