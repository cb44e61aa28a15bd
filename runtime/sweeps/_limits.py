"""The sweep's size limit, in a module that imports nothing: ``frictionkit sweep --help`` shows
it as the default of ``--max-tasks`` without importing NumPy (``tests/cli/test_lazy_cli.py``)."""

#: default largest number of tasks (grid points) of one sweep: each task is a whole run, so
#: 10^5 tasks of a second each are a day of one core; ``max_tasks`` (``--max-tasks``) raises it
MAX_TASKS = 100_000
