"""jaxcfr.lowering.preorder: pre-order numbers made from the tree when first read.

(The oracle, tests/test_lowering_oracle.py, also compares them with the numbers the walk
of main recorded, on eight games.)"""

import pickle

import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.preorder import Preorder, preorder_array, preorder_numbers


def depth_first(parent: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Pre-order numbers by an explicit depth-first walk (children in slot order)."""
    children: dict[int, list] = {}
    for x in range(1, len(parent)):
        children.setdefault(int(parent[x]), []).append(x)
    pre = np.full(len(parent), -1)
    stack, k = [x for x in range(len(parent)) if parent[x] < 0][::-1], 0
    while stack:
        x = stack.pop()
        pre[x] = k
        k += 1
        stack.extend(sorted(children.get(x, []), key=lambda c: slot[c])[::-1])
    return pre


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "goofspiel(cards=4)",
                                  "liars_dice(sides=3)", "kuhn_poker(players=3)"])
def test_made_numbers_are_a_depth_first_walks(name):
    lowered = jaxcfr.lower(jaxcfr.load_game(name), workers=1)
    t = lowered.tensors
    made = preorder_numbers(t.parent, lowered.level_start)
    assert made.dtype == np.int32
    assert np.array_equal(made, depth_first(t.parent, t.parent_slot))


def test_several_roots_follow_one_another():
    # two roots (level 0), children grouped by parent in slot order
    parent = np.array([-1, -1, 0, 0, 1, 2], dtype=np.int32)
    slot = np.array([0, 1, 0, 1, 0, 0], dtype=np.int32)
    made = preorder_numbers(parent, (0, 2, 5, 6))
    assert made.tolist() == depth_first(parent, slot).tolist() == [0, 4, 1, 3, 5, 2]


def test_the_numbers_are_made_when_first_read_then_kept():
    lowered = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), workers=1)
    pre = lowered.preorder
    assert isinstance(pre, Preorder) and not pre.computed and pre.nbytes == 0
    assert len(pre) == lowered.num_nodes and not pre.computed
    copy = preorder_array(pre)                       # (the cache's write: not kept)
    assert not pre.computed
    first = pre[:5]
    assert pre.computed and pre.nbytes == 4 * lowered.num_nodes
    assert np.array_equal(first, copy[:5]) and np.array_equal(np.asarray(pre), copy)
    assert pre.dtype == np.int32 and pre.tolist() == copy.tolist()
    again = pickle.loads(pickle.dumps(pre))
    assert np.array_equal(np.asarray(again), copy)
