"""What a JPEG will cost to decode, read from its markers without decoding it
(docs/architecture.md §11).

A progressive JPEG is a list of scans, and a decoder walks every block of the image once per
scan however little data the scan holds: 20 000 tiny scans make a 1 MB file that takes half a
minute to decode. :func:`inspect_jpeg` walks the marker segments (ITU T.81 §B.1: ``FFxx``
markers, a two-byte length for every segment but SOI/EOI/RSTn/TEM, entropy-coded data after
SOS with ``FF00`` stuffing and ``FFD0``–``FFD7`` restarts inside it) and reports the frame's
size (from its SOF segment) and how many scans (SOS markers) it has, so a frame can be refused
before any decode work is spent on it.

Sane encoders write few scans: baseline JPEGs (browsers' ``canvas.toBlob``) have one; libjpeg's
default progression (Pillow's ``progressive=True``, ``cjpeg -progressive``) writes 10 for
colour and 6 for grey; mozjpeg's searched progressions stay under 20. :data:`MAX_SCANS` leaves
room above those. Each scan costs in proportion to the frame's area, so scans times pixels is
bounded too (:data:`MAX_SCAN_PIXELS`: sixteen full passes over a 4096×4096 frame — libjpeg's
ten-scan progression at the largest size passes, and no frame costs much more to decode).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

MAX_SCANS = 32
MAX_SCAN_PIXELS = 16 * 4096 * 4096
MAX_SEGMENTS = 1024  # an ICC profile split in APP2 chunks is the most a real file holds (≤ 255)
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_PROGRESSIVE = frozenset({0xC2, 0xC6, 0xCA, 0xCE})
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})
_NEXT_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")  # not stuffing, not a restart, not fill


class JpegShapeError(ValueError):
    """The bytes are not a JPEG this surface will decode; ``reason`` is ``not_jpeg`` (broken or
    not a JPEG at all), ``too_large`` (a side over the limit) or ``too_complex`` (more scans or
    segments than a sane encoder writes)."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


@dataclass(frozen=True)
class JpegShape:
    width: int
    height: int
    components: int
    progressive: bool
    scans: int
    segments: int


def inspect_jpeg(
    data: bytes,
    *,
    max_side: int | None = None,
    max_scans: int = MAX_SCANS,
    max_scan_pixels: int = MAX_SCAN_PIXELS,
) -> JpegShape:
    """The frame size and scan count of a JPEG, from its markers; raises :class:`JpegShapeError`
    for anything malformed, a second frame, a side over ``max_side`` (``too_large``), more than ``max_scans`` scans, or scans times
    pixels over ``max_scan_pixels`` (it stops walking as soon as a count is over, so a scan bomb
    costs no more to refuse than a sane file)."""
    if not data.startswith(b"\xff\xd8"):
        raise JpegShapeError("not_jpeg", "it does not start with a JPEG SOI marker")
    pos, end = 2, len(data)
    sof: tuple[int, int, int, bool] | None = None
    scans = segments = 0
    while True:
        if pos >= end:
            raise JpegShapeError("not_jpeg", "it ends before its EOI marker")
        if data[pos] != 0xFF:
            raise JpegShapeError("not_jpeg", f"expected a marker at byte {pos}")
        while pos < end and data[pos] == 0xFF:  # fill bytes may precede a marker
            pos += 1
        if pos >= end:
            raise JpegShapeError("not_jpeg", "it ends inside a marker")
        marker = data[pos]
        pos += 1
        segments += 1
        if segments > MAX_SEGMENTS:
            raise JpegShapeError("too_complex", f"it has more than {MAX_SEGMENTS} marker segments")
        if marker == 0xD9:
            break
        if marker in _STANDALONE:
            continue
        if pos + 2 > end:
            raise JpegShapeError("not_jpeg", f"segment FF{marker:02X} has no length")
        (length,) = struct.unpack_from(">H", data, pos)
        if length < 2 or pos + length > end:
            raise JpegShapeError("not_jpeg", f"segment FF{marker:02X} at byte {pos - 2} runs past the end")
        body = data[pos + 2 : pos + length]
        pos += length
        if marker in _SOF:
            if sof is not None:
                raise JpegShapeError("not_jpeg", "it holds more than one frame (SOF)")
            if len(body) < 6:
                raise JpegShapeError("not_jpeg", "its SOF segment is too short")
            _precision, height, width, components = struct.unpack_from(">BHHB", body)
            if width == 0 or height == 0 or not 1 <= components <= 4:
                raise JpegShapeError(
                    "not_jpeg", f"its SOF says {width}x{height} with {components} components"
                )
            if max_side is not None and max(width, height) > max_side:
                raise JpegShapeError("too_large", f"it is {width}x{height}")
            sof = (width, height, components, marker in _PROGRESSIVE)
        elif marker == 0xDA:
            if sof is None:
                raise JpegShapeError("not_jpeg", "a scan (SOS) comes before the frame header (SOF)")
            scans += 1
            if scans > max_scans:
                raise JpegShapeError(
                    "too_complex", f"it has more than {max_scans} scans (a sane encoder writes at most ~20)"
                )
            if scans * sof[0] * sof[1] > max_scan_pixels:
                raise JpegShapeError(
                    "too_complex", f"it has more than {scans - 1} scans, too many for {sof[0]}x{sof[1]} px"
                )
            found = _NEXT_MARKER.search(data, pos)
            if found is None:
                raise JpegShapeError("not_jpeg", "its last scan has no end (no EOI marker)")
            pos = found.start()
    if sof is None or scans == 0:
        raise JpegShapeError("not_jpeg", "it has no frame or no scan")
    width, height, components, progressive = sof
    return JpegShape(width, height, components, progressive, scans, segments)
