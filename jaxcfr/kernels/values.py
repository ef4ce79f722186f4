"""Value kernels: how exact values are computed on a game's tensors, one object each.

A :class:`ValueKernel` is a frozen, hashable value (static in compiled code) that owns
both the host tables its representation needs and the device functions that read them:

* :class:`NodePasses`: the node passes of :mod:`jaxcfr.kernels.passes` (a reach and a
  value pass over all ``N`` nodes; best responses by ``br_rounds`` sweeps); any game.
* :class:`SequenceForm`: the sequence form of :mod:`jaxcfr.kernels.sequence` (passes over
  the leaves and the rows); games of perfect recall.
* :class:`PublicTree`: the public-tree passes of :mod:`jaxcfr.kernels.public` (reach and
  values as ``[public nodes, hands]`` tables, terminals as operators on hand vectors);
  games lowered as public trees (:mod:`jaxcfr.lowering.public`, representation
  ``"public"``), solved full width.

Which kernel a run uses is chosen once, by :func:`choose_kernel`, from the game's
representation (:func:`representation`) and the backend; the engine's
:func:`jaxcfr.engine.seam.choose_seam` asks it together with the batch layout. The
estimators, the solver's update and the evaluation then call the kernel they were handed
and never look at the tensors to find out. A kernel for one backend (a GPU-specific
sequence form, say) is one subclass and one :func:`register_kernel` line; a new game
representation is one kernel class and its representation name.

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players, ``*b`` trailing batch
axes (settings, seeds).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels import passes, public, sequence
from jaxcfr.kernels.numerics import instantaneous_regret
from jaxcfr.tensors import GameTensors, LoweredGame, PublicTensors, Structure

__all__ = ["ValueKernel", "NodePasses", "SequenceForm", "PublicTree", "KERNELS",
           "register_kernel", "choose_kernel", "representation", "NODE_PASSES"]


@dataclasses.dataclass(frozen=True)
class ValueKernel:
    """How exact values are computed (the node passes; subclasses change the representation
    or the backend's kernels)."""
    #: The game representation the kernel reads (:func:`representation`).
    representation: ClassVar[str] = "nodes"
    #: Only full-width estimators run on it (no sampling estimator reads its tables).
    full_width_only: ClassVar[bool] = False
    #: Its device functions read the node arrays (the ``[N]`` fields of the tensors,
    #: :data:`~jaxcfr.tensors.NODE_FIELDS`); else only the rows and its own tables, and a
    #: run whose estimator reads no more keeps the node arrays on the host
    #: (:meth:`device_tables`, :class:`jaxcfr.Runner`).
    reads_nodes: ClassVar[bool] = True

    def payoffs(self, host) -> np.ndarray:
        """The terminal payoffs (any shape) the kernel's sums read, of the host tensors
        ``host``: what :func:`jaxcfr.kernels.numerics.check_payoff_range` checks."""
        return np.asarray(host.payoff)

    # -- host: the tables it reads besides the tensors --------------------------------------
    def tables(self, host: GameTensors, structure: Structure, dtype, *, stacked: bool,
               multiple: int = 1):
        """The kernel's host tables of ``host`` (one game, a forest, or with ``stacked`` a
        stack ``[B, ...]``), or ``None`` when it reads only the tensors; ``multiple``: pad
        them to split over that many devices."""
        return None

    def split_axes(self, tables):
        """The axis of each of :meth:`tables`' arrays to shard when a game is split."""
        return None

    def attach(self, tensors: GameTensors, tables) -> GameTensors:
        """The tensors the device functions read: ``tensors`` with ``tables`` (placed)."""
        return tensors

    def device_tables(self, tables):
        """Of :meth:`tables`, what a run places on the device when nothing else reads the
        node arrays (only a kernel with ``reads_nodes`` false is asked): the tables less
        the node-indexed ones that only an estimator reading the nodes needs, and less
        those the kernel derives when it reads them (the same values)."""
        return tables

    # -- device ------------------------------------------------------------------------------
    def counterfactual_action_values(self, t, s: Structure, current: jax.Array, players
                                     ) -> tuple[jax.Array, jax.Array]:
        """``(q [I, A, *b], own [I, *b])``: the counterfactual action values of ``players``'
        rows under ``current`` ``[I, A, *b]`` (the profile's own, the regret update's
        input; best-response values are :meth:`best_response_values`), and each row
        owner's reach."""
        rows, actions = t.legal_mask.shape
        edge = passes.edge_probabilities(t, current)
        reach = passes.reach_pass(t, s, edge)
        values = passes.value_pass(t, s, edge, players)
        q = passes.action_values(t, s, passes.opponent_reach(reach), values, rows, actions,
                                 players)
        return q, passes.own_reach_at_rows(t, reach)                          # [I, *b]

    def counterfactual_regrets(self, t, s: Structure, current: jax.Array, players
                               ) -> tuple[jax.Array, jax.Array]:
        """``(regret [I, A, *b], own [I, *b])``: the instantaneous regrets
        (:func:`~jaxcfr.kernels.numerics.instantaneous_regret`) of
        :meth:`counterfactual_action_values` under ``current``, and each row owner's reach:
        what the exact estimator reads. A kernel may compute them in its own layout (the
        same numbers)."""
        q, own = self.counterfactual_action_values(t, s, current, players)
        return instantaneous_regret(q, current, t.legal_mask), own

    def best_response_values(self, t, s: Structure, strategy: jax.Array, rounds: jax.Array
                             ) -> tuple[jax.Array, jax.Array]:
        """``(values [P, *b], best-response values [P, *b])`` of ``strategy``."""
        values = passes.expected_values(t, s, strategy)
        # one compiled best response, vmapped over the (traced) responding player
        br = jax.vmap(lambda p: passes.best_response(t, s, strategy, p, rounds)[1])(
            jnp.arange(s.num_players))
        return values, br

    def player_rows(self, t, player):
        """``[R]`` the rows of ``player`` (padded with rows ``>= I``), where the kernel's
        tables list them (re-matching only those after a half-step), else ``None``."""
        return None

    def sequences(self, t):
        """The sequence-form tables the kernel reads (the counted estimators' weights), or
        ``None`` where it reads the node passes."""
        return None


@dataclasses.dataclass(frozen=True)
class NodePasses(ValueKernel):
    """The node passes (:mod:`jaxcfr.kernels.passes`): any game."""


@dataclasses.dataclass(frozen=True)
class SequenceForm(ValueKernel):
    """The sequence form (:mod:`jaxcfr.kernels.sequence`): passes over the leaves and the
    rows; games of perfect recall. Its tensors carry the tables
    (:class:`~jaxcfr.kernels.sequence.SequencedTensors`)."""
    representation: ClassVar[str] = "sequences"
    reads_nodes: ClassVar[bool] = False

    def tables(self, host, structure, dtype, *, stacked, multiple=1):
        levels, players = structure
        if stacked:
            return sequence.stacked_sequence_tables(host, levels, players, dtype)
        extra = {"multiple": multiple} if multiple > 1 else {}
        return sequence.sequence_tables(host, levels, players, dtype, **extra)

    def split_axes(self, tables):
        return sequence.split_axes(tables)

    def attach(self, tensors, tables):
        return sequence.with_sequences(tensors, tables)

    def device_tables(self, tables):
        return sequence.lean(tables)

    def counterfactual_action_values(self, t, s, current, players):
        return sequence.counterfactual_action_values(t.sequence, current, players, s.num_players)

    def best_response_values(self, t, s, strategy, rounds):
        return sequence.best_response_values(t, strategy, s.num_players)

    def player_rows(self, t, player):
        return t.sequence.player_rows[player]

    def sequences(self, t):
        return t.sequence


@dataclasses.dataclass(frozen=True)
class PublicTree(ValueKernel):
    """The public-tree passes (:mod:`jaxcfr.kernels.public`) on
    :class:`~jaxcfr.tensors.PublicTensors`: rows are (player, public decision node, hand),
    so every regret and averaging rule runs on them unchanged; full width only."""
    representation: ClassVar[str] = "public"
    full_width_only: ClassVar[bool] = True

    def payoffs(self, host):
        return np.concatenate([np.asarray(host.fold_payoff, np.float64).reshape(-1),
                               np.asarray(host.show_stake, np.float64).reshape(-1),
                               np.asarray(host.tables, np.float64).reshape(-1)])

    def counterfactual_action_values(self, t, s, current, players):
        return public.counterfactual_action_values(t, s, current, players)

    def counterfactual_regrets(self, t, s, current, players):
        return public.counterfactual_regrets(t, s, current, players)

    def best_response_values(self, t, s, strategy, rounds):
        return public.metrics(t, s, strategy)


#: The node passes (the kernel of tensors that carry nothing else).
NODE_PASSES = NodePasses()

#: ``(backend, representation)`` -> kernel class; backend ``None``: any backend. The one
#: choice table (:func:`choose_kernel`).
KERNELS: dict[tuple[str | None, str], type[ValueKernel]] = {
    (None, "nodes"): NodePasses, (None, "sequences"): SequenceForm,
    (None, "public"): PublicTree}


def register_kernel(backend: str | None, representation: str, kernel: type[ValueKernel]
                    ) -> None:
    """Use ``kernel`` for ``representation`` on ``backend`` (``"gpu"``, ``"cpu"``, ...;
    ``None``: every backend without one of its own)."""
    if not (isinstance(kernel, type) and issubclass(kernel, ValueKernel)):
        raise TypeError(f"a value kernel must be a ValueKernel subclass, got {kernel!r}")
    KERNELS[(backend, representation)] = kernel


def representation(lowered: LoweredGame, sequence_form: bool = True) -> str:
    """The representation a game's exact values are computed on: ``"public"`` for a
    public tree (its tensors are :class:`~jaxcfr.tensors.PublicTensors`), else the
    sequence form under perfect recall (unless ``sequence_form`` is off), else the
    nodes."""
    if isinstance(lowered.tensors, PublicTensors):
        return "public"
    return "sequences" if sequence_form and lowered.perfect_recall else "nodes"


def choose_kernel(representation: str, backend: str | None = None) -> ValueKernel:
    """The kernel of ``representation`` on ``backend`` (:data:`KERNELS`: the backend's own
    where it has one, else every backend's)."""
    cls = KERNELS.get((backend, representation)) or KERNELS.get((None, representation))
    if cls is None:
        raise ValueError(f"no value kernel for the representation {representation!r}; "
                         f"known: {sorted({r for _, r in KERNELS})}")
    return cls()
