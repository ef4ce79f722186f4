"""Property-based and fuzz tests: random valid games, mutated .efg files, injected violations.

* Random valid games (:class:`random_games.RandomGame`: chance nodes, two or three
  players, perfect recall by construction) pass ``validate``, lower, and solve exactly
  like the NumPy reference (``tests/reference_cfr.py``): regrets, strategy sums and the
  average strategy after 1, 2 and 5 iterations, and the NashConv of the average.
* Mutated ``.efg`` files (the fixtures, and random games written with ``efg.dumps``)
  never produce anything but the reader's own ``EfgError`` with a line and a column, or a
  game that lowers (or is refused with a ``GameError``), each within a time bound that
  the harness enforces with a generous margin (it is a hang detector, not a benchmark).
* One contract violation injected at one random node of a valid game is always
  caught by ``lower`` with the rule named and that node's history, and by ``validate``
  with the same rule and history whenever its random trajectories can reach the node.

Examples are derandomised (the same every run); the solver test runs one stack of ten
three-player games by default (each example costs a compilation). ``JAXCFR_FUZZ_EXAMPLES=N``
runs N fresh random examples per test instead (two and three players, four presets).
"""

from __future__ import annotations

import os
import random
import re
import signal
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import jaxcfr
from jaxcfr import GameError, efg

try:
    from tests import random_games as RG
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import random_games as RG
    import reference_cfr as R

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "efg"
LONG = int(os.environ.get("JAXCFR_FUZZ_EXAMPLES", "0") or 0)
#: Seconds a mutated file may take to be read and lowered; a hang detector, with a
#: margin of about a thousand over what these files take.
TIME_BOUND = 10.0

#: What the suite did in this process (printed at the end with ``-s``).
COUNTS = {"random games solved": 0, "mutated files tried": 0, "mutations read": 0,
          "violations injected": 0, "caught by lower": 0, "caught by validate": 0}


def _settings(default: int, explicit_only: bool = False):
    """``default`` examples (derandomised), or ``JAXCFR_FUZZ_EXAMPLES`` fresh ones;
    ``explicit_only``: by default only the ``@example`` cases (each costs a compilation)."""
    phases = [Phase.explicit] if explicit_only and not LONG else list(Phase)
    return settings(max_examples=LONG or default, deadline=None, derandomize=not LONG,
                    database=None, phases=phases, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    print("\nfuzz: " + ", ".join(f"{k} {v}" for k, v in COUNTS.items()))


# -- random valid games solve like the reference ------------------------------------------
ITERATIONS = (1, 2, 5)
GAMES_PER_STACK = 10


@_settings(default=1, explicit_only=True)
@given(seeds=st.lists(st.integers(0, 2 ** 31 - 1), min_size=GAMES_PER_STACK,
                      max_size=GAMES_PER_STACK, unique=True),
       players=st.sampled_from([2, 3]),
       preset=st.sampled_from(["cfr", "cfr+", "dcfr", "pcfr+"]))
@example(seeds=list(range(1000, 1000 + GAMES_PER_STACK)), players=3, preset="pcfr+")
def test_random_games_solve_like_the_reference(seeds, players, preset):
    games = [RG.RandomGame(s, players) for s in seeds]
    for g in games:
        jaxcfr.validate(g)
    lowered = [jaxcfr.lower(g, name=f"random-{s}") for g, s in zip(games, seeds)]
    batch = jaxcfr.stack(lowered)
    runner = jaxcfr.Runner(batch, jaxcfr.make_solver(preset), precision="float64")
    refs = [R.ReferenceCFR(R.Tree(g), preset) for g in games]
    state, done = runner.init(), 0
    for it in ITERATIONS:
        state = runner.advance(state, it - done)
        done = it
        average = runner.profile(state)                               # [B, I, A]
        for b, (member, ref) in enumerate(zip(lowered, refs)):
            ref.run(it - ref.iteration)
            what = f"seed {seeds[b]}, {players} players, {preset}, iteration {it}"
            n, a = member.num_rows, member.max_actions
            for field in ("regret", "strategy_sum"):
                got = np.asarray(getattr(state, field))[b, :n - 1, :a]
                want = _table(member, getattr(ref, field))
                scale = float(np.abs(want).max()) or 1.0    # strategy sums are tiny (2^-20 units)
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * scale, err_msg=what)
            np.testing.assert_allclose(average[b, :n - 1, :a], _table(member, ref.average()),
                                       rtol=1e-9, atol=1e-9, err_msg=what)
    # The metrics of the final average agree with the reference's analytics.
    metrics = runner.evaluate(state)
    for b, (member, ref) in enumerate(zip(lowered, refs)):
        conv, values, _ = R.nash_conv(ref.tree, ref.average())
        np.testing.assert_allclose(np.asarray(metrics["nash_conv"])[b], conv, atol=1e-9)
        np.testing.assert_allclose(np.asarray(metrics["values"])[b], values, atol=1e-9)
    COUNTS["random games solved"] += len(games)


def _table(member: jaxcfr.LoweredGame, by_key: dict) -> np.ndarray:
    out = np.zeros((member.num_rows - 1, member.max_actions))
    for r, (key, acts) in enumerate(zip(member.infoset_keys, member.infoset_actions)):
        out[r, :len(acts)] = by_key[key]
    return out


def test_random_games_have_perfect_recall_and_chance():
    """The generator's claims, checked on a few seeds: lowering (which checks strong
    perfect recall) accepts them, and they have chance nodes and shared information sets."""
    shapes = []
    for seed in range(20):
        game = RG.RandomGame(seed, players=2 + seed % 2)
        lowered = jaxcfr.lower(game)
        kinds = RG.paths_by_kind(game)
        shapes.append((len(kinds["c"]) > 0,
                       lowered.sizes()["nodes"] - len(kinds["t"]) - len(kinds["c"])
                       > len(lowered.infoset_keys)))
    assert any(c for c, _ in shapes) and any(s for _, s in shapes)


# -- mutated .efg files ----------------------------------------------------------------------
def _sources() -> list[tuple[str, str]]:
    out = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.efg"))]
    for seed in (1, 2):
        out.append((f"random-{seed}.efg", efg.dumps(RG.RandomGame(seed, players=2))))
    return out


SOURCES = _sources()
TOKEN = re.compile(r'"[^"]*"|[{},]|[^\s{},"]+|\s+')
#: Tokens a mutation may insert: structure, node kinds, and numbers past every bound.
VOCABULARY = ["{", "}", ",", '"', '""', '"x"', "p", "c", "t", "0", "1", "2", "-1", "1/2",
              "1/0", "0.5", ".5e-3", "+3", "1e400", "-1e400", "1e30000000", "1e-30000000",
              "9" * 5000, "1" + "0" * 400, "123456789012345678901234567890", "EFG", "2", "R",
              "nan", "inf", "\x00", "\x07", "é", "\ufeff", "\\", "\n"]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


@st.composite
def mutations(draw):
    name, text = draw(st.sampled_from(SOURCES))
    tokens = TOKEN.findall(text)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "swap",
                                   "truncate", "char"]))
        i = draw(st.integers(0, max(0, len(tokens) - 1)))
        if op == "delete" and tokens:
            del tokens[i:i + draw(st.integers(1, 5))]
        elif op == "insert":
            tokens.insert(i, draw(st.sampled_from(VOCABULARY)))
        elif op == "replace" and tokens:
            tokens[i] = draw(st.sampled_from(VOCABULARY))
        elif op == "duplicate" and tokens:
            j = draw(st.integers(i, min(len(tokens), i + 30)))
            tokens[j:j] = tokens[i:j]
        elif op == "swap" and len(tokens) > 1:
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == "truncate":
            tokens = tokens[:i]
        elif op == "char" and tokens:
            t = tokens[i]
            k = draw(st.integers(0, max(0, len(t) - 1)))
            c = draw(st.sampled_from(string.printable + "\x00\x1b\u00e9\u4e2d"))
            tokens[i] = t[:k] + c + t[k + 1:]
    return name, "".join(tokens)


@_settings(default=150)
@given(case=mutations())
def test_mutated_efg_files_fail_only_with_located_reader_errors(case):
    name, text = case
    COUNTS["mutated files tried"] += 1
    # a bound on this process's CPU time (ITIMER_PROF), not on wall time: a hang, or a
    # reader gone quadratic, trips it; a busy machine does not
    previous = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, TIME_BOUND)
    try:
        try:
            game = efg.loads(text, name)
        except efg.EfgError as e:
            assert e.line >= 1 and e.column >= 1, str(e)
            assert str(e).startswith(f"[{e.rule}] {name}:{e.line}:{e.column}: "), str(e)
            assert e.rule.startswith("efg-"), str(e)
            return
        COUNTS["mutations read"] += 1
        try:
            jaxcfr.lower(game)            # a file that reads is a game: it lowers or says why
        except GameError as e:
            assert e.rule, str(e)
    except _Timeout:
        pytest.fail(f"reading {name} mutated took over {TIME_BOUND} s of CPU time")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@pytest.mark.parametrize("number, found", [
    ("1e30000000", "exponent is out of range"),
    ("9" * 5000, "5,000 characters"),
    ("1e400", "larger than the largest float"),
    ("1.8e308", "larger than the largest float"),
    ("1/0", "zero denominator"),
])
def test_numbers_past_the_bounds_are_located_errors(number, found):
    text = ('EFG 2 R "n" { "A" "B" }\n""\np "" 1 1 "" { "x" "y" } 0\n'
            f't "" 1 "o" {{ {number}, 0 }}\nt "" 2 "q" {{ 0, 0 }}\n')
    with pytest.raises(efg.EfgError) as info:
        efg.loads(text, "n.efg")
    assert info.value.rule == "efg-number" and (info.value.line, info.value.column) == (4, 14)
    assert found in str(info.value)
    big_ids = text.replace('p "" 1 1', 'p "" 1 ' + "7" * 30)
    with pytest.raises(efg.EfgError, match="30 digits") as info:
        efg.loads(big_ids, "n.efg")
    assert (info.value.line, info.value.column) == (3, 8)


def test_a_binary_file_is_not_a_text_file(tmp_path):
    path = tmp_path / "bin.efg"
    rng = random.Random(0)
    path.write_bytes(bytes(rng.randrange(256) for _ in range(300)))
    with pytest.raises(efg.EfgError, match="not a text file") as info:
        jaxcfr.load_game(str(path))
    assert info.value.rule == "efg-binary" and info.value.line >= 1


# -- injected contract violations ---------------------------------------------------------
@st.composite
def injections(draw):
    game = RG.RandomGame(draw(st.integers(0, 2 ** 31 - 1)), players=draw(st.sampled_from([2, 3])))
    nodes = RG.paths_by_kind(game)
    kind = draw(st.sampled_from([k for k in ("t", "c", "d") if nodes[k]]))
    violation = draw(st.sampled_from(sorted(RG.VIOLATIONS[kind])))
    candidates = nodes[kind]
    if violation == "clone-is-self" and kind == "d":      # a walker clones only to branch
        candidates = [(p, r) for p, r in candidates if len(_state_at(game, p).legal_actions()) > 1]
        if not candidates:
            violation, candidates = "raises", nodes[kind]
    path, reach = draw(st.sampled_from(candidates))
    return game, kind, violation, path, reach


def _state_at(game, path):
    state = game.clone()
    for a in path:
        state.step(a)
    return state


@_settings(default=60)
@given(case=injections())
def test_injected_violations_are_caught_with_the_rule_and_history(case):
    game, kind, violation, path, reach = case
    rule = RG.VIOLATIONS[kind][violation]
    COUNTS["violations injected"] += 1
    with pytest.raises(GameError) as info:
        jaxcfr.lower(RG.Injected(game.clone(), path, violation))
    assert (info.value.rule, info.value.history) == (rule, path), str(info.value)
    assert f"[{rule}]" in str(info.value)
    COUNTS["caught by lower"] += 1
    if violation == "not-enumerable":        # fine for the probe: it samples that node
        jaxcfr.validate(RG.Injected(game.clone(), path, violation))
        return
    try:
        jaxcfr.validate(RG.Injected(game.clone(), path, violation))
    except GameError as e:
        assert (e.rule, e.history) == (rule, path), str(e)
        COUNTS["caught by validate"] += 1
        return
    # Missed only if 256 random trajectories could plausibly miss the node.
    assert (1 - reach) ** 256 > 1e-6, f"validate missed {violation} at {path} (reach {reach})"
