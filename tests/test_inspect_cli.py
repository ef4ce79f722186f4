"""``python -m jaxcfr inspect GAME [--json]``: sizes of the lowered game, one-line errors.

Every case runs ``python -m jaxcfr inspect ...`` in a subprocess; the module fixture
starts them all at once (one per CPU) since each pays for the interpreter start.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "efg"

MALFORMED_EFG = 'EFG 2 R "bad" { "A" "B" }\n""\n\np "" 1 1 "i" { "a" "b" } 0\nq\n'

#: case name -> (arguments after ``inspect``, extra environment)
CASES = {
    "json": (["kuhn_poker", "--json"], {}),
    "text_efg": ([str(FIXTURES / "authored_kuhn_poker.efg")], {}),
    "no_sort": (["kuhn_poker(players=3)", "--json", "--no-sort"], {}),
    "unparsable": (["kuhn_poker("], {}),
    "unknown": (["no_such_game"], {}),
    "bad_parameter": (["leduc_poker(ranks=1)"], {}),
    "sampled_chance": (["sampled_dice_poker"], {}),
    "missing_file": (["{tmp}/missing.efg", "--json"], {}),
    "malformed_efg": (["{tmp}/bad.efg"], {}),
    "imperfect_recall": ([str(FIXTURES / "myerson.efg"), "--json"], {}),
    "memory_budget": (["leduc_poker"], {"JAXCFR_MEMORY_BUDGET": "10000"}),
}


def inspect(args, env, tmp) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("JAXCFR_TRACEBACK", None)
    full_env.update(env)
    args = [a.replace("{tmp}", str(tmp)) for a in args]
    return subprocess.run([sys.executable, "-m", "jaxcfr", "inspect", *args], cwd=ROOT,
                          env=full_env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inspect")
    (tmp / "bad.efg").write_text(MALFORMED_EFG)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {name: pool.submit(inspect, args, env, tmp)
                   for name, (args, env) in CASES.items()}
        return {name: f.result() for name, f in futures.items()}


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode != 0
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("jaxcfr: error: "), lines[0]
    return lines[0]


def test_inspect_json(results):
    result = results["json"]
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out) >= {"nodes", "infosets", "max_actions", "depth", "bytes", "seconds"}
    assert out["nodes"] == 58 and out["infosets"] == [6, 6]
    assert out["max_actions"] == 2 and out["depth"] == 5
    assert out["bytes"] > 0 and out["seconds"] >= 0
    assert out["game"] == "kuhn_poker"


def test_inspect_text_on_an_efg_file(results):
    result = results["text_efg"]
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines() if line.strip())
    assert lines["nodes"] == "55" and lines["infosets"].startswith("6, 6")


def test_inspect_three_players_no_sort(results):
    result = results["no_sort"]
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["infosets"] == [16, 16, 16]


@pytest.mark.parametrize("case, reason", [
    ("unparsable", "cannot parse game string"),
    ("unknown", "unknown game 'no_such_game'"),
    ("bad_parameter", "ranks must be"),
    ("sampled_chance", "chance-not-enumerable"),
    ("missing_file", "missing.efg"),
    ("malformed_efg", "bad.efg:5:1"),
    ("imperfect_recall", "perfect recall"),
    ("memory_budget", "memory budget"),
])
def test_inspect_errors_are_one_line(results, case, reason):
    line = one_line_error(results[case])
    assert reason in line


def test_imperfect_recall_names_the_information_set(results):
    line = one_line_error(results["imperfect_recall"])
    assert "information set" in line and "('p', 0, 2)" in line
