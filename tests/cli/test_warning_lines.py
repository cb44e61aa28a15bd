"""The console script prints a warning as one line, ``frictionkit: warning: <message>``,
without Python's file name, line number, category and source line; a program importing
frictionkit keeps Python's own format."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

EXE = Path(sys.executable).with_name("frictionkit")
ROOT = Path(__file__).resolve().parents[2]


def test_console_script_warning_is_one_line(tmp_path):
    # the 4-mode bowed string at H = 16: its stability is uncertain at a few points (a warning)
    env = dict(os.environ, FK_BOWED_MODES="4")
    run = subprocess.run([str(EXE), "continue", str(ROOT / "examples" / "bowed_string.py"), "--param", "Vb",
                          "--start", "0.6", "--stop", "0.05", "--from-hopf", "1", "-H", "16",
                          "--out", str(tmp_path / "b.h5"), "-q"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "warning" in line.lower()]
    assert lines and all(line.startswith("frictionkit: warning: ") for line in lines), run.stderr
    assert "stability uncertain" in run.stderr
    assert "Warning:" not in run.stderr and ".py:" not in run.stderr, run.stderr


def test_a_program_keeps_pythons_warning_format():
    import frictionkit
    frictionkit._prepare_command()                     # not the console script: nothing changes
    assert warnings.formatwarning is not frictionkit._warning_line
