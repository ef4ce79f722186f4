"""CFR+ finds the exact value of every 2-player constant-sum perfect-recall ``.efg`` game.

The values come from the ``value_P1`` column of the data set's README (exact
sequence-form LP values); the fixture copies in ``tests/fixtures/efg`` always
run, the shared Gambit files when they are present. All the games are solved
at once, as one stack (one compiled step), and the value and exploitability of
each member's average profile are computed exactly on the host.

``large_payoff_game.efg`` has payoffs of 10^19 and value 1: no averaging CFR
variant can get its average profile's value within 1e-3 of 1 (the first,
uniform iterations keep a weight of about 2/T^2 in CFR+'s linear average, worth
~10^19 * 2/T^2 >> 1; nor is the current iterate an equilibrium), so it is
checked relative to the payoff scale, in float64 (in-process: the precision is scoped to the
``jax_enable_x64`` globally).
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

import numpy as np
import pytest

import jaxcfr

try:
    from tests import cfr_cases as C
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R

pytestmark = pytest.mark.skipif(not C.efg_loader_available(), reason="jaxcfr.efg is missing")

ITERATIONS = 3000
LARGE = "large_payoff_game.efg"

#: The fixture copies and their values (always run).
FIXTURE_VALUES = {"authored_kuhn_poker.efg": Fraction(-1, 18), "2smp.efg": Fraction(0),
                  "stripped_down_poker.efg": Fraction(1, 3),
                  "2_player_chance_nonterm_outcomes_and_missing_term_outcomes.efg":
                      Fraction(1, 3),
                  "reduction_generic_payoffs.efg": Fraction(3),
                  "different_depths.efg": Fraction(3, 10)}


def parse_readme(path) -> dict[str, Fraction]:
    """``{file: value_P1}`` for the 2-player constant-sum perfect-recall rows of the table."""
    out = {}
    header = None
    for line in path.read_text().splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= set("-: "):
            continue
        row = dict(zip(header, cells))
        value = re.match(r"^-?\d+(/\d+)?", row["value_P1"])
        if row["pl"] == "2" and row["PR"] == "Y" and value:
            assert row["sum"] == "zero" or row["sum"].startswith("const"), row
            out[row["efg/ file"].strip("`")] = Fraction(value.group(0))
    return out


def cases() -> list[tuple[str, str, Fraction]]:
    """``(id, path, value)`` of every game to solve."""
    out = [(f"fixtures/{f}", str(C.FIXTURES_EFG / f), v) for f, v in FIXTURE_VALUES.items()
           if (C.FIXTURES_EFG / f).exists()]
    readme = C.SHARED_EFG / "README.md"
    if readme.exists():
        out += [(f"shared/{f}", str(C.SHARED_EFG / f), v)
                for f, v in parse_readme(readme).items() if f != LARGE]
    return out


CASES = cases()


def test_readme_table_is_parsed():
    if not (C.SHARED_EFG / "README.md").exists():
        pytest.skip(f"{C.SHARED_EFG} is absent")
    values = parse_readme(C.SHARED_EFG / "README.md")
    assert values["4cards.efg"] == Fraction(23, 24)
    assert values["authored_kuhn_poker.efg"] == Fraction(-1, 18)
    assert values[LARGE] == 1
    assert "3_player.efg" not in values and "myerson.efg" not in values   # 3 players / no PR
    assert len(values) >= 20


@functools.cache
def solved() -> dict:
    """Solve every case at once: one stack, CFR+, ITERATIONS iterations."""
    games = {cid: jaxcfr.load_game(path) for cid, path, _ in CASES}
    lowered = [jaxcfr.lower(g, name=cid) for cid, g in games.items()]
    batch = jaxcfr.stack(lowered)
    runner = jaxcfr.Runner(batch, jaxcfr.cfr_plus())
    state = runner.advance(runner.init(), ITERATIONS)
    average = runner.profile(state)
    out = {}
    for b, (cid, game) in enumerate(games.items()):
        tree = R.Tree(game)
        prof = R.profile_from_table(lowered[b], average[b])
        conv, values, _ = R.nash_conv(tree, prof)
        scale = max(abs(float(n.returns[0])) for n in tree.nodes if n.kind == "terminal")
        out[cid] = {"value": float(values[0]), "exploitability": conv / 2, "scale": scale,
                    "tree": tree}
    return out


@pytest.mark.parametrize("cid,path,value", CASES, ids=[c[0] for c in CASES])
def test_cfr_plus_finds_the_game_value(cid, path, value):
    result = solved()[cid]
    tol = 1e-3 * max(1.0, result["scale"] / 10)      # relative for large payoffs
    assert abs(result["value"] - float(value)) < tol, (result["value"], float(value))
    assert result["exploitability"] < tol, result["exploitability"]


@pytest.mark.parametrize("cid,path,value", [c for c in CASES if c[0].startswith("fixtures/")],
                         ids=[c[0] for c in CASES if c[0].startswith("fixtures/")])
def test_fixture_values_by_linear_programming(cid, path, value):
    """The oracle agrees with the README: sequence-form LP on the same files."""
    assert R.sequence_form_value(solved()[cid]["tree"]) == pytest.approx(float(value), abs=1e-9)


def test_different_depths_efg_is_the_python_game():
    """The .efg fixture and reference_cfr.DifferentDepths are the same game."""
    efg_tree = R.Tree(jaxcfr.load_game(str(C.DIFFERENT_DEPTHS_EFG)))
    py_tree = R.Tree(R.DifferentDepths())
    def leaves(t):
        return [(n.path, n.returns.tolist()) for n in t.nodes if n.kind == "terminal"]

    assert leaves(efg_tree) == leaves(py_tree)
    depths = sorted(sorted(len(h.path) for h in m) for m in efg_tree.members.values())
    assert depths == [[1, 1], [2, 2, 2, 3], [3, 4]]


def test_large_payoff_game_in_float64():
    path = C.LARGE_PAYOFF_EFG
    if not path.exists():
        pytest.skip(f"{path} is absent")
    out = C.float64_large()
    assert out["dtype"] == "float64"
    game = jaxcfr.load_game(str(path))
    lowered = jaxcfr.lower(game)
    tree = R.Tree(game)
    scale = 1e19
    # the average: value and exploitability right relative to the payoff scale (measured
    # after 1000 iterations: exploitability 5.0e12, i.e. 5e-7 of the scale)
    avg = R.profile_from_table(lowered, np.asarray(out["average"]))
    conv, values, _ = R.nash_conv(tree, avg)
    assert abs(values[0] - 1) < 2e-6 * scale and conv / 2 < 1e-6 * scale, (values, conv)
    # the device's float64 analytics agree with the host's to float64 precision
    np.testing.assert_allclose(out["values"], values, rtol=1e-9)
    np.testing.assert_allclose(out["nash_conv"], conv, rtol=1e-9)
