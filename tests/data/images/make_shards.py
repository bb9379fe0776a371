"""Writes WebDataset tar shards made from the real Fashion-MNIST (Debian's dataset-fashion-mnist)
for the data=webdataset tests, with Python's tarfile and Pillow. Nothing here is committed: the
tests run it into a temporary folder.

  make_shards.py OUT_DIR NAME --count N --per-shard K [--source train|t10k] [--offset O]
                 [--kind png|jpg|npy|npyf|npyf3|st|st2] [--label cls|json] [--corrupt I] [--unlabelled I]
                 [--label-value I:V] [--truncate] [--idx IDX_DIR] [--nan I] [--dotted]

writes OUT_DIR/NAME-000000.tar, NAME-000001.tar, ...: K samples each (the last may hold fewer),
sample i keyed "sample<i>" with its image (or .npy uint8 [1, 28, 28] array) and its label as .cls
text or .json {"label": L}. --corrupt I replaces sample I's image bytes with garbage, --unlabelled I
leaves out its label member, --label-value I:V gives it label V, --truncate cuts the last shard in
the middle of a member. --kind npyf writes float32 arrays (pixels / 255), npyf3 the same
as [3, 28, 28] (the gray channel three times), st the same float32 [1, 28, 28] as a
.safetensors of one tensor, st2 with a second tensor beside it, --nan I puts a NaN in
sample I's (npyf), --dotted keys the samples "dir/sample.<i>" (a second dot in each member's
file name, which WebDataset's rule makes part of the extension). Also writes OUT_DIR/NAME-labels.txt: "<key> <label>" per sample, in order.
"""
import argparse
import gzip
import io
import json
import os
import struct
import tarfile

import numpy as np
from PIL import Image

DEFAULT_IDX = "/usr/share/datasets/fashion-mnist"


def read_idx(idx_dir, source, offset, count):
    prefix = "train" if source == "train" else "t10k"
    with gzip.open(os.path.join(idx_dir, prefix + "-images-idx3-ubyte.gz"), "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051 and offset + count <= n
        f.seek(16 + offset * rows * cols)
        pixels = np.frombuffer(f.read(count * rows * cols), dtype=np.uint8).reshape(count, rows, cols)
    with gzip.open(os.path.join(idx_dir, prefix + "-labels-idx1-ubyte.gz"), "rb") as f:
        magic, n = struct.unpack(">II", f.read(8))
        assert magic == 2049
        f.seek(8 + offset)
        labels = np.frombuffer(f.read(count), dtype=np.uint8)
    return pixels, labels


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def safetensors_bytes(tensors):
    """float32 arrays in the safetensors layout: an 8-byte little-endian header length, the JSON
    header (dtype, shape, data_offsets per tensor), then the tensors' bytes in that order."""
    header, blobs, offset = {}, [], 0
    for name, values in tensors.items():
        blob = np.ascontiguousarray(values, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(values.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("name")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--per-shard", type=int, required=True)
    p.add_argument("--source", default="train")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--kind", default="png")
    p.add_argument("--label", default="cls")
    p.add_argument("--corrupt", type=int, default=-1)
    p.add_argument("--unlabelled", type=int, default=-1)
    p.add_argument("--label-value", default="")
    p.add_argument("--truncate", action="store_true")
    p.add_argument("--idx", default=DEFAULT_IDX)
    p.add_argument("--nan", type=int, default=-1)
    p.add_argument("--dotted", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    pixels, labels = read_idx(a.idx, a.source, a.offset, a.count)
    forced = {}
    if a.label_value:
        i, v = a.label_value.split(":")
        forced[int(i)] = int(v)
    lines = []
    paths = []
    for first in range(0, a.count, a.per_shard):
        path = os.path.join(a.out, "%s-%06d.tar" % (a.name, first // a.per_shard))
        paths.append(path)
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(first, min(a.count, first + a.per_shard)):
                key = ("dir/sample.%06d" if a.dotted else "sample%06d") % (a.offset + i)
                label = forced.get(i, int(labels[i]))
                if a.kind == "npy":
                    buf = io.BytesIO()
                    np.save(buf, pixels[i].reshape(1, 28, 28))
                    data, ext = buf.getvalue(), "npy"
                elif a.kind in ("st", "st2"):
                    values = pixels[i].reshape(1, 28, 28).astype(np.float32) / 255.0
                    tensors = {"input": values}
                    if a.kind == "st2":
                        tensors["mask"] = (values > 0.5).astype(np.float32)
                    data, ext = safetensors_bytes(tensors), "safetensors"
                elif a.kind in ("npyf", "npyf3"):
                    values = pixels[i].reshape(1, 28, 28).astype(np.float32) / 255.0
                    if a.kind == "npyf3":
                        values = np.repeat(values, 3, axis=0)
                    if i == a.nan:
                        values[0, 3, 5] = np.nan
                    buf = io.BytesIO()
                    np.save(buf, values)
                    data, ext = buf.getvalue(), "npy"
                else:
                    buf = io.BytesIO()
                    Image.fromarray(pixels[i], "L").save(buf, format="PNG" if a.kind == "png" else "JPEG", quality=95)
                    data, ext = buf.getvalue(), a.kind
                if i == a.corrupt:
                    data = b"\x89PNG\r\n\x1a\n" + b"not an image at all" * 8
                add(tar, key + "." + ext, data)
                if i != a.unlabelled:
                    if a.label == "json":
                        add(tar, key + ".json", json.dumps({"label": label, "source": "fashion-mnist"}).encode())
                    else:
                        add(tar, key + ".cls", str(label).encode())
                lines.append("%s %d" % (key, label))
    if a.truncate:
        size = os.path.getsize(paths[-1])
        with open(paths[-1], "r+b") as f:
            f.truncate(size // 2 + 100)
    with open(os.path.join(a.out, a.name + "-labels.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
