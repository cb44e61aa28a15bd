"""A fold of cycles owns the multiplier crossing of +1 next to it (issue 26: a spurious ``bp``
next to the fold of the LuGre belt at H = 30).

At a fold exactly one multiplier passes +1 (and the tangent's ``lam`` component changes sign,
which is how the engine locates the fold, to the orbit's accuracy).  The Hill multipliers of
the LuGre belt at H = 30 are about 1 % off (the non-trivial one is 0.9895 at the fold), so
the root of ``Re(mu_a mu_b) - 1`` lies two branch points past the fold when the branch stores
four points per step (the CLI's default), outside the one-point window that attributed
crossings to folds: it was reported as a branch point "multiplier +1 without a fold".  The
branch has no symmetry that could make a branch point, and the bordered-determinant test,
independent of the multipliers, records none.
"""
import numpy as np
import pytest

from frictionkit.runtime.analysis._stability import _plus_crossing_owners
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import SpecialPoint
from tests.models.state_law_specs import lugre


@pytest.fixture(scope="module")
def lugre_h30():
    model = load_model(lugre(), "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 2.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 30)
    return periodic_branch(disc, Z, 0.0, 2.0, d, options=dict(points_per_step=4))


def test_the_fold_owns_its_plus_one_crossing_on_the_lugre_belt(lugre_h30):
    br = lugre_h30
    assert br.success and br.status == "equilibrium"       # from the first Hopf point to the second
    assert [s.kind for s in br.special if s.kind in ("fold", "bp")] == ["fold"]
    fold = br.special_points("fold")[0]
    c = fold.data["crossing_param"]
    # the crossing is a point of the branch near the fold: at most the fold's lam (a local
    # maximum of lam), at least the lam of the branch points four steps either side
    i = fold.index
    assert np.isfinite(c) and br.param[i - 16: i + 17].min() <= c <= fold.param
    # stable before the fold (the upper branch), unstable after the crossing
    assert br.stable[i - 4] == 1.0 and br.stable[i + 4] == 0.0


def _sp(kind, index):
    return SpecialPoint(kind, 1.0, 1.0, index, np.zeros(2))


def test_owner_rules():
    fold, pd, bp = _sp("fold", 10), _sp("pd", 14), _sp("bp", 30)
    # within the one-point window, as before
    assert _plus_crossing_owners([(10, 11, "fold")], [fold], [fold]) == [fold]
    # two points past the fold: the fold's own, displaced by the multipliers' error
    assert _plus_crossing_owners([(12, 13, "fold")], [fold], [fold]) == [fold]
    # ... before it too
    assert _plus_crossing_owners([(7, 8, "fold")], [fold], [fold]) == [fold]
    # a period doubling in between: not the fold's
    crossings = [(12, 13, "pd"), (16, 17, "fold")]
    assert _plus_crossing_owners(crossings, [fold], [fold, pd]) == [None, None]
    # the nearest of two: the other is a branch point of its own; a recorded branch point
    # (bordered determinant) owns the crossing next to it
    crossings = [(13, 14, "fold"), (20, 21, "fold"), (29, 30, "fold")]
    assert _plus_crossing_owners(crossings, [fold, bp], [fold, bp]) == [fold, None, bp]
