"""Argument rules shared by every entry point: the Python API, configs and the command line.

``jaxcfr.solve``, :class:`jaxcfr.Runner`, ``jaxcfr.train`` (through its config) and
the ``jaxcfr`` command all check their numbers with these functions, so that one bad
value gets the same words wherever it is given; only the name differs
(``eval_every`` in Python, ``run.eval_every`` in a config, ``--eval-every`` on the
command line).

Example::

    >>> from jaxcfr._util.arguments import positive_int
    >>> positive_int("iterations", 10)
    10
    >>> positive_int("iterations", 2.5)
    Traceback (most recent call last):
    ...
    jaxcfr._util.arguments.ArgumentError: iterations must be a positive integer (1, 2, ...), got 2.5
"""

from __future__ import annotations

import argparse
import math
import os
import numbers
import tempfile
from typing import Any, Callable, Iterable

__all__ = ["ArgumentError", "positive_int", "nonnegative_int", "optional_positive_int",
           "finite_float", "positive_float", "stop_target", "one_of", "plain_name",
           "command_line_type", "output_file",
           "seed", "seeds",
           "exploration", "draws", "MAX_COUNT", "MAX_DRAWS", "api_spelling",
           "command_line_spelling"]

#: Seeds are int32 (they are traced arguments of the compiled step).
MAX_SEED = 2 ** 31 - 1
#: The largest count any argument takes (iterations, chunks, cadences, samples): the
#: device counts in int32, and a larger number is a typo, not a plan.
MAX_COUNT = 2 ** 31 - 1
#: The most chance draws per iteration under sampled chance: the host lowers every draw of
#: every iteration (about 0.5-1.5 ms each), so a million is already a quarter of an hour
#: per iteration.
MAX_DRAWS = 1_000_000


class ArgumentError(ValueError):
    """An argument breaks its rule; the message names the argument and the value.

    ``argument``: the argument as the caller spelled it (``draws``, ``--draws``,
    ``solver.draws``), when one argument is to blame.
    """

    def __init__(self, message: str, argument: str | None = None):
        super().__init__(message)
        self.argument = argument


#: How each entry point spells a run's arguments in messages (``spell(name)``): the Python
#: API by their names, the command line by their flags; configs spell them by their keys
#: (``jaxcfr.runs.config``).
def api_spelling(name: str) -> str:
    return name


def command_line_spelling(name: str) -> str:
    return "--" + name.replace("_", "-")


def _integer(value: Any) -> int | None:
    """``value`` as an int if it is an integer (NumPy integers too, bools not), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def _shown(value: Any) -> str:
    """``repr(value)``, or ``10**30``-style for a huge integer (its repr is 31 digits)."""
    v = _integer(value)
    if v is not None and abs(v) >= 10 ** 12:
        exponent = len(str(abs(v))) - 1
        if v == 10 ** exponent:
            return f"10**{exponent}"
        return f"{float(v):.3g}"
    return repr(value)


def positive_int(name: str, value: Any, most: int = MAX_COUNT, why: str = "") -> int:
    """``value`` if it is an integer in ``1..most`` (default :data:`MAX_COUNT`)."""
    v = _integer(value)
    if v is None or v < 1:
        raise ArgumentError(f"{name} must be a positive integer (1, 2, ...), got {_shown(value)}",
                            argument=name)
    if v > most:
        raise ArgumentError(f"{name} must be at most {most:,}{why or _WHY_COUNT}, got "
                            f"{_shown(value)}", argument=name)
    return v


_WHY_COUNT = " (the device counts in int32)"


def nonnegative_int(name: str, value: Any, most: int = MAX_COUNT) -> int:
    """``value`` if it is an integer in ``0..most`` (default :data:`MAX_COUNT`)."""
    v = _integer(value)
    if v is None or v < 0:
        raise ArgumentError(f"{name} must be a non-negative integer (0, 1, ...), got "
                            f"{_shown(value)}", argument=name)
    if v > most:
        raise ArgumentError(f"{name} must be at most {most:,}{_WHY_COUNT}, got {_shown(value)}",
                            argument=name)
    return v


def draws(name: str, value: Any) -> int:
    """Chance draws per iteration (sampled chance): an integer in ``1..MAX_DRAWS``."""
    return positive_int(name, value, MAX_DRAWS, " (the host lowers every draw of every "
                        "iteration, about a millisecond each)")


def optional_positive_int(name: str, value: Any) -> int | None:
    """``None``, or ``value`` if it is an integer >= 1."""
    return None if value is None else positive_int(name, value)


def seed(name: str, value: Any) -> int:
    """``value`` if it is an integer in ``0..2**31 - 1`` (a PRNG seed), or a JAX PRNG key
    (``jax.random.key(s)`` or a raw ``uint32[2]`` key): its seed is then the key's first
    draw of ``jax.random.randint(key, (), 0, 2**31 - 1)`` (a function of the key alone)."""
    key = _from_key(value)
    if key is not None:
        return key
    v = _integer(value)
    if v is None or not 0 <= v <= MAX_SEED:
        raise ArgumentError(f"{name} must be an integer from 0 to {MAX_SEED} or a JAX PRNG "
                            f"key, got {_shown(value)}", argument=name)
    return v


def _from_key(value: Any) -> int | None:
    """The seed of a JAX PRNG key (typed, or raw ``uint32[2]``), else None. JAX is only
    imported when ``value`` is one of its arrays."""
    if type(value).__module__.split(".")[0] not in ("jax", "jaxlib"):
        return None
    import jax
    import numpy as np
    try:
        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            if value.shape != ():
                return None
        elif not (value.shape == (2,) and value.dtype == np.uint32):
            return None
        return int(jax.random.randint(value, (), 0, MAX_SEED))
    except (AttributeError, TypeError, ValueError):
        return None


def seeds(name: str, value: Any) -> list[int]:
    """A non-empty list of distinct seeds (a comma-separated string is split)."""
    if isinstance(value, str):
        try:
            value = [int(x) for x in value.split(",") if x.strip()]
        except ValueError:
            raise ArgumentError(f"{name} must be seeds separated by commas (0,1,2), "
                                f"got {value!r}", argument=name) from None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ArgumentError(f"{name} must be a list of seeds, got {value!r}", argument=name)
    out = [seed(name, v) for v in value]
    if not out or len(set(out)) != len(out):
        raise ArgumentError(f"{name} must list distinct seeds, at least one, got {value!r}",
                            argument=name)
    return out


def exploration(name: str, value: Any) -> float:
    """Outcome sampling's epsilon: a number in ``(0, 1]`` (0 would leave actions the
    strategy never plays unsampled, and the estimate biased)."""
    v = finite_float(name, value)
    if not 0 < v <= 1:
        raise ArgumentError(f"{name} must be in (0, 1], got {value!r}", argument=name)
    return v


def positive_float(name: str, value: Any) -> float:
    """``value`` as a float if it is a finite number above 0."""
    v = finite_float(name, value)
    if v <= 0:
        raise ArgumentError(f"{name} must be positive, got {value!r}", argument=name)
    return v


def stop_target(name: str, value: Any, every_name: str, every: Any) -> float | None:
    """``None``, or ``value`` as a float if it is a finite number above 0 and evaluations
    check it (``every``, the evaluation cadence named ``every_name``, is given): a metric
    to stop at (``jaxcfr.solve``'s ``target``, ``--target``)."""
    if value is None:
        return None
    v = positive_float(name, value)
    if every is None:
        raise ArgumentError(f"{name} is checked at evaluations, and there are none before "
                            f"the last iteration: give {every_name} too", argument=name)
    return v


def finite_float(name: str, value: Any) -> float:
    """``value`` as a float if it is a finite real number (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not math.isfinite(float(value)):
        raise ArgumentError(f"{name} must be a finite number, got {value!r}", argument=name)
    return float(value)


def output_file(name: str, value: str) -> str:
    """``value`` if a file can be written there: not a directory, in a folder that exists
    (checked before the work whose result it receives, so that a wrong path costs
    nothing)."""
    if os.path.isdir(value):
        raise ArgumentError(f"{name} {value!r} is a directory: name the file to write",
                            argument=name)
    folder = os.path.dirname(value) or "."
    if not os.path.isdir(folder):
        raise ArgumentError(f"{name} {value!r}: the folder {folder!r} does not exist"
                            + (" (it is a file)" if os.path.exists(folder) else ""),
                            argument=name)
    try:           # created and removed: permissions, a read-only or special file system
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".jaxcfr-", suffix=".check"):
            pass
    except OSError as e:
        raise ArgumentError(f"{name} {value!r}: cannot write in the folder {folder!r} "
                            f"({e.strerror or e})", argument=name) from None
    if os.path.exists(value) and not os.access(value, os.W_OK):
        raise ArgumentError(f"{name} {value!r}: the file exists and cannot be written",
                            argument=name)
    return value


def one_of(name: str, value: Any, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise ArgumentError(f"{name} must be one of {', '.join(choices)}, got {value!r}",
                            argument=name)
    return value


def plain_name(name: str, value: Any) -> str:
    """``value`` if it can name a file inside a folder: no path separators, not ``.``/``..``."""
    if not isinstance(value, str) or not value or value in (".", "..") or \
            any(c in value for c in "/\\\0") or value != value.strip():
        raise ArgumentError(f"{name} must be a plain name (no '/', '\\', '..' or surrounding "
                            f"blanks), got {value!r}", argument=name)
    return value


def command_line_type(rule: Callable[[str, Any], Any], option: str,
                      parse: Callable[[str], Any] = int) -> Callable[[str], Any]:
    """An ``argparse`` ``type=`` that parses the text and applies ``rule`` under ``option``.

    The error message is the rule's own, so the command line says what the API says.
    """
    def convert(text: str):
        try:
            value = parse(text)
        except ValueError:
            value = text
        try:
            return rule(option, value)
        except ArgumentError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = rule.__name__
    return convert
