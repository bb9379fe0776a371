"""Real Hydra 1.3 multirun whose task prints each job's config the way `trainer fit -m --cfg job`
does (`# job N: <overrides>`, the YAML, `---` between jobs), as Hydra's show_cfg would show it.
Used only by make_expected.sh:  python hydra_sweep_app.py --config-path DIR --config-name NAME
[-p PKG] [--resolve] [-m] overrides...   (-p and --resolve are taken out before Hydra sees argv).
Without -m Hydra picks the mode from hydra.mode; when that makes a single run, the task prints
the one config as --cfg job does."""
import atexit
import shutil
import sys
import tempfile

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import Container, DictConfig, OmegaConf

PACKAGE = None
RESOLVE = False


def show(cfg: DictConfig) -> str:
    package = None if PACKAGE == "_global_" else PACKAGE
    ret = cfg if package is None else OmegaConf.select(cfg, package)
    if package is not None and ret is None:
        raise SystemExit(f"package '{package}' not found in config")
    if not isinstance(ret, Container):
        return f"{ret}\n"
    out = f"# @package {package}\n" if package is not None else ""
    if RESOLVE:
        OmegaConf.resolve(ret)
    return out + OmegaConf.to_yaml(ret)


@hydra.main(version_base="1.3", config_path=None, config_name="config")
def main(cfg: DictConfig) -> None:
    hc = HydraConfig.get()
    if hc.mode == RunMode.RUN:
        sys.stdout.write(show(cfg))
        sys.stdout.flush()
        return
    text = "---\n" if hc.job.num > 0 else ""
    text += f"# job {hc.job.num}: {' '.join(hc.overrides.task)}\n" + show(cfg)
    sys.stdout.write(text)
    sys.stdout.flush()


if __name__ == "__main__":
    argv = sys.argv[1:]
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] in ("-p", "--package"):
            PACKAGE = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--resolve":
            RESOLVE = True
        elif argv[i] in ("--cfg", "-c"):
            i += 2  # always job
            continue
        else:
            rest.append(argv[i])
        i += 1
    sweep_dir = tempfile.mkdtemp(prefix="hydra_sweep_")
    atexit.register(shutil.rmtree, sweep_dir, True)
    # hydra.mode=RUN on the command line makes it a single run, which writes into hydra.run.dir:
    # the temporary directory, not outputs/ beside the trees. Only then: in a multirun the config's
    # own hydra.run.dir is a value the jobs may print (${hydra:run.dir}).
    single_run = any(a.lstrip("+").startswith("hydra.mode=") and a.split("=", 1)[1] == "RUN" for a in rest)
    sys.argv = [sys.argv[0]] + rest + [
        f"hydra.sweep.dir={sweep_dir}",
        *([f"hydra.run.dir={sweep_dir}/run"] if single_run else []),
        "hydra/job_logging=disabled",
        "hydra/hydra_logging=disabled",
    ]
    main()
