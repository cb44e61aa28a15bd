"""Publication-ready plots of branches (matplotlib, never switching the user's backend).

* :func:`plot_branches`: peak-to-peak amplitude of one state and angular frequency versus
  the continuation parameter (seed 000 Fig. 4 style).  Three visual channels, each with
  its own legend block below the axes, so that none is mistaken for another:

  - colour: the branch (equilibria, each periodic branch);
  - line style: stability (solid stable, dashed unstable, dotted unknown), in both panels;
  - a wide translucent halo: the motion type of periodic orbits of models with contacts
    (``Branch.motion``; seed 000 eq. (26), seed 003 eqs. (7)-(8));

  special points are open markers listed in the legend with their parameter value (no text
  next to the points, so labels never collide with each other or with the axes).
* :func:`plot_frequency_response`: the amplitude and the phase of one harmonic of one state
  against the forcing frequency (stability as line style, resonance peaks marked), with
  backbones (nonlinear-mode branches: the same amplitude against their frequency) overlaid.
* :func:`plot_nonlinear_mode`: frequency and modal damping ratio of a nonlinear mode against
  its modal amplitude.
* :func:`plot_orbit`: the time series of every state (one panel each, physical units, no
  normalisation) over ``periods`` periods, and a phase portrait.

Units come from the branch's provenance (``provenance["units"]``, from ``Model.units``).
"""
from __future__ import annotations

import functools

import numpy as np

from ..discretizations._hbm import coefficients_to_samples
from ..errors import InputError
from ._figure import finish, subplots

__all__ = ["plot_branches", "plot_frequency_response", "plot_nonlinear_mode", "plot_orbit", "axis_label", "units_of", "MOTION_COLORS",
           "MARKERS"]

#: marker and colour of each special-point kind (shared with the interactive report)
MARKERS = {"fold": ("s", "tab:red"), "hopf": ("o", "tab:green"), "bp": ("D", "tab:purple"),
           "pd": ("^", "tab:orange"), "ns": ("v", "tab:brown"), "peak": ("*", "goldenrod")}

#: colour of each motion label (``_motion.MOTION_LABELS``)
MOTION_COLORS = {"slipping": "tab:orange", "stick-slip": "tab:red", "multiple stick": "tab:purple",
                 "sticking": "tab:brown"}

#: branch colours: none of them is a motion or special-point colour
_BRANCH_COLORS = ("black", "tab:blue", "tab:cyan", "tab:olive", "tab:pink", "tab:gray")
_LINESTYLE = {1: ("-", "stable"), 0: ("--", "unstable"), -1: (":", "stability unknown")}


def units_of(branch) -> dict:
    """Units by name (parameters, states, ``"t"``) stored with a branch; ``{}`` if unknown."""
    return dict(getattr(branch, "provenance", {}).get("units") or {})


@functools.lru_cache(maxsize=256)
def drawable(text: str) -> str:
    """``text`` as matplotlib can draw it: text between two ``$`` that is not valid mathtext
    (a unit or a name from a file, ``"$m^$"``) is drawn literally (its ``$`` escaped) instead
    of failing when the figure is saved.  Units declared in a model are checked already
    (``modelspec`` ``check_unit``); this is for those read from a file."""
    from matplotlib import cbook      # matplotlib at first use, as _figure loads it
    from matplotlib.mathtext import MathTextParser
    text = str(text)
    if not cbook.is_math_text(text):
        return text
    try:
        MathTextParser("path").parse(text)
    except ValueError:
        return text.replace("\\$", "$").replace("$", "\\$")
    return text


def axis_label(name: str, unit: str = "") -> str:
    """``"name [unit]"``, or ``name`` alone for a dimensionless quantity (drawable: :func:`drawable`)."""
    return drawable(f"{name} [{unit}]" if unit else str(name))


def _segments(stable, motion=None):
    """Runs of equal stability (and motion label): list of (start, stop_inclusive, value, label)."""
    key = np.where(np.isnan(stable), -1, stable)
    lab = list(motion) if motion is not None else [None] * len(key)
    out, i0 = [], 0
    for i in range(1, len(key) + 1):
        if i == len(key) or key[i] != key[i0] or lab[i] != lab[i0]:
            out.append((i0, min(i, len(key) - 1), int(key[i0]), lab[i0]))
            i0 = i
    return out


def _draw(ax, x, y, stable, color, motion=None):
    """One branch: colour ``color``, line style by stability, a halo by motion type."""
    for a, b, v, lab in _segments(stable, motion):
        xs, ys = x[a:b + 1], y[a:b + 1]
        if lab in MOTION_COLORS:
            ax.plot(xs, ys, color=MOTION_COLORS[lab], lw=7, alpha=0.35, solid_capstyle="butt", zorder=1)
        ax.plot(xs, ys, color=color, lw=1.6, zorder=2, **_line_style(v, len(xs)))


def _line_style(v, n=0):
    """Stability's line style; unstable parts also carry open circles, so that they stay
    visible where they run over a stable part (the frequency panel near a fold)."""
    style = dict(ls=_LINESTYLE[v][0])
    if v == 0:
        style.update(marker="o", ms=3.5, mfc="white", markevery=max(1, n // 12) if n else None)
    return style


def _ptp_of(br, Z, state):
    """Peak-to-peak of ``state`` in the unknown vector ``Z`` of a harmonic-balance branch."""
    nh = 2 * br.harmonics + 1
    i = list(br.states).index(state)
    x = coefficients_to_samples(np.asarray(Z)[i * nh:(i + 1) * nh][None, :], 4096)
    return float(x.max() - x.min())


def _special_amplitude(br, sp, state):
    if br.kind == "equilibrium":
        return 0.0
    if br.harmonics > 0:
        return _ptp_of(br, sp.solution, state)
    j = int(min(max(sp.index, 0), len(br) - 1))   # no Fourier coefficients: the branch point
    return float(br.ptp[state][j])


def _legend(fig, ax, entries):
    """One legend below the axes: branches, then stability, motion types, special points."""
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], **kw) for _, kw in entries]
    fig.legend(handles, [lab for lab, _ in entries], loc="lower center", ncol=min(4, len(entries)),
               fontsize=8, frameon=False)


def plot_branches(branches, state=None, path=None, title=None, motion=True):
    """Amplitude and angular frequency versus the continuation parameter.

    Parameters
    ----------
    branches : Branch or list of Branch
        Equilibrium branches are drawn at zero amplitude on the first panel.
    state : str, optional
        State whose peak-to-peak amplitude is plotted (default the first state).
    path : str or Path, optional
        Save the figure there (PNG, PDF, SVG, ... by extension).
    motion : bool
        Mark periodic orbits by their motion label where known (``MOTION_COLORS``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(branches, (list, tuple)):
        branches = [branches]
    fig, (ax_a, ax_w) = subplots(path, 1, 2, figsize=(11, 5.2))
    pname = branches[0].provenance.get("continuation_parameter", "lam")
    units = units_of(branches[0])
    st = state or branches[0].states[0]
    entries, styles, motions, specials = [], set(), {}, {}
    n_periodic = sum(br.kind == "periodic" for br in branches)
    for b, br in enumerate(branches):
        c = _BRANCH_COLORS[b % len(_BRANCH_COLORS)] if br.kind == "periodic" or b else "0.45"
        mot = br.motion if motion and br.kind == "periodic" else None
        _draw(ax_a, br.param, br.ptp[st], br.stable, c, mot)
        if br.kind == "periodic":
            _draw(ax_w, br.param, br.omega, br.stable, c, mot)
        disc = br.provenance.get("discretization") or ""
        label = ("equilibria" if br.kind == "equilibrium" else
                 f"periodic orbits ({disc}" + (f", H = {br.harmonics}" if br.harmonics > 0 else "") + ")"
                 + (f" #{b}" if n_periodic > 1 else ""))
        entries.append((label, dict(color=c, lw=2.5)))
        styles.update(int(k) for k in np.unique(np.where(np.isnan(br.stable), -1, br.stable)))
        for lab in (mot or ()):
            motions.setdefault(lab, MOTION_COLORS.get(lab))
        for sp in br.special:
            mk, mc = MARKERS.get(sp.kind, ("x", "k"))
            amp = _special_amplitude(br, sp, st)
            for ax, y in ((ax_a, amp), (ax_w, sp.omega)):
                if np.isfinite(y):
                    ax.plot(sp.param, y, mk, color=mc, ms=8, mfc="none", mew=1.6, zorder=3)
            where = specials.setdefault(sp.kind, (mk, mc, []))[2]
            if not any(abs(sp.param - p) <= 1e-6 * max(abs(p), 1e-300) for p in where):
                where.append(sp.param)     # a Hopf point ends both the equilibria and the orbits
    for k in sorted(styles, reverse=True):
        entries.append((_LINESTYLE[k][1], dict(color="0.2", lw=1.6, **_line_style(k))))
    for lab, col in motions.items():
        if col:
            entries.append((f"motion: {lab}", dict(color=col, lw=7, alpha=0.35)))
    pu = units.get(pname, "")
    for kind, (mk, mc, where) in specials.items():
        at = ", ".join(f"{p:.4g}" for p in where[:4]) + (", ..." if len(where) > 4 else "")
        entries.append((f"{kind} at {pname} = {at}" + (f" {pu}" if pu else ""),
                        dict(marker=mk, color=mc, mfc="none", mew=1.6, ls="none", ms=8)))
    tu = units.get("t", "")
    for ax in (ax_a, ax_w):
        ax.set_xlabel(axis_label(pname, pu))
        ax.grid(alpha=0.3)
        ax.margins(x=0.04, y=0.08)
    ax_a.set_ylabel(axis_label(f"peak-to-peak {st}", units.get(st, "")))
    ax_w.set_ylabel(axis_label("angular frequency omega", f"rad/{tu}" if tu else ""))
    _legend(fig, ax_a, [(drawable(text), style) for text, style in entries])
    fig.suptitle(drawable(title or str(branches[0].provenance.get("model", ""))))
    rows = -(-len(entries) // min(4, len(entries)))
    fig.tight_layout(rect=(0, 0.045 * rows + 0.02, 1, 1))
    finish(fig, path, dpi=150)
    return fig


def plot_frequency_response(branches, state=None, harmonic=1, backbones=(), path=None, title=None):
    """Frequency response: amplitude and phase of harmonic ``harmonic`` of ``state`` against the
    continuation parameter (the forcing frequency), with backbones overlaid.

    Parameters
    ----------
    branches : Branch or list of Branch
        Periodic harmonic-balance branches (``amplitude``/``phase`` columns), e.g. of
        :func:`~frictionkit.runtime.frequency_response`.
    state : str, optional
        Default the first state.
    harmonic : int
        1 for the first harmonic.
    backbones : Branch or list of Branch
        Nonlinear-mode branches (:func:`~frictionkit.runtime.nonlinear_mode`): the amplitude of
        the same harmonic of ``state`` against their frequency ``omega`` (amplitude panel only:
        a free mode has no phase relative to a forcing).
    path : str or Path, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
    """
    branches = list(branches) if isinstance(branches, (list, tuple)) else [branches]
    backbones = list(backbones) if isinstance(backbones, (list, tuple)) else [backbones]
    st = state or branches[0].states[0]
    k = int(harmonic)
    for br in branches + backbones:
        if st not in br.amplitude:
            raise InputError(f"plot_frequency_response: the branch of model {br.provenance.get('model', '?')!r} "
                             f"has no amplitude column of {st!r} (a periodic harmonic-balance branch of a model "
                             f"with the state {st!r} is needed)")
        if not 1 <= k <= br.amplitude[st].shape[1]:
            raise InputError(f"harmonic {harmonic}: the branch has harmonics 1..{br.amplitude[st].shape[1]}")
    fig, (ax_a, ax_p) = subplots(path, 2, 1, figsize=(8, 7.5), sharex=True)
    pname = branches[0].provenance.get("continuation_parameter", "lam")
    units = units_of(branches[0])
    entries, styles = [], set()
    for b, br in enumerate(branches):
        c = _BRANCH_COLORS[(b + 1) % len(_BRANCH_COLORS)]
        _draw(ax_a, br.param, br.amplitude[st][:, k - 1], br.stable, c)
        _draw(ax_p, br.param, np.unwrap(br.phase[st][:, k - 1]), br.stable, c)
        entries.append((f"frequency response #{b}" if len(branches) > 1 else "frequency response",
                        dict(color=c, lw=2.5)))
        styles.update(int(v) for v in np.unique(np.where(np.isnan(br.stable), -1, br.stable)))
        for sp in br.special_points("peak"):
            if sp.data.get("state") == st and int(sp.data.get("harmonic", 1)) == k:
                mk, mc = MARKERS["peak"]
                ax_a.plot(sp.param, sp.data["amplitude"], mk, color=mc, ms=9, mfc="none", mew=1.6, zorder=3)
                ax_p.plot(sp.param, sp.data["phase"], mk, color=mc, ms=9, mfc="none", mew=1.6, zorder=3)
    for b, nm in enumerate(backbones):
        mode = nm.provenance.get("nonlinear_mode", {}).get("mode", "")
        ax_a.plot(nm.omega, nm.amplitude[st][:, k - 1], color="tab:red", lw=1.4, ls="-.", zorder=2)
        entries.append((f"backbone (nonlinear mode{f' {mode}' if mode != '' else ''})",
                        dict(color="tab:red", lw=1.4, ls="-.")))
    for v in sorted(styles, reverse=True):
        entries.append((_LINESTYLE[v][1], dict(color="0.2", lw=1.6, **_line_style(v))))
    if any(br.special_points("peak") for br in branches):
        mk, mc = MARKERS["peak"]
        entries.append(("resonance peak", dict(marker=mk, color=mc, mfc="none", mew=1.6, ls="none", ms=9)))
    ax_a.set_ylabel(axis_label(f"amplitude of harmonic {k} of {st}", units.get(st, "")))
    ax_p.set_ylabel(drawable(f"phase of harmonic {k} of {st} [rad]"))
    ax_p.set_xlabel(axis_label(pname, units.get(pname, "")))
    for ax in (ax_a, ax_p):
        ax.grid(alpha=0.3)
    _legend(fig, ax_a, entries)
    fig.suptitle(drawable(title or str(branches[0].provenance.get("model", ""))))
    rows = -(-len(entries) // min(4, len(entries)))
    fig.tight_layout(rect=(0, 0.035 * rows + 0.02, 1, 1))
    finish(fig, path, dpi=150)
    return fig


def plot_nonlinear_mode(branch, path=None, title=None):
    """A nonlinear mode (:func:`~frictionkit.runtime.nonlinear_mode`): its frequency ``omega`` and
    its modal damping ratio ``D = xi / (2 omega)`` against the modal amplitude ``a``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    nm = getattr(branch, "nlmode", None)
    if nm is None:
        raise InputError("plot_nonlinear_mode needs a nonlinear-mode branch (nonlinear_mode)")
    fig, (ax_w, ax_d) = subplots(path, 2, 1, figsize=(7, 6.5), sharex=True)
    ax_w.plot(nm["amplitude"], nm["omega"], color="tab:red", lw=1.6)
    ax_d.plot(nm["amplitude"], nm["damping_ratio"], color="tab:red", lw=1.6)
    tu = units_of(branch).get("t", "")
    ax_w.set_ylabel(axis_label("angular frequency omega", f"rad/{tu}" if tu else ""))
    ax_d.set_ylabel("modal damping ratio D = xi / (2 omega)")
    ax_d.set_xlabel("modal amplitude a (mass-normalized)")
    for ax in (ax_w, ax_d):
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
    mode = branch.provenance.get("nonlinear_mode", {}).get("mode", "")
    fig.suptitle(drawable(title or f"{branch.provenance.get('model', '')}: nonlinear mode {mode}"))
    fig.tight_layout()
    finish(fig, path, dpi=150)
    return fig


def plot_orbit(branch, index, path=None, n_t=512, periods=1.0, phase=(0, 1)):
    """Time series of every state and a phase portrait of branch point ``index``, in the
    model's units (no normalisation).

    Parameters
    ----------
    branch : Branch
    index : int
        Branch point (negative indices count from the end).
    periods : float
        Periods shown (collocation and shooting branches: a whole number).
    phase : tuple of two int
        States on the phase portrait's axes.

    Returns
    -------
    matplotlib.figure.Figure
    """
    t, x = branch.time_series(index, n_t=n_t, periods=periods)
    units = units_of(branch)
    n = len(branch.states)
    fig, axes = subplots(path, n, 2, figsize=(11, 1.2 + 1.9 * n), squeeze=False)
    tu = units.get("t", "")
    for i, s in enumerate(branch.states):
        ax = axes[i, 0]
        ax.plot(t, x[i], color="C0", lw=1.4)
        ax.set_ylabel(axis_label(s, units.get(s, "")))
        ax.grid(alpha=0.3)
        if i < n - 1:
            ax.tick_params(labelbottom=False)
    axes[-1, 0].set_xlabel(axis_label("time t", tu) if branch.kind == "periodic" else "(constant in time)")
    for ax in axes[1:, 1]:
        ax.remove()
    gs = axes[0, 1].get_subplotspec().get_gridspec()
    axes[0, 1].remove()
    ax_p = fig.add_subplot(gs[:, 1])
    i, j = phase
    if n > max(i, j):
        ax_p.plot(x[i], x[j], color="C0", lw=1.4)
        ax_p.plot(x[i][:1], x[j][:1], "o", color="C3", ms=5, label="t = 0")
        ax_p.set_xlabel(axis_label(branch.states[i], units.get(branch.states[i], "")))
        ax_p.set_ylabel(axis_label(branch.states[j], units.get(branch.states[j], "")))
        ax_p.legend(fontsize=8, loc="best")
    ax_p.grid(alpha=0.3)
    pname = branch.provenance.get("continuation_parameter", "lam")
    om = branch.omega[index]
    period = f", period T = {2 * np.pi / om:.6g}" + (f" {tu}" if tu else "") if np.isfinite(om) and om > 0 else ""
    fig.suptitle(drawable(f"{branch.provenance.get('model', '')}: {pname} = {branch.param[index]:.6g}"
                          + (f" {units.get(pname)}" if units.get(pname) else "") + period))
    fig.tight_layout()
    finish(fig, path, dpi=150)
    return fig
