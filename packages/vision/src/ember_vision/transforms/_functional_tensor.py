"""The tensor half of ``transforms.functional``: images are ember tensors (..., C, H, W), the
arithmetic is torchvision's, written with ember ops (so it runs on any device ember has)."""
import math

import numpy as np

import ember_nn.functional as F
import ember_tensor as torch

__all__ = ["get_dimensions", "hflip", "vflip", "crop", "rgb_to_grayscale", "adjust_brightness", "adjust_contrast",
           "adjust_saturation", "adjust_hue", "adjust_gamma", "pad", "resize", "affine", "rotate",
           "compute_affine_output_size", "perspective", "gaussian_blur", "erase", "convert_image_dtype", "max_value", "invert",
           "posterize", "solarize", "adjust_sharpness", "autocontrast", "equalize"]

_INT_TYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _assert_image_tensor(img):
    if not isinstance(img, torch.Tensor) or img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    """``[channels, height, width]``; a 2-d tensor has one channel."""
    _assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def max_value(dtype):
    """The largest value of an image dtype: 255 for uint8, 1.0 for floating point."""
    if dtype == torch.uint8:
        return 255
    if dtype == torch.int8:
        return 127
    if dtype == torch.int16:
        return 32767
    if dtype == torch.int32:
        return 2147483647
    if dtype == torch.int64:
        return 9223372036854775807
    return 1.0


def convert_image_dtype(image, dtype=torch.float):
    """Convert, rescaling values: uint8 255 is float 1.0 (float->int maps 1.0 to 255 by ``* 255.999``)."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or (
                image.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        return (image * (float(max_value(dtype)) + 1.0 - eps)).to(dtype)
    input_max = float(max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return torch.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def _cast_squeeze_in(img, req_dtypes):
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = out_dtype not in req_dtypes
    if need_cast:
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype):
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype in _INT_TYPES:
            img = torch.round(img)  # round before the cast truncates
        img = img.to(out_dtype)
    return img


def hflip(img):
    """Mirror left-right (the last dimension)."""
    return img.flip(-1)


def vflip(img):
    """Mirror top-bottom."""
    return img.flip(-2)


def crop(img, top, left, height, width):
    """The box at (top, left) of (height, width); the part outside the image is zero."""
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0), max(right - max(w, left), 0),
                   max(bottom - max(h, top), 0)]
        inside = img[..., max(top, 0):bottom, max(left, 0):right]
        return pad(inside, padding, fill=0)
    return img[..., top:bottom, left:right]


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


def _pad_symmetric(img, padding):
    # Mirror including the edge pixel: index arithmetic, as ember's pad has no "symmetric" mode.
    left, right, top, bottom = padding
    h, w = img.shape[-2], img.shape[-1]

    def indices(n, before, after):
        idx = list(range(-before, 0)) + list(range(n)) + list(range(n, n + after))
        period = 2 * n
        out = []
        for i in idx:
            i %= period
            out.append(i if i < n else period - 1 - i)
        return torch.tensor(out, dtype=torch.int64, device=img.device)

    img = torch.index_select(img, -1, indices(w, left, right))
    return torch.index_select(img, -2, indices(h, top, bottom))


def _parse_pad_padding(padding):
    if isinstance(padding, int):
        pad_left = pad_right = pad_top = pad_bottom = padding
    elif len(padding) == 1:
        pad_left = pad_right = pad_top = pad_bottom = padding[0]
    elif len(padding) == 2:
        pad_left = pad_right = padding[0]
        pad_top = pad_bottom = padding[1]
    else:
        pad_left, pad_top, pad_right, pad_bottom = padding
    return [pad_left, pad_right, pad_top, pad_bottom]


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the last two dimensions; ``padding_mode`` constant, edge, reflect or symmetric."""
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _parse_pad_padding(padding)
    if padding_mode == "edge":
        padding_mode = "replicate"
    elif padding_mode == "symmetric":
        if min(p) < 0:
            raise ValueError("Padding can not be negative for symmetric padding_mode")
        return _pad_symmetric(img, p)
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = padding_mode != "constant" and img.dtype not in (torch.float32, torch.float64)
    if need_cast:
        img = img.to(torch.float32)
    if padding_mode == "constant":
        img = F.pad(img, p, mode="constant", value=float(fill or 0))
    else:
        img = F.pad(img, p, mode=padding_mode)
    if need_squeeze:
        img = img.squeeze(dim=0)
    return img.to(out_dtype) if need_cast else img


def resize(img, size, interpolation="bilinear", antialias=True):
    """Resize the last two dimensions to ``size = [h, w]`` by ``F.interpolate``; integer images
    are resampled in float32 and rounded back."""
    if isinstance(size, tuple):
        size = list(size)
    if antialias and interpolation not in ("bilinear", "bicubic"):
        antialias = False  # antialiasing is defined for the two smooth filters only
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [torch.float32, torch.float64])
    align_corners = False if interpolation in ("bilinear", "bicubic") else None
    img = F.interpolate(img, size=size, mode=interpolation, align_corners=align_corners, antialias=antialias)
    if interpolation == "bicubic" and out_dtype == torch.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def _gen_affine_grid(theta, w, h, ow, oh):
    # Pixel centres of the output in coordinates centred on the image, mapped by theta and
    # rescaled to grid_sample's [-1, 1] (align_corners=False).
    d = 0.5
    factory = {"dtype": theta.dtype, "device": theta.device}
    x_grid = torch.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, **factory)
    y_grid = torch.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh, **factory)
    base_grid = torch.stack([x_grid.view(1, ow).expand(oh, ow), y_grid.view(oh, 1).expand(oh, ow),
                             torch.ones(oh, ow, **factory)], dim=-1)
    rescaled_theta = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], **factory)
    output_grid = base_grid.view(1, oh * ow, 3).bmm(rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


def _apply_grid_transform(img, grid, mode, fill):
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        # A channel of ones marks where the sample came from inside the image.
        mask = torch.ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype, device=img.device)
        img = torch.cat((img, mask), dim=1)
    img = F.grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = img[:, -1:, :, :].expand(img.shape[0], img.shape[1] - 1, img.shape[2], img.shape[3])
        img = img[:, :-1, :, :]
        fill_list = list(fill) if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = torch.tensor(fill_list, dtype=img.dtype, device=img.device).view(1, len(fill_list), 1, 1)
        fill_img = fill_img.expand(img.shape)
        if mode == "nearest":
            img = torch.where(mask < 0.5, fill_img, img)
        else:
            img = img * mask + (1.0 - mask) * fill_img
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def affine(img, matrix, interpolation="nearest", fill=None):
    """Sample the image at the inverse affine ``matrix`` (6 numbers, centred coordinates)."""
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=img.shape[-1], h=img.shape[-2], ow=img.shape[-1], oh=img.shape[-2])
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def compute_affine_output_size(matrix, w, h):
    """The (width, height) that holds the whole image after the inverse affine ``matrix``
    (for ``rotate(expand=True)``), rounded as PIL does."""
    corners = [(-0.5 * w, -0.5 * h), (-0.5 * w, 0.5 * h), (0.5 * w, 0.5 * h), (0.5 * w, -0.5 * h)]
    xs = [matrix[0] * x + matrix[1] * y + matrix[2] for x, y in corners]
    ys = [matrix[3] * x + matrix[4] * y + matrix[5] for x, y in corners]
    tol = 1e-4  # truncate so that 1e-15 above an integer does not ceil to the next one

    def extent(values, half):
        low, high = min(values) + half, max(values) + half
        return math.ceil(math.trunc(high / tol) * tol) - math.floor(math.trunc(low / tol) * tol)
    return int(extent(xs, 0.5 * w)), int(extent(ys, 0.5 * h))


def rotate(img, matrix, interpolation="nearest", expand=False, fill=None):
    """Rotate by the inverse affine ``matrix``; ``expand`` grows the output to hold the whole image."""
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = compute_affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=w, h=h, ow=ow, oh=oh)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _perspective_grid(coeffs, ow, oh, dtype, device):
    # PIL's rule (Geometry.c): x_in = (c0 x + c1 y + c2) / (c6 x + c7 y + 1), and so for y,
    # at output pixel centres, then rescaled to grid_sample's [-1, 1].
    factory = {"dtype": dtype, "device": device}
    theta1 = torch.tensor([[[coeffs[0], coeffs[1], coeffs[2]], [coeffs[3], coeffs[4], coeffs[5]]]], **factory)
    theta2 = torch.tensor([[[coeffs[6], coeffs[7], 1.0], [coeffs[6], coeffs[7], 1.0]]], **factory)
    d = 0.5
    x_grid = torch.linspace(d, ow * 1.0 + d - 1.0, steps=ow, **factory)
    y_grid = torch.linspace(d, oh * 1.0 + d - 1.0, steps=oh, **factory)
    base_grid = torch.stack([x_grid.view(1, ow).expand(oh, ow), y_grid.view(oh, 1).expand(oh, ow),
                             torch.ones(oh, ow, **factory)], dim=-1).view(1, oh * ow, 3)
    rescaled_theta1 = theta1.transpose(1, 2) / torch.tensor([0.5 * ow, 0.5 * oh], **factory)
    output_grid = base_grid.bmm(rescaled_theta1) / base_grid.bmm(theta2.transpose(1, 2)) - 1.0
    return output_grid.view(1, oh, ow, 2)


def perspective(img, perspective_coeffs, interpolation="bilinear", fill=None):
    """Sample the image through the perspective map of 8 coefficients (output -> input)."""
    dtype = img.dtype if img.is_floating_point() else torch.float32
    grid = _perspective_grid(perspective_coeffs, ow=img.shape[-1], oh=img.shape[-2], dtype=dtype, device=img.device)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


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


def erase(img, i, j, h, w, v, inplace=False):
    """Overwrite the box (i, j, h, w) with ``v``."""
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


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
