"""Regenerates hydra_app_unresolved.yaml and hydra_app_resolved.yaml from REAL Hydra 1.3.2.

    python tests/data/interpolation/make_expected.py      (the Python of scripts/hydra_goldens.sh)

Composes app/config.yaml with Hydra's compose API (return_hydra_config=True, job name "myjob",
override model.hidden=128), fills in the runtime fields a real run would (cwd /work, output dir
/out/2024-03-05/07-08-09, job id/num 0, the app's config directory shown as
/tmp/interp/app/conf), pins the `now` resolver to 2024-03-05 07:08:09, and writes the config as
composed (OmegaConf.to_yaml) and resolved (OmegaConf.to_container(cfg, resolve=True)). The fixed
values keep the output free of dates and of where the checkout lives. The tests never run Python.
"""
import datetime
import os
import warnings

warnings.simplefilter("ignore")
from hydra import compose, initialize_config_dir  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import OmegaConf, open_dict  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
APP = os.path.join(HERE, "app")
SHOWN_APP = "/tmp/interp/app/conf"
NOW = datetime.datetime(2024, 3, 5, 7, 8, 9)
OUT = "/out/" + NOW.strftime("%Y-%m-%d/%H-%M-%S")

with initialize_config_dir(config_dir=APP, job_name="myjob", version_base="1.3"):
    cfg = compose("config", overrides=["model.hidden=128"], return_hydra_config=True)
with open_dict(cfg):
    cfg.hydra.runtime.cwd = "/work"
    cfg.hydra.runtime.output_dir = OUT
    cfg.hydra.job.id = "0"
    cfg.hydra.job.num = 0
    for source in cfg.hydra.runtime.config_sources:
        if source.path == APP:
            source.path = SHOWN_APP
# Hydra registers its own `now` when it starts (compose above): this one replaces it.
OmegaConf.register_new_resolver("now", lambda pattern: NOW.strftime(pattern), replace=True, use_cache=True)
OmegaConf.clear_cache(cfg)  # compose already resolved (and cached) hydra.run.dir with the real clock
HydraConfig.instance().set_config(cfg)
with open(os.path.join(HERE, "hydra_app_unresolved.yaml"), "w") as f:
    f.write(OmegaConf.to_yaml(cfg))
with open(os.path.join(HERE, "hydra_app_resolved.yaml"), "w") as f:
    f.write(OmegaConf.to_yaml(OmegaConf.to_container(cfg, resolve=True)))
