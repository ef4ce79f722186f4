#!/usr/bin/env python
"""Train from a TOML run config; the default is the main job, configs/leduc.toml.

Usage::

    python benchmarks/train.py                                  # configs/leduc.toml
    python benchmarks/train.py configs/kuhn.toml --set solver.iterations=500
    python benchmarks/train.py --resume runs/leduc-20250101-120000

Same options as ``jaxcfr train`` (see docs/runs.md).
"""

import sys
from pathlib import Path

from jaxcfr._util.signals import exit_at_once

if __name__ == "__main__":
    exit_at_once("train.py")             # Ctrl-C while JAX imports: one line, status 130
    from jaxcfr.cli.app import exit_with, train_script
    default = Path(__file__).resolve().parent.parent / "configs" / "leduc.toml"
    exit_with(train_script(sys.argv[1:], default_config=str(default)))
