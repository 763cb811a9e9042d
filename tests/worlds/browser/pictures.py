"""Pictures for the sight tests: a PIL image as the PNG bytes a still carries."""

from __future__ import annotations

import io

from PIL import Image


def png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
