"""The chance options (``--chance``, ``--draws``, ``solver.chance``, ``solver.draws``) as
the command line checks them before anything heavy is imported (no JAX here;
:mod:`jaxcfr.engine.sampled_chance` uses them)."""

__all__ = ["CHANCE_CHOICES", "DEFAULT_DRAWS"]

#: ``chance`` choices: ``auto`` lowers exactly where chance can be enumerated and samples
#: where it cannot; ``exact`` always lowers; ``sampled`` always samples (and lowers the
#: full game too, for exact metrics, where it can).
CHANCE_CHOICES = ("auto", "exact", "sampled")
#: Chance samples per iteration by default.
DEFAULT_DRAWS = 16
