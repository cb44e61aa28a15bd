"""Bad structures and contacts (issue 24): each a clear error naming the thing, at declaration
(modelspec) or at load (the reduction), and from the command line without a traceback."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from examples.fe_beam_damper import beam_matrices
from frictionkit.modelspec import ModelSpec, Structure, StructureError, laws
from frictionkit.modelspec.errors import DuplicateNameError, MissingEquationError, ModelSpecError
from frictionkit.runtime import load_model
from frictionkit.runtime.errors import InputError

M, K = beam_matrices(10)
N = M.shape[0]


@pytest.mark.parametrize("make, words", [
    (lambda: Structure.from_matrices(np.ones((3, 4)), np.eye(3), points={"a": 0}, modes=1), "not a square"),
    (lambda: Structure.from_matrices(M, K[:-2, :-2], points={"a": 0}, modes=2), "same size"),
    (lambda: Structure.from_matrices(M, K + scipy.sparse.csr_matrix(([1.0], ([0], [1])), shape=K.shape),
                                     points={"a": 0}, modes=2), "stiffness matrix is not symmetric"),
    (lambda: Structure.from_matrices(M.toarray() * np.nan, K, points={"a": 0}, modes=2), "non-finite"),
    (lambda: Structure.from_matrices(M, K, points={"tip": N + 3}, modes=2), "degree of freedom"),
    (lambda: Structure.from_matrices(M, K, points={"tip": np.zeros(N)}, modes=2), "vector is zero"),
    (lambda: Structure.from_matrices(M, K, points={"tip": 1}), "modes=<count> or cutoff"),
    (lambda: Structure.from_matrices(M, K, points={"tip": 1}, modes=2, cutoff=10.0), "one of them"),
    (lambda: Structure.from_matrices(M, K, points={"tip": 1}, modes=2, rayleigh=(1, 0), damping_ratio=0.01),
     "one damping option"),
    (lambda: Structure.from_matrices(M, K, points={"tip": 1}, modes=2, damping_ratio=1.5), "outside [0, 1)"),
    (lambda: Structure.from_matrices(M, K, points={"2tip": 1}, modes=2), "identifier"),
    (lambda: Structure.modal([100.0, -3.0], 0.01, {"a": [1.0, 1.0]}), "frequency 1"),
    (lambda: Structure.modal([100.0, 300.0], 0.01, {"a": [1.0, 1.0, 2.0]}), "has 3 entries"),
    (lambda: Structure.modal([], 0.01, {"a": []}), "empty"),
])
def test_structure_declarations_are_checked(make, words):
    with pytest.raises(StructureError, match=None) as info:
        make()
    assert words in str(info.value)


def test_mtx_files_that_do_not_parse_or_do_not_exist(tmp_path):
    bad = tmp_path / "k.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 oops\n")
    with pytest.raises(StructureError, match=r"k\.mtx.*not a MatrixMarket matrix"):
        Structure.from_mtx(tmp_path / "k.mtx", tmp_path / "k.mtx", points={"a": 0}, modes=1)
    with pytest.raises(StructureError, match=r"missing\.mtx.*does not exist"):
        Structure.from_mtx(tmp_path / "missing.mtx", bad, points={"a": 0}, modes=1)


def _spec(structure, point="tip", force=True):
    m = ModelSpec("bad_structure", "")
    V = m.parameter("V", 0.1)
    s = m.structure(structure)
    mu = m.friction("c", laws.coulomb_tanh, s.velocity(point) - V, eps=0.01)
    if force:
        s.force(point, mu)
    return m


def test_contacts_name_existing_points_and_a_structure_needs_a_force():
    st = Structure.modal([100.0, 300.0], 0.01, {"tip": [1.0, 0.5]})
    with pytest.raises(StructureError, match="point 'nowhere' does not exist; the structure's points are tip"):
        _spec(st, point="nowhere")
    m = ModelSpec("x", "")
    s = m.structure(st)
    with pytest.raises(StructureError, match="point 'nope' does not exist"):
        s.force("nope", 1.0)
    with pytest.raises(DuplicateNameError, match="already has a structure"):
        m.structure(st)
    with pytest.raises(ModelSpecError, match="takes a Structure"):
        ModelSpec("y", "").structure(np.eye(3))
    with pytest.raises(MissingEquationError, match=r"no force acts on it.*s\.force"):
        _spec(st, force=False).validate("V")


def test_the_reduction_refuses_what_it_cannot_reduce():
    Md, Kd = M.toarray(), K.toarray()
    indefinite = Md.copy()
    indefinite[0, 0] = -indefinite[0, 0]
    cases = [
        (Structure.from_matrices(indefinite, Kd, points={"tip": N - 2}, modes=2), "mass matrix is not positive definite"),
        (Structure.from_matrices(scipy.sparse.csr_matrix(indefinite), K, points={"tip": N - 2}, modes=2),
         "mass matrix"),
        (Structure.from_matrices(Md, np.zeros_like(Kd), points={"tip": N - 2}, modes=2), "singular"),
        (Structure.from_matrices(M, K, points={"tip": N - 2}, cutoff=1.0), "no mode below the cut-off 1 rad/s"),
        (Structure.from_matrices(Md, Kd, points={"tip": N - 2}, modes=3, damping=np.diag(np.arange(N) + 1.0)),
         "not proportional"),
    ]
    for st, words in cases:
        with pytest.raises(InputError) as info:
            load_model(_spec(st), continuation="V")
        assert words in str(info.value), str(info.value)


def test_a_bad_structure_from_the_command_line_is_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "bad_beam.py"
    path.write_text(
        "import numpy as np\n"
        "from frictionkit.modelspec import ModelSpec, Structure, laws\n"
        "def model():\n"
        "    m = ModelSpec('bad_beam', '')\n"
        "    V = m.parameter('V', 0.1)\n"
        "    s = m.structure(Structure.modal([100.0, 300.0], 0.01, {'tip': [1.0, 0.5]}))\n"
        "    s.force('tip', m.friction('c', laws.coulomb_tanh, s.velocity('elsewhere') - V, eps=0.01))\n"
        "    return m\n")
    out = subprocess.run([str(Path(sys.executable).with_name("frictionkit")), "continue", str(path), "--param",
                          "V", "--start", "0.1", "--stop", "1"], capture_output=True, text=True)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr + out.stdout
    assert "point 'elsewhere' does not exist" in out.stderr + out.stdout
