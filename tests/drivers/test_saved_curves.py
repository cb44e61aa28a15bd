"""Curves of two parameters from a branch loaded from a file (issue 29: "fold_curve and
friends accept loaded branches"): ``frictionkit.runtime.fold_curve`` rebuilds the loaded
branch's discretization (``attach_discretization``, the restart's rebuild) and gives the same
curve as from the branch computed in the session; the analysis-level function, given a loaded
branch, says what to do."""
import numpy as np
import pytest

from frictionkit.runtime import attach_discretization, fold_curve, load_branch, load_model
from frictionkit.runtime.analysis._curves import fold_curve as analysis_fold_curve
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.errors import InputError


def test_fold_curve_from_a_saved_branch_is_the_session_one(tmp_path):
    m = load_model("belt", "Vb")
    _, per = run_continuation(m, 0.05, 12.0, start="hopf", harmonics=20, progress=False,
                              options=dict(stability=False))
    fold = per.special_points("fold")[0]
    per.save(tmp_path / "belt.h5")
    loaded = load_branch(tmp_path / "belt.h5")
    assert loaded.discretization is None
    with pytest.raises(InputError, match="attach_discretization"):
        analysis_fold_curve(loaded, loaded.special_points("fold")[0], "FN", 5.0, 5.5)
    session = fold_curve(per, fold, "FN", 5.0, 5.5)
    saved = fold_curve(loaded, loaded.special_points("fold")[0], "FN", 5.0, 5.5)
    assert saved.status == session.status == "range"
    # the same discretization rebuilt from the file's sizes: the same curve (measured identical
    # to the last bit; 1e-13 leaves room for nothing but rounding)
    assert len(saved) == len(session)
    np.testing.assert_allclose(saved.lam, session.lam, rtol=1e-13)
    np.testing.assert_allclose(saved.mu, session.mu, rtol=1e-13)
    assert attach_discretization(loaded) is loaded and loaded.discretization.kind == per.discretization.kind
