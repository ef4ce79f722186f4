"""The ``jaxcfr`` command: every command in one room, a module each (games, validate,
inspect, solve, train with eval, estimate, abstract, resolve, plot), the parser with one-line
errors and exit statuses (:mod:`jaxcfr.cli.app`);
:mod:`jaxcfr.cli.launch` is the executable's entry point (light: it handles signals before
JAX is imported).

Layer 9, the top: may import every layer below.
"""

__all__ = ["main", "console_main"]


def __getattr__(name: str):
    if name == "main":                   # jaxcfr.cli.app imports JAX: only when asked for
        from jaxcfr.cli.app import main
        return main
    if name == "console_main":
        from jaxcfr.cli.launch import console_main
        return console_main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
