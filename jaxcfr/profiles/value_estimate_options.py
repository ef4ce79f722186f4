"""The options of :mod:`jaxcfr.profiles.value_estimates` that ``jaxcfr estimate`` checks and
shows before anything heavy is imported (no JAX here)."""

from jaxcfr._util import arguments

__all__ = ["METHODS", "DEFAULT_TRAIN_SAMPLES", "DEFAULT_SAMPLES", "MAX_NODES", "check_options"]

#: How each draw is valued: ``auto`` picks ``exact`` when one probe draw walks in
#: ``max_nodes`` states, else ``trajectories``.
METHODS = ("auto", "exact", "trajectories")
#: Draws the best responses are fitted on by default: many more than a game's
#: information sets, or the responses fit the draws rather than the game (on
#: ``sampled_dice_poker``, 1,006 rows, 2,000 draws give responses that lose on fresh draws).
DEFAULT_TRAIN_SAMPLES = 20_000
#: Held-out draws by default.
DEFAULT_SAMPLES = 1000
#: States one draw's exact walk may take before ``auto`` falls back to trajectories.
MAX_NODES = 100_000


def check_options(samples, seed, confidence, method, max_nodes=MAX_NODES, spell=str
                  ) -> tuple[int, int, float]:
    """``(samples, seed, confidence)`` checked (ArgumentError, a ValueError, naming each
    argument as ``spell(name)`` spells it: ``--samples`` on the command line)."""
    samples = arguments.positive_int(spell("samples"), samples)
    if samples < 2:
        raise arguments.ArgumentError(f"{spell('samples')} must be at least 2 (an interval "
                                      f"needs two draws), got {samples}")
    confidence = arguments.finite_float(spell("confidence"), confidence)
    if not 0 < confidence < 1:
        raise arguments.ArgumentError(f"{spell('confidence')} must be in (0, 1), got "
                                      f"{confidence!r}")
    arguments.one_of(spell("method"), method, METHODS)
    arguments.positive_int(spell("max_nodes"), max_nodes)
    return samples, arguments.seed(spell("seed"), seed), confidence
