"""The live still, encoded once per distinct frame (docs/architecture.md §10): the JSON body
(with the image in base64) and the raw bytes are built the first time a frame is asked for and
served from here until the frame changes. ``encodes`` counts how many frames were encoded.
Recent frames stay cached (bounded by count and bytes), so a frame the game returns to is not
encoded again while it is still held."""

from __future__ import annotations

import base64
from collections import OrderedDict
from dataclasses import dataclass, field

import orjson
from multidict import CIMultiDict, CIMultiDictProxy

from bot.worlds.base import Still

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class StillEntry:
    key: tuple[str, str]
    etag: str
    raw: bytes
    mime_type: str
    json_body: bytes
    not_modified_headers: CIMultiDictProxy[str] = field(init=False, repr=False)
    """A 304's headers: ETag, ``Cache-Control: no-cache``, ``Vary: Accept`` (a still's URL is
    asked again and again, so they are made once per frame, not per request)."""
    image_headers: CIMultiDictProxy[str] = field(init=False, repr=False)
    json_headers: CIMultiDictProxy[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        base = {"ETag": self.etag, "Cache-Control": "no-cache", "Vary": "Accept"}
        made = {
            "not_modified_headers": base,
            "image_headers": {**base, "Content-Type": self.mime_type},
            "json_headers": {**base, "Content-Type": "application/json"},
        }
        for name, headers in made.items():
            object.__setattr__(self, name, CIMultiDictProxy(CIMultiDict(headers)))


class StillCache:
    def __init__(self, keep: int = 64, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.keep = keep
        self.max_bytes = max_bytes
        self.encodes = 0
        self.bytes = 0
        self._entries: OrderedDict[tuple[str, str], StillEntry] = OrderedDict()

    def entry(self, session_id: str, still: Still) -> StillEntry:
        key = (session_id, still.sha256)
        found = self._entries.get(key)
        if found is not None:
            if next(reversed(self._entries)) != key:
                self._entries.move_to_end(key)
            return found
        body = {
            "schemaVersion": SCHEMA_VERSION,
            "outcome": "still",
            "sessionId": session_id,
            "mimeType": still.mime_type,
            "width": still.width,
            "height": still.height,
            "sha256": still.sha256,
            "capturedAt": still.captured_at,
            "imageBase64": base64.b64encode(still.data).decode("ascii"),
        }
        entry = StillEntry(key, f'"{still.sha256[:32]}"', still.data, still.mime_type, orjson.dumps(body))
        self.encodes += 1
        self._entries[key] = entry
        self.bytes += len(entry.raw) + len(entry.json_body)
        while len(self._entries) > 1 and (len(self._entries) > self.keep or self.bytes > self.max_bytes):
            _, old = self._entries.popitem(last=False)
            self.bytes -= len(old.raw) + len(old.json_body)
        return entry
