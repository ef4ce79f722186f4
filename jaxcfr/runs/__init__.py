"""Training runs from config files: configs, run directories, checkpoints, progress, plots.

Layer 8: may import the layers below (``_util`` up to ``api``).

Example::

    >>> from jaxcfr.runs import load_config, train
    >>> config = load_config("configs/leduc.toml", overrides=["solver.iterations=500"])
    >>> result = train(config, out_dir="runs/leduc-demo")
    >>> result.final["exploitability"]
"""

from jaxcfr._util.lazy import lazy_exports

#: Each public name -> its module, imported when the name is first asked for (so that the
#: JAX-free modules, :mod:`jaxcfr.runs.schema` and :mod:`jaxcfr.runs.compare`'s readers,
#: import nothing heavy).
_WHERE = {"CheckpointCorruptError": "checkpoint", "CheckpointError": "checkpoint",
          "Config": "config", "ConfigError": "schema", "GameConfig": "config",
          "RunConfig": "config", "SolverConfig": "config", "config_from_dict": "config",
          "load_config": "config", "to_toml": "config", "RunDir": "rundir",
          "TrainResult": "train", "train": "train"}

__all__ = ["Config", "ConfigError", "GameConfig", "RunConfig", "SolverConfig", "config_from_dict",
           "load_config", "to_toml", "CheckpointError", "CheckpointCorruptError",
           "RunDir", "TrainResult", "train"]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__, globals())
