"""Colour and filter kernels on tensor images (..., C, H, W), with ember ops."""
import numpy as np

import ember_nn.functional as F
import ember_tensor as torch

from ._tensor_common import (cast_squeeze_in as _cast_squeeze_in, cast_squeeze_out as _cast_squeeze_out,
                             convert_image_dtype, get_dimensions, max_value)

__all__ = ["rgb_to_grayscale", "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma",
           "gaussian_blur", "invert", "posterize", "solarize", "adjust_sharpness", "autocontrast", "equalize"]


def rgb_to_grayscale(img, num_output_channels=1):
    """ITU-R 601-2 luma (0.2989 R + 0.587 G + 0.114 B), truncated to integer dtypes as torchvision does."""
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    c = get_dimensions(img)[0]
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if c == 3:
        r, g, b = img.unbind(dim=-3)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = 1.0 if img1.is_floating_point() else 255.0
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    """Blend with black."""
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    return _blend(img, torch.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the mean of the greyscale image."""
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    c = get_dimensions(img)[0]
    dtype = img.dtype if img.is_floating_point() else torch.float32
    grey = rgb_to_grayscale(img).to(dtype) if c == 3 else img.to(dtype)
    mean = torch.mean(grey, dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the greyscale image."""
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = torch.amax(img, dim=-3)
    minc = torch.amin(img, dim=-3)
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_divisor = torch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_divisor, (maxc - g) / cr_divisor, (maxc - b) / cr_divisor
    is_r, is_g = maxc == r, maxc == g
    hr = is_r.to(img.dtype) * (bc - gc)
    hg = (is_g & ~is_r).to(img.dtype) * (2.0 + rc - bc)
    hb = (~is_g & ~is_r).to(img.dtype) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(torch.int32) % 6
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    # One of six sectors picks each channel from (v, q, p, t): a one-hot mask over the sectors.
    sectors = torch.arange(6, dtype=torch.int32, device=img.device).view(-1, 1, 1)
    mask = (i.unsqueeze(dim=-3) == sectors).to(img.dtype)
    channels = [torch.stack(sector, dim=-3) for sector in ((v, q, p, p, t, v), (t, v, v, q, p, p), (p, p, t, v, v, q))]
    return torch.stack([(mask * a).sum(dim=-3) for a in channels], dim=-3)


def adjust_hue(img, hue_factor):
    """Rotate the hue by ``hue_factor`` turns (in [-0.5, 0.5]) through HSV."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if get_dimensions(img)[0] == 1:
        return img
    orig_dtype = img.dtype
    hsv = _rgb2hsv(convert_image_dtype(img, torch.float32))
    h, s, v = hsv.unbind(dim=-3)
    h = torch.remainder(h + hue_factor, 1.0)
    return convert_image_dtype(_hsv2rgb(torch.stack((h, s, v), dim=-3)), orig_dtype)


def adjust_gamma(img, gamma, gain=1):
    """``gain * x ** gamma`` on [0, 1] values."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    result = img if img.is_floating_point() else convert_image_dtype(img, torch.float32)
    result = (gain * result ** gamma).clamp(0, 1)
    return convert_image_dtype(result, img.dtype)


def _gaussian_kernel1d(kernel_size, sigma, dtype, device):
    ksize_half = (kernel_size - 1) * 0.5
    x = torch.linspace(-ksize_half, ksize_half, steps=kernel_size, dtype=dtype, device=device)
    pdf = torch.exp(-0.5 * (x / sigma) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    """Separable Gaussian kernel as one depthwise convolution, reflect-padded."""
    dtype = img.dtype if img.is_floating_point() else torch.float32
    kernel_x = _gaussian_kernel1d(kernel_size[0], sigma[0], dtype, img.device)
    kernel_y = _gaussian_kernel1d(kernel_size[1], sigma[1], dtype, img.device)
    kernel = torch.mm(kernel_y[:, None], kernel_x[None, :])
    channels = img.shape[-3]
    kernel = kernel.expand(channels, 1, kernel.shape[0], kernel.shape[1]).contiguous()
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2]
    img = F.conv2d(F.pad(img, padding, mode="reflect"), kernel, groups=channels)
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def invert(img):
    """``max - x``."""
    bound = 1.0 if img.is_floating_point() else 255
    return (bound - img).to(img.dtype) if img.is_floating_point() else (255 - img.to(torch.int32)).to(img.dtype)


def posterize(img, bits):
    """Keep the ``bits`` high bits (uint8 images)."""
    if img.dtype != torch.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    mask = -int(2 ** (8 - bits))
    return torch.bitwise_and(img.to(torch.int32), mask).to(torch.uint8)


def solarize(img, threshold):
    """Invert the pixels at or above ``threshold``."""
    if threshold > max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return torch.where(img >= threshold, invert(img), img)


def adjust_sharpness(img, sharpness_factor):
    """Blend with the image smoothed by PIL's 3x3 smoothing kernel (the border kept)."""
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    dtype = img.dtype if img.is_floating_point() else torch.float32
    # PIL's SMOOTH filter: ones with 5 at the centre, normalised.
    kernel = torch.tensor([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]], dtype=dtype, device=img.device) / 13.0
    channels = img.shape[-3]
    kernel = kernel.expand(channels, 1, 3, 3).contiguous()
    result, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    result = F.conv2d(result, kernel, groups=channels)
    result = _cast_squeeze_out(result, need_cast, need_squeeze, out_dtype)
    degenerate = img.clone()
    degenerate[..., 1:-1, 1:-1] = result
    return _blend(img, degenerate, sharpness_factor)


def autocontrast(img):
    """Stretch each channel to [0, max]."""
    bound = float(max_value(img.dtype))
    dtype = img.dtype if img.is_floating_point() else torch.float32
    minimum = torch.amin(img, dim=(-2, -1), keepdim=True).to(dtype)
    maximum = torch.amax(img, dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (maximum - minimum)
    eq_idxs = torch.isfinite(scale).logical_not()
    minimum = torch.where(eq_idxs, torch.zeros_like(minimum), minimum)
    scale = torch.where(eq_idxs, torch.ones_like(scale), scale)
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def equalize(img):
    """Histogram equalisation of uint8 images, channel by channel (PIL's rule)."""
    if img.dtype != torch.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    array = img.detach().cpu().numpy()
    flat = array.reshape(-1, array.shape[-2] * array.shape[-1])
    out = np.empty_like(flat)
    for k, channel in enumerate(flat):
        hist = np.bincount(channel, minlength=256)
        nonzero = hist[hist != 0]
        step = (nonzero[:-1].sum() // 255) if len(nonzero) else 0
        if step == 0:
            out[k] = channel
            continue
        lut = (np.cumsum(hist) + step // 2) // step
        lut = np.concatenate([[0], lut[:-1]]).clip(0, 255).astype(np.uint8)
        out[k] = lut[channel]
    return torch.from_numpy(out.reshape(array.shape)).to(img.device)
