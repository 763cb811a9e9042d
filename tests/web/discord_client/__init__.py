"""A stand-in for the Discord client around an Activity, in real headless Chromium.

``client.html`` + ``client.js`` play the client's side of the Embedded App SDK's postMessage
protocol; :func:`discord_client` serves them from ``http://localhost:3333`` (an origin the SDK
2.5.0 accepts messages from; bound to 127.0.0.1, which ``localhost`` resolves to here), with
``GET setup`` (what to embed, as whom) and ``POST code`` (a fresh authorization code from the
Discord fake, what the real client's AUTHORIZE would answer).
"""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.fakes.discord import DiscordFake
from tests.fakes.discord.model import FakeUser

HERE = Path(__file__).parent
PORT = 3333
ORIGIN = f"http://localhost:{PORT}"


@dataclass
class ClientSetup:
    activity_url: str
    viewer: FakeUser
    participants: list[FakeUser] = field(default_factory=list)
    width: int = 900
    height: int = 640

    def payload(self, application_id: int) -> dict[str, Any]:
        def user(u: FakeUser) -> dict[str, Any]:
            return {"id": str(u.id), "username": u.username, "global_name": u.username.title()}

        return {
            "activityUrl": self.activity_url,
            "applicationId": str(application_id),
            "user": user(self.viewer),
            "participants": [user(p) for p in self.participants],
            "width": self.width,
            "height": self.height,
        }


def localhost_is_loopback() -> bool:
    return all(info[4][0] == "127.0.0.1" for info in socket.getaddrinfo("localhost", PORT, socket.AF_INET))


async def _listen(runner: web.AppRunner, within_s: float = 60.0) -> None:
    """Listen on 127.0.0.1:3333; the port is fixed (the SDK trusts that origin), so while another
    test process on this machine holds it, try again until it is free (up to ``within_s``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        site = web.TCPSite(runner, "127.0.0.1", PORT, reuse_address=True)
        try:
            await site.start()
            return
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or loop.time() > deadline:
                raise
        await asyncio.sleep(0.2)


@asynccontextmanager
async def discord_client(fake: DiscordFake, setup: ClientSetup) -> AsyncIterator[str]:
    """Serve the client page on 127.0.0.1:3333; yields its URL (``http://localhost:3333/``)."""
    assert localhost_is_loopback(), "localhost must resolve to 127.0.0.1 for the client's origin"

    async def page(_request: web.Request) -> web.FileResponse:
        return web.FileResponse(HERE / "client.html")

    async def script(_request: web.Request) -> web.FileResponse:
        return web.FileResponse(HERE / "client.js")

    async def give_setup(_request: web.Request) -> web.Response:
        return web.json_response(setup.payload(fake.application_id))

    async def code(_request: web.Request) -> web.Response:
        return web.json_response({"code": fake.activity.code_for(setup.viewer)})

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/client.js", script)
    app.router.add_get("/setup", give_setup)
    app.router.add_post("/code", code)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    await _listen(runner)
    try:
        yield ORIGIN + "/"
    finally:
        await runner.cleanup()
