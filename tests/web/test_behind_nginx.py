"""The web surface behind a real nginx (Debian's), configured with README's "Behind nginx" block
as written: two surfaces under /s0/ and /s1/, each with its prefixed `[web] public_url`. Through
the proxy: the activity page follows play in Chromium (live over the event stream), the still
and the event stream answer, a share link's page loads under the prefix, and a request for a
foreign Host is still a 421. Behind it, a sign-in to the Activity is counted by the address that
connected to nginx."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bot.config import WebSettings
from bot.play.play_host import PlayHost
from bot.web.app import WebHandle, WebSurface
from bot.web.auth import public_host
from bot.web.client_limits import SIGN_INS_BURST
from bot.web.share_store import ShareStore
from bot.web.share_types import Place
from tests.web.activity_world import activity_world
from tests.web.browser import chromium
from tests.web.nginx import Nginx, free_port, running_nginx
from tests.web.sandbox import sandbox_playing, settings_for
from tests.web.test_activity_limits import StoppedClock, client_from, code_body
from tests.web.test_activity_page import watch_page_follow_play

ROOT = Path(__file__).resolve().parents[2]
README_PORTS = (8750, 8751)  # the surfaces' ports in README's block, replaced by the real ones
LIVE = "v1/embodiment/sessions/live"


def readme_nginx_block() -> str:
    """The ```nginx block of README's "Behind nginx"."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("### Behind nginx")
    end = readme.index("\n## ", start)
    (block,) = re.findall(r"```nginx\n(.*?)```", readme[start:end], re.S)
    return str(block)


def on_loopback(block: str, nginx_port: int, surface_ports: tuple[int, int]) -> str:
    """README's block with nginx on 127.0.0.1:nginx_port and the two surfaces' real ports."""
    assert "listen 80;" in block
    block = block.replace("listen 80;", f"listen 127.0.0.1:{nginx_port};")
    for readme_port, port in zip(README_PORTS, surface_ports, strict=True):
        assert f"http://127.0.0.1:{readme_port}/" in block
        block = block.replace(f"http://127.0.0.1:{readme_port}/", f"http://127.0.0.1:{port}/")
    return block


@asynccontextmanager
async def surface(tmp_path: Path, public_url: str) -> AsyncIterator[tuple[PlayHost, WebSurface, WebHandle]]:
    settings = settings_for(tmp_path, web=WebSettings(port=0, public_url=public_url))
    host = PlayHost(settings)
    web = WebSurface(settings, host, ShareStore())
    handle = await web.start()
    try:
        yield host, web, handle
    finally:
        await handle.close()
        await host.stop()


async def next_event(response: aiohttp.ClientResponse) -> tuple[str, dict[str, Any]]:
    """The next server-sent event (comments and `retry:` skipped)."""
    name: str | None = None
    data: dict[str, Any] = {}
    while True:
        line = (await response.content.readline()).decode().rstrip("\n")
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = json.loads(line.removeprefix("data: "))
        elif line == "" and name is not None:
            return name, data


async def check_through_proxy(nginx: Nginx, shares: ShareStore) -> None:
    base = nginx.base_url
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/s0/") as page:
            assert page.status == 200 and page.content_type == "text/html"
            assert 'src="./static/activity.js"' in await page.text()
        async with http.get(f"{base}/s0/static/activity.js") as script:
            assert script.status == 200
        async with http.get(f"{base}/s0/{LIVE}") as live, http.get(f"{base}/s1/{LIVE}") as idle:
            playing, nothing = await live.json(), await idle.json()
        assert playing["session"]["world"] == "sandbox" and nothing["session"] is None  # two surfaces

        async with http.get(f"{base}/s0/{LIVE}/still", headers={"Accept": "image/*"}) as still:
            assert still.status == 200 and still.content_type in ("image/png", "image/jpeg")
            assert len(await still.read()) > 100

        # The event stream through the proxy: the idle surface's first status comes alone (no
        # buffer holds it back), the playing one's turns follow one another.
        async with http.get(f"{base}/s1/v1/embodiment/events") as events:
            assert events.status == 200 and events.content_type == "text/event-stream"
            name, data = await next_event(events)
            assert name == "status" and data["session"] is None
        async with http.get(f"{base}/s0/v1/embodiment/events") as events:
            turns: list[int] = []
            while len(turns) < 3:
                name, data = await next_event(events)
                if name == "turn":
                    turns.append(data["turn"])
            assert turns == sorted(turns) and len(set(turns)) == 3

        # The Host check through the proxy: a name that is not public_url's host is refused.
        for path in ("/s0/", f"/s0/{LIVE}", f"/s1/{LIVE}/still"):
            async with http.get(base + path, headers={"Host": "evil.example"}) as refused:
                assert refused.status == 421, path
                assert (await refused.json())["error"] == "misdirected"
        async with http.get(base + "/s0/", headers={"Host": f"localhost:{nginx.port}"}) as other:
            assert other.status == 421  # loopback, but not the surface's own port nor public_url's

        link = shares.create_link(7, "pat", Place.of(1, 2))
        assert link.url.startswith(f"{base}/s0/share/")
        async with http.get(link.url) as share_page:
            assert share_page.status == 200 and 'src="../static/share.js"' in await share_page.text()


async def test_the_surface_behind_nginx_under_a_path_prefix(tmp_path: Path) -> None:
    nginx_port = free_port()
    public = (f"http://127.0.0.1:{nginx_port}/s0/", f"http://127.0.0.1:{nginx_port}/s1/")
    async with (
        surface(tmp_path / "s0", public[0]) as (host, web, first),
        surface(tmp_path / "s1", public[1]) as (_idle_host, _idle_web, second),
        sandbox_playing(host, pace_seconds=0.3),  # still walking when the checks run,
    ):
        assert (first.url, second.url) == public  # the links it gives out carry the prefix
        block = on_loopback(readme_nginx_block(), nginx_port, (first.port, second.port))
        async with running_nginx(tmp_path / "nginx", nginx_port, block) as nginx:
            async with chromium() as browser:
                page = await browser.new_page()
                failed: list[str] = []
                page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
                await watch_page_follow_play(page, public[0])
                await page.wait_for_function(
                    "() => document.getElementById('transport').textContent === 'live'"
                )
                src = await page.get_attribute("#still", "src")
                assert src is not None and src.startswith(f"{public[0]}{LIVE}/still")
                assert failed == []
            await check_through_proxy(nginx, web.share_store)
            assert "[error]" not in nginx.error_log(), nginx.error_log()


def test_the_host_of_a_public_url_leaves_out_its_path_and_a_default_port() -> None:
    assert public_host("https://Clankie.example.org:443/s0/") == ("clankie.example.org", None)
    assert public_host("https://clankie.example.org/s0/") == ("clankie.example.org", None)
    assert public_host("http://127.0.0.1:8080/s1/") == ("127.0.0.1", 8080)
    assert public_host("http://clankie.example.org:443/") == ("clankie.example.org", 443)
    assert public_host("/s0/") is None


async def test_behind_nginx_a_sign_in_is_counted_by_who_connected_to_nginx(tmp_path: Path) -> None:
    """README's block passes X-Forwarded-For on (nginx appends who connected to it) and its
    `[web] trusted_proxies` names nginx: one address's bogus sign-ins use up that address's
    allowance alone, whatever it writes into the header, and a viewer elsewhere gets in."""
    nginx_port = free_port()
    async with activity_world(
        tmp_path, play=False, clock=StoppedClock(), trusted_proxies=["127.0.0.1"]
    ) as world:
        block = on_loopback(readme_nginx_block(), nginx_port, (world.handle.port, world.handle.port))
        async with running_nginx(tmp_path / "nginx", nginx_port, block) as nginx:
            url = f"{nginx.base_url}/v1/activity/session"
            async with client_from("127.0.0.2") as attacker:
                statuses = []
                for n in range(SIGN_INS_BURST + 1):
                    forged = {"X-Forwarded-For": f"198.51.100.{n}"}
                    async with attacker.post(url, json=code_body(world, "bogus"), headers=forged) as r:
                        statuses.append(r.status)
            assert statuses == [401] * SIGN_INS_BURST + [429]
            async with client_from("127.0.0.3") as viewer, viewer.post(url, json=code_body(world)) as r:
                assert r.status == 200 and (await r.json())["credential"]
            assert len(world.fake.requests_to("oauth2_token")) == SIGN_INS_BURST + 1
            assert "[error]" not in nginx.error_log(), nginx.error_log()
