"""The ``jaxcfr`` executable and ``python -m jaxcfr``: what runs before anything heavy.

Importing it installs the early signal handlers as its first statement, after only
``jaxcfr`` (which imports nothing), ``jaxcfr.cli`` and :mod:`jaxcfr._util.signals`, so
that Ctrl-C and SIGTERM are handled from the first moment jaxcfr's code runs
(:func:`jaxcfr._util.signals.exit_at_once`: until a command starts, a signal ends it at
once with status 130 / 143 and one line; what comes before, Python's own start-up, is
Python's). It imports only the standard library before the command runs, so that
``jaxcfr --version`` answers without importing JAX. ``jaxcfr train`` over several
processes runs under :mod:`jaxcfr.cli.supervise` (one line when JAX's distributed service
ends the process). Then it runs :func:`jaxcfr.cli.app.main`.
"""

from __future__ import annotations

from jaxcfr._util.signals import exit_at_once

exit_at_once("jaxcfr")                   # first, before any other import (module docstring)

import sys  # noqa: E402
from typing import NoReturn, Sequence  # noqa: E402

__all__ = ["console_main"]


def console_main(argv: Sequence[str] | None = None) -> NoReturn:
    """``jaxcfr COMMAND ...``: install the early signal handlers (importing this module did
    already), answer ``--version``, then run the command (:func:`jaxcfr.cli.app.main`) and
    exit with its status."""
    exit_at_once("jaxcfr")
    from jaxcfr.cli.version import version_line
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        print(version_line())
        sys.stdout.flush()
        raise SystemExit(0)
    from jaxcfr.cli.supervise import divert_native_stdout, needs_supervisor, supervise
    if needs_supervisor(args):             # over several processes: watch the run in a child
        raise SystemExit(supervise(args))
    divert_native_stdout()                 # (in such a child: gloo's stdout to the log)
    from jaxcfr.cli.app import exit_with, main
    exit_with(main(args))
