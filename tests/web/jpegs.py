"""JPEGs for the share ingest tests, built by real encoders (Pillow's libjpeg) and, for the
hostile ones, by editing those at the marker level as an attacker would."""

from __future__ import annotations

import io

from PIL import Image


def encoded(size: tuple[int, int], *, mode: str = "RGB", noisy: bool = False, **options: object) -> bytes:
    """A smooth picture (a gradient), or noise (large once encoded), encoded by Pillow with
    ``options`` (progressive=True …)."""
    img = Image.effect_noise(size, 80) if noisy else Image.linear_gradient("L").resize(size)
    if mode == "RGB":
        img = Image.merge("RGB", (img, img.transpose(Image.Transpose.FLIP_LEFT_RIGHT), img.rotate(90)))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", **options)
    return buf.getvalue()


def scan_bomb(size: tuple[int, int] = (1920, 1080), scans: int = 20_000) -> bytes:
    """A valid progressive JPEG whose last scan is repeated until it has ``scans`` scans: libjpeg
    decodes it (warning about the progression) and walks every block once per scan. The picture
    is flat, so each scan is a few bytes (20 000 scans at 1920x1080: ~0.5 MB, minutes to decode)."""
    buf = io.BytesIO()
    Image.new("RGB", size, (90, 120, 200)).save(buf, format="JPEG", progressive=True, quality=85)
    base = buf.getvalue()
    last = base.rfind(b"\xff\xda")
    extra = scans - base.count(b"\xff\xda")
    return base[:-2] + base[last:-2] * max(0, extra) + b"\xff\xd9"
