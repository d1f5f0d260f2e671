"""Helpers the model builders share: the legacy ``pretrained=True`` argument, overriding a
builder argument from the weights, channel rounding, loading weights into a model, and
``IntermediateLayerGetter`` (a backbone returning some of its layers' outputs)."""
import functools
import inspect
import warnings
from collections import OrderedDict

import ember_nn as nn

__all__ = ["handle_legacy_interface", "overwrite_named_param", "overwrite_value_param", "make_divisible", "load_weights",
           "IntermediateLayerGetter"]


def handle_legacy_interface(**weights):
    """Decorator: accept torchvision's old ``pretrained=True`` (and e.g. ``pretrained_backbone``)
    in place of ``weights=``, with torchvision's deprecation warning.

    Args:
        weights: ``{"weights": ("pretrained", default)}``, where ``default`` is the weights
            member the legacy flag meant, or a function of the keyword arguments giving it.
    """
    def outer_wrapper(builder):
        @functools.wraps(builder)
        def inner_wrapper(*args, **kwargs):
            for weights_param, (pretrained_param, default) in weights.items():
                sentinel = object()
                value = kwargs.get(pretrained_param, sentinel)
                if value is sentinel:
                    continue
                if weights_param in kwargs:
                    raise ValueError(f"`{pretrained_param}` and `{weights_param}` cannot both be passed")
                del kwargs[pretrained_param]
                if callable(default) and not inspect.isclass(default):
                    default = default(kwargs)
                if value and default is None:
                    raise ValueError(f"No weights available for model {builder.__name__}")
                new_value = default if value else None
                if value:
                    warnings.warn(f"The parameter '{pretrained_param}' is deprecated since 0.13 and may be removed "
                                  f"in the future, please use '{weights_param}' instead.")
                    warnings.warn(f"Arguments other than a weight enum or `None` for '{weights_param}' are deprecated "
                                  f"since 0.13 and may be removed in the future. The current behavior is equivalent "
                                  f"to passing `{weights_param}={new_value}`. You can also use "
                                  f"`{weights_param}={type(new_value).__name__}.DEFAULT` to get the most up-to-date "
                                  f"weights.")
                kwargs[weights_param] = new_value
            return builder(*args, **kwargs)
        return inner_wrapper
    return outer_wrapper


def overwrite_named_param(kwargs, param, new_value):
    """Set ``kwargs[param]`` to what the weights need, refusing a conflicting user value."""
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def make_divisible(v, divisor, min_value=None):
    """Round channels ``v`` to a multiple of ``divisor``, never down by more than 10%
    (the rule of the TensorFlow MobileNet reference, which torchvision's shapes follow)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def load_weights(model, weights, progress):
    """Load ``weights`` (a WeightsEnum member or None) into ``model``, strictly; returns it."""
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def overwrite_value_param(param, actual, expected):
    """``expected`` (what the weights need) unless the user gave a different ``actual``."""
    if actual is not None and actual != expected:
        raise ValueError(f"The parameter '{param}' expected value {expected} but got {actual} instead.")
    return expected


class IntermediateLayerGetter(nn.ModuleDict):
    """The children of ``model`` up to the last one named in ``return_layers``, run in order;
    returns ``{new_name: output}`` for the named ones (the segmentation backbones).

    Args:
        model: a module whose children are used in registration order.
        return_layers: ``{child_name: output_name}``.
    """

    def __init__(self, model, return_layers):
        if not set(return_layers).issubset(name for name, _ in model.named_children()):
            raise ValueError("return_layers are not present in model")
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
