"""torchvision's ``transforms`` (v1): classes over ``transforms.functional``, for PIL images
and ember tensor images alike. Random draws use ember's generator (``ember.manual_seed``
repeats them); RandomOrder and RandomChoice use Python's ``random``, as torchvision does."""
from . import functional
from .autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from .color import (ColorJitter, GaussianBlur, Grayscale, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize,
                    RandomGrayscale, RandomInvert, RandomPosterize, RandomSolarize)
from .containers import Compose, Lambda, RandomApply, RandomChoice, RandomOrder, RandomTransforms
from .conversion import ConvertImageDtype, LinearTransformation, Normalize, PILToTensor, ToPILImage, ToTensor
from .erasing import RandomErasing
from .functional import InterpolationMode
from .geometry import (CenterCrop, ElasticTransform, FiveCrop, Pad, RandomAffine, RandomCrop, RandomHorizontalFlip,
                       RandomPerspective, RandomResizedCrop, RandomRotation, RandomVerticalFlip, Resize, TenCrop)

__all__ = ["functional", "InterpolationMode", "Compose", "Lambda", "RandomApply", "RandomChoice", "RandomOrder",
           "RandomTransforms", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize", "Resize",
           "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomRotation", "RandomAffine", "FiveCrop", "TenCrop", "ColorJitter", "Grayscale", "RandomGrayscale",
           "GaussianBlur", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
           "RandomAutocontrast", "RandomEqualize", "RandomErasing", "AutoAugment", "AutoAugmentPolicy",
           "RandAugment", "TrivialAugmentWide", "RandomPerspective", "LinearTransformation", "ElasticTransform"]
