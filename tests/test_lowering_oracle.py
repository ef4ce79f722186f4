"""Oracle: the lowered tensors and host tables of several games are bit-identical to what
``main`` (50e70e4) produced before the host records became compact (issue 32, item 1).

Each digest covers every ``GameTensors`` array (dtype, shape and bytes), the pre-order
numbers (as int64 values: their dtype is now the smallest that fits), the action label
of every node (``repr`` of the whole sequence: labels' types and values), the levels,
the rows' keys (as a tuple of pairs) and their actions. The digests were recorded by
lowering these games with the code of ``main`` before the change (serial walk, default
options).

The tensors are digested as the device sees them (``jaxcfr.tensors.fingerprint``'s view):
a field the host holds narrower (``WIDE_DTYPES``: slots and players as ``int8``) in its
wide dtype, a compact one (``HOST_FORMS``: payoffs and chance probabilities as a
``TabledArray``) dense; :func:`test_host_forms_are_compact` checks the host's forms.
"""

import hashlib

import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.tabled import TabledArray
from jaxcfr.tensors import WIDE_DTYPES

RECORDED = {
    "tests/fixtures/efg/2_player_chance_nonterm_outcomes_and_missing_term_outcomes.efg":
        "866501bdb21c35aa14659d78",
    "tests/fixtures/efg/2smp.efg": "103f336bd80d39382ada6381",
    "tests/fixtures/efg/3_player.efg": "204c71a6e43afb089c814f8b",
    "dice_poker": "5d9b25a050fef3f0d93712b3",
    "kuhn_poker": "017c9dd823718f7b7deac05d",
    "leduc_poker": "03a28136b4daaace07d0ccf1",
    "goofspiel(cards=4)": "6f83f44b14b698ee4a3aaeff",
    "liars_dice(sides=4)": "90471ec2e4b9a2406f7d575a",
}


def digest(lowered) -> str:
    """sha256 (first 24 hex digits) of every tensor and host table of ``lowered``."""
    h = hashlib.sha256()
    t = lowered.tensors
    for f in t._fields:
        a = np.ascontiguousarray(np.asarray(getattr(t, f), WIDE_DTYPES.get(f)))
        h.update(f"{f}{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    h.update(np.asarray(lowered.preorder, np.int64).tobytes())
    h.update(repr(tuple(lowered.node_action)).encode())
    h.update(repr((lowered.level_start, tuple(lowered.infoset_keys),
                   lowered.infoset_actions)).encode())
    return h.hexdigest()[:24]


@pytest.mark.parametrize("game", sorted(RECORDED))
def test_lowered_game_is_bit_identical_to_main(game):
    lowered = jaxcfr.lower(jaxcfr.load_game(game), workers=1)
    assert digest(lowered) == RECORDED[game]


@pytest.mark.parametrize("game", ["liars_dice(sides=4)", "goofspiel(cards=4)"])
def test_parallel_walk_gives_the_same_digest(game):
    lowered = jaxcfr.lower(jaxcfr.load_game(game), workers=2)
    assert digest(lowered) == RECORDED[game]


@pytest.mark.parametrize("game", ["leduc_poker", "liars_dice(sides=4)"])
def test_host_forms_are_compact(game):
    """Slots and players are held in one byte a node, payoffs and chance probabilities as
    a 1-byte index into their distinct rows; their dense forms are the digested ones."""
    t = jaxcfr.lower(jaxcfr.load_game(game), workers=1).tensors
    for f in WIDE_DTYPES:
        assert getattr(t, f).dtype == np.int8, f
    for f in ("payoff", "chance_prob"):
        a = getattr(t, f)
        assert isinstance(a, TabledArray) and a.index.dtype == np.uint8, f
        assert a.nbytes < np.asarray(a).nbytes / 4, f


def test_depth_order_is_a_stable_argsort(monkeypatch):
    """The build's counting sort in chunks orders nodes as a stable argsort by depth."""
    from jaxcfr.lowering import levels, lower
    monkeypatch.setattr(levels, "CHUNK", 1000)
    rng = np.random.default_rng(1)
    for n, deepest in [(1, 0), (3333, 6), (20_000, 300)]:
        depth = rng.integers(0, deepest + 1, n).astype(np.uint16)
        order, level_start = lower.depth_order(depth)
        assert order.dtype == np.int32
        np.testing.assert_array_equal(order, np.argsort(depth, kind="stable"))
        assert level_start == tuple(np.concatenate(
            [[0], np.cumsum(np.bincount(depth, minlength=int(depth.max()) + 1))]).tolist())


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("game", ["leduc_poker", "liars_dice(sides=4)"])
def test_chunked_passes_give_the_same_digest(monkeypatch, game, workers):
    """The walk's finish and the build work in chunks of nodes; chunks of a few nodes (so
    that groups of children, start items and levels straddle them) give the same game."""
    from jaxcfr.lowering import levels, lower, walk
    monkeypatch.setattr(walk, "FINISH_CHUNK", 7)
    monkeypatch.setattr(lower, "_CHUNK", 5)
    monkeypatch.setattr(levels, "CHUNK", 5)
    lowered = jaxcfr.lower(jaxcfr.load_game(game), workers=workers)
    assert digest(lowered) == RECORDED[game]
