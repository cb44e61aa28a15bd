"""Nonlinear mode of the forced 2-DOF friction damper: the ANM against Newton (issue 25).

``examples/friction_damper.py`` (``muN = 0.05``, forcing off), its first nonlinear mode by the
EPMC (:func:`~frictionkit.runtime.nonlinear_mode`) from the modal amplitude ``a = 0.01`` (the
damper nearly stuck) to 50 (slipping), on the AFT of the states with the harmonic count the
default tolerance picks, continued by

* the ANM (the default: the EPMC's series from the Taylor kernels, one LU per step), and
* pseudo-arclength Newton on the same system, ``method="newton"``.

Reported: steps, LU factorizations, LU per step, and the CPU time of one whole branch at the
chosen count as the median of alternated runs (ratio Newton / ANM).
"""
import time
from pathlib import Path

import numpy as np

from frictionkit.runtime import load_model, nonlinear_mode

DAMPER = str(Path(__file__).resolve().parents[1] / "examples" / "friction_damper.py")
REPEATS = 3
AMPLITUDES = (0.01, 50.0)


def main():
    model = load_model(DAMPER, continuation="W", muN=0.05, F0=0.0)
    H = nonlinear_mode(model, 1, AMPLITUDES).harmonics
    out = {"harmonics": H, "amplitudes": list(AMPLITUDES)}
    cpu = {"anm": [], "newton": []}
    for _ in range(REPEATS):                        # alternated: the machine's load hits both alike
        for method in cpu:
            t0 = time.process_time()
            br = nonlinear_mode(model, 1, AMPLITUDES, harmonics=H, method=method)
            cpu[method].append(time.process_time() - t0)
            c = br.counters
            out[method] = dict(status=br.status, steps=c["steps"], factorizations=c["factorizations"],
                               lu_per_step=c["factorizations"] / c["steps"])
    for method in cpu:
        out[method]["cpu_s_median"] = float(np.median(cpu[method]))
    out["factorizations_newton_over_anm"] = out["newton"]["factorizations"] / out["anm"]["factorizations"]
    out["cpu_newton_over_anm"] = out["newton"]["cpu_s_median"] / out["anm"]["cpu_s_median"]
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
