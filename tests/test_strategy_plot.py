"""The strategy heat map (issue 33, item 8): ``jaxcfr.strategy_matrix`` picks the information
sets whose keys match a pattern and gives their probabilities (what the picture shows),
``jaxcfr plot PROFILE --strategy PATTERN`` writes it."""

from __future__ import annotations

import numpy as np
import pytest

from jaxcfr.profiles.profile import Profile
from jaxcfr.runs.strategy_plot import strategy_matrix

pytest.importorskip("matplotlib")

# Leduc-style keys: player 0's first moves (two actions), later decisions (three, or two
# where there is nothing to call), player 1's, and a public tree's (hand, history) keys.
ROWS = [
    ((0, "0|Js|"), ("call", "raise"), [0.9, 0.1]),
    ((0, "0|Qh|"), ("call", "raise"), [0.25, 0.75]),
    ((0, "0|Js|cc|Qs|cr"), ("fold", "call", "raise"), [0.5, 0.3, 0.2]),
    ((0, "0|Ks|"), ("call", "raise"), [0.0, 1.0]),
    ((1, "1|Ks|r"), ("fold", "call", "raise"), [0.1, 0.2, 0.7]),
    ((1, "1|Js|c"), ("call", "raise"), [0.6, 0.4]),
    ((0, ("AKs", ("Check", "Bet(60)"))), ("Fold", "Call"), [0.35, 0.65]),
]


def _profile() -> Profile:
    probs = np.zeros((len(ROWS), 3))
    for r, (_, acts, p) in enumerate(ROWS):
        probs[r, :len(acts)] = p
    return Profile([k for k, _, _ in ROWS], [a for _, a, _ in ROWS], probs,
                   game="leduc_poker")


@pytest.mark.parametrize("pattern, kwargs, picked", [
    ("0|??|", {}, [(0, "0|Js|"), (0, "0|Qh|"), (0, "0|Ks|")]),
    ("?|Js|*", {}, [(0, "0|Js|"), (0, "0|Js|cc|Qs|cr"), (1, "1|Js|c")]),
    ("*", {"player": 1}, [(1, "1|Ks|r"), (1, "1|Js|c")]),
    (r"\|K.\|", {"regex": True}, [(0, "0|Ks|"), (1, "1|Ks|r")]),
    ("*Bet(60)*", {}, [(0, ("AKs", ("Check", "Bet(60)")))]),
])
def test_the_matrix_is_the_profiles_probabilities_of_the_matching_rows(pattern, kwargs, picked):
    """The rows whose keys match, in the profile's order; each cell the profile's own
    probability of that action there (by label), NaN where the row lacks the action."""
    profile = _profile()
    m = strategy_matrix(profile, pattern, **kwargs)
    assert list(m.rows) == picked                             # in the profile's order
    assert m.probs.shape == (len(picked), len(m.actions))
    widest = max((profile.actions[profile.row(*k)] for k in picked), key=len)
    assert m.actions[:len(widest)] == widest                  # the widest row's order first
    for i, (player, key) in enumerate(picked):
        policy = profile.policy(player, key)
        assert set(policy) <= set(m.actions)
        for j, action in enumerate(m.actions):
            if action in policy:
                assert m.probs[i, j] == policy[action]
            else:
                assert np.isnan(m.probs[i, j])
    mixed = len({p for p, _ in picked}) > 1
    assert all(label.startswith(f"p{p}: ") == mixed for label, (p, _) in zip(m.labels, picked))


def test_the_figure_draws_the_matrix():
    """The image's cells are the matrix (NaN masked: drawn grey), each value written in its
    cell, a row label per information set."""
    from jaxcfr.runs.strategy_plot import strategy_figure
    m = strategy_matrix(_profile(), "?|*", regex=False)
    fig = strategy_figure(m, title="t")
    ax = fig.axes[0]
    image = ax.get_images()[0].get_array()
    np.testing.assert_array_equal(np.ma.getmaskarray(image), np.isnan(m.probs))
    np.testing.assert_array_equal(image.filled(-1), np.where(np.isnan(m.probs), -1, m.probs))
    written = sorted(t.get_text() for t in ax.texts)
    assert written == sorted(f"{p:.2f}" for p in m.probs[np.isfinite(m.probs)])
    assert [t.get_text() for t in ax.get_yticklabels()] == list(m.labels)


def test_long_keys_are_wrapped_and_kept_inside_the_figure():
    from jaxcfr.runs.strategy_plot import KEY_WIDTH, strategy_figure
    history = tuple(f"Bet({60 * i})" for i in range(1, 12))
    keys = [(0, ("AKs", history)), (0, ("QQ", history)), (0, "x" * 150)]
    profile = Profile(keys, [("Fold", "Call")] * 3, np.full((3, 2), 0.5))
    m = strategy_matrix(profile, "*")
    assert min(map(len, m.labels)) > 100
    fig = strategy_figure(m)
    fig.canvas.draw()
    labels = fig.axes[0].get_yticklabels()
    assert all(len(line) <= KEY_WIDTH for t in labels for line in t.get_text().split("\n"))
    renderer = fig.canvas.get_renderer()
    for t in labels:
        box = t.get_window_extent(renderer)
        assert box.x0 >= fig.bbox.x0 and box.y0 >= fig.bbox.y0 and box.y1 <= fig.bbox.y1


@pytest.mark.parametrize("pattern, kwargs, words", [
    ("2|*", {}, "no information set of the profile matches the pattern (a glob: * any text, "
                "? one character) '2|*'; its 7 keys look like '0|Js|', '0|Qh|'"),
    ("0|*", {"player": 1}, "no information set of player 1 of the profile matches"),
    ("*", {"player": 2}, "the profile has no information set of player 2 (its players: [0, 1])"),
    ("(", {"regex": True}, "'(' is not a regular expression"),
    ("*", {"max_rows": 5}, "7 information sets match '*': more than 5 rows"),
    ("", {}, "the pattern must be a non-empty string"),
])
def test_a_pattern_that_selects_nothing_drawable_is_a_clear_error(pattern, kwargs, words):
    with pytest.raises(ValueError) as info:
        strategy_matrix(_profile(), pattern, **kwargs)
    assert words in str(info.value)


def test_the_command_writes_the_heat_map(tmp_path, capsys):
    """``jaxcfr plot PROFILE --strategy`` and ``jaxcfr plot RUN_DIR --strategy`` (its
    profile.npz) write a PNG; the API's plot_strategy draws the same matrix."""
    import jaxcfr
    from jaxcfr.cli.app import main
    _profile().save(tmp_path / "p.npz")
    run = tmp_path / "run"
    _profile().save(run / "profile")
    out = tmp_path / "heat.png"
    assert main(["plot", str(tmp_path / "p.npz"), "--strategy", "0|??|", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {out} (3 information sets x 2 actions)" in capsys.readouterr().out
    out2 = tmp_path / "run.png"
    assert main(["plot", str(run), "--strategy", "*", "--player", "1", "--out", str(out2)]) == 0
    assert out2.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    drawn = jaxcfr.plot_strategy(Profile.load(run / "profile.npz"), "*", tmp_path / "api.png",
                                 player=1)
    np.testing.assert_array_equal(drawn.probs, strategy_matrix(_profile(), "*", player=1).probs)
    assert (tmp_path / "api.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
