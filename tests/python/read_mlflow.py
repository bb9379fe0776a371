"""Reads every run of a tracking URI back with MLflow's own client (MlflowClient) and prints them
as JSON: experiment name, run id, name, status, tags, params and each metric's history as
[step, value] pairs in logged order.

Used by tests/e2e/mlflow_test.cpp: `read_mlflow.py <tracking uri>`. A file store needs
MLFLOW_ALLOW_FILE_STORE=true with MLflow 3.7 and later (the test sets it).
"""
import json
import math
import sys

from mlflow.tracking import MlflowClient


def number(value):
    return str(value) if math.isnan(value) or math.isinf(value) else value


def main(uri):
    client = MlflowClient(tracking_uri=uri)
    runs = []
    for experiment in client.search_experiments():
        for run in client.search_runs([experiment.experiment_id]):
            metrics = {}
            for key in run.data.metrics:
                history = client.get_metric_history(run.info.run_id, key)
                metrics[key] = [[m.step, number(m.value)] for m in history]
            runs.append({
                "experiment": experiment.name,
                "run_id": run.info.run_id,
                "run_name": run.info.run_name,
                "status": run.info.status,
                "tags": dict(run.data.tags),
                "params": dict(run.data.params),
                "metrics": metrics,
            })
    print(json.dumps(runs, indent=1, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: read_mlflow.py <tracking uri>")
    main(sys.argv[1])
