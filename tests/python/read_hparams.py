"""Reads a log directory with TensorBoard's own HParams plugin, as its dashboard does, and prints
what the dashboard would show as JSON: the experiment (hparams with their domains, metrics) and
every session group (its hparams, its sessions with their status, and the metric values).

Used by tests/e2e/tensorboard_hparams_test.cpp: `read_hparams.py <logdir>`.
"""
import json
import sys

from google.protobuf import json_format
from tensorboard import context
from tensorboard.backend.event_processing import data_provider
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.plugins import base_plugin
from tensorboard.plugins.hparams import api_pb2
from tensorboard.plugins.hparams import backend_context
from tensorboard.plugins.hparams import get_experiment
from tensorboard.plugins.hparams import list_session_groups


def main(logdir):
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, logdir)
    tb_context = base_plugin.TBContext(logdir=logdir, multiplexer=multiplexer, data_provider=provider)
    backend = backend_context.Context(tb_context)
    ctx = context.RequestContext()
    experiment = get_experiment.Handler(
        ctx, backend, "", api_pb2.GetExperimentRequest(include_metrics=True)).run()
    request = api_pb2.ListSessionGroupsRequest(
        start_index=0, slice_size=10000, include_metrics=True,
        allowed_statuses=[api_pb2.STATUS_UNKNOWN, api_pb2.STATUS_SUCCESS, api_pb2.STATUS_FAILURE,
                          api_pb2.STATUS_RUNNING])
    for info in experiment.hparam_infos:
        request.col_params.add(hparam=info.name)
    for info in experiment.metric_infos:
        request.col_params.add(metric=info.name)
    groups = list_session_groups.Handler(ctx, backend, "", request).run()
    print(json.dumps({
        "experiment": json_format.MessageToDict(experiment),
        "session_groups": json_format.MessageToDict(groups),
    }, indent=1, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: read_hparams.py <log directory>")
    main(sys.argv[1])
