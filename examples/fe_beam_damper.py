"""A clamped beam from finite elements with a friction damper, forced near its first bending mode.

The beam (Euler-Bernoulli, ``n_elements`` Hermite elements, two degrees of freedom per node:
deflection and slope; consistent mass) is assembled here as ``scipy.sparse`` matrices and
written to MatrixMarket files, as a finite-element code exports them; the model reads them back
with :meth:`frictionkit.modelspec.Structure.from_mtx`.  A friction damper (regularized Coulomb
law, normal load ``FN``) acts at mid-span against the ground; the tip is forced with
``F0 cos(W t)``.  The structure is reduced at load time to its modes below ``cutoff`` plus the
static correction at the two loaded points (DESIGN §6); the harmonic balance is condensed onto
the damper's velocity.

From the command line::

    frictionkit continue examples/fe_beam_damper.py --param W ...      (forced: see README "Structures")
"""
import os
import tempfile
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse

from frictionkit.modelspec import ModelSpec, Structure, laws

LENGTH, WIDTH, THICKNESS = 1.0, 0.04, 0.01          # m
YOUNG, DENSITY = 210e9, 7850.0                       # Pa, kg/m^3


def beam_matrices(n_elements):
    """Mass and stiffness of a cantilever (clamped at x = 0) of ``n_elements`` Euler-Bernoulli
    elements, DOFs ``(w_1, theta_1, ..., w_n, theta_n)`` of the free nodes, as CSR matrices."""
    h = LENGTH / n_elements
    EI = YOUNG * WIDTH * THICKNESS ** 3 / 12
    rhoA = DENSITY * WIDTH * THICKNESS
    k = EI / h ** 3 * np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                                [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]])
    m = rhoA * h / 420 * np.array([[156, 22 * h, 54, -13 * h], [22 * h, 4 * h * h, 13 * h, -3 * h * h],
                                   [54, 13 * h, 156, -22 * h], [-13 * h, -3 * h * h, -22 * h, 4 * h * h]])
    rows, cols, kv, mv = [], [], [], []
    for e in range(n_elements):
        dofs = np.arange(2 * e, 2 * e + 4) - 2          # the clamped node's two DOFs are -2, -1
        for a in range(4):
            for b in range(4):
                if dofs[a] >= 0 and dofs[b] >= 0:
                    rows.append(dofs[a])
                    cols.append(dofs[b])
                    kv.append(k[a, b])
                    mv.append(m[a, b])
    n = 2 * n_elements
    K = scipy.sparse.csr_matrix((kv, (rows, cols)), shape=(n, n))
    M = scipy.sparse.csr_matrix((mv, (rows, cols)), shape=(n, n))
    return M, K


def write_mtx(n_elements, folder=None):
    """The beam's matrices as ``mass.mtx`` and ``stiffness.mtx`` in ``folder`` (default a
    folder of the system's temporary directory), written once; returns the two paths."""
    folder = Path(folder or Path(tempfile.gettempdir()) / f"frictionkit_beam_{n_elements}")
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "mass.mtx", folder / "stiffness.mtx"
    if not all(p.is_file() for p in paths):
        M, K = beam_matrices(n_elements)
        for path, mat in zip(paths, (M, K)):
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            scipy.io.mmwrite(str(tmp), mat, precision=17)
            os.replace(tmp if tmp.exists() else tmp.with_suffix(tmp.suffix + ".mtx"), path)
    return paths


def model(n_elements=40, cutoff=2000.0, folder=None):
    """The beam with its damper; ``cutoff`` [rad/s] bounds the retained modes."""
    mass, stiffness = write_mtx(n_elements, folder)
    n = 2 * n_elements
    mid = 2 * (n_elements // 2 - 1)                  # deflection DOF of the mid-span node
    s_ = Structure.from_mtx(mass, stiffness, points={"mid": mid, "tip": n - 2}, damping_ratio=0.005,
                            cutoff=cutoff, displacement_unit="m")
    m = ModelSpec(f"beam_damper_{n_elements}", "cantilever with a friction damper at mid-span, tip forcing",
                  time_unit="s")
    W = m.forcing(m.parameter("W", 40.0, unit="rad/s", doc="forcing frequency"))
    F0 = m.parameter("F0", 1.0, unit="N", doc="forcing amplitude")
    FN = m.parameter("FN", 0.5, unit="N", doc="normal load of the damper")
    eps = m.parameter("eps", 1e-3, unit="m/s", doc="velocity scale of the regularized Coulomb law")
    s = m.structure(s_)
    mu = m.friction("damper", laws.coulomb_tanh, s.velocity("mid"), eps=eps)
    s.force("mid", FN * mu)
    s.force("tip", F0 * __import__("sympy").cos(W * m.t))
    return m
