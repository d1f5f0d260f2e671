"""ResNet, ResNeXt and Wide ResNet (He et al. 2015; Xie et al. 2016; Zagoruyko & Komodakis
2016), with torchvision's module names, so its checkpoints load with ``strict=True``.

The stride of a Bottleneck sits on its 3x3 convolution (ResNet V1.5), as in torchvision.
"""
import ember_nn as nn
import ember_tensor as torch

from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["ResNet", "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights",
           "ResNet101_Weights", "ResNet152_Weights", "ResNeXt50_32X4D_Weights", "ResNeXt101_32X8D_Weights",
           "ResNeXt101_64X4D_Weights", "Wide_ResNet50_2_Weights", "Wide_ResNet101_2_Weights", "resnet18", "resnet34",
           "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
           "wide_resnet50_2", "wide_resnet101_2"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding, no bias (a BatchNorm follows)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution, no bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions and a shortcut (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided, grouped), 1x1 expand by 4, and a shortcut (ResNet-50 and up)."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """A ResNet: a 7x7 stem, four stages of ``block`` repeated ``layers[i]`` times, average
    pooling and a linear classifier ``fc``.

    Args:
        block: ``BasicBlock`` or ``Bottleneck``.
        layers: blocks per stage, e.g. ``[2, 2, 2, 2]`` for ResNet-18.
        num_classes: outputs of ``fc``.
        zero_init_residual: start each residual branch's last BatchNorm at zero, so every
            block begins as the identity (improves accuracy by 0.2-0.3%, Goyal et al. 2017).
        groups, width_per_group: ResNeXt's cardinality and bottleneck width.
        replace_stride_with_dilation: three booleans: dilate stages 2-4 instead of striding.
        norm_layer: the normalisation module (default ``BatchNorm2d``).
    """

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        self._norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        self.reset_parameters(zero_init_residual)

    def reset_parameters(self, zero_init_residual=False):
        """torchvision's initialisation: He-normal (fan_out) convolutions, unit BatchNorms."""
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def _resnet(block, layers, weights, progress, **kwargs):
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(ResNet(block, layers, **kwargs), weights, progress)


class ResNet18_Weights(WeightsEnum):
    """ImageNet weights of resnet18."""
    IMAGENET1K_V1 = table_weights("ResNet18_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    """ImageNet weights of resnet34."""
    IMAGENET1K_V1 = table_weights("ResNet34_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    """ImageNet weights of resnet50 (V2: torchvision's newer training recipe)."""
    IMAGENET1K_V1 = table_weights("ResNet50_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("ResNet50_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    """ImageNet weights of resnet101."""
    IMAGENET1K_V1 = table_weights("ResNet101_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("ResNet101_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    """ImageNet weights of resnet152."""
    IMAGENET1K_V1 = table_weights("ResNet152_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("ResNet152_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    """ImageNet weights of resnext50_32x4d."""
    IMAGENET1K_V1 = table_weights("ResNeXt50_32X4D_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("ResNeXt50_32X4D_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    """ImageNet weights of resnext101_32x8d."""
    IMAGENET1K_V1 = table_weights("ResNeXt101_32X8D_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("ResNeXt101_32X8D_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(WeightsEnum):
    """ImageNet weights of resnext101_64x4d."""
    IMAGENET1K_V1 = table_weights("ResNeXt101_64X4D_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet101_2_Weights(WeightsEnum):
    """ImageNet weights of wide_resnet101_2."""
    IMAGENET1K_V1 = table_weights("Wide_ResNet101_2_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("Wide_ResNet101_2_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet50_2_Weights(WeightsEnum):
    """ImageNet weights of wide_resnet50_2."""
    IMAGENET1K_V1 = table_weights("Wide_ResNet50_2_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("Wide_ResNet50_2_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet18_Weights.IMAGENET1K_V1))
def resnet18(*, weights: ResNet18_Weights = None, progress=True, **kwargs):
    """ResNet-18 (Deep Residual Learning for Image Recognition).

    Args:
        weights: a ``ResNet18_Weights`` member (or its name) to load, or None for random weights.
        progress: show download progress.
        **kwargs: passed to ``ResNet`` (``num_classes``, ``norm_layer``, ...).
    """
    return _resnet(BasicBlock, [2, 2, 2, 2], ResNet18_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet34_Weights.IMAGENET1K_V1))
def resnet34(*, weights: ResNet34_Weights = None, progress=True, **kwargs):
    """ResNet-34; arguments as ``resnet18``."""
    return _resnet(BasicBlock, [3, 4, 6, 3], ResNet34_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet50_Weights.IMAGENET1K_V1))
def resnet50(*, weights: ResNet50_Weights = None, progress=True, **kwargs):
    """ResNet-50; arguments as ``resnet18``."""
    return _resnet(Bottleneck, [3, 4, 6, 3], ResNet50_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet101_Weights.IMAGENET1K_V1))
def resnet101(*, weights: ResNet101_Weights = None, progress=True, **kwargs):
    """ResNet-101; arguments as ``resnet18``."""
    return _resnet(Bottleneck, [3, 4, 23, 3], ResNet101_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet152_Weights.IMAGENET1K_V1))
def resnet152(*, weights: ResNet152_Weights = None, progress=True, **kwargs):
    """ResNet-152; arguments as ``resnet18``."""
    return _resnet(Bottleneck, [3, 8, 36, 3], ResNet152_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt50_32X4D_Weights.IMAGENET1K_V1))
def resnext50_32x4d(*, weights: ResNeXt50_32X4D_Weights = None, progress=True, **kwargs):
    """ResNeXt-50 32x4d (Aggregated Residual Transformations); arguments as ``resnet18``."""
    weights = ResNeXt50_32X4D_Weights.verify(weights)
    overwrite_named_param(kwargs, "groups", 32)
    overwrite_named_param(kwargs, "width_per_group", 4)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Wide_ResNet50_2_Weights.IMAGENET1K_V1))
def wide_resnet50_2(*, weights: Wide_ResNet50_2_Weights = None, progress=True, **kwargs):
    """Wide ResNet-50-2: bottlenecks twice as wide; arguments as ``resnet18``."""
    weights = Wide_ResNet50_2_Weights.verify(weights)
    overwrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt101_32X8D_Weights.IMAGENET1K_V1))
def resnext101_32x8d(*, weights: ResNeXt101_32X8D_Weights = None, progress=True, **kwargs):
    """ResNeXt-101 32x8d; arguments as ``resnet18``."""
    weights = ResNeXt101_32X8D_Weights.verify(weights)
    overwrite_named_param(kwargs, "groups", 32)
    overwrite_named_param(kwargs, "width_per_group", 8)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt101_64X4D_Weights.IMAGENET1K_V1))
def resnext101_64x4d(*, weights: ResNeXt101_64X4D_Weights = None, progress=True, **kwargs):
    """ResNeXt-101 64x4d; arguments as ``resnet18``."""
    weights = ResNeXt101_64X4D_Weights.verify(weights)
    overwrite_named_param(kwargs, "groups", 64)
    overwrite_named_param(kwargs, "width_per_group", 4)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Wide_ResNet101_2_Weights.IMAGENET1K_V1))
def wide_resnet101_2(*, weights: Wide_ResNet101_2_Weights = None, progress=True, **kwargs):
    """Wide ResNet-101-2; arguments as ``resnet18``."""
    weights = Wide_ResNet101_2_Weights.verify(weights)
    overwrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)
