"""jaxcfr.lowering.keys: the rows' (player, key) pairs without a tuple per row."""

import pickle

import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.keys import InfosetKeys
from jaxcfr.lowering.lower import sort_infosets


def test_keys_read_like_the_tuple_of_pairs_they_replace():
    pairs = ((0, "a"), (1, ("b", 2)), (0, None), (2, 7))
    keys = InfosetKeys([p for p, _ in pairs], [k for _, k in pairs])
    assert keys == pairs and pairs == keys and keys == list(pairs)
    assert tuple(keys) == pairs and len(keys) == 4 and keys[1] == (1, ("b", 2))
    assert type(keys[0][0]) is int and keys[1:3] == pairs[1:3] and keys[-1] == (2, 7)
    assert keys != pairs[:3] and keys != ((0, "a"), (1, ("b", 2)), (0, None), (2, 8))
    assert keys.players.dtype == np.int8 and keys.nbytes == 4 + 8 * 4
    assert pickle.loads(pickle.dumps(keys)) == pairs
    assert InfosetKeys([], ()) == () and len(InfosetKeys([], ())) == 0
    with pytest.raises(ValueError, match="one player per key"):
        InfosetKeys([0, 1], ("a",))


def test_a_lowered_game_keeps_its_keys_compact_sorted_or_not():
    game = jaxcfr.load_game("leduc_poker")
    for sort in (True, False):
        lowered = jaxcfr.lower(game, workers=1, sort_infosets=sort)
        keys = lowered.infoset_keys
        assert isinstance(keys, InfosetKeys) and len(keys) == lowered.num_rows - 1
        owner = lowered.tensors.infoset_player[:-1]
        assert [p for p, _ in keys] == owner.tolist()
        assert all(lowered.row_of(p, k) == r for r, (p, k) in enumerate(keys))
    resorted = sort_infosets(jaxcfr.lower(game, workers=1, sort_infosets=False))
    assert isinstance(resorted.infoset_keys, InfosetKeys)
    assert resorted.infoset_keys == jaxcfr.lower(game, workers=1).infoset_keys
