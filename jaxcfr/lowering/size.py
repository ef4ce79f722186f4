"""How big a game is before it is walked: the game's own count, or random probes.

:func:`probe_size` asks the game first: a game that knows its node count cheaply
implements ``tree_size()`` (``.efg`` games do) and that answer is exact (as is its
``infoset_count()``, the rows, when it says it: the memory budget counts them before the
walk). Otherwise
it runs Knuth's estimator (Knuth 1975, "Estimating the efficiency of backtrack
programs"): a probe walks one root-to-leaf path choosing children uniformly, and
the sum over the path of the products of the branching factors met is an unbiased
estimate of the node count. The mean of many seeded probes is the estimate, with
its standard error. Probes run on a deep copy of the root, so a game whose clones
share mutable state cannot be disturbed before it is lowered; any error a probe
meets is left to the walk, which reports it with the rule and the history.

Example::

    >>> import jaxcfr
    >>> est = jaxcfr.probe_size(jaxcfr.load_game("leduc_poker"))
    >>> 5_000 < est.nodes < 15_000          # the tree has 9,457 nodes
    True
"""

from __future__ import annotations

import copy
import math
import random
from typing import NamedTuple

from jaxcfr.game.contract import check_protocol

__all__ = ["TreeSize", "probe_size", "DEFAULT_PROBES", "MAX_PROBE_STEPS"]

#: Most probes of an estimate.
DEFAULT_PROBES = 4096
#: Probes after which a small tree's estimate stops (see ``SMALL_TREE``).
MIN_PROBES = 256
#: A tree estimated below this many nodes after ``MIN_PROBES`` probes needs no more.
SMALL_TREE = 100_000
#: Probes of a game that counts its own tree and rows (for its widest decision only).
EXACT_PROBES = 64
#: Steps (clone + step) all probes of one estimate may take together.
MAX_PROBE_STEPS = 50_000


class TreeSize(NamedTuple):
    """The size of a game's tree before lowering it."""
    nodes: float              # estimated node count (exact when ``exact``)
    stderr: float             # standard error of ``nodes`` (0 when exact)
    probes: int               # random probes taken (0 when exact)
    max_depth: int            # the deepest probe, in moves (0 when exact)
    max_actions: int          # the most legal actions met at a decision node by the probes
                              # (0 if unknown; a lower bound)
    exact: bool               # the game reported its own size
    rows: int = 0             # information sets the game reported (0: unknown)

    @property
    def low(self) -> float:
        """A cautious lower bound: two standard errors below the estimate (>= 1)."""
        return max(1.0, self.nodes - 2.0 * self.stderr)

    def describe(self) -> str:
        """``"9,457 nodes"`` or ``"about 9,300 nodes (random-probe estimate, ±6%)"``."""
        if self.exact:
            return f"{int(self.nodes):,} nodes"
        rel = 100 * self.stderr / self.nodes if self.nodes else 0.0
        spread = f", ±{rel:.0f}%" if rel >= 0.5 else ", ±<1%"
        return f"about {_round(self.nodes):,} nodes (random-probe estimate{spread})"


def _round(x: float) -> int:
    """Two significant figures (``9,457`` -> ``9,500``)."""
    if x < 100:
        return int(round(x))
    scale = 10 ** (int(math.log10(x)) - 1)
    return int(round(x / scale) * scale)


def probe_size(game, *, probes: int = DEFAULT_PROBES, seed: int = 0,
               max_steps: int = MAX_PROBE_STEPS) -> TreeSize | None:
    """The node count of ``game``'s tree, exact or estimated; ``None`` when it cannot be said.

    ``None`` when a probe meets chance that cannot be enumerated, raises anything, or
    a single probe needs more than ``max_steps`` steps. At most ``probes`` probes and
    ``max_steps`` steps are spent (at least one probe is finished when any is); a tree
    estimated below :data:`SMALL_TREE` nodes after :data:`MIN_PROBES` probes stops there
    (a few milliseconds). Trees whose size hides in rare deep paths (Liar's dice) are
    usually underestimated, by up to a factor of 2 there: the walk checks the budget
    again with the exact count.
    """
    check_protocol(game)
    rows = _told(game, "infoset_count", 1) or 0
    n = _told(game, "tree_size", 1)
    if n is not None:
        # exact; with its rows, a few probes find the widest decision (their slots count)
        probed = _probe(game, EXACT_PROBES, seed, max_steps) if rows else None
        return TreeSize(float(n), 0.0, 0, 0, probed[2] if probed else 0, True, rows)
    probed = _probe(game, probes, seed, max_steps)
    if probed is None:
        return None
    totals, max_depth, max_actions = probed
    k = len(totals)
    mean = math.fsum(totals) / k
    var = math.fsum((t - mean) ** 2 for t in totals) / (k - 1) if k > 1 else mean ** 2
    return TreeSize(mean, math.sqrt(var / k), k, max_depth, max_actions, False, rows)


def _probe(game, probes: int, seed: int, max_steps: int) -> tuple | None:
    """Knuth's probes on a deep copy of ``game``: ``(totals, max_depth, max_actions)``,
    or ``None`` (see :func:`probe_size`)."""
    try:
        base = copy.deepcopy(game)
    except Exception:  # noqa: BLE001 - e.g. a native state: its clone() is a true copy
        base = game.clone()
    rng = random.Random(seed)
    totals: list[float] = []
    steps = max_depth = max_actions = 0
    try:
        for _ in range(probes):
            state = base.clone()
            total = weight = 1.0
            depth = 0
            while not state.is_terminal():
                if state.is_chance():
                    outcomes = state.chance_outcomes()
                    if outcomes is None:
                        return None
                    choices = [a for a, _ in outcomes]
                else:
                    choices = list(state.legal_actions())
                    max_actions = max(max_actions, len(choices))
                if not choices:
                    return None
                weight *= len(choices)
                total += weight
                state.step(rng.choice(choices))
                depth += 1
                steps += 1
                if depth > max_steps:
                    return None
            totals.append(total)
            max_depth = max(max_depth, depth)
            if steps >= max_steps or (len(totals) == MIN_PROBES
                                      and math.fsum(totals) < SMALL_TREE * MIN_PROBES):
                break
    except Exception:  # noqa: BLE001 - the walk reports contract errors with their history
        return None
    return totals, max_depth, max_actions


def _told(game, method: str, least: int) -> int | None:
    """What the game's optional ``method`` (``tree_size``, ``infoset_count``) says, when it
    says an int of at least ``least``; else ``None``."""
    told = getattr(game, method, None)
    if not callable(told):
        return None
    try:
        n = told()
    except Exception:  # noqa: BLE001 - an optional method: fall back to probing
        return None
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= least else None
