"""MNASNet 0.5 / 0.75 / 1.0 / 1.3 (Tan et al. 2018, the B1 variant), torchvision's layout
(``layers``, ``classifier``)."""
import warnings

import ember_nn as nn

from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, overwrite_named_param

__all__ = ["MNASNet", "MNASNet0_5_Weights", "MNASNet0_75_Weights", "MNASNet1_0_Weights", "MNASNet1_3_Weights",
           "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"]

# The TensorFlow reference's BatchNorm decay of 0.9997, as PyTorch's momentum.
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in (3, 5):
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False), nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum), nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False), nn.BatchNorm2d(out_ch, momentum=bn_momentum))

    def forward(self, input):
        return self.layers(input) + input if self.apply_residual else self.layers(input)


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    if repeats < 1:
        raise ValueError(f"repeats should be >= 1, instead got {repeats}")
    blocks = [_InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, bn_momentum=bn_momentum)]
    blocks += [_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor, bn_momentum=bn_momentum)
               for _ in range(1, repeats)]
    return nn.Sequential(*blocks)


def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    # Round to the nearest multiple, rounding up unless that is more than 10% above ``val``.
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError(f"round_up_bias should be greater than 0.0 and smaller than 1.0 instead of {round_up_bias}")
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha):
    return [_round_to_multiple_of(depth * alpha, 8) for depth in (32, 16, 24, 40, 80, 96, 192, 320)]


def _stem(depths):
    return [nn.Conv2d(3, depths[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM), nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[0], 3, padding=1, stride=1, groups=depths[0], bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM), nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[1], 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(depths[1], momentum=_BN_MOMENTUM),
            _stack(depths[1], depths[2], 3, 2, 3, 3, _BN_MOMENTUM)]


class MNASNet(nn.Module):
    """MNASNet with channel multiplier ``alpha``.

    Args:
        alpha: width multiplier (0.5, 0.75, 1.0, 1.3 have weights); num_classes: outputs;
        dropout: before the classifier.
    """

    def __init__(self, alpha, num_classes=1000, dropout=0.2):
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f"alpha should be greater than 0.0 instead of {alpha}")
        self.alpha = alpha
        self.num_classes = num_classes
        depths = _get_depths(alpha)
        layers = _stem(depths) + [
            _stack(depths[2], depths[3], 5, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[3], depths[4], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(depths[4], depths[5], 3, 1, 6, 2, _BN_MOMENTUM),
            _stack(depths[5], depths[6], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(depths[6], depths[7], 3, 1, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(depths[7], 1280, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(1280, momentum=_BN_MOMENTUM), nn.ReLU(inplace=True)]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))

    def use_v1_stem_if_needed(self, state_dict):
        """Checkpoints of the first MNASNet (torchvision's version 1) kept a 32/16-channel stem
        whatever ``alpha``; switch to that stem when ``state_dict`` has it, as torchvision does."""
        stem_channels = state_dict["layers.0.weight"].shape[0]
        if self.alpha != 1.0 and stem_channels == 32 != self.layers[0].out_channels:
            for index, layer in enumerate(_stem([32, 16, _get_depths(self.alpha)[2]])):
                self.layers[index] = layer
            warnings.warn("A new version of MNASNet model has been implemented. Your checkpoint was saved using the "
                          "previous version. This checkpoint will load and work as before, but you may want to "
                          "upgrade by training a newer model or transfer learning from an updated ImageNet "
                          "checkpoint.", UserWarning)


def _mnasnet(alpha, weights, progress, **kwargs):
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = MNASNet(alpha, **kwargs)
    if weights is not None:
        state_dict = weights.get_state_dict(progress=progress, check_hash=True)
        model.use_v1_stem_if_needed(state_dict)
        model.load_state_dict(state_dict)
    return model


class MNASNet0_5_Weights(WeightsEnum):
    """ImageNet weights of mnasnet0_5."""
    IMAGENET1K_V1 = table_weights("MNASNet0_5_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class MNASNet0_75_Weights(WeightsEnum):
    """ImageNet weights of mnasnet0_75."""
    IMAGENET1K_V1 = table_weights("MNASNet0_75_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class MNASNet1_0_Weights(WeightsEnum):
    """ImageNet weights of mnasnet1_0."""
    IMAGENET1K_V1 = table_weights("MNASNet1_0_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class MNASNet1_3_Weights(WeightsEnum):
    """ImageNet weights of mnasnet1_3."""
    IMAGENET1K_V1 = table_weights("MNASNet1_3_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet0_5_Weights.IMAGENET1K_V1))
def mnasnet0_5(*, weights: MNASNet0_5_Weights = None, progress=True, **kwargs):
    """MNASNet with depth multiplier 0.5.

    Args:
        weights: a ``MNASNet0_5_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``MNASNet``.
    """
    return _mnasnet(0.5, MNASNet0_5_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet0_75_Weights.IMAGENET1K_V1))
def mnasnet0_75(*, weights: MNASNet0_75_Weights = None, progress=True, **kwargs):
    """MNASNet with depth multiplier 0.75; arguments as ``mnasnet0_5``."""
    return _mnasnet(0.75, MNASNet0_75_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet1_0_Weights.IMAGENET1K_V1))
def mnasnet1_0(*, weights: MNASNet1_0_Weights = None, progress=True, **kwargs):
    """MNASNet with depth multiplier 1.0; arguments as ``mnasnet0_5``."""
    return _mnasnet(1.0, MNASNet1_0_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet1_3_Weights.IMAGENET1K_V1))
def mnasnet1_3(*, weights: MNASNet1_3_Weights = None, progress=True, **kwargs):
    """MNASNet with depth multiplier 1.3; arguments as ``mnasnet0_5``."""
    return _mnasnet(1.3, MNASNet1_3_Weights.verify(weights), progress, **kwargs)
