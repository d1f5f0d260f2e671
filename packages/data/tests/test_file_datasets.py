"""Dataset loaders on tiny files the tests write in the real formats, plus the bundled digits."""
import gzip
import os
import pickle
import struct

import numpy as np
import pytest

import ember_tensor as et
from ember_data import DataLoader
from ember_data.datasets import CIFAR10, CIFAR100, MNIST, Digits, FashionMNIST, ImageFolder, read_idx


def write_idx(path, array, compress):
    """An IDX file: 0, 0, type byte, ndim, big-endian uint32 dims, big-endian data."""
    type_byte = {np.uint8: 0x08, np.int32: 0x0C, np.float32: 0x0D}[array.dtype.type]
    header = bytes([0, 0, type_byte, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    body = array.astype(array.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if compress else open
    with opener(str(path) + (".gz" if compress else ""), "wb") as f:
        f.write(header + body)


def _mnist_files(folder, n_train=6, n_test=4, compress=True):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), images, compress)
        write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), labels, compress)
        arrays[prefix] = (images, labels)
    return arrays


@pytest.mark.parametrize("array", [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.array([1.5, -2.0], np.float32),
                                   np.array([[70000, -1]], np.int32)])
@pytest.mark.parametrize("compress", [False, True])
def test_read_idx_round_trips_each_type(tmp_path, array, compress):
    write_idx(tmp_path / "a", array, compress)
    got = read_idx(str(tmp_path / "a") + (".gz" if compress else ""))
    assert got.dtype == array.dtype and np.array_equal(got, array)


def test_read_idx_rejects_other_files(tmp_path):
    (tmp_path / "x").write_bytes(b"\x89PNG....")
    with pytest.raises(ValueError, match="is not an IDX file"):
        read_idx(str(tmp_path / "x"))


@pytest.mark.parametrize("cls", [MNIST, FashionMNIST])
@pytest.mark.parametrize("compress", [False, True])
def test_mnist_reads_train_and_test_sets(tmp_path, cls, compress):
    arrays = _mnist_files(tmp_path / cls.__name__ / "raw", compress=compress)
    train = cls(str(tmp_path), train=True)
    test = cls(str(tmp_path), train=False, transform=lambda img: img.float() / 255, target_transform=lambda t: t + 100)
    assert len(train) == 6 and len(test) == 4
    img, target = train[3]
    assert img.shape == (28, 28) and img.dtype == et.uint8 and target == 3
    assert np.array_equal(img.numpy(), arrays["train"][0][3])
    img, target = test[1]
    assert img.dtype == et.float32 and target == 101
    assert len(cls.classes) == 10


def test_slides_mnist_pattern_with_a_dataloader(tmp_path):
    # The slides: a Dataset with root/train/transform, a shuffled DataLoader with workers.
    _mnist_files(tmp_path, n_train=10)
    train_dataset = MNIST(str(tmp_path), train=True, transform=lambda img: img.float().unsqueeze(0) / 255)
    train_loader = DataLoader(train_dataset, batch_size=4, shuffle=True, num_workers=2)
    seen = []
    for data_batch, label_batch in train_loader:
        assert data_batch.shape[1:] == (1, 28, 28) and data_batch.dtype == et.float32
        seen += label_batch.tolist()
    assert sorted(seen) == sorted(i % 10 for i in range(10))


def test_mnist_missing_files_say_where_to_put_them(tmp_path):
    with pytest.raises(RuntimeError) as info:
        MNIST(str(tmp_path))
    message = str(info.value)
    assert "train-images-idx3-ubyte" in message and os.path.join(str(tmp_path), "MNIST", "raw") in message
    with pytest.raises(RuntimeError, match="never downloads"):
        MNIST(str(tmp_path), download=True)


def _cifar_files(root, cls):
    folder = root / cls.base_folder
    folder.mkdir()
    rng = np.random.default_rng(1)
    images = {}
    for name in cls.train_list + cls.test_list:
        data = rng.integers(0, 256, size=(3, 3 * 32 * 32), dtype=np.uint8)
        images[name] = data
        entry = {b"data": data, cls.labels_key.encode(): [1, 0, 2], b"batch_label": name.encode()}
        with open(folder / name, "wb") as f:
            pickle.dump(entry, f)
    with open(folder / cls.meta["filename"], "wb") as f:
        pickle.dump({cls.meta["key"].encode(): ["a", "b", "c"]}, f)
    return images


@pytest.mark.parametrize("cls", [CIFAR10, CIFAR100])
def test_cifar_reads_python_batches(tmp_path, cls):
    images = _cifar_files(tmp_path, cls)
    train, test = cls(str(tmp_path)), cls(str(tmp_path), train=False)
    assert len(train) == 3 * len(cls.train_list) and len(test) == 3
    img, target = test[2]
    assert img.shape == (32, 32, 3) and img.dtype == et.uint8 and target == 2
    # The file stores red plane, green plane, blue plane: pixel (0, 1) is HWC [0, 1, :].
    raw = images[cls.test_list[0]][2]
    assert img[0, 1].tolist() == [raw[1], raw[1024 + 1], raw[2048 + 1]]
    assert train.classes == ["a", "b", "c"] and train.class_to_idx["c"] == 2


def test_cifar_missing_files_say_where_to_put_them(tmp_path):
    with pytest.raises(RuntimeError, match="cifar-10-batches-py"):
        CIFAR10(str(tmp_path))


def _write_ppm(path, pixels):
    h, w = pixels.shape[:2]
    magic = b"P6" if pixels.ndim == 3 else b"P5"
    path.write_bytes(magic + b"\n# a comment\n" + f"{w} {h}\n255\n".encode() + pixels.astype(np.uint8).tobytes())


def test_image_folder_reads_npy_pgm_ppm_without_pillow(tmp_path):
    rng = np.random.default_rng(2)
    (tmp_path / "cat").mkdir()
    (tmp_path / "dog").mkdir()
    rgb = rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    gray = rng.integers(0, 256, (4, 5), dtype=np.uint8)
    _write_ppm(tmp_path / "cat" / "a.ppm", rgb)
    _write_ppm(tmp_path / "dog" / "b.pgm", gray)
    np.save(tmp_path / "dog" / "c.npy", gray.astype(np.float32))
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    (tmp_path / "dog" / "d.pgm").write_bytes(b"P2\n2 1\n255\n7 9\n")
    ds = ImageFolder(str(tmp_path), transform=lambda a: et.from_numpy(np.ascontiguousarray(a)))
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert [os.path.basename(p) for p, _ in ds.samples] == ["a.ppm", "b.pgm", "c.npy", "d.pgm"]
    assert ds.targets == [0, 1, 1, 1]
    img, target = ds[0]
    assert target == 0 and np.array_equal(img.numpy(), rgb)
    assert np.array_equal(ds[1][0].numpy(), gray) and ds[2][0].dtype == et.float32
    assert ds[3][0].tolist() == [[7, 9]]


def test_image_folder_errors_explain_the_layout(tmp_path):
    with pytest.raises(FileNotFoundError, match="one sub-folder of images per class"):
        ImageFolder(str(tmp_path / "missing"))
    (tmp_path / "empty_class").mkdir()
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty_class"):
        ImageFolder(str(tmp_path))


def test_bundled_digits_train_a_classifier_offline():
    train, test = Digits(train=True), Digits(train=False)
    assert len(train) == 1500 and len(test) == 297
    img, target = train[0]
    assert img.shape == (1, 8, 8) and img.dtype == et.float32 and 0.0 <= img.min().item() <= img.max().item() <= 1.0
    assert sorted(set(train.targets.tolist())) == list(range(10))
    # A nearest-class-mean classifier on the real data is far above chance (10%).
    x = train.data.reshape(1500, 64).numpy()
    y = train.targets.numpy()
    means = np.stack([x[y == k].mean(0) for k in range(10)])
    xt, yt = test.data.reshape(297, 64).numpy(), test.targets.numpy()
    accuracy = (np.argmin(((xt[:, None] - means[None]) ** 2).sum(-1), 1) == yt).mean()
    assert accuracy > 0.8
