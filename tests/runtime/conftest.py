"""Test configuration of the runtime core: one BLAS thread.

The machines the suite runs on are shared (and pytest-xdist runs two workers on two
cores): a multi-threaded OpenBLAS is then many times *slower* for the few-hundred-unknown
LU factorizations of these tests.  Without threadpoolctl, the loaded OpenBLAS libraries
are told directly (ctypes) to use one thread.
"""
import ctypes

import numpy  # noqa: F401  (load numpy's and scipy's OpenBLAS first)
import scipy.linalg  # noqa: F401


def _one_blas_thread():
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "openblas" in line and line.rstrip().endswith(".so")
                    or ("openblas" in line and ".so" in line)}
    except OSError:
        return
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(1)
                break


_one_blas_thread()
