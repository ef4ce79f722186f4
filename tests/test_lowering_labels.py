"""jaxcfr.lowering.labels: the compact [N] action labels of a lowered game."""

import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.labels import Interner, NodeLabels, index_dtype


def test_labels_read_like_the_tuple_they_replace():
    raw = [None, "a", 1, 1.0, True, (2, "x"), "a", 1]
    labels = NodeLabels.from_labels(raw)
    assert labels == tuple(raw) and tuple(labels) == tuple(raw)
    # equal labels of different types keep their own types
    assert [type(x) for x in labels] == [type(x) for x in raw]
    assert labels[2:5] == (1, 1.0, True) and labels[np.int64(5)] == (2, "x")
    assert len(labels.table) == 6 and labels.index.dtype == np.uint8


def test_unhashable_labels_keep_their_own_entry():
    a, b = [1], [1]
    labels = NodeLabels.from_labels([a, b, a])
    assert labels[0] is a and labels[1] is b and labels[2] is a


def test_interner_shares_labels_equal_in_type_and_value():
    interner = Interner()
    a, b = [1], [1]
    raw = ["x", 1, 1.0, True, "x", 1, a, b, a, (2, "y"), (2, "y")]
    entries = interner.add_all(raw)
    assert entries.tolist() == [0, 1, 2, 3, 0, 1, 4, 5, 4, 6, 6]
    assert [interner.table[e] for e in entries.tolist()] == raw
    assert [type(interner.table[e]) for e in entries.tolist()] == [type(x) for x in raw]
    assert interner.add(1.0) == 2 and interner.add("new") == 7


def test_index_dtype_is_the_smallest_that_fits():
    assert [index_dtype(n) for n in (1, 256, 257, 65536, 65537, 2 ** 32 + 1)] == \
        [np.uint8, np.uint8, np.uint16, np.uint16, np.uint32, np.uint64]
    labels = NodeLabels.from_labels([str(i) for i in range(300)])
    assert labels.index.dtype == np.uint16 and labels[299] == "299"


def test_bad_index_is_refused():
    with pytest.raises(ValueError, match="unsigned"):
        NodeLabels(("a",), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="past its table"):
        NodeLabels(("a",), np.ones(3, np.uint8))


def test_lowered_game_keeps_one_or_two_bytes_a_node():
    lowered = jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    assert isinstance(lowered.node_action, NodeLabels)
    assert lowered.node_action.index.dtype == np.uint8
    assert lowered.preorder.dtype == np.int32
    # a decision node's label is its parent's row's action at its slot
    t = lowered.tensors
    for node in range(1, lowered.num_nodes, 97):
        parent = t.parent[node]
        if t.node_kind[parent] == jaxcfr.tensors.DECISION:
            row = t.node_infoset[parent]
            assert lowered.node_action[node] == \
                lowered.infoset_actions[row][t.parent_slot[node]]
