"""The peer for the config benchmarks: a minimal Hydra 1.3 app over the same configs/ tree.

python bench/hydra_app.py --config-path /abs/configs --cfg job model=cnn
"""
import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path=None, config_name="config")
def main(cfg: DictConfig) -> None:
    pass


if __name__ == "__main__":
    main()
