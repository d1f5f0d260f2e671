"""save/load: round trips of checkpoints, shared views, atomic writes, and files that are
truncated, corrupted, tampered with or crafted (pickles that would run code) rejected
with a clear error and nothing executed. ember's former format (``EMBRCKPT``) is made by
the fixture writer and must keep loading."""
import collections
import hashlib
import io
import json
import os
import pickle
import struct
import sys

import numpy as np
import pytest

import ember_tensor as E
from ember_tensor.serialization import SerializationError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "serialization_fixtures"))
import ember_v1_writer  # noqa: E402 -- the fixture folder is not a package


def _round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    E.save(obj, buffer)
    buffer.seek(0)
    return E.load(buffer, **load_kwargs)


def _assert_same(a, b):
    if isinstance(a, E.Tensor):
        assert isinstance(b, E.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().float().numpy(), b.detach().float().numpy())
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert type(a) is type(b) and a == b


VALUES = [
    ("float32", E.arange(6.0).reshape(2, 3)),
    ("float64", E.tensor([1.5, -2.0], dtype=E.float64)),
    ("float16", E.tensor([1.5, -2.0], dtype=E.float16)),
    ("bfloat16", E.tensor([1.5, -2.0], dtype=E.bfloat16)),
    ("int types", [E.tensor([1, -2], dtype=d) for d in (E.int8, E.int16, E.int32, E.int64)]),
    ("uint8 and bool", (E.tensor([0, 255], dtype=E.uint8), E.tensor([True, False]))),
    ("zero-dim", E.tensor(3.25)),
    ("empty", E.ones(0, 3)),
    ("non-contiguous", E.arange(12.0).reshape(3, 4).t()),
    ("requires_grad", E.ones(2).requires_grad_()),
    ("plain values", {"int": 7, "big": 2 ** 80, "float": 0.1, "inf": float("inf"), "nan": float("nan"),
                      "str": "héllo", "bool": True, "none": None, "bytes": b"\x00\xff", "bytearray": bytearray(b"ab")}),
    ("dtype device size", [E.float16, E.int64, E.device("cpu"), E.Size([2, 3])]),
    ("non-string keys", {1: "one", (2, "two"): [3], None: 0.5, False: "f"}),
    ("ordered dict", collections.OrderedDict([("b", E.ones(1)), ("a", E.zeros(1))])),
    ("nested checkpoint", {"model": collections.OrderedDict(weight=E.ones(2, 2), bias=E.zeros(2)),
                           "optimizer": {"state": {0: {"step": E.tensor(3.0), "exp_avg": E.ones(2)}},
                                         "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0]}]},
                           "epoch": 4}),
]


@pytest.mark.parametrize("name,obj", VALUES, ids=[v[0] for v in VALUES])
def test_round_trip(name, obj):
    _assert_same(obj, _round_trip(obj))


def test_round_trip_through_a_path(tmp_path):
    path = tmp_path / "ckpt.pt"
    E.save({"w": E.ones(3)}, path)
    _assert_same({"w": E.ones(3)}, E.load(path))
    E.save([1, 2], str(path))  # overwriting works and leaves no temporary files
    assert E.load(str(path)) == [1, 2]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


def test_views_of_one_storage_are_saved_once_and_share_after_load():
    base = E.zeros(1000)
    views = {"whole": base, "slice": base[10:20], "matrix": base.view(10, 100), "column": base.view(10, 100)[:, 3]}
    buffer = io.BytesIO()
    E.save(views, buffer)
    assert len(buffer.getvalue()) < 4000 + 2000  # one 4000-byte storage, not four
    buffer.seek(0)
    loaded = E.load(buffer)
    loaded["whole"][15] = 7.0
    loaded["matrix"][2, 3] = 9.0
    assert loaded["slice"][5].item() == 7.0
    assert loaded["column"][2].item() == 9.0
    assert loaded["slice"].untyped_storage() is loaded["whole"].untyped_storage()
    assert loaded["column"].stride() == (100,)


def test_the_same_tensor_twice_loads_as_one_object():
    t = E.ones(2)
    a, b = _round_trip([t, t])
    assert a is b


def test_map_location_to_cpu():
    loaded = _round_trip({"w": E.ones(2)}, map_location="cpu")
    assert loaded["w"].device == E.device("cpu")
    assert _round_trip(E.ones(1), map_location={"cpu": "cpu"}).device.type == "cpu"
    assert _round_trip(E.ones(1), map_location=E.device("cpu")).device.type == "cpu"


def test_unpicklable_objects_fail_before_the_file_is_replaced(tmp_path):
    path = tmp_path / "ckpt.pt"
    E.save({"ok": 1}, path)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        E.save({"bad": lambda: 0}, path)
    assert E.load(path) == {"ok": 1}
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


class Widget:
    """A plain user class: picklable, but not on the weights_only allow-list."""

    def __init__(self, size=3):
        self.size = size

    def __eq__(self, other):
        return type(other) is Widget and other.size == self.size


def test_user_classes_need_weights_only_false_or_the_allow_list():
    buffer = io.BytesIO()
    E.save({"w": Widget(5), "t": E.ones(2)}, buffer)
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL test_serialization.Widget was "
                       r"not an allowed global by default. Please use `torch.serialization.add_safe_globals"):
        E.load(io.BytesIO(buffer.getvalue()))
    assert E.load(io.BytesIO(buffer.getvalue()), weights_only=False)["w"] == Widget(5)
    with E.serialization.safe_globals([Widget]):
        assert Widget in E.serialization.get_safe_globals()
        assert E.load(io.BytesIO(buffer.getvalue()))["w"] == Widget(5)
    assert Widget not in E.serialization.get_safe_globals()
    assert E.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buffer.getvalue())) == [
        "test_serialization.Widget"]
    E.serialization.add_safe_globals([Widget])
    try:
        assert E.load(io.BytesIO(buffer.getvalue()))["w"] == Widget(5)
    finally:
        E.serialization.clear_safe_globals()
    assert E.serialization.get_safe_globals() == []


def test_a_crash_while_writing_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    E.save({"version": 1}, path)

    def crash(fd):
        raise OSError("disk on fire")
    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="disk on fire"):
        E.save({"version": 2, "w": E.ones(100)}, path)
    monkeypatch.undo()
    assert E.load(path) == {"version": 1}
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


CHECKPOINT = {"w": E.arange(64.0), "note": "hi"}


def _checkpoint_bytes(writer=E.save, obj=CHECKPOINT):
    buffer = io.BytesIO()
    writer(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("cut", [8, 20, 100, -40, -9, -1])
def test_truncated_ember_v1_files_are_rejected(cut):
    data = _checkpoint_bytes(ember_v1_writer.save)
    with pytest.raises(SerializationError, match="truncated|not an ember checkpoint|corrupt"):
        E.load(io.BytesIO(data[:cut]))


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_truncated_checkpoints_are_rejected(legacy):
    buffer = io.BytesIO()
    E.save(CHECKPOINT, buffer, _use_new_zipfile_serialization=not legacy)
    data = buffer.getvalue()
    for cut in range(0, len(data), 7):
        with pytest.raises((SerializationError, pickle.UnpicklingError)):
            E.load(io.BytesIO(data[:cut]))
    with pytest.raises(SerializationError, match="empty"):
        E.load(io.BytesIO(b""))


def test_a_flipped_bit_in_any_byte_of_an_ember_v1_file_is_detected():
    data = _checkpoint_bytes(ember_v1_writer.save)
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x40
        with pytest.raises((SerializationError, pickle.UnpicklingError)):  # the latter: a damaged magic
            E.load(io.BytesIO(bytes(damaged)))


def test_a_flipped_bit_in_a_zip_checkpoint_is_an_error_or_changes_nothing():
    # Bytes the reader never uses (timestamps, version fields) may change; tensor bytes and
    # the pickle are covered by CRC-32, so nothing loads as different values.
    data = _checkpoint_bytes()
    values_at = data.index(np.arange(64.0, dtype=np.float32).tobytes())
    failed = set()
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x40
        try:
            loaded = E.load(io.BytesIO(bytes(damaged)))
        except (SerializationError, pickle.UnpicklingError):
            failed.add(position)
            continue
        _assert_same(CHECKPOINT, loaded)
    assert set(range(values_at, values_at + 256)) <= failed


def test_ember_v1_files_keep_loading(tmp_path):
    obj = {"model": collections.OrderedDict(w=E.arange(6.0).reshape(2, 3)), "step": 3, "dtype": E.bfloat16}
    path = tmp_path / "old.pt"
    ember_v1_writer.save(obj, path)
    _assert_same(obj, E.load(path))
    _assert_same(obj, E.load(path, mmap=True))


def _rebuild(header):
    """A file with `header` whose checksums are all recomputed: what an attacker can make."""
    header_bytes = json.dumps(header).encode()
    parts = [b"EMBRCKPT", struct.pack("<Q", len(header_bytes)), header_bytes, hashlib.sha256(header_bytes).digest()]
    parts.append(b"\0" * (-sum(len(p) for p in parts) % 64))  # storages start 64-byte aligned
    parts.append(np.arange(4, dtype=np.float32).tobytes())
    total = sum(len(p) for p in parts) + 16
    return b"".join(parts) + b"EMBR-END" + struct.pack("<Q", total)


def _header(root):
    blob = np.arange(4, dtype=np.float32).tobytes()
    return {"format": "ember-checkpoint", "version": 1, "byteorder": "little", "root": root,
            "storages": [{"dtype": "float32", "offset": 0, "nbytes": len(blob),
                          "sha256": hashlib.sha256(blob).hexdigest()}]}


def _tensor_node(**changes):
    node = {"$": "tensor", "id": 0, "storage": 0, "dtype": "float32", "shape": [4], "stride": [1],
            "offset": 0, "device": "cpu", "requires_grad": False}
    node.update(changes)
    return node


def test_storages_must_tile_the_data_area():
    header = _header(_tensor_node())
    header["storages"][0]["offset"] = 64  # leaves 64 unexplained bytes before the storage
    with pytest.raises(SerializationError, match="not laid out in order|do not end"):
        E.load(io.BytesIO(_rebuild(header)))
    header = _header(_tensor_node())
    header["storages"][0]["nbytes"] = 8  # leaves bytes after the storage
    with pytest.raises(SerializationError, match="do not end where the end marker begins"):
        E.load(io.BytesIO(_rebuild(header)))


def test_a_well_formed_crafted_file_loads():
    t = E.load(io.BytesIO(_rebuild(_header(_tensor_node()))))
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("root,message", [
    (_tensor_node(shape=[5]), "outside of its storage"),
    (_tensor_node(offset=3, shape=[2]), "outside of its storage"),
    (_tensor_node(stride=[-1]), "invalid shape, stride or offset"),
    (_tensor_node(storage=3), "storage 3"),
    (_tensor_node(dtype="object"), "unknown dtype"),
    (_tensor_node(dtype="__class__"), "unknown dtype"),
    ({"$": "os.system", "args": ["echo hi"]}, "unknown object tag"),
    ({"$": "ref", "id": 5}, "reference"),
    ({"$": "dict", "items": [[[1], 2]]}, "not hashable"),
    ({"$": "float", "value": "__import__('os')"}, "invalid float"),
], ids=["too-long", "offset-past-end", "negative-stride", "missing-storage", "object-dtype", "attr-dtype",
        "unknown-tag", "dangling-ref", "unhashable-key", "float-code"])
def test_tampered_headers_with_valid_checksums_are_rejected(root, message):
    with pytest.raises(SerializationError, match=message):
        E.load(io.BytesIO(_rebuild(_header(root))))


class _RunsCode:
    """Unpickling this calls os.system: the classic malicious checkpoint."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_bare_pickles_are_never_unpickled(tmp_path, protocol):
    # Not a checkpoint format: refused whatever weights_only says (PyTorch would unpickle
    # it as a legacy header with weights_only=False, running it).
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"w": _RunsCode(marker)}, protocol=protocol))
    for weights_only in (True, False):
        with pytest.raises(pickle.UnpicklingError, match="invalid load key"):
            E.load(path, weights_only=weights_only)
    assert not marker.exists()


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_malicious_checkpoints_do_not_run_by_default(tmp_path, legacy):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    E.save({"w": E.ones(2), "x": _RunsCode(marker)}, path, _use_new_zipfile_serialization=not legacy)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL (posix|os|nt).system .*blocked|Unsupported global"):
        E.load(path)
    assert not marker.exists()
    E.load(path, weights_only=False)  # the user's explicit opt-in runs what the file says
    assert marker.exists()


def test_a_zip_that_is_not_a_checkpoint_is_rejected_clearly(tmp_path):
    path = tmp_path / "torch.pt"
    path.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(SerializationError, match="failed finding central directory"):
        E.load(path)


def test_pickle_module_arguments():
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        E.load(io.BytesIO(_checkpoint_bytes()), pickle_module=pickle)
    assert E.load(io.BytesIO(_checkpoint_bytes()), pickle_module=pickle, weights_only=False)["note"] == "hi"
    E.save(1, io.BytesIO(), pickle_module=pickle)
    with pytest.raises(ValueError, match="only Python's pickle"):
        E.save(1, io.BytesIO(), pickle_module=json)


def test_nested_objects_round_trip():
    obj = []
    for _ in range(100):
        obj = [obj]
    assert _round_trip(obj) == obj


def test_loading_a_text_stream_is_refused(tmp_path):
    path = tmp_path / "c.pt"
    E.save(1, path)
    with open(path, "r", encoding="latin-1") as fh, pytest.raises(SerializationError, match="binary file"):
        E.load(fh)


def test_cuda_tensors_round_trip_and_map_to_cpu():
    pytest.importorskip("numba.cuda")
    x = E.arange(12.0).reshape(3, 4).to("cuda")
    buffer = io.BytesIO()
    E.save({"x": x, "row": x[1]}, buffer)
    buffer.seek(0)
    on_gpu = E.load(buffer)
    assert on_gpu["x"].device.type == "cuda"
    assert on_gpu["row"].untyped_storage() is on_gpu["x"].untyped_storage()
    buffer.seek(0)
    on_cpu = E.load(buffer, map_location={"cuda:0": "cpu"})
    assert on_cpu["row"].device.type == "cpu" and on_cpu["row"].tolist() == [4.0, 5.0, 6.0, 7.0]


def test_saving_into_a_missing_directory_says_so(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory .*missing does not exist."):
        E.save(1, tmp_path / "missing" / "c.pt")


def test_bool_storage_with_other_byte_values_is_rejected():
    header = _header(_tensor_node(dtype="bool", shape=[16]))  # the blob holds float32 bytes, not 0/1
    header["storages"][0]["dtype"] = "bool"
    with pytest.raises(SerializationError, match="bool values other than 0 and 1"):
        E.load(io.BytesIO(_rebuild(header)))
