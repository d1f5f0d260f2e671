"""torchvision's model registry and weights API: ``Weights``, ``WeightsEnum``, ``get_model``,
``get_model_weights``, ``get_weight``, ``list_models``.

Each weights entry (URL, preprocessing preset, metadata) is torchvision's, read from the
committed table ``_data/weights.json`` so the enums stay data rather than code.
"""
import fnmatch
import functools
import json
import sys
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from typing import Any, Callable

from ember_tensor import hub as _hub
from ..transforms._presets import ImageClassification, SemanticSegmentation
from ..transforms.functional import InterpolationMode

__all__ = ["Weights", "WeightsEnum", "register_model", "get_model", "get_model_builder", "get_model_weights",
           "get_weight", "list_models", "table_weights"]


@dataclass
class Weights:
    """One set of pretrained weights: where the file is, the preprocessing the model was
    trained with (``transforms()``), and its metadata (``meta["categories"]``, ...)."""

    url: str
    transforms: Callable
    meta: dict[str, Any]

    def __eq__(self, other):
        # The enum needs equality to make DEFAULT an alias; a partial never equals a copy of itself.
        if not isinstance(other, Weights):
            return NotImplemented
        return self.url == other.url and self.meta == other.meta

    def __hash__(self):
        return hash(self.url)


class WeightsEnum(Enum):
    """An enum of ``Weights``: ``ResNet18_Weights.IMAGENET1K_V1.url`` / ``.transforms()`` /
    ``.meta``, and ``get_state_dict()`` to load them through the hub cache."""

    @classmethod
    def verify(cls, obj):
        """``obj`` as a member: a member, its name, or ``"ResNet18_Weights.IMAGENET1K_V1"``; None stays None."""
        if obj is not None:
            if isinstance(obj, str):
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                                f"{obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        """The weights' state_dict, from ``$TORCH_HOME/hub/checkpoints`` (downloaded if
        missing and a network answers; otherwise an error says where to put the file)."""
        kwargs.setdefault("weights_only", True)  # ember's safe loader for downloaded weights
        return _hub.load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        """The checkpoint's URL (its file name is the one the hub cache uses)."""
        return self.value.url

    @property
    def transforms(self):
        """The inference preprocessing these weights expect: call it to get the transform."""
        return self.value.transforms

    @property
    def meta(self):
        """Metadata: ``categories``, ``num_params``, ``min_size``, ``_metrics``, ``recipe``, ..."""
        return self.value.meta


@functools.cache
def _table():
    return json.loads(resources.files(__package__).joinpath("_data/weights.json").read_text())


@functools.cache
def _categories(kind):
    return resources.files(__package__).joinpath(f"_data/{kind}_categories.txt").read_text().splitlines()


_PRESETS = {"ImageClassification": ImageClassification, "SemanticSegmentation": SemanticSegmentation}


def table_weights(key):
    """The ``Weights`` of torchvision's entry ``key`` (``"ResNet18_Weights.IMAGENET1K_V1"``):
    URL, inference preset (classification or segmentation) and metadata with the categories."""
    entry = _table()[key]
    preset = dict(entry["preset"])
    if "interpolation" in preset:
        preset["interpolation"] = InterpolationMode[preset["interpolation"]]
    meta = dict(entry["meta"])
    meta["categories"] = _categories(entry["categories"]) if entry["categories"] else None
    transforms = functools.partial(_PRESETS[entry["preset_class"]], **preset)
    return Weights(url=entry["url"], transforms=transforms, meta=meta)


BUILTIN_MODELS = {}


def register_model(name=None):
    """Decorator: list a model builder under ``name`` (default: the function's name)."""
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered models, optionally only those of ``module`` and
    matching the ``include`` / not matching the ``exclude`` fnmatch patterns."""
    models = {k for k, v in BUILTIN_MODELS.items() if module is None or v.__module__.rsplit(".", 1)[0] == module.__name__}
    if include:
        patterns = [include] if isinstance(include, str) else include
        models = {m for m in models if any(fnmatch.fnmatch(m, p) for p in patterns)}
    if exclude:
        patterns = [exclude] if isinstance(exclude, str) else exclude
        models = {m for m in models if not any(fnmatch.fnmatch(m, p) for p in patterns)}
    return sorted(models)


def get_model_builder(name):
    """The builder function registered as ``name``."""
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    """Build the registered model ``name`` with ``config`` (``weights=``, ``num_classes=``, ...)."""
    return get_model_builder(name)(**config)


def get_model_weights(name):
    """The weights enum class of a model (a builder function or its registered name)."""
    model = get_model_builder(name) if isinstance(name, str) else name
    return model.__annotations__["weights"]


def get_weight(name):
    """The weights member named ``"ResNet50_Weights.IMAGENET1K_V2"``."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith(__package__ + ".") and hasattr(module, enum_name):
            enum_class = getattr(module, enum_name)
            if isinstance(enum_class, type) and issubclass(enum_class, WeightsEnum):
                return enum_class[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be retrieved.")
