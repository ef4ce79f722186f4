"""The lowered-tensor contract: what the host walker produces and the device code reads.

A game lowered by :func:`jaxcfr.lower` is a :class:`LoweredGame`: the padded
arrays of :class:`GameTensors` plus host tables that map rows back to the game.

Shapes: ``N`` nodes, ``I`` information-set rows (the trailing *sink* row
included), ``A`` most decision actions of a row (chance edges use no row, so
chance outcomes do not widen ``A``), ``P`` players, ``D`` depth levels.

Conventions every kernel relies on:

* Nodes are in depth order: level ``d`` is ``level_start[d]:level_start[d + 1]``,
  and within a level in pre-order, so children of a level are grouped by parent
  and their ``parent`` indices are sorted.
* Rows of every player share one table; the last row is the *sink*: non-decision
  nodes point at it, chance and root edges land in it, it has one legal slot and
  no owner (``NO_PLAYER``). Padding rows of a stack behave like the sink.
* ``node_kind`` is one of :data:`DECISION`, :data:`CHANCE_NODE`,
  :data:`TERMINAL_NODE` and :data:`PADDING` (a stack's filler nodes: zero payoff,
  zero-probability chance edge, inert by construction).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Hashable, NamedTuple, Sequence

import jax.numpy as jnp
import numpy as np

from jaxcfr._util.host_arrays import on_device
from jaxcfr.game.contract import CHANCE_NODE, DECISION, TERMINAL_NODE

__all__ = ["GameTensors", "LoweredGame", "Structure", "to_device", "fingerprint",
           "NODE_FIELDS", "HOST_FORMS", "WIDE_DTYPES", "ROW_FIELDS", "without_nodes",
           "DECISION", "CHANCE_NODE", "TERMINAL_NODE", "PADDING", "NO_PARENT", "NO_PLAYER"]

#: ``node_kind`` of a stack's filler nodes (the other kinds are the host's, from the contract).
PADDING = 3
#: ``parent`` of the root.
NO_PARENT = -1
#: ``infoset_player`` of the sink row and of padding rows.
NO_PLAYER = -1


class GameTensors(NamedTuple):
    """The arrays a solver reads. A leading batch axis ``[B, ...]`` after :func:`jaxcfr.stack`."""
    parent: np.ndarray          # [N] int32  parent node; NO_PARENT at the root
    parent_slot: np.ndarray     # [N] int32  slot of the action leading here (0 at the root)
                                #            (host: int8 or int16 where the game allows)
    node_kind: np.ndarray       # [N] int8   DECISION / CHANCE_NODE / TERMINAL_NODE / PADDING
    node_player: np.ndarray     # [N] int32  acting player; P at chance; -1 at terminal/padding
                                #            (host: int8 up to 126 players)
    node_infoset: np.ndarray    # [N] int32  information-set row; the sink row if not a decision
    edge_owner: np.ndarray      # [N] int32  who chose the edge into this node (P: chance/root)
                                #            (host: as node_player)
    edge_index: np.ndarray      # [N] int32  row * A + slot of that edge (sink * A at chance/root)
    chance_prob: np.ndarray     # [N] float  probability of the chance edge into here (1 otherwise;
                                #            0 at padding)
    payoff: np.ndarray          # [N, P] float terminal returns (0 elsewhere)
    # (on the host, lowering gives ``chance_prob`` and ``payoff`` as a TabledArray: their
    # distinct rows and a 1-byte index per node, read like the array; see HOST_FORMS)
    legal_mask: np.ndarray      # [I, A] bool legal actions per row (sink/padding: slot 0 only)
    infoset_player: np.ndarray  # [I] int32  owner; NO_PLAYER for sink and padding rows
    infoset_rep: np.ndarray     # [I] int32  one member node (0 for sink and padding rows)

    @property
    def row_shape(self) -> tuple[int, int]:
        """``(I, A)`` of one game's ``[I, A]`` tables (as :attr:`PublicTensors.row_shape`)."""
        return tuple(self.legal_mask.shape[-2:])


#: The fields of :class:`GameTensors` that a kernel which never walks the nodes (the
#: sequence form) does not read: the ``[N]``-sized node arrays, and ``infoset_rep``, the
#: rows' node numbers (only a walk of the nodes follows them).
NODE_FIELDS = ("parent", "parent_slot", "node_kind", "node_player", "node_infoset",
               "edge_owner", "edge_index", "chance_prob", "payoff", "infoset_rep")
#: The other fields, ``[I, A]`` and ``[I]``: the rows every solver's update reads.
ROW_FIELDS = ("legal_mask", "infoset_player")


#: On the host, a lowered game's node arrays may be held in a compact form that reads like
#: the array (issue 32, item 1): ``chance_prob`` and ``payoff`` as a
#: :class:`jaxcfr._util.tabled.TabledArray` (``np.asarray`` gives the dense array, indexing
#: by node does not make it). :func:`to_device` and :func:`fingerprint` see the dense arrays.
HOST_FORMS = {"chance_prob": "TabledArray", "payoff": "TabledArray"}
#: The dtype of node arrays that the host may hold narrower (the smallest signed integer
#: that holds the game's values: ``int8`` for up to 127 players or slots): the device
#: (:func:`to_device`) and :func:`fingerprint` see them in this dtype.
WIDE_DTYPES = {"parent_slot": np.dtype(np.int32), "node_player": np.dtype(np.int32),
               "edge_owner": np.dtype(np.int32)}


def without_nodes(tensors: GameTensors) -> GameTensors:
    """``tensors`` with the node arrays (:data:`NODE_FIELDS`) replaced by ``None`` (an
    empty pytree: jit, vmap and ``device_put`` pass over it; code that reads one fails
    loudly): the rows only, for a device that needs no ``[N]``-sized array."""
    return tensors._replace(**{f: None for f in NODE_FIELDS})


class Structure(NamedTuple):
    """Static (hashable) facts a compiled pass depends on."""
    level_start: tuple[int, ...]   # [D + 1] node slices per depth
    num_players: int


def to_device(tensors: GameTensors, dtype) -> GameTensors:
    """Tensors as JAX arrays, floats in ``dtype`` (call it inside the run's precision scope);
    a :class:`GameTensors` or a :class:`PublicTensors` (the same type comes back). A field
    that is ``None`` (:func:`without_nodes`) stays ``None``: nothing is copied for it.

    Converted on the host and copied (:func:`jaxcfr._util.host_arrays.on_device`): no
    program is compiled. A node array the host holds narrower or compact
    (:data:`WIDE_DTYPES`, :data:`HOST_FORMS`) arrives in its wide dtype, dense."""
    wide = WIDE_DTYPES if isinstance(tensors, GameTensors) else {}
    return type(tensors)(*(None if t is None else
                           on_device(t, dtype if jnp.issubdtype(_dtype(t), jnp.floating)
                                     else wide.get(name))
                           for name, t in zip(tensors._fields, tensors)))


def _dtype(x) -> np.dtype:
    """``x``'s dtype without making a compact host form dense."""
    dtype = getattr(x, "dtype", None)
    return np.asarray(x).dtype if dtype is None else dtype


def fingerprint(lowered: "LoweredGame") -> str:
    """sha256 (hex) over a lowered game's tensors (name, dtype, shape, bytes) and level slices.

    The tensors as the device sees them: a field held narrower or compact on the host
    (:data:`WIDE_DTYPES`, :data:`HOST_FORMS`) counts in its wide dtype, dense, so that the
    digest does not depend on the host's form (checkpoints and cache entries written
    before the compact forms keep theirs).

    Checkpoints record it (a checkpoint of another game is refused) and the cache of
    lowered games verifies it on every load.
    """
    h = hashlib.sha256()
    h.update(f"players={lowered.num_players};".encode())
    h.update(np.asarray(lowered.level_start, dtype=np.int64).tobytes())
    tensors = lowered.tensors
    for name in tensors._fields:
        a = np.ascontiguousarray(np.asarray(getattr(tensors, name), WIDE_DTYPES.get(name)))
        h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        h.update(a.reshape(-1).view(np.uint8))
    return h.hexdigest()


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class LoweredGame:
    """A game lowered to tensors, with the host tables that map rows back to the game.

    ``tensors`` are NumPy arrays; solvers move them to the device. ``level_start``
    is static structure: the node slice of depth ``d`` is
    ``level_start[d]:level_start[d + 1]``.
    """
    tensors: GameTensors
    level_start: tuple[int, ...]          # [D + 1]
    num_players: int
    infoset_keys: tuple                   # [I - 1] (player, key) per real row (host only)
    infoset_actions: tuple                # [I - 1] tuple of action labels per real row
    preorder: np.ndarray                  # [N] int32 (int64 past 2^31 nodes) pre-order number
                                          # of each node (host only; lowering gives a
                                          # jaxcfr.lowering.preorder.Preorder: made when read)
    node_action: Sequence                 # [N] label of the action into each node (host only;
                                          # jaxcfr.lowering.labels.NodeLabels, or a tuple)
    nash_value: tuple | None = None
    constant_sum: float | None = None     # sum of returns when equal at every leaf, else None
    br_rounds: int = 1                    # most own decisions on a path (best-response sweeps)
    name: str = ""
    batch_size: int | None = None         # B after stack(); None for a single game
    members: tuple = ()                   # the stacked LoweredGames (host tables per member)
    perfect_recall: bool = True           # False: a bucketing declared imperfect recall (the
                                          # members of a row may have different own sequences:
                                          # no sequence form, see jaxcfr.kernels.sequence)

    def __repr__(self) -> str:
        what = f"{self.batch_size} games, " if self.batch_size is not None else ""
        rows = "+".join(f"{n:,}" for n in self.infosets_per_player)
        return (f"LoweredGame({self.name or '?'!s}: {what}{self.num_nodes:,} nodes, "
                f"{rows} information sets, {self.max_actions} actions max, depth {self.depth}, "
                f"{self.num_players} players)")

    # -- sizes -------------------------------------------------------------
    @property
    def structure(self) -> Structure:
        """The static facts compiled passes depend on."""
        return Structure(self.level_start, self.num_players)

    @property
    def num_nodes(self) -> int:
        return int(self.tensors.parent.shape[-1])

    @property
    def num_rows(self) -> int:
        """Information-set rows including the sink (``I``)."""
        return int(self.tensors.legal_mask.shape[-2])

    @property
    def max_actions(self) -> int:
        return int(self.tensors.legal_mask.shape[-1])

    @property
    def depth(self) -> int:
        """Longest root-to-leaf path, in moves."""
        return len(self.level_start) - 2

    @property
    def infosets_per_player(self) -> tuple[int, ...]:
        owners = np.asarray(self.tensors.infoset_player).reshape(-1)
        return tuple(int((owners == p).sum()) for p in range(self.num_players))

    @property
    def nbytes(self) -> int:
        """Bytes the tensors hold (a compact host form counts what it holds)."""
        return int(sum(t.nbytes for t in self.tensors))

    def sizes(self) -> dict[str, Any]:
        """The sizes reported by ``jaxcfr inspect``."""
        return {"nodes": self.num_nodes, "infosets": list(self.infosets_per_player),
                "max_actions": self.max_actions, "depth": self.depth, "bytes": self.nbytes}

    # -- host tables -------------------------------------------------------
    def history(self, node: int) -> tuple:
        """The action path from the root to ``node`` (labels)."""
        parent = self.tensors.parent
        path = []
        while parent[node] != NO_PARENT:
            path.append(self.node_action[node])
            node = int(parent[node])
        return tuple(reversed(path))

    def infoset_members(self, row: int) -> np.ndarray:
        """Nodes of information-set ``row``, sorted by pre-order number (Gambit's order)."""
        nodes = np.flatnonzero(self.tensors.node_infoset == row)
        return nodes[np.argsort(self.preorder[nodes], kind="stable")]

    def row_of(self, player: int, key: Hashable) -> int:
        """The row of ``player``'s information set ``key`` (KeyError if unknown)."""
        index = self.__dict__.get("_row_index")
        if index is None:
            index = {k: i for i, k in enumerate(self.infoset_keys)}
            object.__setattr__(self, "_row_index", index)
        return index[(player, key)]


# -- public trees (jaxcfr.lowering.public, jaxcfr.kernels.public) ------------------------------
class PublicTensors(NamedTuple):
    """The arrays a public-tree solve reads (:mod:`jaxcfr.lowering.public`).

    ``N`` public nodes (depth order, children grouped by parent, as :class:`GameTensors`),
    ``H`` hands (the larger player's count; the other's padded), ``K`` distinct sets of
    blocked hands (public chance paths), ``I`` rows (player, public decision node, hand)
    and the sink, ``A`` actions, ``T*`` terminals of each operator, ``S`` strength
    tables, ``U`` payoff tables, ``D`` decision nodes. The ``d``-th decision node of
    player ``p`` has ``H_p`` rows, ``decision_row[d] + h`` for its hands ``h < H_p``
    (``H_p``: the structure's hand count of ``p``, a stack's largest over its members),
    the decisions one after another and the sink last (``I = sum_d H_p(d) + 1``); a
    stack member's hands past its own count (``hand_count``) are padding rows
    (``NO_PLAYER``, slot 0 only), as are a stack member's rows past its own decisions'.
    """
    parent: np.ndarray          # [N] int32  parent node; NO_PARENT at the root
    parent_slot: np.ndarray     # [N] int32  slot of the action leading here (0 at the root)
    edge_owner: np.ndarray      # [N] int32  who chose the edge into here (P: chance / root)
    edge_decision: np.ndarray   # [N] int32  the parent's decision ordinal (D: not a decision)
    node_base: np.ndarray       # [N] int32  first row of a decision node, else -1
    decision_node: np.ndarray   # [D] int32  the node of each decision
    child_of: np.ndarray        # [D, A] int32 the child of each decision's slot (N: none)
    first_child: np.ndarray     # [N] int32  first child (children are consecutive; N: none)
    child_count: np.ndarray     # [N] int32  number of children
    leaf_index: np.ndarray      # [N] int32  position among the terminals (folds, showdowns,
                                #            tables, in that order); T elsewhere
    node_player: np.ndarray     # [N] int32  acting player; -1 at chance and terminal nodes
    chance_reach: np.ndarray    # [N] float  product of the public chance probabilities to here
    node_path: np.ndarray       # [N] int32  which set of blocked hands holds here (into alive)
    alive: np.ndarray           # [K, P, H] float 1: the hand is not blocked (0: blocked, padding)
    weights: np.ndarray         # [P, H] float prior hand weights (0 at padding)
    compat: np.ndarray          # [H, H] float compatible[h0, h1] / Z (the deal's normaliser);
                                #   [H]*P for P > 2 players: compatible[h0, ..., h_{P-1}] / Z;
                                #   [0, 0] with the ranked operators, which never read it
                                #   (the host's PublicLowered.compatibility has it)
    fold_node: np.ndarray       # [Tf] int32 terminal nodes of Fold operators
    fold_payoff: np.ndarray     # [Tf, P] float their payoffs
    show_node: np.ndarray       # [Ts] int32 terminal nodes of Showdown operators
    show_stake: np.ndarray      # [Ts] float what the stronger hand wins
    show_index: np.ndarray      # [Ts] int32 their strength table (into strengths)
    strengths: np.ndarray       # [S, P, H] float hand strengths
    table_node: np.ndarray      # [Tt] int32 terminal nodes of PayoffTable operators
    table_index: np.ndarray     # [Tt] int32 their table (into tables)
    tables: np.ndarray          # [U, P, H, H] float player p's payoff [own hand, other's hand]
                                #              times compat / Z (oriented for p); P > 2:
                                #   [U, P, H]*P, p's axis first, the others in seat order
    # the ranked operators (PublicStructure.ranked; empty otherwise): O(H) per terminal.
    # Index H (and M) is a zero pad; "opponent" is 1 - p. Hands hold at most J = 2 cards.
    deal_scale: np.ndarray      # []  float 1 / Z
    rank_order: np.ndarray      # [S, P, H] int32 player p's hands by strength in table s
    rank_lo: np.ndarray         # [S, P, H] int32 opponent hands strictly weaker than p's hand
    rank_hi: np.ndarray         # [S, P, H] int32 opponent hands weaker or equal
    pair_order: np.ndarray      # [S, P, M] int32 player p's (hand, card) entries by card, then
                                #           strength in table s: the hand of each
    pair_lo: np.ndarray         # [S, P, H, J] int32 into the opponent's pair_order: where the
                                #           entries of p's hand's j-th card stop being weaker
    pair_hi: np.ndarray         # [S, P, H, J] int32 ... stop being weaker or equal
    fold_pair: np.ndarray       # [P, M] int32 player p's (hand, card) entries by card
    hand_cards: np.ndarray      # [P, H, J] int32 the cards of p's hands, each an index into
                                #           cards (-1: none); a fold's card removal
    cards: np.ndarray           # [C] int32 the cards any hand holds (the game's card ids)
    pair_start: np.ndarray      # [P, H, J] int32 where the opponent's entries of p's hand's
    pair_end: np.ndarray        # [P, H, J] int32 j-th card start and end (in either order)
    same: np.ndarray            # [P, H] int32 the opponent's hand of the same two cards (H: none)
    same_weaker: np.ndarray     # [S, P, H] float 1: that hand is weaker than p's in table s
    same_stronger: np.ndarray   # [S, P, H] float 1: ... stronger
    # the rows' legal actions and players, per decision (every hand of a public decision
    # has the same; the rows' [I, A] and [I] views are derived, never stored: legal_mask,
    # infoset_player below)
    decision_legal: np.ndarray  # [D + 1, A] bool legal actions of each decision's own hands
                                #   (the last, the sink's, and a stack's padded decisions:
                                #   slot 0 only)
    decision_player: np.ndarray  # [D + 1] int32 each decision's player; NO_PLAYER for the
                                #   last (the sink) and a stack's padded decisions
    hand_count: np.ndarray      # [P] int32 each player's hands (a stack member's own:
                                #   its rows of hands past it are padding: NO_PLAYER,
                                #   slot 0 only)
    decision_row: np.ndarray    # [D + 1] int32 each decision's first row; the last entry
                                #   one past the decisions' rows (a stack's padded
                                #   decisions: that too, no rows). Decision d's rows are
                                #   decision_row[d] ... decision_row[d + 1] - 1, one per
                                #   hand of its player (the rows' width, H_p)
    row_space: np.ndarray       # [I, 0] bool: no entries, its shape the row count I (the
                                #   rows per decision vary, so I is no product of shapes)
    # merged public chance outcomes (suit isomorphism, PublicGame.chance_merges; E = 0:
    # none): the E outcomes not walked, each read from its class's representative child
    merge_parent: np.ndarray = np.zeros(0, np.int32)    # [E] int32 the chance node
    merge_child: np.ndarray = np.zeros(0, np.int32)     # [E] int32 the representative child
    merge_source: np.ndarray = np.zeros((0, 2, 0), np.int32)  # [E, P, H] int32 player p's
                                #   value of hand h after the outcome is the representative
                                #   child's value of hand merge_source[e, p, h]

    @property
    def row_shape(self) -> tuple[int, int]:
        """``(I, A)``: the rows and actions of one game's ``[I, A]`` tables (read from the
        shapes: nothing is derived)."""
        return self.row_space.shape[-2], self.decision_legal.shape[-1]

    @property
    def legal_mask(self):
        """``[(B,) I, A]`` bool, the legal actions of every row (derived from
        ``decision_legal``, ``decision_player``, ``hand_count`` and ``decision_row``; not
        stored): decision ``d``'s row of hand ``h`` has its legal actions when ``h`` is one
        of its player's hands, else (padding hands, the sink) slot 0 alone. NumPy in,
        NumPy out; else JAX."""
        return _public_rows(self)[0]

    @property
    def infoset_player(self):
        """``[(B,) I]`` int32, every row's player (derived, not stored: see
        :attr:`legal_mask`); ``NO_PLAYER`` for padding hands and the sink."""
        return _public_rows(self)[1]


def decision_rows(players, hands) -> np.ndarray:
    """``[D + 1]`` int32 each decision's first row, the last entry one past them: decision
    ``d`` of player ``players[d]`` (``[D]``) has ``hands[players[d]]`` rows (``hands``
    ``[P]``), the decisions one after another from row 0 (``PublicTensors.decision_row``)."""
    width = np.asarray(hands, np.int64)[np.asarray(players, np.int64)]           # [D]
    return np.concatenate([[0], np.cumsum(width)]).astype(np.int32)


def public_row_index(t: "PublicTensors") -> tuple:
    """``(row [D + 1, H], real [D + 1, H])`` of one game's public tensors (no batch axis):
    the row of decision ``d``'s hand ``h`` where it has one (``h`` under the decision's
    width ``decision_row[d + 1] - decision_row[d]``), else the sink's (``I - 1``: a row
    that is not there reads as the sink, which holds what a padding row would); ``real``
    says which are there. The last decision ``D`` has none. NumPy in, NumPy out; else
    JAX."""
    start = t.decision_row
    xp = np if isinstance(start, np.ndarray) else jnp
    H, sink = t.weights.shape[-1], t.row_space.shape[-2] - 1
    width = xp.concatenate([start[1:] - start[:-1], xp.zeros((1,), start.dtype)])
    hand = xp.arange(H, dtype=np.int32)
    real = hand < width[:, None]                                             # [D + 1, H]
    row = xp.where(real, start[:, None] + hand, sink).astype(np.int32)
    return row, real


def _public_rows(t: "PublicTensors") -> tuple:
    """``(legal_mask [*B, I, A] bool, infoset_player [*B, I] int32)`` of public tensors
    ``t`` (any leading batch axes ``*B``), from their per-decision tables."""
    legal, owner = t.decision_legal, t.decision_player
    numpy = all(isinstance(x, np.ndarray) for x in (legal, owner, t.hand_count,
                                                    t.decision_row))
    batch = owner.shape[:-1]
    if batch and numpy:                          # one member at a time
        one = [_public_rows(t._replace(**{f: np.asarray(getattr(t, f))[b]
                                          for f in _ROW_FIELDS}))
               for b in np.ndindex(batch)]
        return tuple(np.stack([x[k] for x in one]).reshape(batch + one[0][k].shape)
                     for k in range(2))
    if batch:
        import jax
        fn = _public_rows
        for _ in batch:
            fn = jax.vmap(fn)
        return fn(t)
    xp = np if numpy else jnp
    rows, A = t.row_shape
    row, real = public_row_index(t)                                          # [D + 1, H]
    count = xp.take(t.hand_count, xp.clip(owner, 0, None))                   # [D + 1]
    own = real & (xp.arange(row.shape[1]) < count[:, None]) & (owner >= 0)[:, None]
    player = xp.where(own, owner[:, None], NO_PLAYER).astype(np.int32)       # [D + 1, H]
    mask = xp.where(own[..., None], legal[:, None, :], xp.arange(A) == 0)    # [D + 1, H, A]
    where = xp.where(real, row, rows)                                # past the end: dropped
    if numpy:
        out_player = np.full(rows, NO_PLAYER, np.int32)
        out_mask = np.broadcast_to(np.arange(A) == 0, (rows, A)).copy()
        out_player[row[real]] = player[real]
        out_mask[row[real]] = mask[real]
        return out_mask, out_player
    out_player = jnp.full(rows, NO_PLAYER, jnp.int32).at[where].set(player, mode="drop")
    out_mask = jnp.broadcast_to(jnp.arange(A) == 0, (rows, A)).at[where].set(mask, mode="drop")
    return out_mask, out_player


#: The fields :func:`_public_rows` reads (a stack's member by member).
_ROW_FIELDS = ("decision_legal", "decision_player", "hand_count", "decision_row",
               "row_space", "weights")


class PublicStructure(NamedTuple):
    """Static (hashable) facts a compiled public-tree pass depends on."""
    level_start: tuple[int, ...]   # [D + 1] node slices per depth
    num_players: int               # P (2; more with dense payoff tables only)
    hands: tuple[int, ...]         # [P] hands per player (H_p)
    ranked: bool = False           # terminals by sorted strength and card removal, O(H) each
                                   # (else dense [H, H] per terminal)
    widths: tuple[int, ...] = ()   # [D + 1] the most children of a node of each level
    player_decisions: tuple[int, ...] = ()   # [P] each player's decision nodes (D_p; ():
                                   # not counted, e.g. a stack): the sizes of the per-player
                                   # blocks of kernels.public.blocks
    merges: tuple = ()             # [D + 1] (start, end) per level: the merged outcomes
                                   # (PublicTensors.merge_*) whose chance node is on that
                                   # level; (): none (the passes skip them)
    legal_groups: tuple[tuple[tuple[int, int], ...], ...] = ()   # [P] each player's decisions
                                   # by their count k of actions legal for any hand:
                                   # ((k, D_pk), ...) ascending k (kernels.public.slots)


#: The ranked folds and showdowns go by chunks of at most this many entries ``[T', H]``
#: (``kernels.public._by_chunks``): their temporaries (a showdown's eleven terms per hand,
#: their positions, the running sums) are ``[T', 11, H]`` at most, not ``[T, 11, H]`` (on
#: the README-range flop 181,483 showdowns, 2.1 GB each). Rivers and turns have fewer.
RANKED_CHUNK_ENTRIES = 2 ** 20

#: ... and at least this many terminals: below some 16 (a hold'em turn's), XLA's CPU
#: backend takes other kernels for the running sums' products and rounds differently.
RANKED_CHUNK_LEAST = 256


#: From this many ``[N, H]`` entries on (a flop's node tables: 14.8 million with 34 hands,
#: 116 million with the README's 265; a turn's 0.5 million), one player's half-step and
#: the evaluation keep one node table at a time (``kernels.public._one_player_slots``,
#: ``kernels.public.metrics``); below, the edge and reach tables whole, which costs less
#: CPU on a turn (10 to 13% per iteration on the README turn). The memory budget
#: (``lowering.public.public_footprint``) counts the evaluation's tables by the same gate.
LEAN_NODE_ENTRIES = 1 << 22


def ranked_chunk(hands: int, entries: int = RANKED_CHUNK_ENTRIES,
                 least: int = RANKED_CHUNK_LEAST) -> int:
    """How many ranked terminals of ``hands`` hands the passes take at a time: the most
    whose ``[T', H]`` stays within ``entries``, at least ``least`` (what the kernels run
    and the memory budget counts)."""
    return max(least, entries // max(hands, 1))


__all__ += ["PublicTensors", "PublicStructure", "public_row_index", "decision_rows",
            "RANKED_CHUNK_ENTRIES",
            "RANKED_CHUNK_LEAST", "ranked_chunk", "LEAN_NODE_ENTRIES"]
