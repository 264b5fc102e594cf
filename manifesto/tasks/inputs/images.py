"""The image catalog (``catalog/images.yaml``): validated once per process and path."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["load_images"]


@lru_cache(maxsize=4)
def _images(path: str):
    from manifesto.load.inputs import load_typed
    from manifesto.schema.compiled import ImageCatalog

    return load_typed(ImageCatalog, path)[0]


def load_images():
    from manifesto.load.catalog import images_file

    return _images(images_file())
