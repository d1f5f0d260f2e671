"""Write the checkpoints of real PyTorch that ember's tests load without PyTorch installed.

Run from this folder with PyTorch installed (a test-only tool, never a dependency):

    python make_torch_fixtures.py

The files are small and committed. ``expected.json`` records what each must load as,
computed here by PyTorch itself, so the tests need only ember and NumPy.
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import tarfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp():
    """The architecture the tests rebuild in ember: Linear, BatchNorm1d, ReLU, Linear."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 3))
    model.train()
    model(torch.randn(16, 4))  # moves the BatchNorm running statistics off their defaults
    model.eval()
    return model


def every_dtype():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    return collections.OrderedDict([
        ("float32", base), ("row", base[1]), ("column", base[:, 2]), ("transposed", base.t()),
        ("float64", torch.tensor([1.5, -2.25], dtype=torch.float64)),
        ("float16", torch.tensor([0.5, 65504.0], dtype=torch.float16)),
        ("bfloat16", torch.tensor([1.0, -3.0e38], dtype=torch.bfloat16)),
        ("int8", torch.tensor([-128, 127], dtype=torch.int8)),
        ("int16", torch.tensor([-32768, 7], dtype=torch.int16)),
        ("int32", torch.tensor([2 ** 31 - 1], dtype=torch.int32)),
        ("int64", torch.tensor([-(2 ** 62), 5])),
        ("uint8", torch.tensor([0, 255], dtype=torch.uint8)),
        ("bool", torch.tensor([True, False, True])),
        ("scalar", torch.tensor(2.5)),
        ("empty", torch.zeros(0, 3)),
        ("grad", torch.ones(2, requires_grad=True)),
        ("meta", {"epoch": 3, "lr": 0.1, "name": "mlp", "dims": torch.Size([3, 4]), "dtype": torch.float16}),
    ])


def tar_era_object():
    """What the tar-era fixture holds: shared views, several dtypes, a 0-d tensor, numbers."""
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    return collections.OrderedDict([
        ("matrix", base), ("row", base[1]), ("column", base[:, 2]),
        ("int64", torch.tensor([-(2 ** 40), 7])), ("float64", torch.tensor(2.5, dtype=torch.float64)),
        ("uint8", torch.tensor([0, 255], dtype=torch.uint8)), ("epoch", 3), ("names", ["a", "b"]),
    ])


def write_tar_era(path, obj, storage_view=None):
    """Write `obj` in PyTorch's tar-era checkpoint format (before 0.4), member by member as
    the reader that torch.load still carries (``_legacy_load``) expects them; PyTorch
    itself loads the result (checked in main). `storage_view` = (name, offset, numel): that
    tensor is stored on a storage view of its tensor's storage, as old PyTorch wrote slices."""
    storage_keys, storages, tensors, keys = {}, [], [], {}
    counter = iter(range(1000))

    def tensor_key(t):
        if id(t) in keys:
            return keys[id(t)]
        storage = t.untyped_storage()
        root = storage_keys.get(storage.data_ptr())
        if root is None:
            root = storage_keys[storage.data_ptr()] = next(counter)
            storages.append((root, t.dtype, bytes(storage.tolist())))
        key = keys[id(t)] = next(counter)
        tensors.append([key, root, t])
        return key

    class Pickler(pickle.Pickler):
        def persistent_id(self, o):
            return str(tensor_key(o)) if isinstance(o, torch.Tensor) else None

    object_pickle = io.BytesIO()
    Pickler(object_pickle, protocol=2).dump(obj)
    views = []
    if storage_view is not None:
        name, offset, numel = storage_view
        record = next(r for r in tensors if r[2] is obj[name])
        view_key = next(counter)
        views.append((view_key, record[1], offset, numel))
        record[1] = view_key
        record[2] = (record[2], offset)
    storage_member = io.BytesIO()
    pickle.dump(len(storages), storage_member, protocol=2)
    for key, dtype, raw in storages:
        legacy_name = torch.tensor([], dtype=dtype).type().split(".")[1]  # "FloatTensor"
        storage_type = getattr(torch, legacy_name.replace("Tensor", "Storage"))
        pickle.dump((key, "cpu", storage_type), storage_member, protocol=2)
        storage_member.write(struct.pack("<q", len(raw) // torch.tensor([], dtype=dtype).element_size()))
        storage_member.write(raw)
    pickle.dump(views, storage_member, protocol=2)
    tensor_member = io.BytesIO()
    pickle.dump(len(tensors), tensor_member, protocol=2)
    for key, storage_key, t in tensors:
        shift = 0
        if isinstance(t, tuple):
            t, shift = t
        tensor_type = getattr(torch, t.type().split(".")[1])  # torch.FloatTensor, ...
        pickle.dump((key, storage_key, tensor_type), tensor_member, protocol=2)
        tensor_member.write(struct.pack("<i", t.dim()) + b"\0" * 4)
        tensor_member.write(struct.pack(f"<{t.dim()}q", *t.shape) + struct.pack(f"<{t.dim()}q", *t.stride()))
        tensor_member.write(struct.pack("<q", t.storage_offset() - shift))
    sys_info = io.BytesIO()
    pickle.dump({"protocol_version": 1000, "little_endian": True,
                 "type_sizes": {"short": 2, "int": 4, "long": 8}}, sys_info, protocol=2)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as archive:
        for name, member in (("sys_info", sys_info), ("pickle", object_pickle), ("tensors", tensor_member),
                             ("storages", storage_member)):
            info = tarfile.TarInfo(name)
            info.size = len(member.getvalue())
            archive.addfile(info, io.BytesIO(member.getvalue()))


def main_tar():
    path = os.path.join(HERE, "torch_tar_era.pt")
    obj = tar_era_object()
    write_tar_era(path, obj, storage_view=("column", 2, 10))
    loaded = torch.load(path, weights_only=False)  # PyTorch reads the format only with weights_only=False
    for name, value in obj.items():
        assert (value == loaded[name]).all() if isinstance(value, torch.Tensor) else value == loaded[name], name


def main():
    model = mlp()
    x = torch.linspace(-2, 2, 20).reshape(5, 4)
    torch.save(model.state_dict(), os.path.join(HERE, "torch_mlp_state_dict.pt"))
    torch.save(model, os.path.join(HERE, "torch_mlp_module.pt"))
    torch.save(every_dtype(), os.path.join(HERE, "torch_every_dtype.pt"))
    torch.save(every_dtype(), os.path.join(HERE, "torch_every_dtype_legacy.pt"), _use_new_zipfile_serialization=False)

    params = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(2, 2))]
    optimizer = torch.optim.Adam(params, lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        (params[0].sum() * 2 + (params[1] ** 2).sum()).backward()
        optimizer.step()
    torch.save(optimizer.state_dict(), os.path.join(HERE, "torch_adam_state.pt"))
    torch.save({"array": np.arange(6.0).reshape(2, 3)}, os.path.join(HERE, "torch_numpy.pt"))

    expected = {
        "torch_version": torch.__version__,
        "mlp_input": x.tolist(),
        "mlp_output": model(x).tolist(),
        "adam_exp_avg_0": optimizer.state_dict()["state"][0]["exp_avg"].tolist(),
        "adam_step_0": float(optimizer.state_dict()["state"][0]["step"]),
    }
    with open(os.path.join(HERE, "expected.json"), "w") as fh:
        json.dump(expected, fh, indent=1)


if __name__ == "__main__":
    # ``python make_torch_fixtures.py tar`` writes only the tar-era fixture.
    main_tar() if sys.argv[1:] == ["tar"] else main()
