"""Checkpoints that move between ember and real PyTorch, and the other file paths of load.

Files written by PyTorch 2.13 are committed under serialization_fixtures/ (made by
make_torch_fixtures.py), so the first tests run without PyTorch; the tests that call
PyTorch itself skip when it is not installed (it is a test-only tool)."""
import io
import os
import pickle
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember_tensor as E
from ember_tensor.serialization import SerializationError, safetensors

FIXTURES = os.path.join(os.path.dirname(__file__), "serialization_fixtures")

EXPECTED_EVERY_DTYPE = {
    "float32": (E.float32, np.arange(12.0).reshape(3, 4)),
    "row": (E.float32, np.arange(4.0, 8.0)),
    "column": (E.float32, np.array([2.0, 6.0, 10.0])),
    "transposed": (E.float32, np.arange(12.0).reshape(3, 4).T),
    "float64": (E.float64, [1.5, -2.25]),
    "float16": (E.float16, [0.5, 65504.0]),
    "bfloat16": (E.bfloat16, [1.0, -3.0040553e38]),
    "int8": (E.int8, [-128, 127]),
    "int16": (E.int16, [-32768, 7]),
    "int32": (E.int32, [2 ** 31 - 1]),
    "int64": (E.int64, [-(2 ** 62), 5]),
    "uint8": (E.uint8, [0, 255]),
    "bool": (E.bool, [True, False, True]),
    "scalar": (E.float32, 2.5),
    "empty": (E.float32, np.zeros((0, 3))),
    "grad": (E.float32, [1.0, 1.0]),
}


def _check_every_dtype(loaded):
    for name, (dtype, values) in EXPECTED_EVERY_DTYPE.items():
        t = loaded[name]
        assert t.dtype == dtype, name
        np.testing.assert_array_equal(np.asarray(t.detach().float()), np.asarray(values, dtype=np.float64)
                                      .astype(np.float32), err_msg=name)
    assert loaded["grad"].requires_grad and not loaded["float32"].requires_grad
    # Views of one storage in PyTorch's file are views of one storage in ember.
    assert loaded["row"].untyped_storage() is loaded["float32"].untyped_storage()
    assert loaded["transposed"].stride() == (1, 4)
    assert loaded["meta"] == {"epoch": 3, "lr": 0.1, "name": "mlp", "dims": E.Size([3, 4]), "dtype": E.float16}


@pytest.mark.parametrize("name", ["torch_every_dtype.pt", "torch_every_dtype_legacy.pt"])
def test_pytorch_files_load_with_every_dtype_and_shared_views(name):
    _check_every_dtype(E.load(os.path.join(FIXTURES, name)))


def test_mmap_maps_a_pytorch_zip_file_without_touching_it(tmp_path):
    path = tmp_path / "c.pt"
    path.write_bytes(open(os.path.join(FIXTURES, "torch_every_dtype.pt"), "rb").read())
    before = path.read_bytes()
    loaded = E.load(path, mmap=True)
    _check_every_dtype(loaded)
    loaded["float32"].add_(1)  # a private mapping: the file keeps its bytes
    assert path.read_bytes() == before
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        E.load(os.path.join(FIXTURES, "torch_every_dtype_legacy.pt"), mmap=True)


def test_map_location_forms():
    path = os.path.join(FIXTURES, "torch_every_dtype.pt")
    seen = []

    def keep_on_cpu(storage, location):
        seen.append(location)
        return storage

    assert E.load(path, map_location=keep_on_cpu)["float32"].device.type == "cpu"
    assert set(seen) == {"cpu"}
    assert E.load(path, map_location=lambda storage, location: None)["row"].device.type == "cpu"
    for where in ("cpu", E.device("cpu"), {"cpu": "cpu"}):
        assert E.load(path, map_location=where)["int64"].device.type == "cpu"
    with pytest.raises(SerializationError, match="map_location"):
        E.load(path, map_location=3)


def test_numpy_arrays_need_the_allow_list_as_in_pytorch():
    path = os.path.join(FIXTURES, "torch_numpy.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL numpy\._core\.multiarray\._reconstruct was not an "
                       r"allowed global by default"):
        E.load(path)
    names = E.serialization.get_unsafe_globals_in_checkpoint(path)
    assert names[0] == "numpy._core.multiarray._reconstruct" and "numpy.ndarray" in names
    array = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(E.load(path, weights_only=False)["array"], array)
    allowed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.float64))]
    with E.serialization.safe_globals(allowed):
        np.testing.assert_array_equal(E.load(path)["array"], array)


def test_legacy_format_round_trips_with_shared_views():
    base = E.arange(10.0)
    buffer = io.BytesIO()
    E.save({"base": base, "tail": base[5:], "n": 3}, buffer, _use_new_zipfile_serialization=False)
    loaded = E.load(io.BytesIO(buffer.getvalue()))
    assert loaded["tail"].tolist() == [5.0, 6.0, 7.0, 8.0, 9.0]
    assert loaded["tail"].untyped_storage() is loaded["base"].untyped_storage()


TAR_ERA = os.path.join(FIXTURES, "torch_tar_era.pt")


def test_tar_era_checkpoint_loads_with_weights_only_false_as_in_pytorch():
    with pytest.raises(RuntimeError, match=r"^Cannot use ``weights_only=True`` with files saved in the legacy \.tar"):
        E.load(TAR_ERA)
    loaded = E.load(TAR_ERA, weights_only=False)
    matrix = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(loaded["matrix"].numpy(), matrix)
    np.testing.assert_array_equal(loaded["row"].numpy(), matrix[1])
    np.testing.assert_array_equal(loaded["column"].numpy(), matrix[:, 2])  # stored on a storage view
    assert loaded["row"].data_ptr() == loaded["matrix"].data_ptr() + 16  # views of one storage stay shared
    assert loaded["int64"].tolist() == [-(2 ** 40), 7] and loaded["int64"].dtype is E.int64
    assert loaded["float64"].dim() == 0 and loaded["float64"].item() == 2.5
    assert loaded["uint8"].tolist() == [0, 255] and loaded["epoch"] == 3 and loaded["names"] == ["a", "b"]
    loaded = E.load(TAR_ERA, weights_only=False, map_location=lambda storage, location: storage)
    assert loaded["matrix"].device == E.device("cpu")


def _tar_with(replace):
    """The tar-era fixture with members changed by `replace(name, bytes) -> bytes or None`."""
    import tarfile

    out = io.BytesIO()
    with tarfile.open(TAR_ERA) as source, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as target:
        for member in source.getmembers():
            data = replace(member.name, source.extractfile(member).read())
            if data is None:
                continue
            info = tarfile.TarInfo(member.name)
            info.size = len(data)
            target.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.mark.parametrize("damage, message", [
    (lambda name, data: None if name == "tensors" else data, "no 'tensors' member"),
    (lambda name, data: data[:-3] if name == "storages" else data, "truncated|unexpected bytes|malformed"),
    (lambda name, data: data + b"x" if name == "tensors" else data, "unexpected bytes after"),
    (lambda name, data: data.replace(b"\x0c\x00\x00\x00\x00\x00\x00\x00", b"\x0c\x10\x00\x00\x00\x00\x00\x00", 1)
     if name == "storages" else data, "truncated|declares"),
])
def test_damaged_tar_era_checkpoints_raise_clear_errors(damage, message):
    with pytest.raises((SerializationError, pickle.UnpicklingError), match=message):
        E.load(io.BytesIO(_tar_with(damage)), weights_only=False)


def test_a_tar_era_tensor_past_its_storage_is_refused():
    def stretch(name, data):
        # the first tensor record's first size (3 rows of the matrix) becomes 300
        return data.replace(b"\x03\x00\x00\x00\x00\x00\x00\x00\x04\x00", b"\x2c\x01\x00\x00\x00\x00\x00\x00\x04\x00", 1) \
            if name == "tensors" else data
    with pytest.raises(SerializationError, match="out of bounds for storage"):
        E.load(io.BytesIO(_tar_with(stretch)), weights_only=False)


def test_a_save_killed_mid_write_leaves_nothing_behind(tmp_path):
    # The child writes a large checkpoint and is killed while writing it: the directory
    # must hold only the previous file, intact (O_TMPFILE: the unnamed file vanishes).
    target = tmp_path / "model.pt"
    E.save({"version": 1}, target)
    script = textwrap.dedent(f"""
        import os, signal, ember_tensor as E
        from ember_tensor.serialization import _zip_writer
        real = _zip_writer._write_record
        def write_then_die(zf, name, payload):
            real(zf, name, payload)
            if name.endswith("data/0"):
                os.kill(os.getpid(), signal.SIGKILL)
        _zip_writer._write_record = write_then_die
        E.save({{"w": E.ones(1_000_000)}}, {str(target)!r})
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]
    assert E.load(target) == {"version": 1}


def test_stale_named_temporaries_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".ember-save-{int(dead.stdout)}-abc.tmp"
    stale.write_bytes(b"partial")
    E.save(1, tmp_path / "c.pt")
    assert sorted(os.listdir(tmp_path)) == ["c.pt"]


# -- safetensors ----------------------------------------------------------------------------

def _every_dtype_tensors():
    return {d.name: E.tensor([0, 1, 1], dtype=d) for d in (E.float16, E.bfloat16, E.float32, E.float64, E.int8,
                                                            E.int16, E.int32, E.int64, E.uint8, E.bool)}


def test_safetensors_round_trip_every_dtype(tmp_path):
    tensors = _every_dtype_tensors()
    tensors["matrix"] = E.arange(6.0).reshape(2, 3).t()  # saved contiguous, as values
    path = tmp_path / "m.safetensors"
    safetensors.save_file(tensors, path, metadata={"format": "pt"})
    loaded = safetensors.load_file(path)
    assert set(loaded) == set(tensors)
    for name, t in tensors.items():
        assert loaded[name].dtype == t.dtype and loaded[name].tolist() == t.tolist()
    assert safetensors.load(safetensors.save(tensors))["matrix"].tolist() == tensors["matrix"].tolist()


def test_safetensors_refuses_shared_tensors_like_the_reference():
    base = E.ones(4)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        safetensors.save({"a": base, "b": base[:2]})


@pytest.mark.parametrize("damage,message", [
    (lambda b: b[:5], "HeaderTooSmall"),
    (lambda b: (10 ** 12).to_bytes(8, "little") + b[8:], "HeaderTooLarge"),
    (lambda b: b[:-1], "MetadataIncompleteBuffer|TensorInvalidInfo|InvalidOffset"),
    (lambda b: b + b"\0", "MetadataIncompleteBuffer"),
    (lambda b: b.replace(b'"F32"', b'"F64"'), "TensorInvalidInfo"),
    (lambda b: b.replace(b'"shape":[4]', b'"shape":[5]'), "TensorInvalidInfo"),
])
def test_safetensors_rejects_broken_files(damage, message):
    blob = safetensors.save({"w": E.ones(4), "v": E.zeros(4)})
    with pytest.raises(SerializationError, match=message):
        safetensors.load(damage(blob))


def test_safetensors_files_agree_with_the_reference_package(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], dtype=np.int64),
              "c": np.array([True, False])}
    path = tmp_path / "ref.safetensors"
    st_numpy.save_file(arrays, str(path))
    loaded = safetensors.load_file(path)
    for name, array in arrays.items():
        np.testing.assert_array_equal(loaded[name].numpy(), array)
    safetensors.save_file({k: E.tensor(v) for k, v in arrays.items()}, tmp_path / "ours.safetensors")
    back = st_numpy.load_file(str(tmp_path / "ours.safetensors"))
    for name, array in arrays.items():
        np.testing.assert_array_equal(back[name], array)


# -- with real PyTorch ----------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_pytorch_loads_embers_files_with_every_dtype_and_shared_views(tmp_path, legacy):
    torch = _torch()
    base = E.arange(12.0).reshape(3, 4)
    obj = {"base": base, "row": base[1], "col": base[:, 1], "t": base.t(), "n": 5, "size": E.Size([2, 3]),
           "dtype": E.bfloat16, "grad": E.ones(2).requires_grad_(), "device": E.device("cpu"), **_every_dtype_tensors()}
    path = tmp_path / "ember.pt"
    E.save(obj, path, _use_new_zipfile_serialization=not legacy)
    loaded = torch.load(path)  # PyTorch's own weights_only=True accepts it
    for name in ["base", "row", "col", "t"] + [d for d in _every_dtype_tensors()]:
        assert str(loaded[name].dtype) == str(obj[name].dtype)
        assert loaded[name].float().tolist() == obj[name].float().tolist()
    assert loaded["t"].stride() == (1, 4) and loaded["grad"].requires_grad
    assert loaded["size"] == torch.Size([2, 3]) and loaded["dtype"] is torch.bfloat16
    loaded["base"][1, 1] = 100.0  # the views share one storage in PyTorch too
    assert loaded["row"][1].item() == 100.0 and loaded["col"][1].item() == 100.0


def test_embers_own_checkpoint_is_written_once_per_storage(tmp_path):
    torch = _torch()
    base = E.zeros(10_000)
    E.save([base, base[1:], base.view(100, 100)], tmp_path / "c.pt")
    assert os.path.getsize(tmp_path / "c.pt") < 40_000 + 4_000
    assert len(torch.load(tmp_path / "c.pt")) == 3


def test_pytorch_files_written_now_load_in_ember(tmp_path):
    torch = _torch()
    base = torch.randn(5, 6)
    obj = {"x": base, "view": base[2:, ::2], "half": base.half(), "bf": base.bfloat16(), "i": torch.arange(5)}
    for legacy in (False, True):
        path = tmp_path / f"t{legacy}.pt"
        torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
        loaded = E.load(path)
        for name, t in obj.items():
            np.testing.assert_array_equal(np.asarray(loaded[name].float()), t.float().numpy())
        assert loaded["view"].untyped_storage() is loaded["x"].untyped_storage()


def test_safetensors_bfloat16_agrees_with_safetensors_torch(tmp_path):
    torch = _torch()
    st_torch = pytest.importorskip("safetensors.torch")
    values = [1.0, -2.5, 3.0e38, 1.0e-3]
    st_torch.save_file({"w": torch.tensor(values, dtype=torch.bfloat16)}, str(tmp_path / "t.safetensors"))
    ours = safetensors.load_file(tmp_path / "t.safetensors")["w"]
    assert ours.dtype == E.bfloat16
    assert ours.float().tolist() == torch.tensor(values, dtype=torch.bfloat16).float().tolist()
    safetensors.save_file({"w": ours}, tmp_path / "e.safetensors")
    assert torch.equal(st_torch.load_file(str(tmp_path / "e.safetensors"))["w"],
                       torch.tensor(values, dtype=torch.bfloat16))
