"""utils.make_grid / save_image against torchvision's; io's PNG/JPEG round trips."""
import numpy as np
import pytest
from PIL import Image

import ember_tensor as torch
import ember_vision as torchvision
from ember_vision.io import ImageReadMode
from torchvision_oracle import import_torchvision, torchvision_available

needs_torchvision = pytest.mark.skipif(not torchvision_available(), reason="torchvision (test-only oracle) not installed")
BATCH = np.random.default_rng(0).uniform(-0.5, 1.5, (5, 3, 6, 7)).astype(np.float32)


@needs_torchvision
@pytest.mark.parametrize("kwargs", [{}, {"nrow": 2, "padding": 1, "pad_value": 0.5}, {"normalize": True},
                                    {"normalize": True, "value_range": (0.0, 1.0), "scale_each": True}], ids=str)
def test_make_grid_matches_torchvision(kwargs):
    import torch as real_torch
    tv = import_torchvision()
    got = torchvision.utils.make_grid(torch.from_numpy(BATCH), **kwargs).numpy()
    expected = tv.utils.make_grid(real_torch.from_numpy(BATCH), **kwargs).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-6)


@needs_torchvision
def test_save_image_writes_torchvisions_pixels(tmp_path):
    import torch as real_torch
    tv = import_torchvision()
    torchvision.utils.save_image(torch.from_numpy(BATCH), tmp_path / "ours.png", nrow=3)
    tv.utils.save_image(real_torch.from_numpy(BATCH), tmp_path / "theirs.png", nrow=3)
    assert np.array_equal(np.asarray(Image.open(tmp_path / "ours.png")), np.asarray(Image.open(tmp_path / "theirs.png")))


def test_make_grid_of_one_greyscale_image_is_rgb():
    assert tuple(torchvision.utils.make_grid(torch.zeros(1, 4, 5)).shape) == (3, 4, 5)


def test_png_round_trip_is_exact(tmp_path):
    image = torch.from_numpy(np.random.default_rng(1).integers(0, 256, (3, 9, 11), dtype=np.uint8))
    path = str(tmp_path / "x.png")
    torchvision.io.write_png(image, path)
    assert np.array_equal(np.asarray(Image.open(path)), image.numpy().transpose(1, 2, 0))
    assert torch.equal(torchvision.io.read_image(path), image)
    data = torchvision.io.read_file(path)
    assert data.dtype == torch.uint8 and data.dim() == 1
    assert torch.equal(torchvision.io.decode_image(data), image)
    assert torch.equal(torchvision.io.decode_png(torchvision.io.encode_png(image)), image)
    grey = torchvision.io.read_image(path, ImageReadMode.GRAY)
    assert tuple(grey.shape) == (1, 9, 11)
    expected = np.asarray(Image.open(path).convert("L"))
    assert np.array_equal(grey.numpy()[0], expected)
    assert tuple(torchvision.io.decode_image(data, ImageReadMode.RGB_ALPHA).shape) == (4, 9, 11)


def test_read_image_of_a_pil_written_file(tmp_path):
    array = np.random.default_rng(2).integers(0, 256, (5, 4), dtype=np.uint8)
    Image.fromarray(array).save(tmp_path / "g.png")
    assert np.array_equal(torchvision.io.read_image(str(tmp_path / "g.png")).numpy()[0], array)


def test_jpeg_round_trip_is_close(tmp_path):
    smooth = np.linspace(0, 255, 16 * 16 * 3).reshape(16, 16, 3).astype(np.uint8)
    image = torch.from_numpy(np.ascontiguousarray(smooth.transpose(2, 0, 1)))
    path = str(tmp_path / "x.jpg")
    torchvision.io.write_jpeg(image, path, quality=95)
    decoded = torchvision.io.read_image(path)
    assert tuple(decoded.shape) == (3, 16, 16)
    assert np.abs(decoded.numpy().astype(int) - image.numpy().astype(int)).mean() < 3
    with pytest.raises(ValueError, match="between 1 and 100"):
        torchvision.io.encode_jpeg(image, quality=0)
    with pytest.raises(RuntimeError, match="dtype should be uint8"):
        torchvision.io.encode_png(image.to(torch.float32))


@needs_torchvision
@pytest.mark.parametrize("kwargs", [{}, {"colors": "red", "width": 2}, {"fill": True, "labels": ["a", "bb", "c"]},
                                    {"labels": ["x", "y", "z"], "fill_labels": True, "colors": ["blue", (0, 255, 0), "#ff00ff"]}],
                         ids=str)
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_draw_bounding_boxes_matches_torchvision(kwargs, dtype):
    import torch as real_torch
    tv = import_torchvision()
    image = np.random.default_rng(4).integers(0, 256, (3, 30, 40), dtype=np.uint8)
    if dtype == "float32":
        image = (image / 255).astype(np.float32)
    boxes = np.array([[2, 3, 20, 15], [10, 10, 38, 28], [0, 0, 5, 5]], np.float32)
    got = torchvision.utils.draw_bounding_boxes(torch.from_numpy(image), torch.from_numpy(boxes), **kwargs)
    expected = tv.utils.draw_bounding_boxes(real_torch.from_numpy(image), real_torch.from_numpy(boxes), **kwargs)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-6)


@needs_torchvision
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_draw_segmentation_masks_matches_torchvision(dtype):
    import torch as real_torch
    tv = import_torchvision()
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (3, 12, 14), dtype=np.uint8)
    if dtype == "float32":
        image = (image / 255).astype(np.float32)
    masks = rng.uniform(size=(3, 12, 14)) > 0.6
    for colors in (None, ["red", "green", (10, 20, 30)]):
        got = torchvision.utils.draw_segmentation_masks(torch.from_numpy(image), torch.from_numpy(masks), 0.6, colors)
        expected = tv.utils.draw_segmentation_masks(real_torch.from_numpy(image), real_torch.from_numpy(masks), 0.6,
                                                    colors)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-5)


@needs_torchvision
def test_flow_to_image_matches_torchvision():
    import torch as real_torch
    tv = import_torchvision()
    flow = np.random.default_rng(7).normal(size=(2, 9, 11)).astype(np.float32)
    got = torchvision.utils.flow_to_image(torch.from_numpy(flow)).numpy().astype(int)
    expected = tv.utils.flow_to_image(real_torch.from_numpy(flow)).numpy().astype(int)
    assert got.shape == expected.shape == (3, 9, 11)
    assert np.abs(got - expected).max() <= 1 and (got != expected).mean() < 0.02
    batched = torchvision.utils.flow_to_image(torch.from_numpy(np.stack([flow, flow])))
    assert tuple(batched.shape) == (2, 3, 9, 11)


def test_decode_gif_and_webp(tmp_path):
    rng = np.random.default_rng(8)
    frames = [Image.fromarray(rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)).convert("P") for _ in range(3)]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:])
    frames[0].save(tmp_path / "one.gif")
    animation = torchvision.io.decode_gif(torchvision.io.read_file(str(tmp_path / "a.gif")))
    assert tuple(animation.shape) == (3, 3, 6, 5)
    assert np.array_equal(animation.numpy()[1], np.asarray(frames[1].convert("RGB")).transpose(2, 0, 1))
    assert tuple(torchvision.io.decode_gif(torchvision.io.read_file(str(tmp_path / "one.gif"))).shape) == (3, 6, 5)
    rgba = rng.integers(0, 256, (4, 7, 4), dtype=np.uint8)
    Image.fromarray(rgba).save(tmp_path / "x.webp", lossless=True)
    decoded = torchvision.io.decode_webp(torchvision.io.read_file(str(tmp_path / "x.webp")))
    assert np.array_equal(decoded.numpy(), rgba.transpose(2, 0, 1))


@needs_torchvision
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_draw_keypoints_matches_torchvision(dtype):
    import torch as real_torch
    tv = import_torchvision()
    image = np.random.default_rng(10).integers(0, 256, (3, 30, 40), dtype=np.uint8)
    if dtype == "float32":
        image = (image / 255).astype(np.float32)
    keypoints = np.array([[[5, 5], [20, 10], [35, 25]], [[10, 20], [15, 25], [30, 5]]], np.float32)
    visibility = np.array([[True, True, False], [True, True, True]])
    kwargs = {"connectivity": [(0, 1), (1, 2)], "colors": "blue", "radius": 3, "width": 2}
    got = torchvision.utils.draw_keypoints(torch.from_numpy(image), torch.from_numpy(keypoints),
                                           visibility=torch.from_numpy(visibility), **kwargs)
    expected = tv.utils.draw_keypoints(real_torch.from_numpy(image), real_torch.from_numpy(keypoints),
                                       visibility=real_torch.from_numpy(visibility), **kwargs)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-6)
