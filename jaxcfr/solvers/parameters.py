"""Traced parameters: each part of an update declares its own, the solver gathers them.

A regret rule, an averaging rule and an estimator are frozen dataclasses (static in
compiled code). A field made with :func:`parameter` is a *traced parameter* of the part:
its name, default, check and a one-line description are declared there, once, and
every entry point reads them from the part (``jaxcfr.solve(..., alpha=2)``, the
``[solver]`` keys of a config, the ``--alpha`` option of ``jaxcfr solve``, a sweep
``alpha=[1, 1.5, 2]``, a checkpoint's record of its run). Compiled code never reads the
field: it reads the traced value of the same name from :class:`HyperParams`, so one
compiled step serves every value and a batch of values (optax's ``inject_hyperparams``
reads a factory's own arguments in the same way; nothing lists the names globally).

A part with a parameter of its own::

    @dataclasses.dataclass(frozen=True)
    class FlooredRegret(RegretRule):
        floor: float = parameter(1.0, "accumulated regret is floored at -floor")

        def __call__(self, summed, t, hp):
            return jnp.maximum(summed, -hp.floor)

    solver = Solver("floored", FlooredRegret(), alternating=True)
    jaxcfr.solve("kuhn_poker", solver, 100, floor=[0.0, 0.5, 2.0])   # a batch of three

:class:`HyperParams` is the traced pytree: the values by name, scalars or ``[*b]`` for a
batch of settings; its structure (the names) is static, so a new value compiles nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, Mapping

import jax
import numpy as np

from jaxcfr._util.arguments import ArgumentError, finite_float
from jaxcfr.solvers.names import _is_batch, check_values  # (JAX-free: the CLI checks first)

__all__ = ["Parameter", "parameter", "declared", "without_values", "HyperParams",
           "check_values", "make_hyperparams", "single_setting", "batched", "shown",
           "along_members"]

#: The metadata key of a :func:`parameter` field.
_KEY = "jaxcfr.parameter"


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One traced parameter as a part declares it.

    Attributes:
      name: the name every entry point uses (``alpha``; ``--alpha``; ``solver.alpha``).
      default: the part's value (the preset's), or the declaration's default.
      doc: one line: what it does.
      check: ``check(spelled_name, value) -> value``: raises ArgumentError naming it.
      integer: traced as int32 (else in the run's float dtype).
    """
    name: str
    default: Any
    doc: str
    check: Callable[[str, Any], Any] = finite_float
    integer: bool = False

    def with_default(self, value) -> "Parameter":
        return dataclasses.replace(self, default=value)


def parameter(default: float, doc: str, check: Callable[[str, Any], Any] = finite_float,
              integer: bool = False) -> Any:
    """A dataclass field that is a traced parameter of its part (see the module docstring):
    ``default`` (the part's value when none is given), ``doc`` (one line), ``check``
    (``check(name, value) -> value``, default: a finite number)."""
    return dataclasses.field(default=default, metadata={_KEY: (doc, check, integer)})


def declared(part) -> tuple[Parameter, ...]:
    """The traced parameters of ``part`` (an instance: its values as defaults; a class: the
    declared defaults), in field order."""
    out = []
    for f in dataclasses.fields(part):
        if _KEY in f.metadata:
            doc, check, integer = f.metadata[_KEY]
            value = getattr(part, f.name) if not isinstance(part, type) else f.default
            out.append(Parameter(f.name, value, doc, check, integer))
    return tuple(out)


def without_values(part):
    """``part`` with its parameters' values cleared (``None``): what compiled code depends
    on (a traced value read from the part itself would then fail, not be baked in)."""
    names = [p.name for p in declared(part)]
    return dataclasses.replace(part, **dict.fromkeys(names)) if names else part


@jax.tree_util.register_pytree_node_class
class HyperParams:
    """The traced parameters of a run by name: ``hp.alpha``, ``hp["alpha"]``.

    Each value is a scalar, or ``[*b]`` for a batch of settings (or seeds). A pytree whose
    structure is the names (static) and whose leaves are the values (traced): a new value
    compiles nothing, another set of names is another program.
    """
    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no traced parameter {name!r}: this solver's are "
                                 f"{', '.join(self._values) or 'none'} (a part reads "
                                 "only the parameters it declares)") from None

    def __setattr__(self, name, value):
        raise AttributeError("HyperParams are immutable; use .map or .replace")

    def __getitem__(self, name: str):
        return self._values[name]

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def items(self):
        return self._values.items()

    def values(self):
        return self._values.values()

    def map(self, fn: Callable[[Any], Any]) -> "HyperParams":
        """``fn`` applied to every value (e.g. a reshape of the batch axes)."""
        return HyperParams({k: fn(v) for k, v in self._values.items()})

    def replace(self, **values) -> "HyperParams":
        return HyperParams({**self._values, **values})

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch axes ``[*b]`` of the values (``()``: one setting)."""
        return max((np.shape(v) for v in self._values.values()), key=len, default=())

    def tree_flatten(self):
        return tuple(self._values.values()), tuple(self._values)

    @classmethod
    def tree_unflatten(cls, names, values):
        return cls(dict(zip(names, values)))

    def __repr__(self) -> str:
        return "HyperParams(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"


def shown(value) -> str:
    """A parameter's value as reprs and labels print it (``1.5``, ``[1, 2]``)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(shown, value)) + "]"
    try:
        return f"{value:g}"
    except (TypeError, ValueError):
        return repr(value)


def batched(values: Mapping[str, Any]) -> str | None:
    """The first name of ``values`` given as a batch (a list), else None."""
    return next((k for k, v in values.items() if _is_batch(v)), None)


def single_setting(values: Mapping[str, Any], spell=str, why: str = "this run",
                   because: str = "") -> None:
    """The one owner (and wording) of "one setting, no lists", the rule of every run that
    takes one setting (sampled chance, ``train_abstracted``, ``resolve``): no list among
    ``values`` (ArgumentError naming the first as ``spell`` renders it; ``why``: what
    takes one setting; ``because``: said after it)."""
    name = batched(values)
    if name is not None:
        raise ArgumentError(f"{why} takes one setting: give one value of {spell(name)}, "
                            f"not a list" + (f" ({because})" if because else ""),
                            argument=spell(name))


def make_hyperparams(parameters: tuple[Parameter, ...], values: Mapping[str, Any],
                     dtype=np.float32, place: Callable[[np.ndarray], Any] = lambda x: x
                     ) -> HyperParams:
    """The traced values of ``parameters``: ``values`` (already checked:
    :func:`check_values`) over the declared defaults, each a scalar or ``[H]`` (every list
    one length ``H``; scalars broadcast to it), made on the host in ``dtype`` (int32 for
    integer parameters) and ``place``d (e.g. copied to the device)."""
    given = dict(values)
    lengths = {len(v) for v in given.values() if isinstance(v, list)}
    if len(lengths) > 1:
        raise ArgumentError("parameter lists must have one length (one setting per "
                            f"position), got lengths {sorted(lengths)}")
    shape = (lengths.pop(),) if lengths else ()
    out = {}
    for p in parameters:
        value = given.get(p.name, p.default)
        array = np.asarray(value, np.int32 if p.integer else dtype)
        out[p.name] = place(np.broadcast_to(array, shape).copy())
    return HyperParams(out)


def along_members(hp: HyperParams, members: int, spell=str,
                  place: Callable[[np.ndarray], Any] = lambda x: x) -> HyperParams:
    """``hp`` (values scalars or ``[H]``, as :func:`make_hyperparams` makes them) as one
    setting per member of a stack of ``members``: every value ``[members]``, a list
    giving one value per member (its length must be ``members``), a scalar every
    member's. The batch a sweep puts on a trailing axis, laid along the stack's members
    instead (vmapped with their tensors: ``jaxcfr.solve_public(..., per_member=True)``,
    ``solver.combine = "members"``). ``place``: e.g. a copy to the device."""
    shape = hp.batch_shape
    if shape not in ((), (members,)):
        name = next(k for k, v in hp.items() if np.shape(v) == shape)
        raise ArgumentError(f"per-member parameters give one value per member: "
                            f"{spell(name)} has {shape[0]} values for a stack of {members}",
                            argument=spell(name))
    return hp.map(lambda v: place(np.broadcast_to(np.asarray(v), (members,)).copy()))
