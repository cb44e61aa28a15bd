"""A bowed string written as N modes: a linear structure given by modal data, one bow contact.

The string (length ``L``, linear density ``rho``, fundamental ``f1``) has the modes
``w_k = 2 pi f1 k`` with the mass-normalised shapes ``sqrt(2 / (rho L)) sin(k pi x / L)``
(an ideal string; ``zeta`` the modal damping ratio).  The bow, at ``x_b = beta L``, presses
with the force ``FN`` and moves at ``Vb``; the friction force on the string is ``FN mu(v_b -
Vb)`` with the hyperbolic law of :func:`frictionkit.modelspec.laws.hyperbolic` of the
relative velocity of the bow point.  Only the bow point is declared: the modes stay numbers
(DESIGN §6), so codegen sees one law whatever ``n_modes`` is, and the harmonic balance is
condensed onto the bow point's velocity (``n_in (2H + 1) + 2`` unknowns).

From the command line (the default 16 modes; ``FK_BOWED_MODES`` sets another count), from the
highest bow speed where steady sliding loses its stability down::

    frictionkit continue examples/bowed_string.py --param Vb --start 0.6 --stop 0.05 --from-hopf 1 -H 48

(with a heavier bow, ``--set FN=0.5``, steady sliding is unstable at every speed in that range:
there is no Hopf point to start from, only a simulation, ``--from-simulation``).
"""
import os

import numpy as np

from frictionkit.modelspec import ModelSpec, Structure, laws


def model(n_modes=None, beta=0.1, zeta=0.003):
    """The bowed string with ``n_modes`` modes (default ``FK_BOWED_MODES`` or 16), bowed at
    ``beta`` of its length, modal damping ratio ``zeta``."""
    n_modes = int(os.environ.get("FK_BOWED_MODES", 16) if n_modes is None else n_modes)
    f1, L, rho = 196.0, 0.33, 1.2e-3                  # Hz, m, kg/m (a violin G string, roughly)
    k = np.arange(1, n_modes + 1)
    shapes = {"bow": np.sqrt(2 / (rho * L)) * np.sin(k * np.pi * beta),
              "bridge": np.sqrt(2 / (rho * L)) * np.sin(k * np.pi * 0.999)}
    m = ModelSpec(f"bowed_string_{n_modes}", f"bowed string, {n_modes} modes, hyperbolic bow law",
                  time_unit="s")
    Vb = m.parameter("Vb", 0.1, unit="m/s", doc="bow speed")
    FN = m.parameter("FN", 0.02, unit="N", doc="bow force")
    mus, mud = m.parameter("mus", 0.8), m.parameter("mud", 0.3)
    v0 = m.parameter("v0", 0.1, unit="m/s", doc="velocity scale of the law")
    delta = m.parameter("delta", 2e-3, unit="m/s", doc="regularization of |v|")
    s = m.structure(Structure.modal(frequencies=2 * np.pi * f1 * k, damping=zeta, shapes=shapes,
                                    displacement_unit="m"))
    mu = m.friction("bow", laws.hyperbolic, s.velocity("bow") - Vb, mus=mus, mud=mud, v0=v0, delta=delta)
    s.force("bow", FN * mu)
    return m
