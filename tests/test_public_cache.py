"""The cache of lowered public trees (:mod:`jaxcfr.lowering.public_cache`).

Oracles: a second lowering of the same game string is a cache hit and the same lowered
game (tensors' fingerprint, host tables, hands, row keys) as a fresh lowering; a solve
from a hit is the solve from a fresh lowering (without lowering again: ``lower_public``
is made to fail); an entry whose pickled tables would run code (its checksums made to
match) is refused as corrupt and the code never runs; a changed tensor is corrupt, an
entry over the memory budget is refused with the budget's error; ``JAXCFR_NO_CACHE=1``
turns the cache off.
"""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

import jaxcfr
from jaxcfr.engine import loop
from jaxcfr.engine.loop import lower_public_reporting
from jaxcfr.lowering import public_cache
from jaxcfr.lowering.budget import MemoryBudgetError
from jaxcfr.tensors import fingerprint

LEDUC = "leduc_poker(ranks=3, tree='public')"
SPOT = "holdem_spot(board='QhJd8c5s3h', ranges=('AA,AKs:0.5,72o', 'KK,QQ:0.5'))"


def _lower(text, directory, **kwargs):
    report = {}
    lowered = lower_public_reporting(jaxcfr.load_game(text), text=text, cache=directory,
                                     report=report, name=text, **kwargs)
    return lowered, report["cache"]


def _same(a, b):
    assert fingerprint(a) == fingerprint(b)
    assert a.level_start == b.level_start and a.node_action == b.node_action
    assert a.node_actions == b.node_actions and np.array_equal(a.node_kind, b.node_kind)
    assert a.hands.labels == b.hands.labels and a.hands.cards == b.hands.cards
    assert a.hands.deal_total == b.hands.deal_total
    assert all(np.array_equal(x, y) for x, y in zip(a.hands.weights, b.hands.weights))
    assert np.array_equal(a.hands.compatible, b.hands.compatible)
    assert (a.constant_sum, a.nash_value, a.ranked, a.widths) == \
        (b.constant_sum, b.nash_value, b.ranked, b.widths)
    assert a.row_keys() == b.row_keys() and a.infoset_actions == b.infoset_actions


@pytest.mark.parametrize("text, terminals", [(LEDUC, "auto"), (SPOT, "ranked")])
def test_second_lowering_is_a_hit_and_equal(tmp_path, text, terminals):
    fresh = jaxcfr.lower_public(jaxcfr.load_game(text), terminals=terminals)
    first, status = _lower(text, tmp_path, terminals=terminals)
    assert status.startswith("stored: ")
    second, status = _lower(text, tmp_path, terminals=terminals)
    assert status.startswith("hit: ")
    _same(fresh, first)
    _same(fresh, second)
    # another terminals choice is another entry
    _, status = _lower(text, tmp_path, terminals="dense")
    assert status.startswith("stored: ")
    assert len(list(tmp_path.glob("public-*.npz"))) == 2


def test_solve_from_a_hit_is_the_fresh_solve(tmp_path, monkeypatch):
    fresh = jaxcfr.solve(LEDUC, "cfr+", 5, load=jaxcfr.LoadOptions(cache=tmp_path))
    assert len(list(tmp_path.glob("public-*.npz"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("lowered again")
    monkeypatch.setattr(loop, "lower_public", refuse)
    hit = jaxcfr.solve(LEDUC, "cfr+", 5, load=jaxcfr.LoadOptions(cache=tmp_path))
    assert hit.final["exploitability"] == fresh.final["exploitability"]
    assert np.array_equal(hit.average_strategy, fresh.average_strategy)
    monkeypatch.setenv("JAXCFR_NO_CACHE", "1")               # off: lowers (and fails here)
    with pytest.raises(AssertionError, match="lowered again"):
        jaxcfr.solve(LEDUC, "cfr+", 5, load=jaxcfr.LoadOptions(cache=tmp_path))


class _RunsCode:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _rewrite(path, **changes):
    """Rewrite the entry at ``path`` with arrays replaced, checksums made to match."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(changes)
    header = json.loads(bytes(arrays["header"]).decode())
    if "tables" in changes:
        extra = {k: arrays[f"h_{k}"] for k in ("node_kind", "weights_0", "weights_1",
                                               "compatible")}
        header["host_sha256"] = public_cache._host_digest(bytes(arrays["tables"]), extra)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def test_nothing_read_runs_code(tmp_path):
    lowered, status = _lower(LEDUC, tmp_path)
    path = tmp_path / status.split(": ", 1)[1].rsplit("/", 1)[1]
    marker = tmp_path / "ran"
    _rewrite(path, tables=np.frombuffer(pickle.dumps(_RunsCode(str(marker))), np.uint8))
    ident = public_cache.public_identity(LEDUC, jaxcfr.load_game(LEDUC))
    again, why = public_cache.load(path, ident)
    assert again is None and why.startswith("corrupt (UnpicklingError")
    assert not marker.exists()
    # lowered again and overwritten: the next load is a hit
    relowered, status = _lower(LEDUC, tmp_path)
    assert status.startswith("stored: ") and not marker.exists()
    _same(lowered, relowered)
    assert public_cache.load(path, ident)[1] == "hit"


def test_corrupt_tensor_and_budget(tmp_path):
    lowered, status = _lower(LEDUC, tmp_path)
    path = tmp_path / os.path.basename(status.split(": ", 1)[1])
    ident = public_cache.public_identity(LEDUC, jaxcfr.load_game(LEDUC))
    with pytest.raises(MemoryBudgetError, match="in the cached game"):
        public_cache.load(path, ident, budget=1 << 20)
    with pytest.raises(MemoryBudgetError, match="in the cached game"):
        _lower(LEDUC, tmp_path, memory_budget=1 << 20)
    # a cache hit counts the solver's tables and the run's floats, as the walk does
    from jaxcfr.lowering.public import public_footprint
    need = public_footprint(lowered.public_size, 4, state_tables=3).total
    assert public_cache.load(path, ident, budget=need, state_tables=3)[1] == "hit"
    for k, f in ((4, 4), (3, 8)):
        with pytest.raises(MemoryBudgetError, match="in the cached game"):
            public_cache.load(path, ident, budget=need, state_tables=k, float_bytes=f)
    with pytest.raises(MemoryBudgetError, match=r"in the cached game \(a state of 3 tables "
                                                r"of 64-bit floats\)"):
        _lower(LEDUC, tmp_path, memory_budget=need, state_tables=3, float_bytes=8)
    assert _lower(LEDUC, tmp_path, memory_budget=need, state_tables=3)[1].startswith("hit")
    weights = np.array(lowered.tensors.weights)
    weights[0, 0] += 1.0
    _rewrite(path, t_weights=weights)
    assert public_cache.load(path, ident) == (None, "corrupt (tensors do not match their "
                                                    "fingerprint)")
    stale = dict(ident, terminals="dense")
    assert public_cache.load(path, stale)[1].startswith("stale")


def test_inspect_uses_the_cache(tmp_path, monkeypatch, capsys):
    from jaxcfr.cli import app
    monkeypatch.setenv("JAXCFR_LOWERING_CACHE_DIR", str(tmp_path))
    seen = []
    for _ in range(2):
        capsys.readouterr()
        assert app.main(["inspect", LEDUC, "--json"]) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["tree"] == "public" and out["hands"] == [6, 6]
        seen.append(out["cache"].split(":")[0])
    assert seen == ["stored", "hit"]
    capsys.readouterr()
    assert app.main(["inspect", LEDUC, "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["cache"] == "off"
