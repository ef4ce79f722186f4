"""The ``jaxcfr`` command: every command in one room (games, validate, inspect, solve,
train, eval, estimate, abstract), one-line errors, exit statuses.

Layer 9, the top: may import every layer below.
"""

from jaxcfr.cli.app import console_main, main

__all__ = ["main", "console_main"]
