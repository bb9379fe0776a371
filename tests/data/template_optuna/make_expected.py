"""Writes expected/NNN.space: the search space that real Hydra's Optuna sweeper plans for each
command line of cases.txt on lightning-hydra-template's tree (configs/). Not run by the tests;
scripts/hydra_goldens.sh runs it with hydra-core 1.3.2, hydra-optuna-sweeper 1.2.0, optuna 2.10.1
and hydra-colorlog 1.2.0 (the template's hydra/default.yaml selects colorlog).

    python tests/data/template_optuna/make_expected.py

Each case is a real multirun of a Hydra app over the tree (`-m`, as the template's hparams_search
sets hydra.mode: MULTIRUN): Hydra composes the config, the Optuna sweeper reads hydra.sweeper.params
and the command line, makes its distributions and drops the keys given plain values. The sweep
stops when it creates its study, before any trial; the distributions it would create the study
with are written one line a parameter in trainer's `--cfg` form (tests/e2e/template_optuna_test.cpp
compares them with trainer's):
    key: float in [low, high][, log][, step q] | int in [low, high][, log][, step s] | choice of a b c
Numbers as Python prints them; a choice as the text Hydra's sweeper puts into the trial's override
(str of the value: a boolean is True or False).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

APP = r'''
import sys
import hydra
import optuna
from hydra_plugins.hydra_optuna_sweeper import _impl

out_path = sys.argv.pop(1)
planned = {}
real_create_params = _impl.create_params_from_overrides


def create_params(arguments):
    space, fixed = real_create_params(arguments)
    planned["space"] = space  # the sweeper drops the fixed keys from this dict before create_study
    return space, fixed


def text(v):
    return repr(v) if isinstance(v, float) else str(v)


def describe(key, d):
    D = optuna.distributions
    if isinstance(d, D.CategoricalDistribution):
        return f"{key}: choice of " + " ".join(text(c) for c in d.choices)
    if isinstance(d, (D.IntUniformDistribution, D.IntLogUniformDistribution)):
        line = f"{key}: int in [{d.low}, {d.high}]"
        if isinstance(d, D.IntLogUniformDistribution):
            line += ", log"
        step = getattr(d, "step", 1)
        return line + (f", step {step}" if step != 1 else "")
    if isinstance(d, D.DiscreteUniformDistribution):
        return f"{key}: float in [{text(d.low)}, {text(d.high)}], step {text(d.q)}"
    line = f"{key}: float in [{text(d.low)}, {text(d.high)}]"
    return line + (", log" if isinstance(d, D.LogUniformDistribution) else "")


def create_study(*args, **kwargs):
    with open(out_path, "w") as f:
        for key, d in planned["space"].items():
            f.write(describe(key, d) + "\n")
    raise SystemExit(0)


_impl.create_params_from_overrides = create_params
optuna.create_study = create_study


@hydra.main(version_base="1.3", config_path=None, config_name="train")
def main(cfg):
    raise RuntimeError("no trial should run")


main()
'''


def main() -> int:
    python = sys.executable
    expected = os.path.join(HERE, "expected")
    os.makedirs(expected, exist_ok=True)
    for name in os.listdir(expected):
        if name.endswith(".space"):
            os.remove(os.path.join(expected, name))
    env = dict(os.environ, PROJECT_ROOT="/tmp/template-project")
    n, failed = 0, 0
    with open(os.path.join(HERE, "cases.txt")) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    for line in lines:
        args = [w.replace("␣", " ") for w in line.split(" ")]
        out = os.path.join(expected, f"{n:03d}.space")
        argv = [python, "-c", APP, out, "--config-path", os.path.join(HERE, "configs"), "--config-name", "train",
                "-m", *args, "hydra.sweep.dir=/tmp/template-project/unused"]
        proc = subprocess.run(argv, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            print(f"case {n} ({line}) failed: {proc.stderr[-1500:]}", file=sys.stderr)
            failed += 1
        n += 1
    print(f"template_optuna: {n} cases, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
