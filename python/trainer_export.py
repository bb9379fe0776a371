"""Load a `trainer export` file (.safetensors) as a PyTorch module.

    from trainer_export import load_export
    model, info = load_export("runs/cnn/eval/export_2026-11-25_17-16-40/last.safetensors")
    with torch.no_grad():
        probabilities = model(info.normalize(images)).softmax(1)   # images: uint8 [N, C, H, W]

The built-in models (mlp, cnn, resnet) are rebuilt from the model section the export carries, in
the layout trainer's C++ modules have (the same tensor names, so every weight loads by name), and
a TorchScript model (`model=torchscript`) is its own `.pt` file loaded again. The weights are
loaded strictly (every tensor present, the same shapes, nothing left over) in the dtype they were
saved in, and the model is returned in eval mode. Needs torch, safetensors and numpy.

`info` carries what the export says about the run: the class names in label order, one sample's
shape, the epoch and step, the data section and the model section (docs/evaluation.md, "Use the
weights in PyTorch"). `info.normalize` turns uint8 pixels into the model's inputs as trainer's
loader does: divided by 255, then `data.normalize`'s mean and std per channel; `info.encode`
turns table rows into inputs as `data=csv` does.
"""
import json
import math
import os
from dataclasses import dataclass, field

import numpy
import torch
from safetensors import safe_open
from torch import nn

__all__ = ["ExportInfo", "build_model", "load_export"]


@dataclass
class ExportInfo:
    """What the export's metadata says about the run that trained the weights."""

    model: dict
    data: dict
    sample_shape: list
    num_classes: int
    class_names: list = field(default_factory=list)
    epoch: int = 0
    global_step: int = 0
    data_encoding: dict = None  # data=csv: how a row becomes an input (docs/data.md)

    def normalize(self, images):
        """uint8 pixels [N, C, H, W] (or [C, H, W]) as trainer's loader feeds them to the model."""
        if images.dtype != torch.uint8:
            raise TypeError(f"normalize takes uint8 pixels, got {images.dtype}: trainer divides uint8 by 255 "
                            "and passes other dtypes as they are")
        mean, std = _normalize_values(self.data)
        channels = images.shape[-3] if images.dim() >= 3 else 1
        x = images.float() / 255.0
        if len(mean) not in (1, channels):
            raise ValueError(f"data.normalize has {len(mean)} means for {channels}-channel images")
        shape = (-1, 1, 1)
        return (x - torch.tensor(mean).view(shape)) / torch.tensor(std).view(shape)


    def encode(self, rows):
        """Table rows (dicts of column -> cell text, as csv.DictReader gives them, or a pandas
        DataFrame) as the model's inputs [N, F], encoded as trainer encoded the training table
        (data=csv): numbers standardised with the training split's mean and std, categories one-hot.
        A regression model's output o is the value o * info.data_encoding["target_std"] + its
        "target_mean"."""
        if not self.data_encoding:
            raise ValueError("the export holds no table encoding: encode() is for models trained with data=csv")
        if hasattr(rows, "to_dict"):
            rows = rows.astype(str).to_dict("records")
        rows = list(rows)
        features = self.data_encoding["features"]
        width = sum(len(f["categories"]) if "categories" in f else 1 for f in features)
        inputs = torch.zeros(len(rows), width, dtype=torch.float32)
        offset = 0
        for feature in features:
            column = feature["column"]
            categories = feature.get("categories")
            if categories is None:
                mean, std = feature.get("mean", 0.0), feature.get("std", 1.0)
                for r, row in enumerate(rows):
                    value = float(numpy.float32(_cell(row, column, r)))  # trainer keeps cells as float32
                    inputs[r, offset] = (value - mean) / std
                offset += 1
                continue
            index = _category_index(categories)
            for r, row in enumerate(rows):
                cell = _cell(row, column, r).strip()
                at = index(cell)
                if at is None:
                    raise ValueError(f"row {r}, column {column!r}: category {cell!r} is not one of the "
                                     f"{len(categories)} the model was trained on ({', '.join(categories)})")
                inputs[r, offset + at] = 1.0
            offset += len(categories)
        return inputs


def _cell(row, column, number):
    if column not in row:
        raise KeyError(f"row {number} has no column {column!r}, an input of the model")
    return str(row[column])


def _category_index(categories):
    """Where a cell lies among the categories: by value when they are all numbers (`1.0` is `1`)."""
    try:
        by_value = {float(c): i for i, c in enumerate(categories)}
    except ValueError:
        by_text = {c: i for i, c in enumerate(categories)}
        return by_text.get

    def index(cell):
        try:
            return by_value.get(float(cell))
        except ValueError:
            return None
    return index


def _normalize_values(data):
    normalize = (data or {}).get("normalize")
    if not normalize:
        return [0.0], [1.0]
    as_list = lambda v: [float(x) for x in v] if isinstance(v, list) else [float(v)]
    return as_list(normalize["mean"]), as_list(normalize["std"])


class Mlp(nn.Module):
    """trainer's mlp: Flatten, then Linear + ReLU (+ Dropout) per hidden size, then the output Linear."""

    def __init__(self, input_size, hidden_sizes, num_classes, dropout):
        super().__init__()
        layers = [nn.Flatten()]
        width = input_size
        for hidden in hidden_sizes:
            layers += [nn.Linear(width, hidden), nn.ReLU(inplace=True)]
            if dropout > 0:
                layers.append(nn.Dropout(dropout))
            width = hidden
        layers.append(nn.Linear(width, num_classes))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class Cnn(nn.Module):
    """trainer's cnn: per entry of `channels` a 3x3 conv (no bias), batch norm, ReLU and 2x2 max pool;
    then Flatten, Linear to `hidden_size`, ReLU (+ Dropout), Linear to the classes."""

    def __init__(self, in_channels, height, width, channels, hidden_size, num_classes, dropout):
        super().__init__()
        features = []
        for out in channels:
            features += [nn.Conv2d(in_channels, out, 3, padding=1, bias=False), nn.BatchNorm2d(out),
                         nn.ReLU(inplace=True), nn.MaxPool2d(2)]
            in_channels, height, width = out, height // 2, width // 2
        classifier = [nn.Flatten(), nn.Linear(in_channels * height * width, hidden_size), nn.ReLU(inplace=True)]
        if dropout > 0:
            classifier.append(nn.Dropout(dropout))
        classifier.append(nn.Linear(hidden_size, num_classes))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(*classifier)

    def forward(self, x):
        return self.classifier(self.features(x))


def _conv3x3(inputs, outputs, stride):
    return nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)


def _downsample(inputs, outputs, stride):
    if stride == 1 and inputs == outputs:
        return None
    return nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride=stride, bias=False), nn.BatchNorm2d(outputs))


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inputs, planes, stride):
        super().__init__()
        self.conv1 = _conv3x3(inputs, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = _conv3x3(planes, planes, 1)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = _downsample(inputs, planes, stride)

    def forward(self, x):
        out = self.bn1(self.conv1(x)).relu_()
        out = self.bn2(self.conv2(out))
        out += x if self.downsample is None else self.downsample(x)
        return out.relu_()


class Bottleneck(nn.Module):
    """torchvision's ResNet v1.5 bottleneck: the stride on the 3x3 conv."""

    expansion = 4

    def __init__(self, inputs, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = _conv3x3(planes, planes, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = _downsample(inputs, planes * 4, stride)

    def forward(self, x):
        out = self.bn1(self.conv1(x)).relu_()
        out = self.bn2(self.conv2(out)).relu_()
        out = self.bn3(self.conv3(out))
        out += x if self.downsample is None else self.downsample(x)
        return out.relu_()


_RESNET_LAYOUTS = {18: (BasicBlock, [2, 2, 2, 2]), 34: (BasicBlock, [3, 4, 6, 3]), 50: (Bottleneck, [3, 4, 6, 3]),
                   101: (Bottleneck, [3, 4, 23, 3]), 152: (Bottleneck, [3, 8, 36, 3])}


class ResNet(nn.Module):
    """trainer's resnet: torchvision's ResNet with a small-image stem (a 3x3 stride-1 conv and no max
    pool) and `width` channels in the first stage (64: torchvision's)."""

    def __init__(self, depth, in_channels, width, num_classes):
        super().__init__()
        if depth not in _RESNET_LAYOUTS:
            raise ValueError(f"resnet has no depth {depth}; trainer builds {sorted(_RESNET_LAYOUTS)}")
        block, counts = _RESNET_LAYOUTS[depth]
        self.conv1 = _conv3x3(in_channels, width, 1)
        self.bn1 = nn.BatchNorm2d(width)
        channels = width
        for stage, count in enumerate(counts):
            planes = width << stage
            blocks = []
            for i in range(count):
                blocks.append(block(channels, planes, 2 if stage > 0 and i == 0 else 1))
                channels = planes * block.expansion
            setattr(self, f"layer{stage + 1}", nn.Sequential(*blocks))
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.bn1(self.conv1(x)).relu_()
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean((2, 3)))


def build_model(model, sample_shape, num_classes):
    """The built-in model a `model` config section describes, for samples of `sample_shape`
    ([C, H, W] images, [F] features) and `num_classes` outputs; its `null` sizes are the data's."""
    name = model.get("name")
    given = lambda key, default: default if model.get(key) is None else model[key]
    classes = given("num_classes", num_classes)
    if name == "mlp":
        return Mlp(given("input_size", math.prod(sample_shape)), model["hidden_sizes"], classes,
                   float(model.get("dropout", 0.0)))
    if name == "cnn":
        return Cnn(given("in_channels", sample_shape[0]), sample_shape[1], sample_shape[2], model["channels"],
                   model["hidden_size"], classes, float(model.get("dropout", 0.0)))
    if name == "resnet":
        return ResNet(int(model["depth"]), given("in_channels", sample_shape[0]), given("width", 64), classes)
    raise ValueError(f"model {name!r} is not one of trainer's built-in models (mlp, cnn, resnet): build your own "
                     "module with the same parameter names and load the weights with "
                     "model.load_state_dict(safetensors.torch.load_file(path))")


def _read(path):
    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata() or {}
        weights = {name: handle.get_tensor(name) for name in handle.keys()}
    return metadata, weights


def load_export(path, model_file=None):
    """The module and an ExportInfo for the export at `path`. A TorchScript model is loaded from
    `model_file`, or else from the model.path the run trained (relative to the working directory)."""
    metadata, weights = _read(path)
    if "trainer_model" not in metadata:
        raise ValueError(f"{path}: the export names no model (an export from before trainer wrote its model section): "
                         "build the module yourself and load the weights with load_state_dict")
    json_or = lambda key, default: json.loads(metadata[key]) if key in metadata else default
    info = ExportInfo(model=json.loads(metadata["trainer_model"]), data=json_or("trainer_data", {}),
                      sample_shape=json_or("trainer_sample_shape", []),
                      num_classes=int(metadata.get("trainer_num_classes", 0)),
                      class_names=json_or("trainer_class_names", []), epoch=int(metadata.get("trainer_epoch", 0)),
                      global_step=int(metadata.get("trainer_global_step", 0)),
                      data_encoding=json_or("trainer_data_encoding", None))
    if info.model.get("name") == "torchscript":
        source = model_file or info.model.get("path")
        if not source or not os.path.exists(source):
            raise FileNotFoundError(f"{path}: a TorchScript model's code is its own file ({source!r} is not there): "
                                    "pass load_export(path, model_file=<the .pt file the run trained>)")
        module = torch.jit.load(source, map_location="cpu")
    else:
        if not info.sample_shape or info.num_classes <= 0:
            raise ValueError(f"{path}: the export does not record the sample shape and class count")
        module = build_model(info.model, info.sample_shape, info.num_classes)
        dtypes = {tensor.dtype for tensor in weights.values() if tensor.is_floating_point()}
        if len(dtypes) == 1:
            module = module.to(dtypes.pop())  # 64-true or bf16-true runs keep their precision
    module.load_state_dict(weights, strict=True)
    return module.eval(), info
