"""What the command-line tests share: ``run_cli``, one command run in this process with its
status and output; and the mistake check, each mistake answered in a fresh interpreter with
its one line, status 2, no traceback, and JAX never imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROGRAM = ("import json, sys\nfrom jaxcfr.cli.app import main\nout = []\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    try:\n        status = main(argv)\n"
            "    except SystemExit as e:\n        status = e.code\n"
            "    out.append([status, 'jax' in sys.modules])\n"
            "print(json.dumps(out))\n")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """``jaxcfr ARGV`` through ``jaxcfr.cli.app.main`` in this process: its exit status (an
    argparse exit's code: --help, --version, usage errors) and what it wrote to standard
    output and standard error (``capsys``: pytest's fixture; earlier output is dropped)."""
    from jaxcfr.cli import app
    capsys.readouterr()
    try:
        status = app.main(list(argv))
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def assert_answered_before_jax(mistakes, cwd) -> None:
    """Every ``(argv, words)`` of ``mistakes`` run through ``jaxcfr.cli.app.main``, one
    after another in one fresh interpreter in ``cwd``: status 2, ``words`` in its standard
    error, JAX not imported after it, and no traceback anywhere."""
    done = subprocess.run([sys.executable, "-c", _PROGRAM,
                           json.dumps([argv for argv, _ in mistakes])],
                          cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, JAXCFR_NO_CACHE="1"))
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(results) == len(mistakes), done.stderr[-3000:]
    for (argv, words), (status, jax) in zip(mistakes, results):
        assert status == 2 and words in done.stderr, (argv, done.stderr)
        assert not jax, f"{argv} imported JAX"
    assert "Traceback" not in done.stderr
