"""`FakeOpenAI`: one aiohttp server on 127.0.0.1 (ephemeral port) serving the chat, realtime
and model-list fakes under `/v1`. Point the real client at `fake.base_url`."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .chat import ChatFake
from .models import ModelsFake
from .realtime import RealtimeFake


class FakeOpenAI:
    def __init__(self) -> None:
        self.chat = ChatFake()
        self.realtime = RealtimeFake()
        self.models = ModelsFake()
        self.unknown_routes: list[str] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def client(self, **kwargs: Any) -> Any:
        """An `openai.AsyncOpenAI` pointed at this fake (no retries, short timeout by default)."""
        from openai import AsyncOpenAI

        options: dict[str, Any] = {"api_key": "test", "max_retries": 0, "timeout": 10.0, **kwargs}
        return AsyncOpenAI(base_url=self.base_url, **options)

    @property
    def violations(self) -> list[str]:
        return [*self.chat.violations, *self.realtime.violations, *self.unknown_routes]

    def assert_clean(self) -> None:
        """Fail (AssertionError listing each problem) if any request or event broke the API."""
        problems = self.violations
        assert not problems, "the OpenAI fake saw invalid traffic:\n- " + "\n- ".join(problems)

    async def _unknown(self, request: web.Request) -> web.Response:
        self.unknown_routes.append(f"unknown route {request.method} {request.path}")
        return web.json_response(
            {"error": {"message": "not faked", "type": "invalid_request_error", "param": None, "code": None}},
            status=404,
        )

    async def start(self) -> FakeOpenAI:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat.handle)
        app.router.add_get("/v1/realtime", self.realtime.handle)
        app.router.add_get("/v1/models", self.models.handle)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self

    async def stop(self) -> None:
        self.chat.release_hangs()
        await self.realtime.aclose()
        for conn in self.realtime.connections:
            if not conn.ws.closed:
                await conn.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
