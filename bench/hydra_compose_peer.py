"""The in-process Hydra peer for listing a sweep: Hydra's compose API, one compose per job.

python bench/hydra_compose_peer.py /abs/configs 1000 [key]

Composes `config` with `<key>=<i>` for i in 0..N-1 and prints each job config as OmegaConf.to_yaml
does (what `trainer fit -m --cfg job key=range(0,N)` prints per job), separated by `---`. This
skips Hydra's launcher (no job directories, no .hydra files, no process start per batch), so it
is the fairest Python peer for the trainer's listing. Writes the seconds spent in the compose loop
(after `import hydra`) to stderr as `loop_s=<float>`.
"""
import sys
import time

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf


def main() -> None:
    config_dir, count = sys.argv[1], int(sys.argv[2])
    key = sys.argv[3] if len(sys.argv) > 3 else "seed"
    start = time.perf_counter()
    parts = []
    with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
        for i in range(count):
            cfg = compose(config_name="config", overrides=[f"{key}={i}"])
            parts.append(f"# job {i}: {key}={i}\n" + OmegaConf.to_yaml(cfg))
    sys.stdout.write("---\n".join(parts))
    sys.stdout.flush()
    print(f"loop_s={time.perf_counter() - start:.6f}", file=sys.stderr)


if __name__ == "__main__":
    main()
