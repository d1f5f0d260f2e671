"""torchvision's image-backend switch. Pillow is the only backend ember-vision has."""

__all__ = ["get_image_backend", "set_image_backend"]

_image_backend = "PIL"


def get_image_backend():
    """The name of the package used to load images: always ``"PIL"`` here."""
    return _image_backend


def set_image_backend(backend):
    """Choose the image-loading package; only ``"PIL"`` is available in ember-vision.

    Args:
        backend: ``"PIL"`` (torchvision also accepts ``"accimage"``, which ember-vision lacks).
    """
    if backend not in ("PIL", "accimage"):
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    if backend == "accimage":
        raise RuntimeError("ember-vision has no accimage backend; Pillow ('PIL') is the only one")
