"""The analysis pass run after an engine run: branch points and stability along a branch."""
from __future__ import annotations

import warnings

import numpy as np

from ..engine import Counters
from ..errors import ConvergenceError, InputError
from ._branch_points import detect_branch_points
from ._stability import branch_stability

__all__ = ["analyse_branch"]


def analyse_branch(br):
    """Branch points (bordered determinant) and, for periodic branches, stability columns.

    Uses what the engine run left on the branch (``step_ends``, ``det_signs``,
    ``amplitude_weights``, ``options``); the options' ``branch_points`` and ``stability``
    flags choose the passes.  Work is counted in ``br.counters["analysis_factorizations"]``.
    A Ctrl-C or SIGTERM during the passes keeps the branch: ``status = "interrupted"``,
    ``success = False``, the columns not computed yet NaN.
    """
    extra = Counters()
    try:
        _passes(br, extra)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the branch is kept; the columns not computed yet stay NaN
        done = [s.kind for s in br.special]
        br.status, br.success = "interrupted", False
        br.message = ("interrupted during the analysis (Ctrl-C or SIGTERM): the branch is complete; "
                      f"special points found: {', '.join(done) or 'none'}; stability columns not computed "
                      "are NaN")
    br.counters["analysis_factorizations"] = extra.factorizations


def _passes(br, extra):
    disc, opts = br.discretization, br.options
    # the step ends (Newton-corrected for the ANM); the extra series points in between add
    # cost, not information, to the determinant test and are skipped
    ends = np.asarray(br.step_ends, dtype=int)
    if opts.branch_points and len(ends) > 1:
        try:
            found = detect_branch_points(disc, br.solutions[ends], br.tangents[ends],
                                         amp_weights=br.amplitude_weights, counters=extra,
                                         signs=[br.det_signs.get(int(i)) for i in ends])
            for sp in found:
                sp.index = int(ends[sp.index])
            br.special.extend(found)
            br.special.sort(key=lambda s: s.index)
        except ConvergenceError as exc:
            warnings.warn(f"branch-point detection skipped: {exc}", RuntimeWarning, stacklevel=4)
    if opts.stability and br.kind == "periodic" and disc.supports_stability:
        try:
            # multipliers at every multiplier_stride-th step end and next to the special points,
            # bisected down to the step (then the ANM's series points inside it) only where the
            # stability changes (branch_stability's ``points`` and ``stride``)
            branch_stability(br, disc, counters=extra, points=ends.tolist(),
                             stride=int(opts.multiplier_stride),
                             rtol=float(opts.multiplier_rtol) or None)
        except (ConvergenceError, InputError) as exc:
            warnings.warn(f"stability of the periodic branch not computed: {exc}", RuntimeWarning, stacklevel=4)
