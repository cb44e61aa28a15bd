"""Plots of branches (matplotlib): bifurcation diagrams, time series, phase portraits.

* :func:`plot_branches`: peak-to-peak amplitude of one state and angular frequency versus
  the continuation parameter; stable parts solid, unstable dashed, unknown stability
  thin solid; special points marked and labelled (seed 000 Fig. 4 style); periodic
  branches with a motion column (``Branch.motion``, models with contacts) are coloured by
  motion type (seed 000 eq. (26), seed 003 eqs. (7)-(8)).
* :func:`plot_orbit`: time series and phase portrait of one branch point, reconstructed
  from its Fourier coefficients.
"""
from __future__ import annotations

import numpy as np

from ._figure import finish, subplots

__all__ = ["plot_branches", "plot_orbit"]

_MARKERS = {"fold": ("s", "tab:red"), "hopf": ("o", "tab:green"), "bp": ("D", "tab:purple"),
            "pd": ("^", "tab:orange"), "ns": ("v", "tab:brown")}


#: colour of each motion label (``_motion.MOTION_LABELS``)
MOTION_COLORS = {"slipping": "tab:orange", "stick-slip": "tab:red", "multiple stick": "tab:purple",
                 "sticking": "tab:brown"}


def _segments(stable, motion=None):
    """Runs of equal stability (and motion label): list of (start, stop_inclusive, value, label)."""
    key = np.where(np.isnan(stable), -1, stable)
    lab = list(motion) if motion is not None else [None] * len(key)
    out, i0 = [], 0
    for i in range(1, len(key) + 1):
        if i == len(key) or key[i] != key[i0] or lab[i] != lab[i0]:
            out.append((i0, min(i, len(key) - 1), key[i0], lab[i0]))
            i0 = i
    return out


def _draw(ax, x, y, stable, color, label, motion=None):
    first = True
    for a, b, v, lab in _segments(stable, motion):
        style = dict(color=MOTION_COLORS.get(lab, color) if lab else color, lw=1.6)
        if v == 0:
            style.update(ls="--")
        elif v < 0:
            style.update(lw=1.0)
        ax.plot(x[a:b + 1], y[a:b + 1], label=label if first else None, **style)
        first = False


def plot_branches(branches, state=None, path=None, title=None, motion=True):
    """Amplitude and angular frequency versus the continuation parameter.

    Parameters
    ----------
    branches : Branch or list of Branch
        Equilibrium branches are drawn at zero amplitude on the first panel.
    state : str, optional
        State whose peak-to-peak amplitude is plotted (default the first state).
    path : str or Path, optional
        Save the figure there (PNG, PDF, ... by extension).
    motion : bool
        Colour periodic branches by their motion label where known (``MOTION_COLORS``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib
    if not isinstance(branches, (list, tuple)):
        branches = [branches]
    fig, (ax_a, ax_w) = subplots(path, 1, 2, figsize=(11, 4.2))
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    pname = branches[0].provenance.get("continuation_parameter", "lam")
    st = state or branches[0].states[0]
    for i, br in enumerate(branches):
        c = colors[i % len(colors)]
        label = f"{br.kind} ({br.provenance.get('method', '')}, H={br.harmonics})" if br.kind == "periodic" \
            else "equilibria"
        mot = getattr(br, "motion", None) if motion else None
        _draw(ax_a, br.param, br.ptp[st], br.stable, c, label, mot)
        if br.kind == "periodic":
            _draw(ax_w, br.param, br.omega, br.stable, c, label, mot)
        if mot is not None:
            for lab in dict.fromkeys(mot):
                ax_a.plot([], [], color=MOTION_COLORS.get(lab, c), lw=3, label=lab)
        for sp in br.special:
            mk, mc = _MARKERS.get(sp.kind, ("x", "k"))
            j = min(sp.index, len(br) - 1)
            amp = 0.0 if br.kind == "equilibrium" else _ptp_of(br, sp.solution, st)
            ax_a.plot(sp.param, amp, mk, color=mc, ms=7, mfc="none", mew=1.5)
            ax_a.annotate(f"{sp.kind} {sp.param:.4g}", (sp.param, amp), textcoords="offset points",
                          xytext=(4, 6), fontsize=8, color=mc)
            if np.isfinite(sp.omega):
                ax_w.plot(sp.param, sp.omega, mk, color=mc, ms=7, mfc="none", mew=1.5)
            del j
    ax_a.set_xlabel(pname)
    ax_a.set_ylabel(f"peak-to-peak {st}")
    ax_w.set_xlabel(pname)
    ax_w.set_ylabel("angular frequency omega [rad/s]")
    ax_a.legend(fontsize=8, loc="best")
    for ax in (ax_a, ax_w):
        ax.grid(alpha=0.3)
    fig.suptitle(title or f"{branches[0].provenance.get('model', '')}: solid stable, dashed unstable, "
                          "thin unknown")
    fig.tight_layout()
    finish(fig, path, dpi=120)
    return fig


def _ptp_of(br, Z, state):
    from ._branch import trig_extrema
    H = br.harmonics
    nh = 2 * H + 1
    i = list(br.states).index(state)
    lo, hi = trig_extrema(np.asarray(Z)[i * nh:(i + 1) * nh][None, :])
    return float(hi[0] - lo[0])


def plot_orbit(branch, index, path=None, n_t=512, phase=(0, 1)):
    """Time series of the states and a phase portrait of branch point ``index``.

    Parameters
    ----------
    branch : Branch
    index : int
        Branch point (negative indices count from the end).
    phase : tuple of two int
        States on the phase portrait's axes.
    """
    t, x = branch.time_series(index, n_t=n_t, periods=2.0)
    fig, (ax_t, ax_p) = subplots(path, 1, 2, figsize=(11, 4.2))
    for i, s in enumerate(branch.states):
        ax_t.plot(t, x[i] / (np.max(np.abs(x[i])) or 1.0), label=f"{s} / max|{s}|")
    ax_t.set_xlabel("t [s]")
    ax_t.legend(fontsize=8)
    i, j = phase
    ax_p.plot(x[i], x[j])
    ax_p.set_xlabel(branch.states[i])
    ax_p.set_ylabel(branch.states[j])
    pname = branch.provenance.get("continuation_parameter", "lam")
    fig.suptitle(f"{branch.provenance.get('model', '')}: {pname} = {branch.param[index]:.6g}, "
                 f"omega = {branch.omega[index]:.6g}")
    for ax in (ax_t, ax_p):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    finish(fig, path, dpi=120)
    return fig
