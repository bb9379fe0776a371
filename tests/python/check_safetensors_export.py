"""Checks that `trainer export` wrote a checkpoint's model weights faithfully, with the reference
readers: `safetensors.torch.load_file` and `safetensors.safe_open(..., "pt")` for the export, and
`torch.jit.load` for the checkpoint's archive (a TorchScript archive whose `model` submodule holds
the model's parameters and buffers under the names of the C++ model's named_parameters/
named_buffers). The archive sits behind the checkpoint's 80-byte header line, which gives its size
(docs/checkpoints.md).

usage: check_safetensors_export.py <export.safetensors> <checkpoint.ckpt>
Prints `ok <n> tensors` and exits 0 when every tensor matches (names, dtypes, shapes, values) and
the metadata carries the checkpoint's epoch and global step; exits 1 with the differences otherwise.

Used by tests/e2e/export_test.cpp.
"""
import io
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file


def checkpoint_weights(module):
    weights = {}
    for name, tensor in module.named_parameters():
        weights[name] = tensor.detach()
    for name, tensor in module.named_buffers():
        weights[name] = tensor.detach()
    return weights


def checkpoint_archive(path):
    """The LibTorch archive inside a trainer checkpoint (docs/checkpoints.md)."""
    with open(path, "rb") as handle:
        data = handle.read()
    header = data[:80]
    if not header.startswith(b"TRAINER-CKPT 2 "):
        return io.BytesIO(data)  # format 1: a bare archive
    payload_bytes = int(header.split()[2])
    return io.BytesIO(data[80:80 + payload_bytes])


def main(export_path, checkpoint_path):
    problems = []
    exported = load_file(export_path)
    with safe_open(export_path, framework="pt") as handle:
        metadata = handle.metadata() or {}
        opened = {name: handle.get_tensor(name) for name in handle.keys()}

    root = torch.jit.load(checkpoint_archive(checkpoint_path), map_location="cpu")
    expected = checkpoint_weights(root.model)
    # The same tensors as torch's state_dict sees them, under the archive's "model." prefix.
    from_state_dict = {name[len("model."):]: tensor for name, tensor in root.state_dict().items()
                       if name.startswith("model.")}
    if sorted(from_state_dict) != sorted(expected):
        problems.append(f"state_dict names {sorted(from_state_dict)} != named_parameters+named_buffers "
                        f"{sorted(expected)}")
    if not expected:
        problems.append("the checkpoint's model holds no tensors")

    for label, loaded in (("load_file", exported), ("safe_open", opened)):
        if sorted(loaded) != sorted(expected):
            problems.append(f"{label}: names {sorted(loaded)} != checkpoint's {sorted(expected)}")
            continue
        for name, want in expected.items():
            got = loaded[name]
            if got.dtype != want.dtype or got.shape != want.shape:
                problems.append(f"{label}: {name}: {got.dtype} {tuple(got.shape)} != "
                                f"{want.dtype} {tuple(want.shape)}")
            elif not torch.equal(got, want):
                problems.append(f"{label}: {name}: values differ")

    if metadata.get("format") != "pt":
        problems.append(f"metadata format is {metadata.get('format')!r}, expected 'pt'")
    for key, attribute in (("trainer_epoch", "epoch"), ("trainer_global_step", "global_step")):
        want = str(getattr(root, attribute))
        if metadata.get(key) != want:
            problems.append(f"metadata {key} is {metadata.get(key)!r}, the checkpoint says {want}")

    if problems:
        print("\n".join(problems))
        return 1
    print(f"ok {len(expected)} tensors, " + " ".join(f"{k}={metadata[k]}" for k in sorted(metadata)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: check_safetensors_export.py <export.safetensors> <checkpoint.ckpt>")
    sys.exit(main(sys.argv[1], sys.argv[2]))
