"""Checks that a `trainer export` file runs in PyTorch as the model ran in trainer: loads it with
python/trainer_export.py, feeds it the samples that `trainer predict` scored (the Fashion-MNIST test
images normalised by ExportInfo.normalize, or a table's rows encoded by ExportInfo.encode) and
compares every row of predictions.csv: the predicted class and the top-k probabilities (printed
with 6 decimals, so within 2e-6). For a resnet of width 64
it also loads the weights into torchvision's resnet (3x3 stride-1 stem, no max pool), as
docs/evaluation.md says they load, when torchvision is installed.

usage: check_export_in_pytorch.py <export.safetensors> <predictions.csv> <t10k-images-idx3-ubyte.gz | table.csv>
Prints `ok <rows> rows, largest difference <d>` and exits 0, or names the first difference and exits 1.

Used by tests/e2e/export_test.cpp (PYTHONPATH holds python/).
"""
import csv
import gzip
import sys

import numpy
import torch

from trainer_export import load_export


def test_images(path):
    with gzip.open(path) as handle:
        data = handle.read()
    count, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    return torch.from_numpy(numpy.frombuffer(data, numpy.uint8, offset=16).copy()).view(count, 1, rows, cols)


def torchvision_outputs(model, info, inputs):
    """The outputs of torchvision's resnet with trainer's stem, loaded with the export's weights."""
    import torchvision
    from torch import nn
    from safetensors.torch import load_file
    net = getattr(torchvision.models, f"resnet{info.model['depth']}")(num_classes=info.num_classes)
    net.conv1 = nn.Conv2d(info.sample_shape[0], 64, 3, stride=1, padding=1, bias=False)
    net.maxpool = nn.Identity()
    net.load_state_dict(load_file(sys.argv[1]), strict=True)
    with torch.no_grad():
        return net.to(next(model.parameters()).dtype).eval()(inputs)


def main(export_path, predictions_path, samples_path):
    model, info = load_export(export_path)
    rows = list(csv.DictReader(open(predictions_path, newline="")))
    if not rows:
        print("predictions.csv has no rows")
        return 1
    dtype = next(model.parameters()).dtype
    samples = [int(row["sample"]) for row in rows]
    if samples_path.endswith(".csv"):
        table = list(csv.DictReader(open(samples_path, newline="")))
        inputs = info.encode([table[i] for i in samples]).to(dtype)
    else:
        inputs = info.normalize(test_images(samples_path)[samples]).to(dtype)
    with torch.no_grad():
        outputs = model(inputs)
    probabilities = outputs.double().softmax(1)
    largest = 0.0
    for i, row in enumerate(rows):
        predicted = info.class_names[int(probabilities[i].argmax())]
        if predicted != row["prediction"]:
            print(f"row {i}: PyTorch predicts {predicted!r}, trainer predicted {row['prediction']!r}")
            return 1
        for k in range(1, len(info.class_names) + 1):
            if f"top{k}" not in row:
                break
            label = info.class_names.index(row[f"top{k}"])
            difference = abs(float(probabilities[i, label]) - float(row[f"top{k}_probability"]))
            largest = max(largest, difference)
            if difference > 2e-6:
                print(f"row {i} top{k} ({row[f'top{k}']}): PyTorch {float(probabilities[i, label]):.7f}, "
                      f"trainer {row[f'top{k}_probability']}")
                return 1
    if info.model.get("name") == "resnet" and info.model.get("width") == 64:
        try:
            import torchvision  # noqa: F401
        except ImportError:
            print("torchvision is not installed: the torchvision resnet was not checked", file=sys.stderr)
        else:
            difference = float((torchvision_outputs(model, info, inputs) - outputs).abs().max())
            if difference > 1e-5:
                print(f"torchvision's resnet gives outputs {difference} away from trainer_export's")
                return 1
            print("torchvision's resnet loads the export and agrees")
    print(f"ok {len(rows)} rows, largest difference {largest:.2e}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: check_export_in_pytorch.py <export.safetensors> <predictions.csv> <t10k-images-idx3-ubyte.gz | table.csv>")
    sys.exit(main(*sys.argv[1:]))
