"""A small aiohttp client for a PokeAgent emulator server's HTTP API.

Every call returns a decoded JSON object or raises one of two errors, each with a sentence that
names the endpoint: ``BodyUnreachable`` (connection refused, reset, timeout) and
``BodyProtocolError`` (an HTTP error status, a body that is not JSON, or JSON that is not an
object).
"""

from __future__ import annotations

import aiohttp
import orjson

from bot.worlds.pokeagent.state import ActionRequest, ServerAnswer


class BodyUnreachable(Exception):
    """The server did not answer (down, refused, reset, timed out)."""


class BodyProtocolError(Exception):
    """The server answered something that is not the PokeAgent API's JSON."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status, when the answer was an HTTP error


class PokeAgentClient:
    def __init__(self, base_url: str, *, timeout_s: float = 5.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, path: str) -> ServerAnswer:
        return await self._call("GET", path, None)

    async def post(self, path: str, body: ActionRequest) -> ServerAnswer:
        return await self._call("POST", path, body)

    async def _call(self, method: str, path: str, body: ActionRequest | None) -> ServerAnswer:
        url = f"{self.base_url}{path}"
        where = f"{method} {path}"
        try:
            async with self._open().request(method, url, json=body) as response:
                raw = await response.read()
                status = response.status
        except TimeoutError as exc:
            raise BodyUnreachable(
                f"{where} got no answer within {self.timeout_s:g} s from {self.base_url}"
            ) from exc
        except aiohttp.ClientError as exc:
            raise BodyUnreachable(f"{where} could not reach {self.base_url}: {exc}") from exc
        if status >= 400:
            raise BodyProtocolError(f"{where} answered HTTP {status}: {_excerpt(raw)}", status=status)
        try:
            decoded = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise BodyProtocolError(f"{where} answered something that is not JSON: {_excerpt(raw)}") from exc
        if not isinstance(decoded, dict):
            raise BodyProtocolError(f"{where} answered JSON that is not an object: {_excerpt(raw)}")
        return decoded


def _excerpt(raw: bytes, limit: int = 120) -> str:
    text = raw.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return repr(text[:limit] + ("…" if len(text) > limit else ""))
