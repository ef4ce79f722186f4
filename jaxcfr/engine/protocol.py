"""What the run loop, ``jaxcfr.solve`` and ``jaxcfr train`` ask of a runner.

Two runners implement it: :class:`jaxcfr.Runner` (a lowered game, or a stack, on the
device) and :class:`jaxcfr.SampledChanceRunner` (the host draws chance, the device
updates the rows the draws reach). Callers use this interface and nothing else; no
caller asks which runner it has. A part that means nothing for one runner is trivial
there (a runner without host state returns ``None`` from :meth:`host_state`).

Example::

    >>> import jaxcfr
    >>> runner = jaxcfr.Runner(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")), jaxcfr.cfr_plus())
    >>> isinstance(runner, RunnerProtocol)
    True
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.solver import Solver, SolverState
from jaxcfr.tensors import LoweredGame

__all__ = ["RunnerProtocol"]


@runtime_checkable
class RunnerProtocol(Protocol):
    """A solver bound to a game, ready to iterate (see the module docstring).

    Attributes:
      solver: the solver it runs.
      dtype: the run's float dtype (``float32`` or ``float64``).
      chunk: iterations per compiled call.
      lowered: the lowered full game the metrics are exact in, or ``None`` (estimates).
      chance: ``"exact"`` (the lowered tree) or ``"sampled"`` (the host draws chance).
      games_batched: the state carries a leading batch axis of games ``[B, ...]``.
      batch_members: games times settings times seeds: the separate runs it stands for.
      compiles_ahead: :meth:`compile` compiles the step before the first iteration (else
        the first chunk compiles, as shapes follow the draws).
    """
    solver: Solver
    dtype: np.dtype
    chunk: int
    lowered: LoweredGame | None
    chance: str
    games_batched: bool
    batch_members: int
    compiles_ahead: bool

    def scope(self):
        """The precision scope every device call of the run happens in."""

    def init(self) -> SolverState:
        """The zero state."""

    def restore(self, arrays: dict[str, np.ndarray]) -> SolverState:
        """A state from a checkpoint's host arrays (after :meth:`restore_host`)."""

    def host_state(self) -> dict[str, Any] | None:
        """What a checkpoint keeps besides the arrays (JSON), or ``None``."""

    def restore_host(self, host: dict[str, Any] | None) -> None:
        """Take a checkpoint's :meth:`host_state`, before :meth:`init`."""

    def fingerprint(self) -> str:
        """What a checkpoint must match to be resumed by this runner."""

    def compile(self, state: SolverState) -> tuple[SolverState, float]:
        """Compile what the run will call (zero iterations); the state and the seconds."""

    def advance(self, state: SolverState, iterations: int) -> SolverState:
        """``iterations`` more iterations, in compiled chunks."""

    def evaluate(self, state: SolverState, average: bool = True) -> dict[str, Any]:
        """Metrics of the average (or current) profile (the keys of :func:`jaxcfr.evaluate`)."""

    def profile(self, state: SolverState, average: bool = True) -> np.ndarray:
        """The average (or current) strategy table on the host."""

    def profiles(self, state: SolverState) -> list[Profile]:
        """The average profile of every member, keyed by information set (games outer,
        settings inner; one for a single run)."""

    def member_labels(self) -> list[str]:
        """One label per batch member (``[]`` for a single run)."""

    def report(self) -> dict[str, Any] | None:
        """The runner's own figures for results and records (JSON), or ``None``."""

    def close(self) -> None:
        """Release threads and processes; iterating afterwards is still allowed."""
