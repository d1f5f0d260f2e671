"""``make_grid`` and ``save_image``: a batch of images tiled into one, for looking at."""
import math

from PIL import Image

import ember_tensor as torch

__all__ = ["make_grid", "save_image"]


def _normalize(t, value_range):
    low, high = (float(t.min()), float(t.max())) if value_range is None else value_range
    return (t.clamp(min=low, max=high) - low) / max(high - low, 1e-5)


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """Tile a batch (B, C, H, W) (or a list of (C, H, W)) into one (3 or C, H', W') image,
    ``nrow`` per row with ``padding`` pixels of ``pad_value`` between them.

    Args:
        normalize: shift and scale to [0, 1] by ``value_range`` (default: the min and max).
        scale_each: normalise each image by its own range.

    >>> import ember_tensor as torch
    >>> make_grid(torch.zeros(4, 3, 2, 2), nrow=2, padding=1).shape
    torch.Size([3, 7, 7])
    """
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack(list(tensor), dim=0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.shape[0] == 1:  # a single greyscale image shown as RGB
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.shape[1] == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        if scale_each:
            tensor = torch.stack([_normalize(t, value_range) for t in tensor.unbind(0)])
        else:
            tensor = _normalize(tensor, value_range)
    if tensor.shape[0] == 1:
        return tensor.squeeze(0)
    nmaps = tensor.shape[0]
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.shape[2] + padding), int(tensor.shape[3] + padding)
    num_channels = tensor.shape[1]
    grid = torch.full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value,
                      dtype=tensor.dtype, device=tensor.device)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        top, left = y * height + padding, x * width + padding
        grid[:, top:top + height - padding, left:left + width - padding] = tensor[k]
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Save a tensor image, or a batch tiled by ``make_grid(**kwargs)``, as an image file
    (values in [0, 1], rounded to 8 bits).

    Args:
        tensor: (C, H, W), (B, C, H, W) or a list of images.
        fp: a path or a binary file object.
        format: the file format when ``fp`` has no extension to tell.
    """
    grid = make_grid(tensor, **kwargs)
    ndarr = (grid * 255 + 0.5).clamp(0, 255).permute(1, 2, 0).to(torch.uint8).detach().cpu().numpy()
    Image.fromarray(ndarr.squeeze(-1) if ndarr.shape[-1] == 1 else ndarr).save(fp, format=format)
