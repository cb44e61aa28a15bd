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


def _point(br, i, state, n_t):
    """The JSON record of branch point ``i``: orbit, multipliers and the numbers shown."""
    units = units_of(br)
    pname = br.provenance.get("continuation_parameter", "lam")
    om = float(br.omega[i])
    periodic = br.kind == "periodic" and np.isfinite(om) and om > 0
    try:
        t, x = br.time_series(i, n_t=n_t)
    except InputError:              # a collocation/shooting branch read from HDF5: no samples
        t, x = np.zeros(0), np.zeros((len(br.states), 0))
    if periodic:
        t = np.append(t, 2 * np.pi / om)               # close the orbit
        x = np.concatenate([x, x[:, :1]], axis=1) if x.shape[1] else x
    if br.kind == "equilibrium" and br.eigenvalues is not None:
        mult, mname = np.asarray(br.eigenvalues[i]), "eigenvalues"
    elif br.multipliers is not None:
        mult, mname = np.asarray(br.multipliers[i]), "Floquet multipliers"
    else:
        mult, mname = np.zeros(0, complex), "Floquet multipliers"
    s = br.stable[i]
    numbers = {axis_label(pname, units.get(pname, "")): _g(br.param[i])}
    if periodic:
        numbers["period T" + (f" [{units['t']}]" if units.get("t") else "")] = _g(2 * np.pi / om)
        numbers["omega" + (f" [rad/{units['t']}]" if units.get("t") else "")] = _g(om)
    numbers[f"peak-to-peak {axis_label(state, units.get(state, ''))}"] = _g(br.ptp[state][i])
    numbers["stability"] = "stable" if s == 1 else "unstable" if s == 0 else "unknown"
    if br.motion is not None:
        numbers["motion"] = str(br.motion[i])
    if mult.size and not np.isfinite(mult).any():
        # continued branches compute the multipliers where the stability may change
        # (option multiplier_stride); the others inherit their neighbours' flag
        numbers[mname] = "not computed at this point (its stability is its neighbours'; " \
                         "the option multiplier_stride=1 computes them at every step end)"
    numbers["point"] = str(i)
    return dict(t=_round(t), x=_round(x), mr=_round(mult.real), mi=_round(mult.imag), mname=mname,
                numbers=numbers)


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


def _sweep_figure(sm: SweepMap, go):
    """The map of one sweep store: the region map of a continuation sweep over one swept
    parameter (as ``plot-sweep --map``), and one marker per task, a trace per outcome."""
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
    where = f" at {sm.param} = {_g(sm.at())}" if continuation and len(names) > 1 else ""
    fig.update_layout(title=_text(f"sweep map: {sm.model}, {sm.task} sweep ({len(sm.rows)} tasks){where}"),
                      xaxis_title=_text(sm.param if len(names) == 1 else names[0]),
                      yaxis_title=_text(names[0] if len(names) == 1 else names[1]),
                      template="plotly_white", height=460, hovermode="closest")
    return fig


def _orbit_figure(go, make_subplots):
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08,
                        subplot_titles=("orbit over one period", "phase portrait", "multipliers"))
    # the first state on the left axis, the others on the right one: their units differ
    fig.update_layout(height=420, template="plotly_white", margin=dict(t=60, b=50), showlegend=True,
                      yaxis4=dict(overlaying="y", side="right", anchor="x", showgrid=False))
    return fig


# The glue: draw the figures held in #fk-data, then redraw the orbit panel and the numbers of
# the clicked point.  Fixed text (its hash is in the page's CSP): data reaches the page only
# through JSON.parse and textContent, never as markup.  ``labels``/``time_label`` are Plotly
# text (escaped by _text), ``label`` and ``numbers`` plain text.
_GLUE = """
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('fk-data').textContent);
  var plots = D.figures.map(function (f) { return Plotly.newPlot(f.id, f.data, f.layout, f.config); });
  if (!D.branches.length) return;
  var diagram = document.getElementById('fk-diagram'), orbit = document.getElementById('fk-orbit');
  var numbers = document.getElementById('fk-numbers');
  function cell(row, tag, text, span) {
    var c = document.createElement(tag);
    c.textContent = text;
    if (span) c.colSpan = span;
    row.appendChild(c);
  }
  function show(b, i) {
    var br = D.branches[b], p = br.points[i], tr = [], k;
    for (k = 0; k < br.states.length; k++)
      tr.push({x: p.t, y: p.x[k], name: br.labels[k], mode: 'lines', xaxis: 'x', yaxis: k ? 'y4' : 'y'});
    if (br.states.length > 1)
      tr.push({x: p.x[0], y: p.x[1], name: 'phase portrait', mode: 'lines', xaxis: 'x2', yaxis: 'y2'});
    tr.push({x: D.circle[0], y: D.circle[1], name: 'unit circle', mode: 'lines', xaxis: 'x3', yaxis: 'y3',
             line: {color: 'gray', width: 1}});
    tr.push({x: p.mr, y: p.mi, name: p.mname, mode: 'markers', xaxis: 'x3', yaxis: 'y3',
             marker: {size: 9, symbol: 'x'}});
    var L = orbit.layout;
    L.xaxis.title = {text: br.time_label}; L.yaxis.title = {text: br.labels[0]};
    L.yaxis4.title = {text: br.labels.slice(1).join(', ')};
    L.xaxis2.title = {text: br.labels[0]}; L.yaxis2.title = {text: br.labels[1] || ''};
    L.xaxis3.title = {text: 'real part'}; L.yaxis3.title = {text: 'imaginary part'};
    L.yaxis3.scaleanchor = 'x3';
    Plotly.react(orbit, tr, L);
    while (numbers.rows.length) numbers.deleteRow(0);
    cell(numbers.insertRow(), 'th', br.label, 2);
    for (var key in p.numbers) {
      var row = numbers.insertRow();
      cell(row, 'td', key);
      cell(row, 'td', p.numbers[key]);
    }
  }
  Promise.all(plots).then(function () {
    diagram.on('plotly_click', function (ev) {
      var c = ev.points[0].customdata;
      if (c) show(c[0], c[1]);
    });
    window.fkShow = show;
    if (D.first) show(D.first[0], D.first[1]);
  });
})();
"""


@lru_cache(maxsize=1)
def _plotly_js() -> tuple[str, str]:
    """``(source, CSP hash)`` of the Plotly library inlined in the page (hashed once per process)."""
    from plotly.offline import get_plotlyjs
    source = get_plotlyjs()
    return source, _csp_hash(source)


def _csp_hash(script: str) -> str:
    """The CSP source expression allowing exactly the inline script ``script``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def _csp(script_hashes) -> str:
    """The page's Content-Security-Policy: its own two scripts by hash and nothing else; no
    network at all (data: images are Plotly's PNG download, inline styles Plotly's layout)."""
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


def report_html(items, *, state=None, n_t=128, title=None) -> str:
    """The report's HTML text (see :func:`report`)."""
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    sweeps = [x for x in items if isinstance(x, SweepMap)]
    branches = [x for x in items if hasattr(x, "time_series")]
    # nonlinear modes are backbones over the frequency responses (their own diagram only alone)
    backbones = [x for x in branches if _is_backbone(x)]
    responses = [x for x in branches if _is_response(x)]
    if backbones and len(backbones) < len(branches):
        branches = [x for x in branches if not _is_backbone(x)]
    curves = [x for x in items if not hasattr(x, "time_series") and not isinstance(x, SweepMap)]
    if not branches and not curves and not sweeps:
        raise InputError("report: nothing to show (give at least one branch, curve or sweep store)")
    parts, figures = [], []
    data = dict(figures=figures, branches=[], first=None,
                circle=_round([np.cos(np.linspace(0, 2 * np.pi, 121)), np.sin(np.linspace(0, 2 * np.pi, 121))]))
    if branches:
        state = state or branches[0].states[0]
        for br in branches:
            if state not in br.states:
                raise InputError(f"report: state {state!r} is not a state of {br!r} (states: {br.states})")
        _figure(_diagram(branches, state, go, make_subplots), "fk-diagram", pio, parts, figures)
        _figure(_orbit_figure(go, make_subplots), "fk-orbit", pio, parts, figures)
        if responses:
            parts.append("<h2>Frequency response</h2>")
            _figure(_frf_figure(responses, backbones, state, go, make_subplots), "fk-frf", pio, parts, figures)
        parts.append('<table id="fk-numbers" class="fk"></table>')
        parts.append(_special_table(branches))
        for b, br in enumerate(branches):
            units = units_of(br)
            tu = units.get("t", "")
            data["branches"].append(dict(
                label=_branch_label(br, b), states=list(br.states),
                labels=[_text(axis_label(s, units.get(s, ""))) for s in br.states],
                time_label=_text(axis_label("t", tu)) if br.kind == "periodic" else "(constant in time)",
                points=[_point(br, i, state, n_t) for i in range(len(br))]))
            if data["first"] is None and br.kind == "periodic" and len(br):
                data["first"] = [b, 0]
        data["first"] = data["first"] or [0, 0]
    if curves:
        _figure(_curves_figure(curves, go), "fk-curves", pio, parts, figures)
    for k, sm in enumerate(sweeps):
        _figure(_sweep_figure(sm, go), f"fk-sweep-{k}", pio, parts, figures)
    name = title or ", ".join(dict.fromkeys(str(getattr(x, "provenance", {}).get("model", "")
                                                or getattr(x, "model", "")) for x in items))
    name = html.escape(f"frictionkit report: {name}")
    plotly_js, plotly_hash = _plotly_js()
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
            f'<meta http-equiv="Content-Security-Policy" content="{_csp([plotly_hash, _csp_hash(_GLUE)])}">'
            f"<title>{name}</title><style>{_CSS}</style></head><body><h1>{name}</h1>"
            "<p>Click any point of the diagram: its orbit, phase portrait, multipliers and numbers "
            "appear below.</p>" + "\n".join(parts)
            + f'\n<script id="fk-data" type="application/json">{_script_json(data)}</script>\n'
            f"<script>{plotly_js}</script>\n<script>{_GLUE}</script></body></html>\n")


_CSS = ("body{font-family:sans-serif;margin:1em 2em}table.fk{border-collapse:collapse;margin:1em 0}"
        "table.fk td,table.fk th{border:1px solid #ccc;padding:2px 8px;text-align:left}")


def _special_table(branches) -> str:
    rows = ["<tr><th>branch</th><th>kind</th><th>parameter</th><th>omega</th><th>after point</th></tr>"]
    for b, br in enumerate(branches):
        for sp in br.special:
            cells = (_branch_label(br, b), sp.kind, _g(sp.param), _g(sp.omega), sp.index)
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    return ('<h2>Special points</h2><table id="fk-special" class="fk">' + "".join(rows) + "</table>"
            if len(rows) > 1 else "")


def report(items, path, *, state=None, n_t=128, title=None) -> Path:
    """Write the interactive report of branches (and two-parameter curves) to one HTML file.

    The page shows every string of a model or a file as text, runs no script but its own
    (Content-Security-Policy) and makes no network request; see the module docstring.

    Parameters
    ----------
    items : Branch, curve, SweepMap, or list of them
        Branches of any kind (equilibria, periodic orbits), two-parameter curves
        (``hopf_curve`` / ``fold_curve`` results) and sweep stores read by
        :func:`load_sweep_map` (``frictionkit sweep --out``).
    path : str or Path
        The ``.html`` file, written atomically; it opens offline (Plotly's JavaScript is inlined).
    state : str, optional
        State whose peak-to-peak amplitude is plotted (default: the first).
    n_t : int
        Samples of each orbit stored in the page (per period).

    Returns
    -------
    Path
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError(f"report: folder {path.parent} does not exist; create it or choose another -o")
    text = report_html(items, state=state, n_t=n_t, title=title)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
