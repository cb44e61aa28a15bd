"""The compiled extensions of frictionkit, built when the package is installed
(``pip install -e .``, ``make install``); everything else is declared in ``pyproject.toml``.

The ANM series loop of the AFT harmonic balance (``runtime/discretizations/_pointwise_loop.pyx``)
is the same for every model, so it is compiled once here instead of at the first
continuation (``_pointwise.compiled_loop`` still builds it in the model cache, with one
warning, where this build is missing or out of date).  Next to each extension the build
writes ``<module>.source.json`` with the SHA-256 of the ``.pyx`` it was compiled from: an
editable install whose ``.pyx`` changed afterwards is then known to be stale, never used.
"""
import hashlib
import json
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
#: extension module -> its Cython source (the folders are mapped to ``frictionkit.*`` in pyproject.toml)
PYX = {"frictionkit.runtime.discretizations._pointwise_loop": "runtime/discretizations/_pointwise_loop.pyx"}


class BuildExtWithSource(build_ext):
    """``build_ext`` that records the hash of each extension's ``.pyx`` beside the binary: in
    the build folder (what a wheel installs) and, for an editable install, beside the copy
    in the source tree (setuptools builds elsewhere and copies the binary back)."""

    def run(self):
        super().run()
        inplace = self.inplace
        try:
            for self.inplace in sorted({0, inplace}):     # the build folder, then the source tree
                for ext in self.extensions:
                    self._record(ext)
        finally:
            self.inplace = inplace

    def _record(self, ext):
        target = Path(self.get_ext_fullpath(ext.name))
        if not target.exists():            # an optional extension that could not be built
            return
        digest = hashlib.sha256((HERE / PYX[ext.name]).read_bytes()).hexdigest()
        record = target.parent / (ext.name.rsplit(".", 1)[1] + ".source.json")
        record.write_text(json.dumps({"pyx_sha256": digest}) + "\n")


EXTENSIONS = cythonize([Extension(name, [pyx]) for name, pyx in PYX.items()], quiet=True)
for _ext in EXTENSIONS:
    # optional (set after cythonize, which drops the flag): without a C compiler the install goes
    # on, and the runtime builds the loop at first use or runs it in Python, with one warning
    # (FRICTIONKIT_REQUIRE_COMPILED=1 refuses a loop not built here)
    _ext.optional = True

setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildExtWithSource})
