"""The ``jaxcfr`` executable and ``python -m jaxcfr``: what runs before anything heavy.

It imports only the standard library and :mod:`jaxcfr._util.signals` (``import jaxcfr``
is light, see its docstring), so that Ctrl-C and SIGTERM are handled from the first
moment (:func:`jaxcfr._util.signals.exit_at_once`: while JAX imports, a signal ends the
command at once with status 130 / 143 and one line) and ``jaxcfr --version`` answers
without importing JAX. ``jaxcfr train`` over several processes runs under
:mod:`jaxcfr.cli.supervise` (one line when JAX's distributed service ends the process).
Then it runs :func:`jaxcfr.cli.app.main`.
"""

from __future__ import annotations

import sys
from typing import NoReturn, Sequence

from jaxcfr._util.signals import exit_at_once
from jaxcfr.cli.version import version_line

__all__ = ["console_main"]


def console_main(argv: Sequence[str] | None = None) -> NoReturn:
    """``jaxcfr COMMAND ...``: install the early signal handlers, answer ``--version``, then
    run the command (:func:`jaxcfr.cli.app.main`) and exit with its status."""
    exit_at_once("jaxcfr")
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
