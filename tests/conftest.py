"""Shared pytest configuration."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")

# property tests: random exploration on developers' machines (new examples every run), a fixed
# example set in CI (CI=true), so that a submission's result does not depend on the draw
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files of generated code instead of comparing")
