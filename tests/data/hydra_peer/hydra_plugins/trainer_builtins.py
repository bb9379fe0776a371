"""What makes real Hydra 1.3.2 the peer of trainer's built-in launchers and sweepers, for the
tests' expected outputs only (make_expected.sh puts this directory on PYTHONPATH).

trainer builds in launchers, sweepers and colorlog's logging configs that a Hydra user installs as
plugins. Hydra lists
installed plugins by class name under their kind (`--info plugins`, `--info all`) and offers
their configs as options of hydra/launcher and hydra/sweeper (`--hydra-help`, completion). These
stand-ins carry trainer's names so real Hydra prints what trainer prints; they run nothing.
"""
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.plugins.launcher import Launcher
from hydra.plugins.sweeper import Sweeper

# trainer's options beyond Hydra's own `basic` (src/config/builtin_hydra_configs.cpp).
LAUNCHERS = ["joblib", "local", "slurm", "submitit_slurm"]
SWEEPERS = ["asha", "optuna", "random"]
SAMPLERS = ["random", "tpe"]  # hydra/sweeper/sampler, the optuna sweeper's group

for _name in LAUNCHERS:
    ConfigStore.instance().store(group="hydra/launcher", name=_name, node={}, provider="trainer")
for _name in SWEEPERS:
    ConfigStore.instance().store(group="hydra/sweeper", name=_name, node={}, provider="trainer")
for _name in SAMPLERS:
    ConfigStore.instance().store(group="hydra/sweeper/sampler", name=_name, node={}, provider="trainer")

# hydra-colorlog 1.2.0's logging configs, which trainer builds in (lightning-hydra-template selects
# them): the same values, so that `--cfg hydra` prints what the plugin would give.
_COLORLOG_CONSOLE = {"class": "logging.StreamHandler", "formatter": "colorlog", "stream": "ext://sys.stdout"}
ConfigStore.instance().store(group="hydra/hydra_logging", name="colorlog", provider="trainer", node={
    "version": 1,
    "formatters": {"colorlog": {"()": "colorlog.ColoredFormatter",
                                "format": "[%(cyan)s%(asctime)s%(reset)s][%(purple)sHYDRA%(reset)s] %(message)s"}},
    "handlers": {"console": _COLORLOG_CONSOLE},
    "root": {"level": "INFO", "handlers": ["console"]},
    "disable_existing_loggers": False,
})
ConfigStore.instance().store(group="hydra/job_logging", name="colorlog", provider="trainer", node={
    "version": 1,
    "formatters": {
        "simple": {"format": "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"},
        "colorlog": {"()": "colorlog.ColoredFormatter",
                     "format": "[%(cyan)s%(asctime)s%(reset)s][%(blue)s%(name)s%(reset)s]"
                               "[%(log_color)s%(levelname)s%(reset)s] - %(message)s",
                     "log_colors": {"DEBUG": "purple", "INFO": "green", "WARNING": "yellow", "ERROR": "red",
                                    "CRITICAL": "red"}}},
    "handlers": {"console": _COLORLOG_CONSOLE,
                 "file": {"class": "logging.FileHandler", "formatter": "simple", "filename": "${hydra.job.name}.log"}},
    "root": {"level": "INFO", "handlers": ["console", "file"]},
    "disable_existing_loggers": False,
})


def _refuse(self: Any, *args: Any, **kwargs: Any) -> None:
    raise NotImplementedError("a stand-in for one of trainer's built-ins: it is only listed")


# Made with type() so that no shared base class is itself listed as a plugin.
JoblibLauncher = type("JoblibLauncher", (Launcher,), {"setup": _refuse, "launch": _refuse})
LocalLauncher = type("LocalLauncher", (Launcher,), {"setup": _refuse, "launch": _refuse})
SlurmLauncher = type("SlurmLauncher", (Launcher,), {"setup": _refuse, "launch": _refuse})
AshaSweeper = type("AshaSweeper", (Sweeper,), {"setup": _refuse, "sweep": _refuse})
OptunaSweeper = type("OptunaSweeper", (Sweeper,), {"setup": _refuse, "sweep": _refuse})
RandomSweeper = type("RandomSweeper", (Sweeper,), {"setup": _refuse, "sweep": _refuse})
