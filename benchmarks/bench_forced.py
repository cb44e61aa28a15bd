"""Frequency response of the forced 2-DOF friction damper: the ANM against Newton (issue 25).

``examples/friction_damper.py`` (``muN`` = 0.05 and 0.2), its forcing frequency ``W`` from 0.4 to
2.0 on the AFT of the states with the harmonic count :func:`frequency_response` picks for its
default tolerance, continued by

* the ANM (the default: the Taylor kernels in the forcing phase, one LU per step), and
* pseudo-arclength Newton on the same discretization (NLvib's approach), ``method="newton"``,

each without the stability pass (the same for both).  Reported: steps, LU factorizations, LU
per step, and the CPU time of one whole branch as the median of alternated runs (ratio Newton /
ANM).  The issue's reference count: 5236 factorizations with Newton before the ANM covered a
continued forcing frequency.
"""
import time
from pathlib import Path

import numpy as np

from frictionkit.runtime import frequency_response, load_model, periodic_branch
from frictionkit.runtime.drivers._forced import forced_start

DAMPER = str(Path(__file__).resolve().parents[1] / "examples" / "friction_damper.py")
REPEATS = 3


def _branch(model, H, method):
    disc, Z, _ = forced_start(model, 0.4, H)
    t0 = time.process_time()
    br = periodic_branch(disc, Z, 0.4, 2.0, 1.0, method=method,
                         options=dict(max_steps=20000, stability=False, branch_points=False))
    return br, time.process_time() - t0


def main():
    out = {}
    for muN in (0.05, 0.2):
        model = load_model(DAMPER, continuation="W", muN=muN)
        H = frequency_response(model, 0.4, 2.0, options=dict(stability=False), peaks=None).harmonics
        cpu = {"anm": [], "newton": []}
        row = {"harmonics": H}
        for _ in range(REPEATS):                   # alternated: the machine's load hits both alike
            for method in ("anm", "newton"):
                br, t = _branch(model, H, method)
                cpu[method].append(t)
                c = br.counters
                row[method] = dict(status=br.status, steps=c["steps"], factorizations=c["factorizations"],
                                   lu_per_step=c["factorizations"] / c["steps"])
        for method in cpu:
            row[method]["cpu_s_median"] = float(np.median(cpu[method]))
        row["factorizations_newton_over_anm"] = row["newton"]["factorizations"] / row["anm"]["factorizations"]
        row["cpu_newton_over_anm"] = row["newton"]["cpu_s_median"] / row["anm"]["cpu_s_median"]
        row["factorizations_issue_over_anm"] = 5236 / row["anm"]["factorizations"]
        out[f"muN={muN}"] = row
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
