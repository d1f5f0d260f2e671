"""The transforms.functional cases checked against torchvision, shared by the tests and by
tools/torchvision_tables.py (which records torchvision's outputs on a small image into
tests/data/functional_expected.npz, so the check runs without torchvision too)."""
import numpy as np
from PIL import Image

__all__ = ["make_images", "CASES", "UINT8_ONLY", "as_numpy"]


def make_images(height, width, seed=0):
    """(PIL RGB image, uint8 CHW array, float32 CHW array) of one smooth-plus-noise picture."""
    rng = np.random.default_rng(seed)
    # Smooth content (a gradient) plus noise, so that resampling differences show.
    base = (np.linspace(0, 200, width)[None, :, None] + np.linspace(0, 50, height)[:, None, None]
            + rng.integers(0, 50, (height, width, 3))).clip(0, 255).astype(np.uint8)
    uint8_chw = np.ascontiguousarray(base.transpose(2, 0, 1))
    return Image.fromarray(base), uint8_chw, (uint8_chw / 255.0).astype(np.float32)


def as_numpy(out):
    """A transform's output (PIL image, tensor of either library, or a tuple of them) as NumPy."""
    if isinstance(out, Image.Image):
        return np.asarray(out)
    if isinstance(out, (tuple, list)):
        return np.stack([as_numpy(o) for o in out])
    return out.detach().numpy() if hasattr(out, "detach") else out.numpy()


def _interp(F_module, name):
    return getattr(F_module.InterpolationMode, name)


# (id, function of (functional module, image)): each runs on PIL, uint8 and float images.
CASES = [
    ("resize_bilinear_down", lambda f, im: f.resize(im, [20, 17])),
    ("resize_bilinear_up", lambda f, im: f.resize(im, [50, 61])),
    ("resize_short_edge", lambda f, im: f.resize(im, 24)),
    ("resize_max_size", lambda f, im: f.resize(im, 24, max_size=28)),
    ("resize_bicubic_down", lambda f, im: f.resize(im, [20, 17], _interp(f, "BICUBIC"))),
    ("resize_nearest", lambda f, im: f.resize(im, [20, 17], _interp(f, "NEAREST"))),
    ("center_crop", lambda f, im: f.center_crop(im, [20, 25])),
    ("center_crop_larger_than_image", lambda f, im: f.center_crop(im, [41, 50])),
    ("crop", lambda f, im: f.crop(im, 3, 5, 10, 12)),
    ("crop_outside", lambda f, im: f.crop(im, -3, 40, 10, 12)),
    ("pad_constant", lambda f, im: f.pad(im, [1, 2, 3, 4], fill=7)),
    ("pad_edge", lambda f, im: f.pad(im, [3, 2], padding_mode="edge")),
    ("pad_reflect", lambda f, im: f.pad(im, 3, padding_mode="reflect")),
    ("pad_symmetric", lambda f, im: f.pad(im, [2, 1, 3, 4], padding_mode="symmetric")),
    ("hflip", lambda f, im: f.hflip(im)),
    ("vflip", lambda f, im: f.vflip(im)),
    ("rotate_nearest", lambda f, im: f.rotate(im, 30.0)),
    ("rotate_bilinear_expand", lambda f, im: f.rotate(im, -47.0, _interp(f, "BILINEAR"), expand=True)),
    ("rotate_center_fill", lambda f, im: f.rotate(im, 15.0, center=[10, 12], fill=[9, 20, 30])),
    ("affine", lambda f, im: f.affine(im, angle=20.0, translate=[3, -2], scale=0.9, shear=[5.0, 2.0])),
    ("affine_bilinear", lambda f, im: f.affine(im, angle=-10.0, translate=[0, 4], scale=1.2, shear=0.0,
                                               interpolation=_interp(f, "BILINEAR"))),
    ("perspective", lambda f, im: f.perspective(im, [[0, 0], [44, 0], [44, 36], [0, 36]],
                                                [[3, 2], [40, 5], [42, 33], [1, 30]])),
    ("perspective_nearest_fill", lambda f, im: f.perspective(im, [[0, 0], [44, 0], [44, 36], [0, 36]],
                                                             [[5, 1], [44, 4], [38, 36], [2, 31]],
                                                             _interp(f, "NEAREST"), fill=[9, 8, 7])),
    ("brightness", lambda f, im: f.adjust_brightness(im, 1.4)),
    ("contrast", lambda f, im: f.adjust_contrast(im, 0.6)),
    ("saturation", lambda f, im: f.adjust_saturation(im, 1.7)),
    ("hue", lambda f, im: f.adjust_hue(im, 0.2)),
    ("gamma", lambda f, im: f.adjust_gamma(im, 0.7, gain=1.1)),
    ("sharpness", lambda f, im: f.adjust_sharpness(im, 1.8)),
    ("grayscale_3", lambda f, im: f.rgb_to_grayscale(im, num_output_channels=3)),
    ("gaussian_blur", lambda f, im: f.gaussian_blur(im, [5, 3], [1.2, 0.7])),
    ("invert", lambda f, im: f.invert(im)),
    ("autocontrast", lambda f, im: f.autocontrast(im)),
    ("five_crop", lambda f, im: f.five_crop(im, [10, 12])),
    ("resized_crop", lambda f, im: f.resized_crop(im, 2, 3, 20, 30, [16, 16])),
]
UINT8_ONLY = [
    ("posterize", lambda f, im: f.posterize(im, 3)),
    ("solarize", lambda f, im: f.solarize(im, 100)),
    ("equalize", lambda f, im: f.equalize(im)),
]
