"""``is_sparse(a)``: ``scipy.sparse.issparse(a)`` without importing ``scipy.sparse``.

Importing ``scipy.sparse`` (with its ``linalg``: ARPACK, SuperLU, the iterative solvers) costs
a command about 0.01 s of CPU; the models of a few states never build a sparse matrix, and none
exists before ``scipy.sparse`` is imported, so the modules that take either kind of Jacobian
ask this instead (the collocations' and the structures' modules import ``scipy.sparse`` when
they build one).
"""
import sys

__all__ = ["is_sparse"]


def is_sparse(a) -> bool:
    """Whether ``a`` is a SciPy sparse array or matrix (``scipy.sparse.issparse``)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(a))
