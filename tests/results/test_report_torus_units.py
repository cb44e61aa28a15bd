"""The report's torus table and axes carry the units the torus branch saved from its model
(issue 29: "units in every table"), as the periodic points' table does."""
import numpy as np

from frictionkit.runtime.discretizations._torus import harmonic_set
from frictionkit.runtime.drivers._torus import TorusBranch
from frictionkit.runtime.results._report import _torus_data, _torus_figure


def _torus(units):
    K = harmonic_set(2, 2, "box")
    n, P = 2, 3
    sol = np.zeros((P, n * (2 * len(K) - 1) + 3))
    sol[:, 1] = 1.0                                   # some invariant curve to draw
    prov = dict(harmonics=[2, 2], truncation="box", units=units)
    return TorusBranch(model="m", lam_name="A", lam=np.linspace(1, 1.2, P), omega1=np.full(P, 2.5),
                       omega2=np.full(P, 1.0), rotation_number=np.full(P, 0.4), torus_size=np.ones(P),
                       amplitudes=np.ones((P, n)), states=("x", "v"), solutions=sol, status="range", message="",
                       provenance=prov)


def test_torus_table_and_axes_name_their_units():
    tb = _torus({"A": "N", "t": "s", "x": "m", "v": "m/s"})
    data = _torus_data(tb, 0)
    keys = data["keys"]
    assert keys[:3] == ["A [N]", "omega1 [rad/s]", "omega2 [rad/s]"]
    assert "peak-to-peak x [m]" in keys and "peak-to-peak v [m/s]" in keys
    assert data["labels"] == ["x [m]", "v [m/s]"]
    assert len(keys) == len(data["points"][0]["v"])

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    fig = _torus_figure([tb], go, make_subplots)
    assert fig.layout.xaxis.title.text == "A [N]"
    # a model without units: the bare names, as before
    bare = _torus_data(_torus({}), 0)["keys"]
    assert bare[:3] == ["A", "omega1", "omega2"] and "peak-to-peak x" in bare
