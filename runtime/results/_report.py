"""The interactive report: one self-contained HTML file (Plotly, its JavaScript inlined).

:func:`report` writes the bifurcation diagram of one or more branches (peak-to-peak
amplitude and angular frequency against the continuation parameter; stable solid, unstable
dashed, unknown dotted; special points marked and listed; periodic points coloured by motion
type) and, below it, the panel of the point last clicked: the time series of every state
over one period, a phase portrait, the Floquet multipliers on the unit circle (equilibria:
the eigenvalues of df/dx in the complex plane) and its numbers.  Two-parameter curves (Hopf
points of equilibria, folds of periodic orbits: anything with ``lam``, ``mu``, ``lam_name``,
``mu_name``, ``kind``) get a third plot, and sweep stores (:func:`load_sweep_map`) their map:
one point per task on the grid, coloured by outcome (a continuation sweep's region, as
``frictionkit plot-sweep --map`` colours it, over the region map itself for one swept
parameter; the motion type or status of ``orbit``/``simulate`` tasks), hover showing the
task's parameters and outcome.  Forced responses (periodic harmonic balances without an
``omega`` unknown) add a frequency-response figure: the amplitude and phase of the first
harmonic of the state against the forcing frequency, stability as line style, resonance peaks
marked, and the nonlinear modes given with them (discretization ``"epmc"``) as backbones.

Every point's orbit is computed here and stored in the page as JSON, so the page needs no
server and no network: the JavaScript is the Plotly library plus a few lines of glue
(``_GLUE``) that draw the figures and redraw the orbit panel on ``plotly_click``.

Nothing a model or a file says is markup or code in the page (DESIGN, STYLE "what to stop
doing"): the figures and the points are one ``application/json`` block (never executed, its
``<``, ``>`` and ``&`` written as JSON escapes, so no string can close it), the only
executable scripts are Plotly's and the glue (both fixed text, allowed by their SHA-256 in
the page's Content-Security-Policy, which refuses every other script, every network request
and every plug-in), the glue writes the numbers with ``textContent``, the title, heading and
special-point table are HTML-escaped, and every string handed to Plotly (trace names, axis
titles, hover text) is escaped with :func:`_text`, since Plotly reads a few tags in them.
"""
from __future__ import annotations

import base64
from functools import lru_cache
import hashlib
import html
import json
from pathlib import Path
import shlex

from matplotlib.colors import to_hex
import numpy as np

from ..errors import InputError
from ._atomic import atomic_path
from ._plots import MOTION_COLORS, MARKERS, axis_label, units_of
from ._sweeps import REGION_COLOURS, REGIONS, SweepMap, region_grid

__all__ = ["report", "report_html"]

_STYLE = {1: ("stable", "solid"), 0: ("unstable", "dash"), -1: ("stability unknown", "dot")}


def _g(v) -> str:
    """Six significant digits, the one format of every number the page shows."""
    return f"{float(v):.6g}"


def _text(value) -> str:
    """``value`` as Plotly text: Plotly reads ``<b>``, ``<br>``, ``<a href>``, ``<span style>``
    and entities in its strings, so a string from a model or a file is escaped and shown as
    the characters it holds."""
    return html.escape(str(value), quote=False)


def _round(a, digits=7):
    """Plain lists of ``digits`` significant digits (keeps the page small); NaN -> None."""
    a = np.asarray(a, dtype=float)
    out = np.array([float(f"{v:.{digits}g}") if np.isfinite(v) else np.nan for v in a.ravel()]).reshape(a.shape)
    return [None if v is None or not np.isfinite(v) else v for v in out.tolist()] if out.ndim == 1 \
        else [_round(row, digits) for row in out]


#: Resolution of the Fourier coefficients stored in the page, relative to the largest
#: coefficient of the state at that point: each is an integer multiple of it (rounded: off by
#: at most half of it), so the drawn orbit, a sum of 2H of them, is within ``H * QUANTUM`` of
#: that coefficient (4e-4 at the demo's H = 40; the panel's axes are about 400 pixels), and the
#: demo's 621 orbits take 0.16 MB instead of 3 MB.
QUANTUM = 1e-5


def _coefficients(br, i):
    """The orbit of periodic point ``i`` of a harmonic-balance branch as the page stores it: per
    state ``[c0, q, [k_1, k_2, ...]]`` with the coefficients ``(a_1, b_1, a_2, b_2, ...) = q k``
    (integers; trailing zeros dropped), the glue sums the series (``Branch.time_series``)."""
    H, n = br.harmonics, len(br.states)
    U = np.asarray(br.solutions[i][: n * (2 * H + 1)], dtype=float).reshape(n, 2 * H + 1)
    out = []
    for row in U:
        scale = float(np.abs(row[1:]).max()) if H else 0.0
        q = float(f"{QUANTUM * scale:.3g}") if scale > 0 and np.isfinite(scale) else 1.0
        k = np.round(row[1:] / q).astype(np.int64) if np.all(np.isfinite(row)) else np.zeros(0, np.int64)
        nz = np.flatnonzero(k)
        out.append([_round([row[0]])[0], q, k[: nz[-1] + 1 if nz.size else 0].tolist()])
    return out


def _point(br, i, state, n_t):
    """The JSON record of branch point ``i``: orbit, multipliers and the numbers shown.

    The orbit is ``f`` (Fourier coefficients, :func:`_coefficients`, and the angular
    frequency ``w``) for a harmonic-balance branch, ``t``/``x`` (``n_t`` samples over one
    period, closed) for a sampled one (collocation, shooting), ``e`` (the state) for an
    equilibrium."""
    units = units_of(br)
    pname = br.provenance.get("continuation_parameter", "lam")
    om = float(br.omega[i])
    periodic = br.kind == "periodic" and np.isfinite(om) and om > 0
    orbit = {}
    if br.kind == "equilibrium":
        orbit["e"] = _round(br.solutions[i][: len(br.states)])
    elif periodic and br.harmonics >= 0:
        orbit["f"], orbit["w"] = _coefficients(br, i), _round([om])[0]
    else:
        try:
            t, x = br.time_series(i, n_t=n_t)
        except InputError:              # a collocation/shooting branch read from HDF5: no samples
            t, x = np.zeros(0), np.zeros((len(br.states), 0))
        if periodic and x.shape[1]:
            t = np.append(t, 2 * np.pi / om)               # close the orbit
            x = np.concatenate([x, x[:, :1]], axis=1)
        orbit["t"], orbit["x"] = _round(t), _round(x)
    if br.kind == "equilibrium" and br.eigenvalues is not None:
        mult, mname = np.asarray(br.eigenvalues[i]), "eigenvalues"
    elif br.multipliers is not None:
        mult, mname = np.asarray(br.multipliers[i]), "Floquet multipliers"
    else:
        mult, mname = np.zeros(0, complex), "Floquet multipliers"
    s = br.stable[i]
    tu = units.get("t", "")
    numbers = {axis_label(pname, units.get(pname, "")): _g(br.param[i])}
    if periodic:
        numbers["period T" + (f" [{tu}]" if tu else "")] = _g(2 * np.pi / om)
        numbers["omega" + (f" [rad/{tu}]" if tu else "")] = _g(om)
    if br.kind == "equilibrium":
        for k, name in enumerate(br.states):
            numbers[axis_label(name, units.get(name, ""))] = _g(br.solutions[i][k])
    numbers[f"peak-to-peak {axis_label(state, units.get(state, ''))}"] = _g(br.ptp[state][i])
    numbers["stability"] = "stable" if s == 1 else "unstable" if s == 0 else "unknown"
    if br.motion is not None:
        numbers["motion"] = str(br.motion[i])
    if mult.size and not np.isfinite(mult).any():
        # continued branches compute the multipliers where the stability may change
        # (option multiplier_stride); the others inherit their neighbours' flag
        numbers[mname] = NOT_COMPUTED
    elif mult.size:
        numbers[mname + (f" [1/{tu}]" if tu and mname == "eigenvalues" else "")] = \
            ", ".join(_complex(z) for z in mult[np.argsort(-np.abs(mult))])
    numbers["point"] = str(i)
    return dict(orbit, mr=_round(mult.real), mi=_round(mult.imag), mname=mname, numbers=numbers)


NOT_COMPUTED = ("not computed at this point (its stability is its neighbours'; the option multiplier_stride=1 "
                "computes them at every step end; frictionkit report computes the missing ones of a zoo model)")


def _complex(z) -> str:
    """A multiplier or eigenvalue in six digits: ``0.98`` or ``0.5 + 0.8i``."""
    z = complex(z)
    if not np.isfinite(z.real) or not np.isfinite(z.imag):
        return "nan"
    if abs(z.imag) <= 1e-12 * max(abs(z.real), 1e-300):
        return _g(z.real)
    return f"{_g(z.real)} {'-' if z.imag < 0 else '+'} {_g(abs(z.imag))}i"


def _branch_label(br, b):
    if br.kind == "equilibrium":
        return f"{b}: equilibria"
    disc = br.provenance.get("discretization") or "periodic"
    h = f", H={br.harmonics}" if br.harmonics > 0 else ""
    engine = br.provenance.get("method")
    return f"{b}: periodic ({disc}{h}{', ' + engine if engine else ''})"


def _diagram(branches, state, go, make_subplots):
    """The two-panel diagram: one trace per (branch, stability class), NaN between runs."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.09,
                        subplot_titles=(f"peak-to-peak amplitude of {_text(state)}", "angular frequency"))
    colors = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")
    seen = set()
    for b, br in enumerate(branches):
        label = _text(_branch_label(br, b))
        key = np.where(np.isnan(br.stable), -1, br.stable).astype(int)
        custom = [[b, i] for i in range(len(br))]
        for cls, (word, dash) in _STYLE.items():
            on = key == cls
            if not on.any():
                continue
            # a run of this class includes its neighbours so that the line has no gaps
            keep = on | np.r_[on[1:], False] | np.r_[False, on[:-1]]
            for col, y in ((1, br.ptp[state]), (2, br.omega)):
                if br.kind == "equilibrium" and col == 2:
                    continue
                fig.add_trace(go.Scatter(
                    x=np.where(keep, br.param, np.nan), y=np.where(keep, y, np.nan), customdata=custom,
                    mode="lines", line=dict(color=colors[b % len(colors)], dash=dash, width=2),
                    name=f"{label}, {word}", legendgroup=f"b{b}{cls}", showlegend=col == 1,
                    hovertemplate="%{x:.6g}, %{y:.6g}<extra>" + label + "</extra>"),
                    row=1, col=col)
        mot = np.asarray(br.motion if br.motion is not None else ["periodic" if br.kind == "periodic"
                                                                    else "equilibrium"] * len(br))
        for lab in dict.fromkeys(mot.tolist()):
            idx = np.flatnonzero(mot == lab)
            for col, y in ((1, br.ptp[state]), (2, br.omega)):
                if br.kind == "equilibrium" and col == 2:
                    continue
                fig.add_trace(go.Scatter(
                    x=br.param[idx], y=np.asarray(y)[idx], customdata=[custom[i] for i in idx], mode="markers",
                    marker=dict(size=6, color=to_hex(MOTION_COLORS.get(lab, colors[b % len(colors)]))),
                    name=f"motion: {lab}" if lab in MOTION_COLORS else f"{_text(lab)} points",
                    legendgroup=f"m{lab}", showlegend=col == 1 and lab not in seen,
                    hovertemplate="%{x:.6g}, %{y:.6g}<extra>click: orbit</extra>"), row=1, col=col)
            seen.add(lab)
        for sp in br.special:
            sym, color = MARKERS.get(sp.kind, ("x", "black"))
            color = to_hex(color)
            j = int(min(max(sp.index, 0), len(br) - 1))
            amp = br.ptp[state][j] if br.kind == "periodic" else 0.0
            for col, y in ((1, amp), (2, sp.omega)):
                if col == 2 and not np.isfinite(sp.omega):
                    continue
                fig.add_trace(go.Scatter(
                    x=[sp.param], y=[y], customdata=[[b, j]], mode="markers",
                    marker=dict(symbol=_PLOTLY_SYMBOL.get(sym, "x"), size=12, color=color,
                                line=dict(width=2, color=color)),
                    name=f"{sp.kind} point", legendgroup=f"s{sp.kind}",
                    showlegend=col == 1 and f"s{sp.kind}" not in seen,
                    hovertemplate=f"{sp.kind} at %{{x:.6g}}<extra></extra>"), row=1, col=col)
            seen.add(f"s{sp.kind}")
    units = units_of(branches[0])
    pname = branches[0].provenance.get("continuation_parameter", "lam")
    tu = units.get("t", "")
    fig.update_xaxes(title_text=_text(axis_label(pname, units.get(pname, ""))))
    fig.update_yaxes(title_text=_text(axis_label(f"ptp {state}", units.get(state, ""))), row=1, col=1)
    fig.update_yaxes(title_text=_text(axis_label("omega", f"rad/{tu}" if tu else "")), row=1, col=2)
    fig.update_layout(height=480, margin=dict(t=60, b=50), legend=dict(font=dict(size=11)),
                      template="plotly_white", hovermode="closest", clickmode="event")
    return fig


def _is_backbone(br) -> bool:
    """A nonlinear-mode branch (``nonlinear_mode``: discretization ``"epmc"``)."""
    return br.provenance.get("discretization") == "epmc"


def _is_response(br) -> bool:
    """A forced periodic harmonic balance (no omega unknown) with amplitude columns."""
    return (br.kind == "periodic" and br.harmonics > 0 and br.index_omega < 0 and bool(br.amplitude)
            and not _is_backbone(br))


def _frf_figure(responses, backbones, state, go, make_subplots):
    """Frequency response: amplitude and phase of the first harmonic of ``state`` against the
    forcing frequency (stable solid, unstable dashed), resonance peaks marked, backbones (the
    same amplitude of nonlinear modes against their frequency) on the amplitude panel."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=(f"amplitude of harmonic 1 of {_text(state)}",
                                        f"phase of harmonic 1 of {_text(state)}"))
    colors = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")
    for b, br in enumerate(responses):
        key = np.where(np.isnan(br.stable), -1, br.stable).astype(int)
        amp, ph = br.amplitude[state][:, 0], np.unwrap(br.phase[state][:, 0])
        for cls, (word, dash) in _STYLE.items():
            on = key == cls
            if not on.any():
                continue
            keep = on | np.r_[on[1:], False] | np.r_[False, on[:-1]]
            for row, y in ((1, amp), (2, ph)):
                fig.add_trace(go.Scatter(
                    x=np.where(keep, br.param, np.nan), y=np.where(keep, y, np.nan), mode="lines",
                    line=dict(color=colors[b % len(colors)], dash=dash, width=2),
                    name=f"response {b}, {word}", legendgroup=f"r{b}{cls}", showlegend=row == 1,
                    hovertemplate="%{x:.6g}, %{y:.6g}<extra></extra>"), row=row, col=1)
        peaks = [sp for sp in br.special_points("peak") if sp.data.get("state") == state]
        if peaks:
            sym, color = MARKERS["peak"]
            for row, key_ in ((1, "amplitude"), (2, "phase")):
                fig.add_trace(go.Scatter(
                    x=[sp.param for sp in peaks], y=[sp.data[key_] for sp in peaks], mode="markers",
                    marker=dict(symbol="star-open", size=12, color=to_hex(color), line=dict(width=2)),
                    name="resonance peak", legendgroup="peak", showlegend=row == 1 and b == 0,
                    hovertemplate="peak at %{x:.8g}: %{y:.6g}<extra></extra>"), row=row, col=1)
    for k, nm in enumerate(backbones):
        if state in nm.amplitude:
            fig.add_trace(go.Scatter(
                x=nm.omega, y=nm.amplitude[state][:, 0], mode="lines",
                line=dict(color="#d62728", dash="dashdot", width=2), name=f"backbone {k} (nonlinear mode)",
                hovertemplate="omega %{x:.6g}, %{y:.6g}<extra></extra>"), row=1, col=1)
    units = units_of(responses[0] if responses else backbones[0])
    pname = responses[0].provenance.get("continuation_parameter", "W") if responses else "omega"
    fig.update_xaxes(title_text=_text(axis_label(pname, units.get(pname, ""))), row=2, col=1)
    fig.update_yaxes(title_text=_text(axis_label(f"A1 {state}", units.get(state, ""))), row=1, col=1)
    fig.update_yaxes(title_text="phase [rad]", row=2, col=1)
    fig.update_layout(height=640, margin=dict(t=60, b=50), template="plotly_white", hovermode="closest")
    return fig


#: matplotlib marker -> Plotly symbol, so that both kinds of figure mark a kind alike
_PLOTLY_SYMBOL = {"s": "square-open", "o": "circle-open", "D": "diamond-open", "^": "triangle-up-open",
                  "v": "triangle-down-open", "x": "x"}


def _curves_figure(curves, go):
    fig = go.Figure()
    for c in curves:
        fig.add_trace(go.Scatter(x=c.lam, y=c.mu, mode="lines+markers", marker=dict(size=4),
                                 name=_text(f"{c.kind} curve ({c.model})"),
                                 hovertemplate=f"{_text(c.lam_name)} = %{{x:.6g}}, {_text(c.mu_name)} = "
                                               "%{y:.6g}<extra></extra>"))
    fig.update_layout(title="two-parameter curves", xaxis_title=_text(curves[0].lam_name),
                      yaxis_title=_text(curves[0].mu_name),
                      template="plotly_white", height=420)
    return fig


def _outcome_colour(outcome, k):
    if outcome in REGIONS:
        return REGION_COLOURS[REGIONS.index(outcome)]
    if outcome in MOTION_COLORS:
        return to_hex(MOTION_COLORS[outcome])
    return "#ffffff" if outcome in ("failed", "error") else _OTHER_COLOURS[k % len(_OTHER_COLOURS)]


_OTHER_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#bcbd22", "#17becf")


def _units_for(sm: SweepMap, items) -> dict:
    """Units of a sweep's parameters (a sweep store keeps none): those stored with a branch of
    the same model in the report, else those the zoo model of that name declares (a model
    file is never run), else none."""
    for x in items:
        prov = getattr(x, "provenance", None) or {}
        if hasattr(x, "time_series") and str(prov.get("model", "")) == str(sm.model) and prov.get("units"):
            return dict(prov["units"])
    from frictionkit.modelspec.zoo import ZOO        # sympy: only for a sweep without such a branch
    if str(sm.model) in ZOO:
        spec = ZOO[str(sm.model)][0]()
        return {p.name: p.unit for p in spec.parameters.values() if p.unit}
    return {}


def _sweep_figure(sm: SweepMap, go, curves=(), units=None):
    """The map of one sweep store: the region map of a continuation sweep over one swept
    parameter (as ``plot-sweep --map``), and one marker per task, a trace per outcome; the
    two-parameter curves whose parameters are the map's axes drawn over it (a Hopf curve in
    ``(lam, mu)`` over the map of ``mu`` against ``lam``), the axes titled with their units."""
    import pandas as pd
    fig = go.Figure()
    names, continuation = sm.names, sm.task == "continuation"
    if continuation and len(names) == 1:
        table = pd.DataFrame.from_dict(sm.rows, orient="index")
        x, y, codes, _ = region_grid(table, sm)
        colours = ["#ffffff", *REGION_COLOURS]
        scale = [[f, c] for k, c in enumerate(colours) for f in (k / len(colours), (k + 1) / len(colours))]
        fig.add_trace(go.Heatmap(x=x, y=y, z=codes + 1, zmin=0, zmax=len(colours) - 1, colorscale=scale,
                                 showscale=False, hoverinfo="skip", name="regions"))
    x_of = sm.at() if continuation else sm.start           # 1-D grids: tasks at this main-parameter value
    outcomes = sm.outcomes()
    for k, label in enumerate(dict.fromkeys(o for _, o in outcomes)):
        idx = [i for i, o in outcomes if o == label]
        rows = [sm.rows[i] for i in idx]
        if len(names) == 1:
            xs, ys = [x_of] * len(idx), [r.get(names[0]) for r in rows]
        else:
            xs, ys = [r.get(names[0]) for r in rows], [r.get(names[1]) for r in rows]
        text = ["<br>".join(_text(line) for line in
                            [f"task {i}", *(f"{n} = {_g(r[n])}" for n in names if n in r),
                             f"outcome: {label}", f"status: {r.get('status', '')}"]
                            + ([f"motion: {r['motion']}"] if r.get("motion") else [])
                            + ([f"{str(r['message'])[:120]}"] if r.get("message") else []))
                for i, r in zip(idx, rows)]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name=_text(f"tasks: {label}"), text=text,
                                 customdata=idx, hovertemplate="%{text}<extra></extra>",
                                 marker=dict(symbol="square", size=11, color=_outcome_colour(label, k),
                                             line=dict(width=1, color="black"))))
    xname, yname = (sm.param, names[0]) if len(names) == 1 else (names[0], names[1])
    for c in curves:
        axes = {(c.lam_name, c.mu_name): (c.lam, c.mu), (c.mu_name, c.lam_name): (c.mu, c.lam)}
        if (xname, yname) in axes:
            xs, ys = axes[(xname, yname)]
            fig.add_trace(go.Scatter(x=np.asarray(xs), y=np.asarray(ys), mode="lines",
                                     line=dict(color="black" if c.kind.startswith("hopf") else "#d62728", width=2.5),
                                     name=_text(f"{c.kind} curve ({c.model})"),
                                     hovertemplate=f"{_text(xname)} = %{{x:.6g}}, {_text(yname)} = %{{y:.6g}}"
                                                   f"<extra>{_text(c.kind)} curve</extra>"))
    units = units or {}
    where = f" at {sm.param} = {_g(sm.at())}" if continuation and len(names) > 1 else ""
    fig.update_layout(title=_text(f"sweep map: {sm.model}, {sm.task} sweep ({len(sm.rows)} tasks){where}"),
                      xaxis_title=_text(axis_label(xname, units.get(xname, ""))),
                      yaxis_title=_text(axis_label(yname, units.get(yname, ""))),
                      template="plotly_white", height=460, hovermode="closest")
    return fig


def _orbit_figure(go, make_subplots):
    # the first state on the left axis, the others on the right one (their units differ): the
    # gap after the first panel holds that right axis's numbers and title, so that they do not
    # run over the phase portrait's axis (horizontal_spacing 0.14 of the width)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.14,
                        subplot_titles=("orbit over one period", "phase portrait", "multipliers"))
    fig.update_layout(height=440, template="plotly_white", margin=dict(t=60, b=50, l=70, r=20), showlegend=True,
                      legend=dict(orientation="h", y=-0.18, x=0),
                      yaxis4=dict(overlaying="y", side="right", anchor="x", showgrid=False))
    return fig


def _torus_figure(tori, go, make_subplots):
    """Tori: the rotation number against the parameter (a point per torus, click one) and the
    clicked torus's Poincaré section (drawn by the glue)."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("rotation number omega2 / omega1 of the tori",
                                        "Poincaré section theta1 = 0 of the clicked torus"))
    for t, tb in enumerate(tori):
        fig.add_trace(go.Scatter(x=np.asarray(tb.lam), y=np.asarray(tb.rotation_number), mode="lines+markers",
                                 customdata=[[t, i] for i in range(len(tb))], marker=dict(size=6),
                                 name=_text(f"{t}: tori of {tb.model} ({tb.stability})"),
                                 hovertemplate="%{x:.6g}, %{y:.8g}<extra>click: section</extra>"), row=1, col=1)
    fig.update_xaxes(title_text=_text(axis_label(tori[0].lam_name, units_of(tori[0]).get(tori[0].lam_name, ""))),
                     row=1, col=1)
    fig.update_yaxes(title_text="omega2 / omega1", row=1, col=1)
    fig.update_layout(height=460, template="plotly_white", hovermode="closest", clickmode="event",
                      margin=dict(t=60, b=50), legend=dict(orientation="h", y=-0.2, x=0))
    return fig


def _torus_section(tb, i, n_points=128, n_map=60):
    """Point ``i``'s section ``theta1 = 0``: the invariant curve (``n_points`` values of theta2)
    and the first ``n_map`` points of the Poincaré (for a forced torus, stroboscopic) map.

    On the torus ``x(t) = X(w1 t, w2 t)`` (``discretizations/_torus.py``: the series over the
    harmonics ``(k1, k2)`` of :func:`harmonic_set`), the map's ``j``-th point ``x(2 pi j /
    w1)`` lies at ``theta1 = 2 pi j = 0``, ``theta2 = 2 pi j rho`` (``rho = w2 / w1``, the
    rotation number)."""
    from ..discretizations._torus import harmonic_set
    prov = tb.provenance if isinstance(tb.provenance, dict) else {}
    n = len(tb.states)
    try:
        H1, H2 = (int(h) for h in prov["harmonics"])
        K = harmonic_set(H1, H2, str(prov.get("truncation", "box")))
        U = np.asarray(tb.solutions[i][: n * (2 * len(K) - 1)], dtype=float).reshape(n, 2 * len(K) - 1)
    except (KeyError, TypeError, ValueError, InputError) as exc:
        raise InputError(f"report: torus branch of {tb.model!r}: its provenance's harmonics {prov.get('harmonics')!r}, "
                         f"truncation {prov.get('truncation')!r} do not fit its unknowns ({exc}); the file is damaged "
                         "or was edited") from None

    def at(theta2):
        ph = np.outer(K[1:, 1], theta2)              # theta1 = 0
        return U[:, :1] + U[:, 1::2] @ np.cos(ph) + U[:, 2::2] @ np.sin(ph)
    curve = at(2 * np.pi * np.arange(n_points + 1) / n_points)
    points = at(np.mod(2 * np.pi * float(tb.rotation_number[i]) * np.arange(n_map), 2 * np.pi))
    return curve, points


def _torus_data(tb, t):
    units = units_of(tb)
    tu = units.get("t", "")
    per_t = f" [rad/{tu}]" if tu else ""
    keys = [axis_label(tb.lam_name, units.get(tb.lam_name, "")), "omega1" + per_t, "omega2" + per_t,
            "rotation number omega2/omega1", "torus size",
            *(f"peak-to-peak {axis_label(s, units.get(s, ''))}" for s in tb.states), "stability", "point"]
    points = []
    for i in range(len(tb)):
        curve, pts = _torus_section(tb, i)
        values = [_g(tb.lam[i]), _g(tb.omega1[i]), _g(tb.omega2[i]), f"{float(tb.rotation_number[i]):.10g}",
                  _g(tb.torus_size[i]), *(_g(a) for a in tb.amplitudes[i]), str(tb.stability), str(i)]
        points.append(dict(c=_round(curve), m=_round(pts), v=values))
    return dict(label=f"{t}: tori of {tb.model}", keys=keys, states=list(tb.states),
                labels=[_text(axis_label(s, units.get(s, ""))) for s in tb.states], points=points)


def _is_torus(x) -> bool:
    """A torus branch (``drivers._torus.TorusBranch``: read by its columns, not its class)."""
    return hasattr(x, "rotation_number") and hasattr(x, "torus_size")


# The glue: draw the figures held in #fk-data, then redraw the orbit panel and the numbers of
# the clicked point.  Fixed text (its hash is in the page's CSP): data reaches the page only
# through JSON.parse and textContent, never as markup.  ``labels``/``time_label`` are Plotly
# text (escaped by _text), ``label``, ``keys``, the values and the command plain text.
_GLUE = """
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('fk-data').textContent);
  var plots = D.figures.map(function (f) { return Plotly.newPlot(f.id, f.data, f.layout, f.config); });
  function cell(row, tag, text, span) {
    var c = document.createElement(tag);
    c.textContent = text;
    if (span) c.colSpan = span;
    row.appendChild(c);
  }
  function table(el, title, keys, values) {
    while (el.rows.length) el.deleteRow(0);
    cell(el.insertRow(), 'th', title, 2);
    for (var k = 0; k < keys.length; k++) {
      if (values[k] === null) continue;
      var row = el.insertRow();
      cell(row, 'td', keys[k]);
      cell(row, 'td', values[k]);
    }
  }
  function series(p, n) {
    /* the orbit: the stored samples, or the Fourier series summed at n + 1 times over a period */
    if (p.t) return [p.t, p.x];
    if (p.e) return [[0, 1], p.e.map(function (v) { return [v, v]; })];
    var T = 2 * Math.PI / p.w, t = [], x = [], j, k, h;
    for (j = 0; j <= n; j++) t.push(T * j / n);
    for (k = 0; k < p.f.length; k++) {
      var c0 = p.f[k][0], q = p.f[k][1], a = p.f[k][2], row = [];
      for (j = 0; j <= n; j++) {
        var th = 2 * Math.PI * j / n, s = c0;
        for (h = 0; 2 * h < a.length; h++)
          s += q * (a[2 * h] * Math.cos((h + 1) * th) + (2 * h + 1 < a.length ? a[2 * h + 1] * Math.sin((h + 1) * th) : 0));
        row.push(s);
      }
      x.push(row);
    }
    return [t, x];
  }
  function show(b, i) {
    var br = D.branches[b], p = br.points[i], tr = [], k, eq = !!p.e;
    var o = series(p, D.n_t), t = o[0], x = o[1];
    var orbit = document.getElementById('fk-orbit');
    for (k = 0; k < br.states.length; k++)
      tr.push({x: t, y: x[k], name: br.labels[k], mode: 'lines', xaxis: 'x', yaxis: k ? 'y4' : 'y'});
    if (br.states.length > 1)
      tr.push({x: x[0], y: x[1], name: eq ? 'equilibrium' : 'phase portrait', mode: eq ? 'markers' : 'lines',
               marker: {size: 10}, xaxis: 'x2', yaxis: 'y2'});
    /* multipliers on the unit circle; eigenvalues of an equilibrium beside the imaginary axis */
    tr.push({x: eq ? [0, 0] : D.circle[0], y: eq ? [-1, 1].map(function (v) {
               return v * Math.max.apply(null, p.mi.map(Math.abs).concat(p.mr.map(Math.abs), [1e-300])); }) : D.circle[1],
             name: eq ? 'imaginary axis' : 'unit circle', mode: 'lines', xaxis: 'x3', yaxis: 'y3',
             line: {color: 'gray', width: 1}});
    tr.push({x: p.mr, y: p.mi, name: p.mname, mode: 'markers', xaxis: 'x3', yaxis: 'y3',
             marker: {size: 9, symbol: 'x'}});
    var L = orbit.layout;
    L.xaxis.title = {text: br.time_label}; L.yaxis.title = {text: br.labels[0]};
    L.yaxis4.title = {text: br.labels.slice(1).join(', ')};
    L.xaxis2.title = {text: br.labels[0]}; L.yaxis2.title = {text: br.labels[1] || ''};
    L.xaxis3.title = {text: 'real part'}; L.yaxis3.title = {text: 'imaginary part'};
    L.yaxis3.scaleanchor = 'x3';
    L.annotations[0].text = eq ? 'equilibrium (constant in time)' : 'orbit over one period';
    L.annotations[2].text = p.mname;
    Plotly.react(orbit, tr, L);
    table(document.getElementById('fk-numbers'), br.label, br.keys, p.v.map(function (j) {
      return j === null ? null : br.texts[j]; }));
    document.getElementById('fk-continue-head').textContent = 'Continue from ' + br.label + ', point ' + i +
      ' (as continue --restart reads a label: GROUP:INDEX)';
    document.getElementById('fk-continue').textContent = br.cmd === null ? br.cmdnote : br.cmd.split('\\u0000').join(String(i));
  }
  function showTorus(t, i) {
    var tb = D.tori[t], p = tb.points[i], gd = document.getElementById('fk-tori'), keep = [], k;
    for (k = 0; k < gd.data.length; k++) if (gd.data[k].xaxis !== 'x2') keep.push(gd.data[k]);
    keep.push({x: p.c[0], y: p.c[1], name: 'invariant curve (section theta1 = 0)', mode: 'lines',
               xaxis: 'x2', yaxis: 'y2', line: {color: '#d62728'}});
    keep.push({x: p.m[0], y: p.m[1], name: 'points of the Poincaré map', mode: 'markers', xaxis: 'x2', yaxis: 'y2',
               marker: {size: 7, color: 'black', symbol: 'circle-open'}});
    var L = gd.layout;
    L.xaxis2.title = {text: tb.labels[0]}; L.yaxis2.title = {text: tb.labels[1] || ''};
    Plotly.react(gd, keep, L);
    table(document.getElementById('fk-torus-numbers'), tb.label, tb.keys, p.v);
  }
  Promise.all(plots).then(function () {
    var diagram = document.getElementById('fk-diagram'), tori = document.getElementById('fk-tori');
    if (diagram) diagram.on('plotly_click', function (ev) {
      var c = ev.points[0].customdata;
      if (c) show(c[0], c[1]);
    });
    if (tori) tori.on('plotly_click', function (ev) {
      var c = ev.points[0].customdata;
      if (c) showTorus(c[0], c[1]);
    });
    window.fkShow = show;
    window.fkShowTorus = showTorus;
    if (D.first) show(D.first[0], D.first[1]);
    if (D.tori.length) showTorus(0, 0);
  });
})();
"""


@lru_cache(maxsize=1)
def _plotly_js() -> tuple[str, str]:
    """``(source, CSP hash)`` of the Plotly library inlined in the page: plotly.js's minified
    "cartesian" bundle (:data:`PLOTLY_BUNDLE`: the scatter and heatmap traces the page
    draws, 1.5 MB instead of the full 4.8 MB), of the version plotly.py ships."""
    source = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    return source, _csp_hash(source)


#: plotly.js's "cartesian" distribution (npm package plotly.js-cartesian-dist-min, MIT licence,
#: its header kept), of the version of plotly.py's own bundle (checked by tests/results/test_report.py)
PLOTLY_BUNDLE = Path(__file__).with_name("plotly-cartesian.min.js")


def _plotly_cdn() -> tuple[str, str]:
    """``(url, integrity)`` of plotly.py's own plotly.js on its CDN (``--cdn``), as
    ``plotly.io.to_html(include_plotlyjs="cdn")`` writes it: the SHA-256 of the bundle plotly.py
    ships, which the CDN's file must match (Subresource Integrity) or the browser refuses it."""
    from plotly.io._utils import plotly_cdn_url
    from plotly.offline import get_plotlyjs
    digest = base64.b64encode(hashlib.sha256(get_plotlyjs().encode("utf-8")).digest()).decode()
    return plotly_cdn_url(), f"sha256-{digest}"


def _csp_hash(script: str) -> str:
    """The CSP source expression allowing exactly the inline script ``script``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def _csp(script_hashes) -> str:
    """The page's Content-Security-Policy: its own two scripts by hash (with ``--cdn``,
    Plotly's URL instead of its hash) and nothing else; no network at all (data: images are
    Plotly's PNG download, inline styles Plotly's layout)."""
    return ("default-src 'none'; script-src " + " ".join(script_hashes)
            + "; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; "
              "form-action 'none'")


def _script_json(data) -> str:
    """``data`` as JSON that can sit inside ``<script>``: ``<``, ``>`` and ``&`` only occur in
    JSON strings, where their ``\\u`` escapes read the same, so no string can end the element
    (``</script>``) or open a comment (``<!--``)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _figure(fig, div_id, pio, parts, figures):
    """Add the empty ``<div>`` of ``fig`` to ``parts`` and its JSON to ``figures`` (the glue
    draws it): Plotly's own serialisation (binary arrays, NaN as null)."""
    height = fig.layout.height or 450
    parts.append(f'<div id="{div_id}" class="plotly-graph-div" style="height:{int(height)}px;width:100%"></div>')
    figures.append(dict(id=div_id, **json.loads(pio.to_json(fig, validate=False)), config={"responsive": True}))


def _continue_command(br, source):
    """``(template, note)``: the ``frictionkit continue --restart FILE@LABEL`` line of a point of
    ``br`` read from the file ``source``, its index left as the character NUL (the glue puts
    the clicked point's index there), or ``(None, note)`` when the branch has no file.

    The label is the point's stable one, ``GROUP:INDEX`` (``results/_labels.py``; ``INDEX``
    alone for a branch file); the new branch goes to ``<stem>_<group>_<index>.h5`` beside it;
    a model file (not a zoo model) is named with ``--model``, which a restart needs."""
    if source is None:
        return None, ("this branch was not read from a file: save it (branch.save(FILE) or save_run) and "
                      "continue it with frictionkit continue --restart FILE@INDEX")
    group = str(br.provenance.get("group") or "/")
    label = "" if group == "/" else f"{group}:"
    src = Path(str(source))
    out = src.with_name(f"{src.stem}{'' if group == '/' else '_' + group}_\0.h5")

    def word(text):
        quoted = shlex.quote(text.replace("\0", "0"))
        return text if quoted == text.replace("\0", "0") else "'" + text.replace("'", "'\"'\"'") + "'"
    cmd = ["frictionkit continue --restart", word(f"{src}@{label}\0")]
    named = str(br.provenance.get("model_source") or "")
    if named.endswith(".py") or "/" in named:
        cmd += ["--model", word(named)]
    cmd += ["--out", word(str(out))]
    return " ".join(cmd), ""


def _model_tables(items) -> str:
    """The model of each branch (its name, continuation parameter and the values of the other
    parameters, states, with units): one table per distinct model and parameter set."""
    seen, parts = set(), []
    for x in items:
        prov = getattr(x, "provenance", None) or {}
        params = prov.get("parameters") or {}
        if not isinstance(params, dict) or not hasattr(x, "time_series"):
            continue
        units = units_of(x)
        lam = prov.get("continuation_parameter", "lam")
        key = (str(prov.get("model", "")), str(lam), json.dumps(params, sort_keys=True, default=str))
        if key in seen:
            continue
        seen.add(key)
        rows = ["<tr><th>name</th><th>value</th><th>unit</th></tr>"]

        def row(*cells):
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
        row("model", f"{prov.get('model', '')}" + (f" ({prov['model_source']})" if prov.get("model_source")
                                                     and prov.get("model_source") != prov.get("model") else ""), "")
        row(f"{lam} (continuation parameter)", "varied", units.get(lam, "") or "-")
        for name, value in params.items():
            if name != lam:
                row(name, _g(value) if isinstance(value, (int, float)) else value, units.get(name, "") or "-")
        for name in x.states:
            row(f"state {name}", "", units.get(name, "") or "-")
        row("time t", "", units.get("t", "") or "-")
        parts.append(f'<table class="fk fk-model">{"".join(rows)}</table>')
    return ("<h2>Model and parameters</h2>" + "".join(parts)) if parts else ""


def _page_branch(br, b, state, n_t, source):
    """A branch's record in the page: labels, the numbers' keys, each point (:func:`_point`:
    its values as indices into the branch's ``texts``, each distinct text once) and the
    continue command's template."""
    units = units_of(br)
    tu = units.get("t", "")
    points, keys, texts, index = [], [], [], {}
    records = [_point(br, i, state, n_t) for i in range(len(br))]
    for rec in records:
        for k in rec["numbers"]:
            if k not in keys:
                keys.append(k)
    for rec in records:
        numbers = rec.pop("numbers")
        v = []
        for k in keys:
            if k not in numbers:
                v.append(None)
                continue
            text = numbers[k]
            if text not in index:
                index[text] = len(texts)
                texts.append(text)
            v.append(index[text])
        points.append(dict(rec, v=v))
    cmd, note = _continue_command(br, source)
    return dict(label=_branch_label(br, b), states=list(br.states), keys=keys, texts=texts,
                labels=[_text(axis_label(s, units.get(s, ""))) for s in br.states],
                time_label=_text(axis_label("t", tu)) if br.kind == "periodic" else "(constant in time)",
                points=points, cmd=cmd, cmdnote=note)


def report_html(items, *, state=None, n_t=128, title=None, sources=None, cdn=False) -> str:
    """The report's HTML text (see :func:`report`)."""
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    sources = list(sources) if sources is not None else [None] * len(items)
    if len(sources) != len(items):
        raise InputError(f"report: {len(sources)} sources for {len(items)} items (give one file or None per item)")
    source_of = {id(x): s for x, s in zip(items, sources)}
    sweeps = [x for x in items if isinstance(x, SweepMap)]
    tori = [x for x in items if _is_torus(x)]
    branches = [x for x in items if hasattr(x, "time_series")]
    # nonlinear modes are backbones over the frequency responses (their own diagram only alone)
    backbones = [x for x in branches if _is_backbone(x)]
    responses = [x for x in branches if _is_response(x)]
    if backbones and len(backbones) < len(branches):
        branches = [x for x in branches if not _is_backbone(x)]
    curves = [x for x in items if not hasattr(x, "time_series") and not isinstance(x, SweepMap) and not _is_torus(x)]
    if not branches and not curves and not sweeps and not tori:
        raise InputError("report: nothing to show (give at least one branch, curve, torus branch or sweep store)")
    parts, figures = [], []
    data = dict(figures=figures, branches=[], tori=[], first=None, n_t=int(n_t),
                circle=_round([np.cos(np.linspace(0, 2 * np.pi, 121)), np.sin(np.linspace(0, 2 * np.pi, 121))]))
    help_ = []
    if branches:
        help_.append("Click any point of the diagram: its orbit, phase portrait, multipliers (equilibria: "
                     "eigenvalues), numbers and the command that continues from it appear below.")
        state = state or branches[0].states[0]
        for br in branches:
            if state not in br.states:
                raise InputError(f"report: state {state!r} is not a state of {br!r} (states: {br.states})")
        _figure(_diagram(branches, state, go, make_subplots), "fk-diagram", pio, parts, figures)
        _figure(_orbit_figure(go, make_subplots), "fk-orbit", pio, parts, figures)
        parts.append('<table id="fk-numbers" class="fk"></table>')
        parts.append('<h2 id="fk-continue-head">Continue from the clicked point</h2>'
                     '<p id="fk-continue" class="fk-cmd"></p><p class="fk-note">Add --stop VALUE, --direction '
                     "up|down, --param NAME (a new continuation parameter), --set NAME=VALUE or -H N as for any "
                     "restart; frictionkit info FILE lists the labels of the special points.</p>")
        if responses:
            parts.append("<h2>Frequency response</h2>")
            _figure(_frf_figure(responses, backbones, state, go, make_subplots), "fk-frf", pio, parts, figures)
        parts.append(_special_table(branches))
        for b, br in enumerate(branches):
            data["branches"].append(_page_branch(br, b, state, n_t, source_of.get(id(br))))
            if data["first"] is None and br.kind == "periodic" and len(br):
                data["first"] = [b, 0]
        data["first"] = data["first"] or [0, 0]
    if tori:
        help_.append("Click a torus: its Poincaré section (the invariant curve and the points of the map) is drawn.")
        parts.append("<h2>Tori (quasi-periodic solutions)</h2>")
        _figure(_torus_figure(tori, go, make_subplots), "fk-tori", pio, parts, figures)
        parts.append('<table id="fk-torus-numbers" class="fk"></table>')
        data["tori"] = [_torus_data(tb, t) for t, tb in enumerate(tori)]
    if curves:
        _figure(_curves_figure(curves, go), "fk-curves", pio, parts, figures)
    for k, sm in enumerate(sweeps):
        _figure(_sweep_figure(sm, go, curves, _units_for(sm, items)), f"fk-sweep-{k}", pio, parts, figures)
    if sweeps:
        help_.append("Hover a task of a sweep map for its parameters and outcome.")
    parts.append(_model_tables(branches))
    name = title or ", ".join(dict.fromkeys(str(getattr(x, "provenance", {}).get("model", "")
                                                or getattr(x, "model", "")) for x in items))
    name = html.escape(f"frictionkit report: {name}")
    if cdn:
        url, integrity = _plotly_cdn()
        plotly_tag, plotly_src = (f'<script src="{html.escape(url)}" integrity="{integrity}" '
                                  'crossorigin="anonymous"></script>'), url
    else:
        plotly_js, plotly_src = _plotly_js()
        plotly_tag = f"<script>{plotly_js}</script>"
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
            f'<meta http-equiv="Content-Security-Policy" content="{_csp([plotly_src, _csp_hash(_GLUE)])}">'
            f"<title>{name}</title><style>{_CSS}</style></head><body><h1>{name}</h1>"
            f"<p>{' '.join(help_)}</p>" + "\n".join(parts)
            + f'\n<script id="fk-data" type="application/json">{_script_json(data)}</script>\n'
            f"{plotly_tag}\n<script>{_GLUE}</script></body></html>\n")


_CSS = ("body{font-family:sans-serif;margin:1em 2em}table.fk{border-collapse:collapse;margin:1em 0}"
        "table.fk td,table.fk th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
        "table.fk-model{display:inline-table;margin-right:2em;vertical-align:top}"
        "p.fk-cmd{font-family:monospace;background:#f4f4f4;padding:6px;user-select:all;white-space:pre-wrap}"
        "p.fk-note{font-size:90%;color:#555}")


def _special_table(branches) -> str:
    """Every special point: its branch, label (``GROUP:KIND<rank>``, as ``continue --restart``
    and ``frictionkit info`` name it), the parameter and omega with their units."""
    units = units_of(branches[0])
    pname = branches[0].provenance.get("continuation_parameter", "lam")
    tu = units.get("t", "")
    head = ("branch", "label", "kind", axis_label(pname, units.get(pname, "")), axis_label("omega", f"rad/{tu}" if tu
                                                                                           else ""), "after point")
    rows = ["<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for b, br in enumerate(branches):
        group = str(br.provenance.get("group") or "/")
        # KIND<rank> along the branch, as results/_labels.special_labels names them (not
        # imported: _labels imports _branch, which imports this module for Branch.report)
        rank: dict = {}
        for sp in br.special:
            rank[sp.kind] = rank.get(sp.kind, 0) + 1
            label = f"{sp.kind}{rank[sp.kind]}"
            cells = (_branch_label(br, b), label if group == "/" else f"{group}:{label}", sp.kind, _g(sp.param),
                     _g(sp.omega), sp.index)
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    return ('<h2>Special points</h2><table id="fk-special" class="fk">' + "".join(rows) + "</table>"
            if len(rows) > 1 else "")


def report(items, path, *, state=None, n_t=128, title=None, sources=None, cdn=False) -> Path:
    """Write the interactive report of branches (and two-parameter curves) to one HTML file.

    The page shows every string of a model or a file as text, runs no script but its own
    (Content-Security-Policy) and makes no network request; see the module docstring.

    Parameters
    ----------
    items : Branch, curve, TorusBranch, SweepMap, or list of them
        Branches of any kind (equilibria, periodic orbits), two-parameter curves
        (``hopf_curve`` / ``fold_curve`` results), torus branches (``torus``) and sweep stores
        read by :func:`load_sweep_map` (``frictionkit sweep --out``).
    path : str or Path
        The ``.html`` file, written atomically; it opens offline (Plotly's JavaScript is inlined).
    state : str, optional
        State whose peak-to-peak amplitude is plotted (default: the first).
    n_t : int
        Samples of each orbit drawn (per period).
    sources : list, optional
        The file each item was read from (or None), in the order of ``items``: the page shows
        for a clicked point the ``frictionkit continue --restart FILE@LABEL`` line that continues
        from it (``frictionkit report`` gives them).
    cdn : bool
        Load Plotly from its CDN instead of inlining it: a page of a few hundred kB that needs
        the network (the policy then allows that one URL; the browser checks the file against
        the SHA-256 of plotly.py's own copy, Subresource Integrity).

    Returns
    -------
    Path
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError(f"report: folder {path.parent} does not exist; create it or choose another -o")
    text = report_html(items, state=state, n_t=n_t, title=title, sources=sources, cdn=cdn)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
