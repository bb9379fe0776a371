"""Optuna's TPESampler on the test functions of tests/launch/tpe_quality_test.cpp.

    python tpe_reference.py TRIALS SEEDS MULTIVARIATE(0|1) FUNCTION...

Prints one line per function: its name and the best value each seed reached after TRIALS
trials, seeds 0..SEEDS-1. The functions and spaces are the test's, defined the same way there.
"""
import math
import sys

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)

HARTMANN_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
              [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
HARTMANN_P = [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
              [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
              [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
              [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]]
HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]


def sphere(trial):
    return sum(trial.suggest_float(f"x{i}", -5.12, 5.12) ** 2 for i in range(5))


def branin(trial):
    x1 = trial.suggest_float("x1", -5, 10)
    x2 = trial.suggest_float("x2", 0, 15)
    b, c = 5.1 / (4 * math.pi ** 2), 5 / math.pi
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10


def hartmann6(trial):
    x = [trial.suggest_float(f"x{i}", 0, 1) for i in range(6)]
    total = 0.0
    for a, p, alpha in zip(HARTMANN_A, HARTMANN_P, HARTMANN_ALPHA):
        total += alpha * math.exp(-sum(a[j] * (x[j] - p[j]) ** 2 for j in range(6)))
    return -total


def mixed(trial):
    c = trial.suggest_categorical("c", [0, 1, 2, 3])
    x = trial.suggest_float("x", -5, 5)
    n = trial.suggest_int("n", 1, 20)
    lr = trial.suggest_float("lr", 1e-5, 1, log=True)
    return [1.0, 0.0, 2.0, 0.5][c] + (x - 1) ** 2 + ((n - 7) / 5) ** 2 + (math.log10(lr) + 3) ** 2


FUNCTIONS = {"sphere": sphere, "branin": branin, "hartmann6": hartmann6, "mixed": mixed}


def main():
    trials, seeds, multivariate = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    for name in sys.argv[4:]:
        bests = []
        for seed in range(seeds):
            sampler = optuna.samplers.TPESampler(seed=seed, multivariate=multivariate)
            study = optuna.create_study(sampler=sampler)
            study.optimize(FUNCTIONS[name], n_trials=trials)
            bests.append(study.best_value)
        print(name, " ".join(repr(b) for b in bests), flush=True)


if __name__ == "__main__":
    main()
