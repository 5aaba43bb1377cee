"""Image classifiers from torchvision, at 32x32 and with 10 classes.

The architectures are torchvision's own classes, so the exported graphs are
what users of those models get; only the sizes are reduced (narrow widths,
few blocks, a small image) to keep exports and imports to seconds.
"""

from __future__ import annotations

import torch
from torchvision import models
from torchvision.models.resnet import BasicBlock, ResNet

from cleave.models.common import (
    ReferenceModel,
    calibrate_batch_norm,
    randomize_constant_init,
    seeded,
)

_CLASSES = 10
_IMAGE_SIZE = 32


def _images(count: int, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(count, 3, _IMAGE_SIZE, _IMAGE_SIZE, generator=generator)


def _classifier(
    module: torch.nn.Module, generator: torch.Generator
) -> ReferenceModel:
    randomize_constant_init(module)
    calibrate_batch_norm(module, [_images(8, generator) for _ in range(2)])
    return ReferenceModel(
        module,
        {"image": _images(1, generator)},
        ("logits",),
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
    )


def build_vit() -> ReferenceModel:
    """VisionTransformer: 16 patches plus the class token, 2 encoder blocks."""
    generator = seeded()
    model = models.VisionTransformer(
        image_size=_IMAGE_SIZE,
        patch_size=8,
        num_layers=2,
        num_heads=2,
        hidden_dim=32,
        mlp_dim=64,
        num_classes=_CLASSES,
    )
    # torchvision zero-initialises the class token and the head, as suits
    # fine-tuning a pretrained body; with a random body every logit is 0.
    torch.nn.init.normal_(model.class_token, std=0.02)
    model.heads.head.reset_parameters()
    return _classifier(model, generator)


def build_resnet() -> ReferenceModel:
    """ResNet-10: one BasicBlock per stage, the stem's 7x7 conv and max pool."""
    generator = seeded()
    return _classifier(
        ResNet(BasicBlock, [1, 1, 1, 1], num_classes=_CLASSES), generator
    )


def build_mobilenet_v2() -> ReferenceModel:
    """MobileNetV2 at a quarter width: depthwise convs and ReLU6."""
    generator = seeded()
    return _classifier(
        models.mobilenet_v2(width_mult=0.25, num_classes=_CLASSES), generator
    )


def build_mobilenet_v3_small() -> ReferenceModel:
    """MobileNetV3-Small at a quarter width: hard-swish and squeeze-excite."""
    generator = seeded()
    return _classifier(
        models.mobilenet_v3_small(width_mult=0.25, num_classes=_CLASSES), generator
    )


def build_efficientnet_b0() -> ReferenceModel:
    """EfficientNet-B0 at full width (torchvision fixes B0's width and depth):
    SiLU, squeeze-excite, depthwise convs."""
    generator = seeded()
    return _classifier(models.efficientnet_b0(num_classes=_CLASSES), generator)
