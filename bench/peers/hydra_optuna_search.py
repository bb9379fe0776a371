"""The peer of bench/search_bench.py: a Hydra 1.3 app swept by Hydra's Optuna sweeper.

Each trial runs `trainer fit` with the trial's sampled overrides (so the training is the same as
in trainer's own sweeps and only the search differs), reads the last val/acc of its metrics.csv,
writes trial.json beside it and returns the value to Optuna. With trainer_bin empty a trial trains
nothing and returns a number made from its parameters, so that a sweep times the sweeper alone.

python bench/peers/hydra_optuna_search.py -m trainer_bin=/abs/trainer hydra.sweeper.n_trials=50 \
    hydra.sweeper.sampler.seed=1 'optimizer.lr=tag(log, interval(1e-5, 1e-1))' ...
"""
import csv
import json
import math
import os
import subprocess

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

SEARCHED = ("optimizer.", "model.")


def last_val_acc(metrics: str):
    epochs, value = 0, None
    with open(metrics, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("val/acc"):
                epochs += 1
                value = float(row["val/acc"])
    return value, epochs


@hydra.main(version_base="1.3", config_path="hydra_optuna_conf", config_name="search")
def main(cfg: DictConfig) -> float:
    hc = HydraConfig.get()
    params = [o for o in hc.overrides.task if o.startswith(SEARCHED)]
    if not cfg.trainer_bin:
        lr = float(cfg.optimizer.lr)
        return -abs(math.log10(lr) + 3.0) - float(cfg.model.dropout)
    run_dir = os.path.join(hc.runtime.output_dir, "run")
    argv = [cfg.trainer_bin, "fit", *params, *cfg.fixed, f"hydra.run.dir={run_dir}"]
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"trainer fit failed ({proc.returncode}): {proc.stderr[-2000:]}")
    value, epochs = last_val_acc(os.path.join(run_dir, "metrics.csv"))
    with open(os.path.join(hc.runtime.output_dir, "trial.json"), "w") as f:
        json.dump({"params": params, "value": value, "epochs": epochs}, f)
    return value


if __name__ == "__main__":
    main()
