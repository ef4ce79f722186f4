"""The cache of lowered games: hit, miss, stale, corrupt, concurrent writers, the off switch.

Every loaded entry must equal a fresh walk exactly; a stale or corrupt entry must be
lowered again (and overwritten), never trusted; loading never runs code.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import multiprocessing
import os
import pathlib
import pickle
import sys
import zipfile

import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering import cache
from jaxcfr.lowering.budget import MemoryBudgetError
from jaxcfr.cli.app import main

try:
    from tests.test_parallel_lowering import assert_same
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from test_parallel_lowering import assert_same


def cached(text, directory, **kw):
    """``(lowered, status)`` through the cache in ``directory``."""
    return cache.lower_cached(text, directory, lambda g: jaxcfr.lower(g, name=text, **kw),
                              name=text, sort=kw.get("sort_infosets", True))


def test_miss_then_hit_equals_a_fresh_walk(tmp_path):
    fresh = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), name="leduc_poker")
    first, status = cached("leduc_poker", tmp_path)
    assert status.startswith("stored: ")
    second, status = cached("leduc_poker", tmp_path)
    assert status.startswith("hit: ")
    assert_same(fresh, first)
    assert_same(fresh, second)
    # the same game under an equivalent string, and through as_lowered / solve
    _, status = cached("leduc_poker(ranks=3, suits=2)", tmp_path)
    assert status.startswith("hit: ")
    assert_same(fresh, jaxcfr.lowering.lower.as_lowered("leduc_poker", cache=tmp_path))
    assert len(list(tmp_path.iterdir())) == 1
    # held as lowering holds it: payoffs and chance probabilities tabled
    assert type(second.tensors.payoff).__name__ == "TabledArray"
    assert type(second.tensors.chance_prob).__name__ == "TabledArray"


def test_an_entry_with_dense_wide_tensors_loads_compact(tmp_path):
    """An entry written before the compact host forms (int32 slots and players, dense
    payoffs and probabilities: the same fingerprint) loads, and is held compact."""
    fresh = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), name="leduc_poker")
    t = fresh.tensors
    dense = t._replace(**{f: np.asarray(getattr(t, f), jaxcfr.tensors.WIDE_DTYPES.get(f))
                          for f in t._fields})
    assert dense.node_player.dtype == np.int32 and isinstance(dense.payoff, np.ndarray)
    ident = cache.identity("leduc_poker")
    path = cache.entry_path(tmp_path, "leduc_poker", ident)
    assert cache.store(path, ident, dataclasses.replace(fresh, tensors=dense)) is None
    loaded, status = cache.load(path, ident)
    assert status == "hit"
    assert_same(fresh, loaded)
    assert type(loaded.tensors.payoff).__name__ == "TabledArray"


def test_the_key_separates_what_differs(tmp_path):
    kuhn = cache.identity("kuhn_poker")
    assert kuhn == cache.identity(" kuhn_poker(players=2) ")
    assert kuhn != cache.identity("kuhn_poker(players=3)")
    assert kuhn != cache.identity("kuhn_poker", sort=False)
    efg = cache.identity(str(pathlib.Path(__file__).parent / "fixtures" / "efg" / "myerson.efg"))
    assert efg["game"]["kind"] == "efg" and len(efg["game"]["sha256"]) == 64
    assert cache.identity("no_such_game") is None          # lowering reports the error
    assert cache.identity("kuhn_poker(players=1)") is not None   # bound; the game refuses it
    assert cache.entry_path(tmp_path, "kuhn_poker", kuhn).name.startswith("KuhnPoker-")


GAME_SOURCE = '''
from jaxcfr.game import CHANCE, TERMINAL, Game, GameError

class Coin(Game):
    num_players = 2
    def __init__(self):
        self.h = ()
    def clone(self):
        c = Coin(); c.h = self.h; return c
    def is_terminal(self): return len(self.h) == 2
    def is_chance(self): return len(self.h) == 0
    def player_to_act(self):
        return CHANCE if not self.h else TERMINAL if len(self.h) == 2 else 0
    def chance_outcomes(self):
        return [("H", 0.5), ("T", 0.5)] if not self.h else None
    def legal_actions(self): return ["h", "t"] if len(self.h) == 1 else []
    def step(self, a):
        if len(self.h) == 2: raise GameError("over")
        self.h += (a,)
    def terminal_returns(self):
        u = PAYOFF if self.h[0].lower() == self.h[1] else -1.0
        return (u, -u)
    def infoset_key(self, p): return "guess"
'''


def test_a_changed_game_is_lowered_again(tmp_path, monkeypatch):
    (tmp_path / "coin_game_v.py").write_text("PAYOFF = 1.0\n" + GAME_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    store = tmp_path / "cache"
    module = importlib.import_module("coin_game_v")
    first, status = cached("coin_game_v:Coin", store)
    assert status.startswith("stored") and first.tensors.payoff.max() == 1.0
    assert cached("coin_game_v:Coin", store)[1].startswith("hit")
    (tmp_path / "coin_game_v.py").write_text("PAYOFF = 3.0\n" + GAME_SOURCE)
    importlib.reload(module)
    second, status = cached("coin_game_v:Coin", store)
    assert status.startswith("stored") and second.tensors.payoff.max() == 3.0
    sys.modules.pop("coin_game_v", None)


def _rewrite(path, change):
    """Rewrite the entry's members through ``change(members)`` (a dict of arrays)."""
    with np.load(path) as z:
        members = {k: z[k] for k in z.files}
    change(members)
    with open(path, "wb") as f:
        np.savez(f, **members)


def _header(members):
    return json.loads(bytes(members["header"]))


def _set_header(members, header):
    members["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)


def _stale(members):
    header = _header(members)
    header["identity"]["lowering_sha256"] = "0" * 64
    _set_header(members, header)


def _flip_payoff(members):
    payoff = members["t_payoff"].copy()
    payoff[-1, 0] += 1.0
    members["t_payoff"] = payoff


def _flip_table_byte(members):
    tables = members["tables"].copy()
    tables[len(tables) // 2] ^= 0xFF
    members["tables"] = tables


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("damage, why", [
    (lambda p: _rewrite(p, _stale), "stale"),
    (lambda p: _rewrite(p, _flip_payoff), "corrupt (tensors do not match their fingerprint)"),
    (lambda p: _rewrite(p, _flip_table_byte), "corrupt (host tables do not match"),
    (_truncate, "corrupt"),
    (lambda p: p.write_bytes(b"not a zip file"), "corrupt"),
], ids=["stale", "tensor-byte", "table-byte", "truncated", "garbage"])
def test_stale_or_corrupt_entries_are_rebuilt(tmp_path, damage, why):
    fresh, status = cached("kuhn_poker(players=3)", tmp_path)
    path = next(tmp_path.iterdir())
    damage(path)
    ident = cache.identity("kuhn_poker(players=3)")
    lowered, reason = cache.load(path, ident)
    assert lowered is None and reason.startswith(why), reason
    news = []
    again, status = cache.lower_cached(
        "kuhn_poker(players=3)", tmp_path,
        lambda g: jaxcfr.lower(g, name="kuhn_poker(players=3)"), name="kuhn_poker(players=3)",
        log=news.append)
    assert status.startswith("stored") and any(why.split()[0] in m for m in news), news
    assert_same(fresh, again)
    assert cache.load(path, ident)[1] == "hit"            # overwritten with a sound entry


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo owned > /dev/null",))


def test_loading_never_runs_code(tmp_path):
    cached("kuhn_poker", tmp_path)
    path = next(tmp_path.iterdir())

    def poison(members):
        import hashlib
        tables = pickle.loads(bytes(members["tables"]))
        tables["name"] = _Evil()
        data = pickle.dumps(tables)
        members["tables"] = np.frombuffer(data, np.uint8)
        header = _header(members)
        header["tables_sha256"] = hashlib.sha256(data).hexdigest()
        _set_header(members, header)

    _rewrite(path, poison)
    lowered, why = cache.load(path, cache.identity("kuhn_poker"))
    assert lowered is None and "UnpicklingError" in why and "posix.system" in why


def test_games_with_unusual_labels_are_not_cached(tmp_path):
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    import dataclasses
    odd = dataclasses.replace(lowered, node_action=(_Evil(),) * lowered.num_nodes)
    why = cache.store(tmp_path / "x.npz", cache.identity("kuhn_poker"), odd)
    assert why and "not plain Python values" in why and not list(tmp_path.iterdir())


def _worker(directory, queue):
    lowered, status = cached("leduc_poker", directory)
    queue.put((status.split(":")[0], jaxcfr.tensors.fingerprint(lowered)))


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")    # the children never use JAX
def test_concurrent_processes_share_one_entry(tmp_path):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(tmp_path, queue)) for _ in range(4)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    fingerprints = {fp for _, fp in results}
    assert len(fingerprints) == 1
    assert [p.name for p in tmp_path.iterdir()] == [p.name for p in tmp_path.glob("*.npz")]
    assert len(list(tmp_path.iterdir())) == 1                  # no temporary files left
    lowered, why = cache.load(next(tmp_path.iterdir()), cache.identity("leduc_poker"))
    assert why == "hit" and jaxcfr.tensors.fingerprint(lowered) in fingerprints


def test_the_budget_applies_to_a_cached_game(tmp_path):
    cached("leduc_poker", tmp_path)
    with pytest.raises(MemoryBudgetError, match="in the cached game"):
        cache.lower_cached("leduc_poker", tmp_path, jaxcfr.lower, name="leduc_poker",
                           memory_budget=10_000)


def test_the_off_switch(tmp_path, monkeypatch):
    assert cache.resolve(None) is None and cache.resolve(False) is None
    assert cache.resolve(tmp_path) == tmp_path
    monkeypatch.setenv("JAXCFR_LOWERING_CACHE_DIR", str(tmp_path / "here"))
    assert cache.resolve(True) == tmp_path / "here"
    monkeypatch.setenv("JAXCFR_NO_CACHE", "1")
    assert cache.resolve(True) is None and cache.resolve(tmp_path) is None


def test_the_command_line_uses_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JAXCFR_LOWERING_CACHE_DIR", str(tmp_path))
    runs = []
    for extra in ([], [], ["--no-cache"]):
        assert main(["inspect", "kuhn_poker(players=3)", "--json", *extra]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    assert [r["cache"].split(":")[0] for r in runs] == ["stored", "hit", "off"]
    assert len({r["nodes"] for r in runs}) == 1
    assert zipfile.is_zipfile(next(tmp_path.iterdir()))
