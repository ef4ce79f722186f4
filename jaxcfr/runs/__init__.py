"""Training runs from config files: configs, run directories, checkpoints, progress, plots.

Layer 8: may import the layers below (``_util`` up to ``api``).

Example::

    >>> from jaxcfr.runs import load_config, train
    >>> config = load_config("configs/leduc.toml", overrides=["solver.iterations=500"])
    >>> result = train(config, out_dir="runs/leduc-demo")
    >>> result.final["exploitability"]
"""

from jaxcfr.runs.checkpoint import CheckpointCorruptError, CheckpointError
from jaxcfr.runs.config import (Config, ConfigError, GameConfig, RunConfig, SolverConfig,
                                config_from_dict, load_config, to_toml)
from jaxcfr.runs.rundir import RunDir
from jaxcfr.runs.train import TrainResult, train

__all__ = ["Config", "ConfigError", "GameConfig", "RunConfig", "SolverConfig", "config_from_dict",
           "load_config", "to_toml", "CheckpointError", "CheckpointCorruptError",
           "RunDir", "TrainResult", "train"]
