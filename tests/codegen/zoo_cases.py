"""Model/continuation pairs exercised by the codegen tests, with sampling ranges."""
import numpy as np

from frictionkit.modelspec import ZOO

#: every shipped module, plus continuation choices that enter non-linearly
SAMPLED = {"drill"}
CASES = [(name, c) for name, (_, params) in sorted(ZOO.items()) for c in params if name not in SAMPLED]
CASES += [("belt", "n"), ("belt", "mus"), ("belt", "M1"), ("shaw", "beta"), ("shaw", "fs")]


def random_point(module, rng, m=16):
    """Random states, time and a parameter vector near the defaults (all positive)."""
    p = np.array(module.DEFAULTS) * rng.uniform(0.95, 1.05, len(module.DEFAULTS))
    scale = np.array([1e-3 if s in ("y",) else 1.0 for s in module.STATES])
    x = rng.normal(size=(len(module.STATES), m)) * scale[:, None]
    t = rng.uniform(0, 10, m)
    return p, x, t
