"""Datasets over small files written here in the real formats (IDX, CIFAR pickles, MAT-5,
image folders), compared with torchvision reading the same files where it is installed."""
import gzip
import pickle
import struct
import urllib.error
import urllib.request
import zlib

import numpy as np
import pytest
from PIL import Image

import ember_tensor as torch
import ember_vision as torchvision
from torchvision_oracle import import_torchvision, torchvision_available

RNG = np.random.default_rng(0)


def write_idx(path, array, compress=False):
    codes = {np.uint8: 0x08, np.int32: 0x0C}
    header = bytes([0, 0, codes[array.dtype.type], array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    opener = gzip.open if compress else open
    with opener(path, "wb") as f:
        f.write(header + array.astype(array.dtype.newbyteorder(">")).tobytes())


@pytest.fixture
def mnist_root(tmp_path):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    images = RNG.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    write_idx(raw / "train-images-idx3-ubyte", images)
    write_idx(raw / "train-labels-idx1-ubyte", labels)
    write_idx(raw / "t10k-images-idx3-ubyte.gz", images[:2], compress=True)
    write_idx(raw / "t10k-labels-idx1-ubyte.gz", labels[:2], compress=True)
    return tmp_path, images, labels


def test_mnist_samples_are_pil_images_with_int_labels(mnist_root):
    root, images, labels = mnist_root
    ds = torchvision.datasets.MNIST(str(root), train=True)
    img, target = ds[2]
    assert isinstance(img, Image.Image) and img.mode == "L"
    assert np.array_equal(np.asarray(img), images[2]) and target == 4
    assert len(ds) == 5 and len(torchvision.datasets.MNIST(str(root), train=False)) == 2
    assert ds.classes[3] == "3 - three" and tuple(ds.data.shape) == (5, 28, 28)
    with_transform = torchvision.datasets.MNIST(str(root), transform=torchvision.transforms.ToTensor(),
                                                target_transform=lambda t: t * 10)
    x, t = with_transform[0]
    assert tuple(x.shape) == (1, 28, 28) and x.dtype == torch.float32 and t == 30


@pytest.mark.skipif(not torchvision_available(), reason="torchvision (test-only oracle) not installed")
def test_mnist_matches_torchvision_on_the_same_files(mnist_root):
    root, images, labels = mnist_root
    # torchvision wants every split's files decompressed before it reads any.
    write_idx(root / "MNIST" / "raw" / "t10k-images-idx3-ubyte", images[:2])
    write_idx(root / "MNIST" / "raw" / "t10k-labels-idx1-ubyte", labels[:2])
    theirs = import_torchvision().datasets.MNIST(str(root), train=True)
    ours = torchvision.datasets.MNIST(str(root), train=True)
    for i in range(len(ours)):
        assert np.array_equal(np.asarray(ours[i][0]), np.asarray(theirs[i][0])) and ours[i][1] == theirs[i][1]


def test_mnist_family_layouts(tmp_path):
    for cls, folder in [(torchvision.datasets.FashionMNIST, "FashionMNIST"), (torchvision.datasets.KMNIST, "KMNIST")]:
        raw = tmp_path / folder / "raw"
        raw.mkdir(parents=True)
        write_idx(raw / "t10k-images-idx3-ubyte", np.zeros((2, 28, 28), np.uint8))
        write_idx(raw / "t10k-labels-idx1-ubyte", np.array([1, 9], np.uint8))
        ds = cls(str(tmp_path), train=False)
        assert len(ds) == 2 and ds[1][1] == 9
    assert torchvision.datasets.KMNIST.classes[1] == "ki"
    raw = tmp_path / "EMNIST" / "raw"
    raw.mkdir(parents=True)
    write_idx(raw / "emnist-letters-train-images-idx3-ubyte", np.zeros((3, 28, 28), np.uint8))
    write_idx(raw / "emnist-letters-train-labels-idx1-ubyte", np.array([1, 2, 26], np.uint8))
    letters = torchvision.datasets.EMNIST(str(tmp_path), split="letters")
    assert letters.classes[letters[2][1]] == "z"
    with pytest.raises(ValueError, match="Unknown value 'nope' for argument split"):
        torchvision.datasets.EMNIST(str(tmp_path), split="nope")


@pytest.fixture
def offline(monkeypatch):
    def refuse(*args, **kwargs):
        raise urllib.error.URLError("no network")
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_download_offline_says_where_to_put_the_files(tmp_path, offline):
    with pytest.raises(RuntimeError) as info:
        torchvision.datasets.MNIST(str(tmp_path), download=True)
    message = str(info.value)
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz" in message
    assert str(tmp_path / "MNIST" / "raw") in message
    with pytest.raises(RuntimeError, match="cifar-10-python.tar.gz"):
        torchvision.datasets.CIFAR10(str(tmp_path), download=True)
    with pytest.raises(RuntimeError, match="train_32x32.mat"):
        torchvision.datasets.SVHN(str(tmp_path), download=True)


def test_missing_files_without_download_name_the_folder(tmp_path):
    with pytest.raises(RuntimeError, match="MNIST"):
        torchvision.datasets.MNIST(str(tmp_path))


def _write_cifar(root, folder, train_names, test_names, meta_name, meta_key, labels_key, n_classes):
    base = root / folder
    base.mkdir()
    data = {}
    for name in train_names + test_names:
        rows = RNG.integers(0, 256, (3, 3072), dtype=np.uint8)
        targets = [int(t) for t in RNG.integers(0, n_classes, 3)]
        data[name] = (rows, targets)
        with open(base / name, "wb") as f:
            pickle.dump({b"data": rows, labels_key.encode(): targets}, f)
    with open(base / meta_name, "wb") as f:
        pickle.dump({meta_key.encode(): [f"class{i}" for i in range(n_classes)]}, f)
    return data


@pytest.mark.parametrize("cls", ["CIFAR10", "CIFAR100"])
def test_cifar_reads_python_batches_as_pil_rgb(tmp_path, cls):
    if cls == "CIFAR10":
        data = _write_cifar(tmp_path, "cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)], ["test_batch"],
                            "batches.meta", "label_names", "labels", 10)
        first = "data_batch_1"
    else:
        data = _write_cifar(tmp_path, "cifar-100-python", ["train"], ["test"], "meta", "fine_label_names",
                            "fine_labels", 100)
        first = "train"
    ds = getattr(torchvision.datasets, cls)(str(tmp_path), train=True)
    img, target = ds[1]
    rows, targets = data[first]
    assert img.mode == "RGB" and img.size == (32, 32)
    assert np.array_equal(np.asarray(img), rows[1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert target == targets[1]
    # torchvision checks each batch's MD5, so it cannot read these files: the written arrays are the oracle.
    assert ds.classes[:2] == ["class0", "class1"] and len(ds) == 3 * (5 if cls == "CIFAR10" else 1)
    test_set = getattr(torchvision.datasets, cls)(str(tmp_path), train=False)
    assert len(test_set) == 3 and test_set.extra_repr() == "Split: Test"


def _mat_element(mtype, payload):
    return struct.pack("<II", mtype, len(payload)) + payload + b"\0" * ((-len(payload)) % 8)


def write_mat(path, arrays, compress=False):
    """A minimal MATLAB 5 writer: uint8 matrices ('X') and double matrices ('y')."""
    out = b"MATLAB 5.0 MAT-file, written by ember-vision's tests".ljust(116) + b"\0" * 8 + b"\x00\x01IM"
    for name, array in arrays.items():
        mx_class, mi_type = (9, 2) if array.dtype == np.uint8 else (6, 9)
        body = (_mat_element(6, struct.pack("<II", mx_class, 0)) +
                _mat_element(5, np.array(array.shape, "<i4").tobytes()) + _mat_element(1, name.encode()) +
                _mat_element(mi_type, array.tobytes(order="F")))
        element = _mat_element(14, body)
        out += struct.pack("<II", 15, len(zlib.compress(element))) + zlib.compress(element) if compress else element
    path.write_bytes(out)


@pytest.mark.parametrize("compress", [False, True])
def test_svhn_reads_mat_files(tmp_path, compress):
    images = RNG.integers(0, 256, (32, 32, 3, 4), dtype=np.uint8)
    labels = np.array([[10], [1], [2], [10]], dtype=np.float64)
    write_mat(tmp_path / "test_32x32.mat", {"X": images, "y": labels}, compress=compress)
    ds = torchvision.datasets.SVHN(str(tmp_path), split="test")
    assert [ds[i][1] for i in range(4)] == [0, 1, 2, 0]
    assert np.array_equal(np.asarray(ds[1][0]), images[:, :, :, 1])


def test_image_folder_reads_class_folders(tmp_path):
    colours = {"cat": (255, 0, 0), "dog": (0, 0, 255)}
    for name, colour in colours.items():
        (tmp_path / name).mkdir()
        for i in range(2):
            Image.new("RGB", (6, 4), colour).save(tmp_path / name / f"{i}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    ds = torchvision.datasets.ImageFolder(str(tmp_path), transform=torchvision.transforms.PILToTensor())
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1} and len(ds) == 4
    img, target = ds[3]
    assert target == 1 and tuple(img.shape) == (3, 4, 6) and int(img[2, 0, 0]) == 255 and int(img[0, 0, 0]) == 0
    assert ds.imgs[0][0].endswith("0.png")
    npy = torchvision.datasets.DatasetFolder(str(tmp_path), loader=lambda p: p, extensions=(".txt",),
                                             allow_empty=True)
    assert [s[1] for s in npy.samples] == [1]


def test_fake_data_is_repeatable_and_leaves_the_random_stream_alone():
    ds = torchvision.datasets.FakeData(size=4, image_size=(3, 8, 10), num_classes=3)
    torch.manual_seed(1)
    expected_next = torch.rand(1)
    torch.manual_seed(1)
    first = ds[2]
    assert torch.equal(torch.rand(1), expected_next)
    assert np.array_equal(np.asarray(ds[2][0]), np.asarray(first[0])) and first[0].size == (10, 8)
    assert 0 <= first[1] < 3 and len(ds) == 4
    with pytest.raises(IndexError):
        ds[4]


def test_data_loader_batches_a_vision_dataset():
    import ember_data
    ds = torchvision.datasets.FakeData(size=6, image_size=(3, 8, 8), transform=torchvision.transforms.ToTensor())
    batches = list(ember_data.DataLoader(ds, batch_size=4))
    assert tuple(batches[0][0].shape) == (4, 3, 8, 8) and tuple(batches[1][1].shape) == (2,)


def test_vision_dataset_subclass_gets_transforms_and_repr():
    class Squares(torchvision.datasets.VisionDataset):
        def __getitem__(self, index):
            return self.transforms(index, index * index)

        def __len__(self):
            return 3

    ds = Squares("~/data", transform=lambda x: x + 100, target_transform=str)
    assert ds[2] == (102, "4")
    assert "Number of datapoints: 3" in repr(ds) and ds.root.endswith("data") and "~" not in ds.root
    with pytest.raises(ValueError, match="Only transforms or transform/target_transform"):
        Squares(transforms=lambda x, y: (x, y), transform=abs)


def test_stl10_reads_the_binary_files_and_folds(tmp_path):
    folder = tmp_path / "stl10_binary"
    folder.mkdir()
    images = RNG.integers(0, 256, (4, 3, 96, 96), dtype=np.uint8)
    # The files store each channel column-major (transposed), labels 1-based.
    np.transpose(images, (0, 1, 3, 2)).tofile(folder / "train_X.bin")
    np.array([1, 3, 10, 2], np.uint8).tofile(folder / "train_y.bin")
    images[:2].transpose(0, 1, 3, 2).copy().tofile(folder / "unlabeled_X.bin")
    (folder / "fold_indices.txt").write_text("0 2\n1 3\n")
    (folder / "class_names.txt").write_text("\n".join(f"c{i}" for i in range(10)))
    ds = torchvision.datasets.STL10(str(tmp_path), split="train")
    img, target = ds[1]
    assert img.size == (96, 96) and target == 2 and ds.classes[9] == "c9"
    assert np.array_equal(np.asarray(img), images[1].transpose(1, 2, 0))
    assert [ds[i][1] for i in range(4)] == [0, 2, 9, 1]
    assert [t for _, t in torchvision.datasets.STL10(str(tmp_path), split="train", folds=1)] == [2, 1]
    both = torchvision.datasets.STL10(str(tmp_path), split="train+unlabeled")
    assert len(both) == 6 and both[5][1] == -1
    with pytest.raises(RuntimeError, match="test_X.bin"):
        torchvision.datasets.STL10(str(tmp_path), split="test")


def test_usps_reads_libsvm_bz2(tmp_path):
    import bz2
    pixels = RNG.uniform(-1, 1, (3, 256)).astype(np.float32)
    lines = [f"{label} " + " ".join(f"{i + 1}:{v:.6f}" for i, v in enumerate(row))
             for label, row in zip([3, 10, 1], pixels)]
    (tmp_path / "usps.t.bz2").write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    ds = torchvision.datasets.USPS(str(tmp_path), train=False)
    img, target = ds[1]
    assert len(ds) == 3 and target == 9 and img.mode == "L" and img.size == (16, 16)
    expected = ((np.round(pixels[1], 6) + 1) / 2 * 255).astype(np.uint8).reshape(16, 16)
    assert np.abs(np.asarray(img).astype(int) - expected.astype(int)).max() <= 1
    with pytest.raises(RuntimeError, match="usps.bz2"):
        torchvision.datasets.USPS(str(tmp_path), train=True)


@pytest.mark.skipif(not torchvision_available(), reason="torchvision (test-only oracle) not installed")
def test_usps_matches_torchvision_on_the_same_file(tmp_path):
    import bz2
    pixels = RNG.uniform(-1, 1, (2, 256)).astype(np.float32)
    lines = [f"{label} " + " ".join(f"{i + 1}:{v:.6f}" for i, v in enumerate(row)) for label, row in zip([5, 2], pixels)]
    (tmp_path / "usps.bz2").write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    ours, theirs = torchvision.datasets.USPS(str(tmp_path)), import_torchvision().datasets.USPS(str(tmp_path))
    for i in range(2):
        assert np.array_equal(np.asarray(ours[i][0]), np.asarray(theirs[i][0])) and ours[i][1] == theirs[i][1]


def test_mnist_download_fetches_and_decompresses_from_a_mirror(tmp_path, monkeypatch):
    # A local folder as the mirror (file:// URLs): the real download and extraction path.
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    images = RNG.integers(0, 256, (2, 28, 28), dtype=np.uint8)
    for name, array in [("train-images-idx3-ubyte.gz", images), ("train-labels-idx1-ubyte.gz", np.array([7, 2], np.uint8)),
                        ("t10k-images-idx3-ubyte.gz", images[:1]), ("t10k-labels-idx1-ubyte.gz", np.array([1], np.uint8))]:
        write_idx(mirror / name, array, compress=True)
    monkeypatch.setattr(torchvision.datasets.MNIST, "mirrors", [mirror.as_uri() + "/"])
    monkeypatch.setattr(torchvision.datasets.MNIST, "resources",
                        [(name, None) for name, _ in torchvision.datasets.MNIST.resources])
    ds = torchvision.datasets.MNIST(str(tmp_path / "data"), download=True)
    assert len(ds) == 2 and ds[0][1] == 7
    assert (tmp_path / "data" / "MNIST" / "raw" / "train-images-idx3-ubyte").exists()


def test_qmnist_reads_extended_labels(tmp_path):
    raw = tmp_path / "QMNIST" / "raw"
    raw.mkdir(parents=True)
    images = RNG.integers(0, 256, (3, 28, 28), dtype=np.uint8)
    labels = RNG.integers(0, 1000, (3, 8)).astype(np.int32)
    labels[:, 0] = [4, 0, 9]
    write_idx(raw / "qmnist-test-images-idx3-ubyte", images)
    write_idx(raw / "qmnist-test-labels-idx2-int", labels)
    ds = torchvision.datasets.QMNIST(str(tmp_path), train=False)
    assert len(ds) == 3 and [ds[i][1] for i in range(3)] == [4, 0, 9]
    assert np.array_equal(np.asarray(ds[2][0]), images[2])
    full = torchvision.datasets.QMNIST(str(tmp_path), what="test", compat=False)
    assert full[1][1].tolist() == labels[1].tolist()
    if torchvision_available():
        theirs = import_torchvision().datasets.QMNIST(str(tmp_path), what="test", compat=False)
        assert full[1][1].tolist() == theirs[1][1].tolist()
        assert np.array_equal(np.asarray(full[0][0]), np.asarray(theirs[0][0]))
