"""A package's public names imported from their modules when first asked for (PEP 562), so
that importing the package, or one of its light modules, imports nothing heavy."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: dict[str, str], names: Sequence[str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """The ``(__getattr__, __dir__)`` of ``package``: a name of ``where`` (name -> the
    package's module that defines it) is imported from its module when first asked for and
    kept in ``namespace`` (the package's ``globals()``); ``__dir__`` lists ``namespace`` and
    ``names`` (the package's ``__all__``).

    Example::

        __getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__, globals())
    """
    def __getattr__(name: str):
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(names))
    return __getattr__, __dir__
