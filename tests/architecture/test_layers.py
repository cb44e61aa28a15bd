"""The runtime's layers: no import cycle among its modules, and no import from a lower layer
to a higher one, counting imports inside functions (DESIGN §1, issue 11).

The imports are read from the source (AST), so an import hidden in a function body or behind
``TYPE_CHECKING`` counts like any other.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
PACKAGE = "frictionkit.runtime"

# Lowest first.  A module may import its own layer and the layers below it.
LAYERS = ["_package", "_version", "errors", "_roots", "_sparse", "model", "discretizations", "results", "engine", "analysis", "drivers", "sweeps", "nonsmooth",
          "cli", "__init__"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE] + parts)


def _layer(module: str) -> str:
    rest = module[len(PACKAGE):].lstrip(".")
    return rest.split(".")[0] if rest else "__init__"


def _imports(path: Path) -> set[str]:
    """Runtime modules that ``path`` imports anywhere in its body (resolved to module names)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # `from pkg import sub` may name a submodule
            names = [stem] + [f"{stem}.{a.name}" for a in node.names]
        else:
            continue
        found.update(n for n in names if n.startswith(PACKAGE))
    return found


def _graph():
    modules = {_module_name(p): p for p in RUNTIME.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        graph[name] = {m for m in _imports(path) if m in modules and m != name}
    return graph


def test_every_runtime_module_belongs_to_a_layer():
    unknown = sorted({_layer(m) for m in _graph()} - set(LAYERS))
    assert not unknown, f"runtime folders outside the layer list: {unknown}; add them to LAYERS"


def test_imports_only_go_down():
    wrong = []
    for module, deps in _graph().items():
        lo = LAYERS.index(_layer(module))
        for dep in deps:
            if LAYERS.index(_layer(dep)) > lo:
                wrong.append(f"{module} -> {dep}")
    assert not wrong, "imports from a lower layer to a higher one:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle():
    graph = _graph()
    # a subpackage's __init__ re-exports its modules; an edge into a package means "into one of
    # its modules", which is resolved by following the package's own edges
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for dep in graph[node]:
            if state.get(dep) == "open":
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("path", sorted(RUNTIME.rglob("*.py")), ids=lambda p: str(p.relative_to(RUNTIME)))
def test_no_matplotlib_backend_switch(path):
    """Library code never switches the user's matplotlib backend (a notebook's would be lost)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "use"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "matplotlib"):
            pytest.fail(f"{path.name}:{node.lineno} calls matplotlib.use()")
