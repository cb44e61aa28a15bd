"""The seed-000 map (belt, n = 10, in (Vb, FN)): its region boundaries against the codim-2
continuations of the Hopf point and of the fold (``hopf_curve``, ``fold_curve``: a different
computation, a Newton continuation of the bifurcation conditions themselves).

And seed 002's bistable band (weak-strong law) in (v_d, mu_v) against ``v_lw``.

The tasks run in this process through :func:`run_task` (the function the Dask workers run),
so the map needs no cluster.
"""
from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

from frictionkit.runtime.analysis._curves import BifurcationCurve, fold_curve, hopf_curve
from frictionkit.runtime.analysis._energy import _law, v_lw
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.sweeps import (REGIONS, SweepSpec, SweepStore, plot_sweep_map, region_codes, region_grid,
                                        run_task)

from ._serial import serial_continuation

H = 5
FN = np.linspace(1.0, 10.0, 5)
LAM = np.linspace(0.05, 12.0, 240)
DX = LAM[1] - LAM[0]


@pytest.fixture(scope="module")
def belt_map(tmp_path_factory):
    eq, per = serial_continuation("Vb", 0.05, 12.0, {"n": 10}, {"FN": 5.0}, H)
    spec = SweepSpec.build("belt", eq.provenance["model_hash"], "Vb", 0.05, 12.0, {"FN": FN}, {"n": 10},
                           harmonics=H)
    out = tmp_path_factory.mktemp("map") / "belt.h5"
    store = SweepStore(out, spec)
    store.commit([run_task(spec.to_json(), i) for i in range(len(spec))])
    return store, eq, per


def _curve_lam(curve, mu):
    order = np.argsort(curve.mu)
    return np.interp(mu, curve.mu[order], curve.lam[order])


def _boundary(codes_row, before, after, lo=1.0):
    """First main-parameter value above ``lo`` where the region goes from ``before`` to ``after``."""
    for i in range(len(LAM) - 1):
        if LAM[i] > lo and codes_row[i] in before and codes_row[i + 1] in after:
            return 0.5 * (LAM[i] + LAM[i + 1])
    raise AssertionError(f"no transition {before} -> {after} in {codes_row}")


def test_map_boundaries_follow_the_hopf_and_fold_curves(belt_map, tmp_path):
    store, eq, per = belt_map
    x, y, codes, names = region_grid(store.table(), store.spec, lam=LAM)
    assert names == ("Vb", "FN") and codes.shape == (len(FN), len(LAM))
    assert (codes >= 0).all()
    model = per.discretization.model
    hopf = eq.special_points("hopf")[1]           # steady sliding regains stability here
    fold = per.special_points("fold")[0]          # the stick-slip cycles end here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hc = [hopf_curve(model, hopf, "FN", 0.9, 10.1, direction=d) for d in (1.0, -1.0)]
        fc = [fold_curve(per, fold, "FN", 0.9, 10.1, direction=d) for d in (1.0, -1.0)]
    for j, fn in enumerate(FN):
        # stick-slip only (1) -> coexistence (2) at the Hopf curve
        at = _boundary(codes[j], (1,), (2,))
        h = _curve_lam(hc[0] if fn >= 5 else hc[1], fn)
        assert abs(at - h) <= DX, (fn, at, h)
        # coexistence (2) -> stable sliding (0) at the fold curve; a fold beyond the range
        # (FN = 10) leaves coexistence up to its end
        f = _curve_lam(fc[0] if fn >= 5 else fc[1], fn)
        if f > LAM[-1] + DX:
            assert codes[j][-1] == 2 and max(fc[0].lam) > LAM[-1], (fn, f)
            continue
        at = _boundary(codes[j], (2,), (0,))
        assert abs(at - f) <= DX, (fn, at, f)
    fig = plot_sweep_map(store.table(), store.spec, tmp_path / "map.png", curves=hc + fc)
    assert (tmp_path / "map.png").stat().st_size > 0
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:4] == list(REGIONS)
    # a PD curve (saved and read back) is drawn in its own style with its codim-2 points named
    pd = dataclasses.replace(fc[0], kind="pd", codim2=[dict(kind="fold-flip", lam=float(fc[0].lam[1]),
                                                             mu=float(fc[0].mu[1]), located=True, multiplier=0.0)])
    pd.save(tmp_path / "pd.h5")
    fig = plot_sweep_map(store.table(), store.spec, tmp_path / "map2.png",
                         curves=hc + [BifurcationCurve.load(tmp_path / "pd.h5")])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()][4:] == ["hopf curve", "pd curve"]
    assert [t.get_text() for t in ax.texts] == ["fold-flip"]
    assert [ln.get_linestyle() for ln in ax.get_lines() if ln.get_label() == "pd curve"] == ["-."]


def test_table_matches_the_serial_branches(belt_map):
    """The summary columns say what the branches say (Hopf points, folds, criticality)."""
    store, eq, per = belt_map
    row = store.table().loc[2]                    # FN = 5.5 (task 2)
    e, p = serial_continuation("Vb", 0.05, 12.0, {"n": 10}, {"FN": FN[2]}, H)
    assert row["n_hopf"] == 2 and row["hopf_1"] == e.special_points("hopf")[0].param
    assert row["hopf_2"] == e.special_points("hopf")[1].param
    assert row["n_fold"] == len(p.special_points("fold"))
    assert row["status"] == "done"


def test_seed002_band_starts_at_v_lw():
    """Seed 002 (weak-strong law, delta = 0.1) in (v_d, mu_v): the Hopf point of each task is
    the stability bound v_lw of eq. (9) (an independent root find on the law's damping), and
    the band of coexistence runs from it up to the fold of cycles."""
    muv = [0.0, 0.04]
    model = load_model("weakstrong", continuation="vd", delta=0.1)
    spec = SweepSpec.build("weakstrong", model.model_hash, "vd", 3.0, 0.3, {"muv": muv}, {"delta": 0.1},
                           harmonics=10)
    for i, mu in enumerate(muv):
        row = run_task(spec.to_json(), i)["row"]
        bound = v_lw(_law(None, model.with_params(muv=mu), None), 0.05, (0.5, 2.0))
        assert row["n_hopf"] == 1 and row["hopf_1"] == pytest.approx(bound, rel=1e-8)
        fold = json.loads(row["folds"])[0]
        lam = np.linspace(0.3, 3.0, 541)
        codes = region_codes(row, lam)
        both = lam[codes == 2]
        assert both.min() - bound < lam[1] - lam[0] and fold - both.max() < lam[1] - lam[0]
        assert (codes[lam > fold + 0.01] == 0).all() and (codes[lam < bound - 0.01] == 1).all()
