"""What :func:`jaxcfr.solve` (and :func:`jaxcfr.solve_public`) return for a public tree.

A public tree runs through the same :class:`~jaxcfr.engine.runner.Runner` as any game
(the seam chooses its value kernel, :class:`~jaxcfr.kernels.values.PublicTree`);
:class:`PublicSolveResult` is that run's result with what a public tree adds: the
strategy of a hand at a public node, and the profile keyed by (player, hand, public
history).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxcfr._util.arguments import ArgumentError
from jaxcfr.lowering.public import PublicLowered
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.public import hand_values_public
from jaxcfr.solvers.solver import Solver, SolverState

__all__ = ["PublicSolveResult"]


@dataclasses.dataclass(repr=False)
class PublicSolveResult:
    """What :func:`solve_public` returns.

    Attributes:
      lowered: the lowered public tree.
      solver: the solver (its estimator :class:`~jaxcfr.solvers.public.PublicExact`).
      state: the final solver state, ``[I, A, *b]`` tables over ``lowered``'s rows
        (device arrays; host arrays when hand buckets padded the run, the padding
        dropped).
      average_strategy: ``[I, A, *b]`` the average profile, rows (player, public node,
        hand); ``*b``: the batch of parameter settings (none for single values).
      metrics: one record per evaluation: ``iteration``, ``values`` ``[P, *b]``,
        ``best_response_values`` ``[P, *b]``, ``nash_conv`` ``[*b]``, ``exploitability``
        (lists; a float without a batch).
      final: the last record.
      seconds: wall time of the iterations and evaluations (compilation excluded).
      compile_seconds: time to compile the chunks.
      iterations_per_second: iterations per second of the compiled chunks.
      chance: ``"exact"`` (as :class:`jaxcfr.SolveResult`'s).
      reached_target: as :class:`jaxcfr.SolveResult`'s: the run stopped at an evaluation
        at or below ``target`` (at ``final["iteration"]``).

    :meth:`to_profile` is the :class:`~jaxcfr.Profile` to save, load and evaluate
    (``jaxcfr eval``).
    """
    lowered: PublicLowered
    solver: Solver
    state: SolverState
    average_strategy: np.ndarray
    metrics: list
    final: dict
    seconds: float
    compile_seconds: float = 0.0
    iterations_per_second: float = 0.0
    chance: str = "exact"
    reached_target: bool = False

    def strategy(self, player: int, hand, history: tuple = ()) -> dict:
        """The average strategy of ``player`` holding ``hand`` (a label) at the public
        decision node reached by ``history`` (public actions and outcomes): action -> p.
        Below a merged (suit-isomorphic) chance outcome it is the representative's
        strategy of the renamed hand (:meth:`~jaxcfr.lowering.public.PublicLowered.locate`)."""
        lowered = self.lowered
        at = _locate(lowered, tuple(history))
        node = at.node
        t = lowered.tensors
        if t.node_base[node] < 0 or t.node_player[node] != player:
            raise ArgumentError(f"player {player} does not act after {history!r}")
        try:
            h = lowered.hands.labels[player].index(hand)
        except ValueError:
            raise ArgumentError(f"{hand!r} is not one of player {player}'s hands") from None
        row = self.average_strategy[t.node_base[node] + int(at.hands[player][h])]  # [A, *b]
        return {a: (float(x) if np.ndim(x) == 0 else np.asarray(x).tolist())
                for a, x in zip(lowered.node_actions[node], row)}

    def hand_values(self, history: tuple = ()) -> dict:
        """Per-hand expected values at the public decision node reached by ``history``
        under the average profile (:func:`jaxcfr.solvers.public.hand_values_public`):
        ``{"player", "actions" [A], "hands" [H], "ev" [H], "action_ev" [H, A], "reach"
        [H], "strategy" [H, A]}`` (NaN where a hand cannot be there); one solve, no
        batch. Below a merged (suit-isomorphic) chance outcome: the representative's, each
        hand read at its renamed hand."""
        if np.ndim(self.average_strategy) != 2:
            raise ArgumentError("hand values are of one solve (no batch of settings)")
        at = _locate(self.lowered, tuple(history))
        node = at.node
        t = self.lowered.tensors
        if t.node_base[node] < 0:
            raise ArgumentError(f"the node after {tuple(history)!r} is not a decision")
        player = int(t.node_player[node])
        out = {k: v[at.hands[player]] for k, v in
               hand_values_public(self.lowered, self.average_strategy, node).items()}
        return {"player": player, "actions": tuple(self.lowered.node_actions[node]),
                "hands": tuple(self.lowered.hands.labels[player]), **out}

    def profile(self) -> dict:
        """The average profile keyed by information set: ``{(player, hand label, public
        history): {action: probability}}`` for every hand that can hold at its node
        (``PublicLowered.live_rows``); with a batch, each probability is a list. The
        histories through merged (suit-isomorphic) chance outcomes are there too, each
        read from its representative's row (``PublicLowered.expanded_rows``)."""
        lowered = self.lowered
        live = lowered.live_rows()
        out = {}
        for key, actions, row in zip(*lowered.expanded_rows()):
            if not live[row]:
                continue
            player, (hand, history) = key
            out[(player, hand, history)] = {
                a: (float(x) if np.ndim(x) == 0 else np.asarray(x).tolist())
                for a, x in zip(actions, self.average_strategy[row])}
        return out

    def to_profile(self) -> Profile:
        """The average profile as a :class:`~jaxcfr.Profile` keyed by ``(player, (hand
        label, public history))`` (every hand's row at its node, padding rows dropped;
        with merged chance outcomes, every history of the unmerged tree, read from its
        representative's row), recording the game's name: ``save`` it, ``Profile.load``
        it back and evaluate it (:func:`jaxcfr.evaluate_profile`, ``jaxcfr eval``). One
        setting only."""
        if self.average_strategy.ndim != 2:
            raise ValueError("to_profile() takes the result of one setting (this run solved "
                             f"a batch: average_strategy {self.average_strategy.shape})")
        return Profile.from_lowered(self.lowered, self.average_strategy)

    def __repr__(self) -> str:
        f = self.final
        conv = np.asarray(f["nash_conv"])
        shown = f"{float(conv):.4g}" if conv.ndim == 0 else str(np.round(conv, 6).tolist())
        return (f"PublicSolveResult({self.solver.name} on {self.lowered.name}: "
                f"{f['iteration']} iterations, nash_conv {shown})")


def _locate(lowered: PublicLowered, history: tuple):
    try:
        return lowered.locate(history)
    except ValueError as e:
        raise ArgumentError(str(e)) from None
