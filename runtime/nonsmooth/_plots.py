"""Figures of the non-smooth references (matplotlib, Agg backend; files only, no windows).

* :func:`plot_coulomb_comparison` — amplitude and pulsation of the exact Coulomb cycle versus
  V_b or F_N with regularized branches overlaid (seed 000 Figs. 5, 7, 10, 11);
* :func:`plot_coulomb_phase` — Coulomb phase portraits, e.g. at equal amplitude (Fig. 6)
  or near V_max (Fig. 3);
* :func:`plot_two_phase` — x(t), x'(t) and (x', b) with the phase times (seed 001 Figs. 1, 2).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..results._figure import file_subplots, finish

__all__ = ["plot_coulomb_comparison", "plot_coulomb_phase", "plot_two_phase"]

_UNITS = {"Vb": ("belt speed $V_b$", "m/s"), "FN": ("normal force $F_N$", "N")}



def plot_coulomb_comparison(coulomb, regularized=(), out_prefix="coulomb", omega1=None) -> list:
    """Amplitude and pulsation of the Coulomb branch, with regularized branches overlaid.

    Parameters
    ----------
    coulomb : CoulombBranch
    regularized : sequence of (label, dict)
        Branch data as returned by :func:`load_coulomb_branch` (keys ``param``, ``omega``,
        ``ptp`` and optionally ``stable``), same continuation parameter.
    out_prefix : str or Path
        Files ``<prefix>_amplitude_<param>.png`` and ``<prefix>_pulsation_<param>.png``.
    omega1 : float, optional
        Natural pulsation drawn as a horizontal line (seed 000 Figs. 7 and 11).

    Returns
    -------
    list of Path
    """
    par = coulomb.continuation_parameter
    xlabel = "{} [{}]".format(*_UNITS[par])
    files = []
    for what, ylabel in (("amplitude", "peak-to-peak amplitude of y [m]"), ("pulsation", r"pulsation $\omega$ [rad/s]")):
        fig, ax = file_subplots(figsize=(6.4, 4.4))
        for label, data in regularized:
            y = data["ptp"]["y"] if what == "amplitude" else data["omega"]
            x = data["param"]
            stable = data.get("stable")
            if stable is not None and np.any(np.isfinite(stable)):
                st = np.asarray(stable) > 0.5
                ax.plot(x, np.where(st, y, np.nan), "-", lw=1.2, label=f"{label}")
                ax.plot(x, np.where(~st, y, np.nan), "--", lw=1.0, color=ax.lines[-1].get_color())
            else:
                ax.plot(x, y, "-", lw=1.2, label=label)
        yc = coulomb.ptp["y"] if what == "amplitude" else coulomb.omega
        ax.plot(coulomb.param, yc, "-", color="green", lw=2.0, label="Coulomb (exact)")
        for kind, p in zip(coulomb.special["kind"], coulomb.special["param"]):
            ax.axvline(p, color="green", ls=":", lw=1.0)
            ax.annotate("$V_{max}$" if par == "Vb" else "$F_{min}$", (p, ax.get_ylim()[1]),
                        ha="center", va="bottom", fontsize=8, color="green")
        if what == "pulsation" and omega1 is not None:
            ax.axhline(omega1, color="purple", lw=1.0, label=r"$\omega_1$")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        path = Path(f"{out_prefix}_{what}_{par}.png")
        fig.tight_layout()
        finish(fig, path, dpi=120)
        files.append(path)
    return files


def plot_coulomb_phase(cycles, labels, path, extra=()) -> Path:
    """Phase portraits (y, y') of Coulomb cycles with the stick segment marked (seed 000 Figs. 3, 6).

    ``extra``: sequence of (label, y, v) orbits drawn in the phase plane too (e.g. regularized
    orbits of the same amplitude reconstructed from branch files).
    """
    fig, axes = file_subplots(1, 2, figsize=(10, 4.2))
    for label, y, v in extra:
        axes[1].plot(np.append(y, y[:1]), np.append(v, v[:1]), lw=1.0, label=label)
    for cyc, label in zip(cycles, labels):
        t, y, v = cyc.sample(2000)
        axes[0].plot(t / cyc.period, y, label=f"y, {label}")
        axes[0].plot(t / cyc.period, v * np.ptp(y) / max(np.ptp(v), 1e-300), ":", label=f"y' (scaled), {label}")
        axes[1].plot(y, v, label=label)
        y1 = cyc._slip(cyc.t1)[0]
        axes[1].plot([y1, cyc.y0], [cyc.params.Vb, cyc.params.Vb], "s", ms=4, color=axes[1].lines[-1].get_color())
    axes[0].set_xlabel("t / period")
    axes[0].set_ylabel("y [m]")
    axes[1].set_xlabel("y [m]")
    axes[1].set_ylabel("y' [m/s]")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    finish(fig, path, dpi=120)
    return path


def plot_two_phase(result, b, path, title="") -> Path:
    """Seed 001 Fig. 1 / Fig. 2 layout: x(t), x'(t) and the (x', b) plane with phase times."""
    if result.t.size < 2:
        raise InputError("nothing to plot: the two-phase result has fewer than two samples")
    step = max(1, result.t.size // 20000)
    t, x, v = result.t[::step], result.x[::step], result.v[::step]
    force = np.array([b(xx, vv, tt) for xx, vv, tt in zip(x, v, t)])
    fig, axes = file_subplots(3, 1, figsize=(7.5, 8.5))
    axes[0].plot(t, x, lw=1.0)
    axes[1].plot(t, v, lw=1.0)
    axes[2].plot(v, force, lw=0.8)
    for ax in axes[:2]:
        for tau in result.tau_static:
            ax.axvline(tau, color="tab:blue", ls=":", lw=0.8)
        for tau in result.tau_dynamic:
            ax.axvline(tau, color="tab:red", ls=":", lw=0.8)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("displacement x(t)")
    axes[1].set_ylabel("velocity x'(t)")
    axes[1].set_xlabel("time t  (blue: static entries tau_j, red: dynamic entries tau_{j+1/2})")
    axes[2].set_xlabel("velocity x'(t)")
    axes[2].set_ylabel("force b(x, x', t)")
    axes[2].grid(alpha=0.3)
    if title:
        axes[0].set_title(title)
    fig.tight_layout()
    path = Path(path)
    finish(fig, path, dpi=120)
    return path
