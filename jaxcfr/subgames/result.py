"""What re-solving returns: :class:`ResolveResult` (of a history tree or a public tree).

:func:`jaxcfr.subgames.resolve_subgames` returns it for either representation
(:mod:`jaxcfr.subgames.solving`, :mod:`jaxcfr.subgames.public`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxcfr._util.serialize import jsonable
from jaxcfr.profiles.profile import Profile
from jaxcfr.tensors import LoweredGame

__all__ = ["ResolveResult"]


@dataclasses.dataclass(repr=False)
class ResolveResult:
    """What :func:`resolve_subgames` returns.

    Attributes:
      profile: the composed profile of the full game (saved like any other).
      table: its ``[I, A]`` strategy table of ``lowered``; ``blueprint_table`` the blueprint's.
      lowered: the full game, lowered.
      subgames: one dict per subgame game: ``path`` (of the public state), ``roots``,
        ``player`` (the re-solver; ``None``: every player), ``gadget``, ``nodes``,
        ``infosets``, ``nash_conv`` (of the re-solved gadget game), ``mass`` (``Z``),
        ``stack`` (which compiled run solved it).
      skipped: ``(path, player, why)`` of each re-solve left out (nothing to re-solve).
      bound: the most the composed profile's exploitability can exceed the blueprint's
        (``sum of Z * NashConv / 2`` over the gadget games), where the gadgets guarantee it
        (safe, not depth-limited, not nested); else ``None``.
      metrics / blueprint_metrics: :func:`jaxcfr.evaluate` of the composed profile and of
        the blueprint in the full game (JSON values), when ``evaluate=True``.
      seconds: ``values`` (counterfactual values), ``build``, ``lower``, ``solve`` (compile
        included), ``compile``, ``compose``, ``evaluate``, ``total``.
      stacks: per compiled run: members, nodes of the stack, seconds, compile seconds.
    """
    profile: Profile
    table: np.ndarray
    blueprint_table: np.ndarray
    lowered: LoweredGame
    subgames: list[dict[str, Any]]
    skipped: list[tuple]
    bound: float | None
    metrics: dict[str, Any] | None
    blueprint_metrics: dict[str, Any] | None
    seconds: dict[str, float]
    stacks: list[dict[str, Any]]

    def __repr__(self) -> str:
        m = self.metrics
        shown = "" if m is None else (
            f", {m['metric_name']} {self.blueprint_metrics['metric']:.4g} -> {m['metric']:.4g}")
        return (f"ResolveResult({len(self.subgames)} subgame games in {len(self.stacks)} "
                f"compiled runs{shown})")

    def report(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``jaxcfr resolve --json`` prints)."""
        return jsonable({"subgames": self.subgames, "skipped": [list(s) for s in self.skipped],
                         "bound": self.bound, "metrics": self.metrics,
                         "blueprint_metrics": self.blueprint_metrics, "seconds": self.seconds,
                         "stacks": self.stacks})
