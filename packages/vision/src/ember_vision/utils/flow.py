"""``flow_to_image``: optical flow (2, H, W) as the Middlebury colour-wheel picture."""
import math

import numpy as np

import ember_tensor as torch

__all__ = ["flow_to_image"]


def _make_colorwheel():
    # Baker et al., "A Database and Evaluation Methodology for Optical Flow" (ICCV 2007):
    # 55 hues red-yellow-green-cyan-blue-magenta, as torchvision builds them.
    segments = [(15, 0, 1, "up"), (6, 1, 0, "down"), (4, 1, 2, "up"), (11, 2, 1, "down"), (13, 2, 0, "up"),
                (6, 0, 2, "down")]
    wheel = np.zeros((sum(n for n, *_ in segments), 3), np.float32)
    col = 0
    for n, full, ramp, direction in segments:
        steps = np.floor(255 * np.arange(n, dtype=np.float32) / n)
        wheel[col:col + n, full] = 255
        wheel[col:col + n, ramp] = steps if direction == "up" else 255 - steps
        col += n
    return wheel


def flow_to_image(flow):
    """A uint8 RGB image (3, H, W) (or (N, 3, H, W)) of a float flow (2, H, W) (or batched):
    the direction is the hue, the magnitude (relative to the largest) the saturation."""
    if flow.dtype != torch.float32:
        raise ValueError(f"Flow should be of dtype torch.float, got {flow.dtype}.")
    orig_ndim = flow.ndim
    if flow.ndim == 3:
        flow = flow[None]
    if flow.ndim != 4 or flow.shape[1] != 2:
        raise ValueError(f"Input flow should have shape (2, H, W) or (N, 2, H, W), got {tuple(flow.shape)}.")
    max_norm = (flow ** 2).sum(dim=1).sqrt().max()
    normalized = flow / (max_norm + float(np.finfo(np.float32).eps))
    colorwheel = torch.from_numpy(_make_colorwheel()).to(flow.device)
    num_cols = colorwheel.shape[0]
    norm = (normalized ** 2).sum(dim=1).sqrt()
    a = torch.atan2(-normalized[:, 1], -normalized[:, 0]) / math.pi
    fk = (a + 1) / 2 * (num_cols - 1)
    k0 = torch.floor(fk).to(torch.int64)
    k1 = torch.where(k0 + 1 == num_cols, torch.zeros_like(k0), k0 + 1)
    f = fk - k0.to(fk.dtype)
    channels = []
    for c in range(3):
        wheel = colorwheel[:, c]
        col0, col1 = wheel[k0] / 255.0, wheel[k1] / 255.0
        col = 1 - norm * (1 - ((1 - f) * col0 + f * col1))
        channels.append(torch.floor(255 * col).to(torch.uint8))
    img = torch.stack(channels, dim=1)
    return img[0] if orig_ndim == 3 else img
