"""``frictionkit codegen``: recast a model and emit its NumPy and Cython modules."""
from pathlib import Path
import time

import click


@click.command("codegen")
@click.argument("model", required=False)
@click.option("--param", "-p", "param", help="Continuation parameter (becomes lam), e.g. Vb.")
@click.option("--backend", type=click.Choice(["numpy", "cython", "both"]), default="both", show_default=True,
              help="Which generated module(s) to write.")
@click.option("--out", "-o", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the generated files (default: current folder; with --all: generated/).")
@click.option("--explain", is_flag=True, help="Print the recast system and its validity conditions.")
@click.option("--all", "all_", is_flag=True, help="Regenerate every shipped zoo module in generated/.")
@click.option("--build", is_flag=True, help="Also compile the Cython module into the per-user cache.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar (shown by default for models of 20 states and more).")
def codegen_cmd(model, param, backend, out, explain, all_, build, quiet):
    """Recast MODEL to quadratic form and generate its solver modules.

    MODEL is a zoo name (belt, shaw) or a path to a model file that defines
    `model()` returning a frictionkit.modelspec.ModelSpec.

    \b
    Examples:
      frictionkit codegen belt --param Vb --explain
      frictionkit codegen my_model.py --param FN --out build/
      frictionkit codegen --all
    """
    # codegen imports sympy: 0.46 s on top of the runtime's 0.86 s, which every other command
    # and ``frictionkit --help`` would pay if it were imported with this module
    from frictionkit.codegen import compile_module, generate_sources, write_generated
    from frictionkit.modelspec.errors import ModelSpecError

    from ..results._atomic import atomic_path
    if all_:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)      # like the single-model path below
        for path in write_generated(out_dir=out):
            click.echo(f"wrote {path}")
        return
    if not model or not param:
        raise click.UsageError("give MODEL and --param NAME (or --all); see --help")
    backends = ("numpy", "cython") if backend == "both" else (backend,)
    t0 = time.perf_counter()
    try:
        system, sources = generate_sources(model, param, backends, progress=False if quiet else None)
    except ModelSpecError as exc:
        raise click.ClickException(str(exc)) from None
    dt = time.perf_counter() - t0
    if explain:
        click.echo(system.explain())
        click.echo("")
    out = out or Path(".")
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{system.name}__{system.continuation}"
    for b, src in sources.items():
        path = out / f"{stem}{'.py' if b == 'numpy' else '.pyx'}"
        with atomic_path(path) as tmp:
            tmp.write_text(src)
        click.echo(f"wrote {path}")
    click.echo(f"{system.n_vars} variables, {len(system.Q)} quadratic terms, model hash {system.model_hash}, "
               f"codegen {dt:.3f} s")
    if build and "cython" in sources:
        t0 = time.perf_counter()
        _, info = compile_module(sources["cython"], stem)
        click.echo(f"compiled {info['path']} ({'cached' if info['cached'] else 'built'} in "
                   f"{time.perf_counter() - t0:.1f} s)")
