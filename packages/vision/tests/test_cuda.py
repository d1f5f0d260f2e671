"""Tensor transforms and ops on CUDA tensors give the CPU's results and stay on the device.

CUDA runs on Numba's simulator unless NUMBA_ENABLE_CUDASIM=0 is set (on a real GPU);
images are tiny because the simulator runs every GPU thread in Python.
"""
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_tensor as torch  # noqa: E402
import ember_vision.ops as ops  # noqa: E402
import ember_vision.transforms.functional as F  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator")

IMAGE = np.random.default_rng(0).uniform(0, 1, (3, 6, 7)).astype(np.float32)

CASES = [
    ("resize_antialias", lambda im: F.resize(im, [4, 5])),
    ("normalize", lambda im: F.normalize(im, [0.4, 0.5, 0.6], [0.2, 0.3, 0.4])),
    ("hflip_crop", lambda im: F.crop(F.hflip(im), 1, 2, 4, 4)),
    ("pad_reflect", lambda im: F.pad(im, [1, 2], padding_mode="reflect")),
    ("pad_symmetric", lambda im: F.pad(im, 2, padding_mode="symmetric")),
    ("brightness_saturation", lambda im: F.adjust_saturation(F.adjust_brightness(im, 1.3), 0.6)),
    ("hue", lambda im: F.adjust_hue(im, 0.2)),
    ("rotate_fill", lambda im: F.rotate(im, 30.0, F.InterpolationMode.BILINEAR, fill=[0.1, 0.2, 0.3])),
    ("gaussian_blur", lambda im: F.gaussian_blur(im, 3, 0.8)),
    ("sharpness", lambda im: F.adjust_sharpness(im, 1.5)),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_tensor_transforms_on_cuda_match_the_cpu(name, fn):
    out = fn(torch.tensor(IMAGE, device="cuda"))
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.cpu().numpy(), fn(torch.tensor(IMAGE)).numpy(), atol=1e-5)


def test_box_ops_and_roi_align_on_cuda():
    boxes = np.array([[0, 0, 4, 4], [1, 1, 5, 5], [6, 6, 7, 8]], np.float32)
    gpu = torch.tensor(boxes, device="cuda")
    np.testing.assert_allclose(ops.box_iou(gpu, gpu).cpu().numpy(),
                               ops.box_iou(torch.tensor(boxes), torch.tensor(boxes)).numpy(), rtol=1e-6)
    keep = ops.nms(gpu, torch.tensor([0.9, 0.8, 0.7], device="cuda"), 0.3)
    assert keep.device.type == "cuda" and keep.cpu().tolist() == [0, 2]
    rois = torch.tensor([[0.0, 0.5, 0.5, 5.0, 4.0]])
    x = IMAGE[None]
    got = ops.roi_align(torch.tensor(x, device="cuda"), rois.to("cuda"), (2, 2), sampling_ratio=2)
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), ops.roi_align(torch.tensor(x), rois, (2, 2), sampling_ratio=2).numpy(),
                               atol=1e-6)
