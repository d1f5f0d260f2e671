"""Conversions between PIL images, arrays and tensors, and normalisation."""
import ember_nn as nn

from . import functional as F

__all__ = ["ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize", "LinearTransformation"]


class ToTensor:
    """PIL image or ndarray (H, W, C) -> float tensor (C, H, W); uint8 is scaled to [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """PIL image -> tensor (C, H, W) of the image's dtype, not scaled."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """Tensor (C, H, W) or ndarray (H, W, C) -> PIL image of ``mode`` (inferred when None)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{self.__class__.__name__}({'' if self.mode is None else f'mode={self.mode}'})"


class ConvertImageDtype(nn.Module):
    """Convert a tensor image to ``dtype``, rescaling the values."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(nn.Module):
    """``(x - mean) / std`` per channel on a float tensor image."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"




class LinearTransformation(nn.Module):
    """Flatten each image (C*H*W), subtract ``mean_vector`` and multiply by the square
    ``transformation_matrix`` (e.g. ZCA whitening); the shape is kept."""

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        if transformation_matrix.shape[0] != transformation_matrix.shape[1]:
            raise ValueError("transformation_matrix should be square. Got "
                             f"{tuple(transformation_matrix.shape)} rectangular matrix.")
        if mean_vector.shape[0] != transformation_matrix.shape[0]:
            raise ValueError(f"mean_vector should have the same length {mean_vector.shape[0]} as any one of the "
                             f"dimensions of the transformation_matrix [{tuple(transformation_matrix.shape)}]")
        if transformation_matrix.device != mean_vector.device:
            raise ValueError(f"Input tensors should be on the same device. Got {transformation_matrix.device} and "
                             f"{mean_vector.device}")
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def forward(self, tensor):
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError("Input tensor and transformation matrix have incompatible shape."
                             f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != {self.transformation_matrix.shape[0]}")
        flat = tensor.reshape(-1, n) - self.mean_vector
        return (flat @ self.transformation_matrix.to(flat.dtype)).reshape(shape)
