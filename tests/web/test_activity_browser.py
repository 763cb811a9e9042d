"""The Activity in real headless Chromium, inside a stand-in for the Discord client
(tests/web/discord_client/): the vendored SDK does its handshake, READY, AUTHORIZE, the server
proves the viewer with the Discord fake, AUTHENTICATE, the participants row, and the viewer sees
server A's live play. The iframe asks nothing of any origin but its own."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bot.web.app import WebHandle
from tests.web.activity_world import activity_world
from tests.web.browser import chromium
from tests.web.discord_client import ORIGIN, ClientSetup, discord_client
from tests.web.nginx import free_port, running_nginx
from tests.web.test_behind_nginx import on_loopback, readme_nginx_block

# The Discord client page is served on the fixed port 3333 (tests/web/discord_client): these
# tests run on one xdist worker, one after another.
pytestmark = pytest.mark.xdist_group("discord_client_port")

PAINTED = "() => { const i = document.getElementById('still'); return !i.hidden && i.complete && i.naturalWidth > 0; }"
SHOTS = Path("/tmp/activity-web-shots")  # a copy of each screenshot, for a person to look at


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def activity_frame(page: Any, activity_origin: str) -> Any:
    await page.wait_for_function("() => document.getElementById('activity').src !== ''")
    for _ in range(200):
        for frame in page.frames:
            if frame.parent_frame is not None and frame.url.startswith(activity_origin):
                return frame
        await page.wait_for_timeout(25)
    raise AssertionError("the activity's iframe never loaded")


def watch_requests(page: Any, activity_origin: str) -> list[str]:
    """Every request to an origin it should not reach: the iframe only its own, the client page
    only its own (the test's stand-in for Discord)."""
    strays: list[str] = []

    def judge(request: Any) -> None:
        frame = request.frame
        allowed = activity_origin if frame is not None and frame.parent_frame is not None else ORIGIN
        if not request.url.startswith(("data:", "blob:")) and origin(request.url) != allowed:
            strays.append(f"{request.method} {request.url}")

    page.on("request", judge)
    return strays


def shot(path: Path) -> None:
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(path, SHOTS / path.name)


async def check_the_viewer_sees_as_play(page: Any, frame: Any) -> None:
    await frame.wait_for_function(PAINTED, timeout=20_000)
    await frame.wait_for_function(
        "() => /turn \\d+/.test(document.getElementById('state').textContent)", timeout=10_000
    )
    await frame.wait_for_function("() => document.getElementById('objective').textContent !== '—'")
    src = await frame.get_attribute("#still", "src")
    assert src is not None and "sig=" in src and "v=" in src  # a signed, per-frame URL
    await frame.wait_for_function("() => document.querySelectorAll('#watchers li').length === 2")
    assert await frame.eval_on_selector_all("#watchers li", "els => els.map(e => e.textContent)") == [
        "Pat",
        "Mod",
    ]
    assert await frame.is_hidden("#notice")
    log = await page.evaluate("() => window.clientLog")
    commands = [entry[1] for entry in log if entry[0] == 1]
    for cmd in ("AUTHORIZE", "AUTHENTICATE", "GET_ACTIVITY_INSTANCE_CONNECTED_PARTICIPANTS", "SUBSCRIBE"):
        assert cmd in commands, log
    assert await page.evaluate("() => window.subscribed") == "ACTIVITY_INSTANCE_PARTICIPANTS_UPDATE"


async def run_in_client(handle: WebHandle, world: Any, tmp_path: Path, activity_url: str, name: str) -> None:
    activity_origin = origin(activity_url)
    setup = ClientSetup(
        activity_url, world.fake.member.user, [world.fake.member.user, world.fake.moderator.user]
    )
    async with discord_client(world.fake, setup) as client_url, chromium() as browser:
        page = await browser.new_page(viewport={"width": 960, "height": 700})
        strays = watch_requests(page, activity_origin)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        await page.goto(client_url)
        frame = await activity_frame(page, activity_origin)
        await check_the_viewer_sees_as_play(page, frame)
        handshake = await page.evaluate("() => window.handshake")
        assert (
            handshake["client_id"] == str(world.fake.application_id) and handshake["sdk_version"] == "2.5.0"
        )
        await frame.wait_for_function("() => document.getElementById('transport').textContent === 'live'")
        # someone joins: the client dispatches the update and the row follows
        someone = {"id": "42", "username": "sam", "global_name": "Sam"}
        await page.evaluate("(p) => dispatchParticipants([...[p]])", someone)
        await frame.wait_for_function("() => document.querySelectorAll('#watchers li').length === 1")
        assert await frame.text_content("#watchers li") == "Sam"
        wide = tmp_path / f"{name}-wide.png"
        await page.screenshot(path=str(wide))
        shot(wide)
        for width, height, label in ((360, 640, "phone"), (320, 180, "pip")):
            await page.evaluate(
                "([w, h]) => { const f = document.getElementById('activity'); f.width = w; f.height = h; }",
                [width, height],
            )
            await frame.wait_for_function(f"() => window.innerWidth === {width}")
            overflow = await frame.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{label}: the page is wider than its frame by {overflow}px"
            await frame.wait_for_function(PAINTED)
            box = await frame.eval_on_selector("#still", "i => i.getBoundingClientRect().toJSON()")
            assert box["width"] > 0 and box["height"] > 0 and box["top"] < height, (label, box)
            if label == "pip":  # the picture fills the frame and the objective rides over it
                assert await frame.is_visible("#objective") and await frame.is_hidden("#feed")
            path = tmp_path / f"{name}-{label}.png"
            await page.screenshot(
                path=str(path), clip={"x": 0, "y": 0, "width": max(width, 360), "height": height}
            )
            shot(path)
        assert strays == []
        assert problems == []


async def test_the_viewer_sees_their_servers_play_inside_the_discord_client(tmp_path: Path) -> None:
    async with activity_world(tmp_path, pace_seconds=0.4) as world:  # slow enough that objectives remain
        url = world.handle.url + world.launch_query()
        await run_in_client(world.handle, world, tmp_path, url, "direct")


JOIN_CALL = (
    "To watch, join the voice channel where Clankie's activity is running, in the server it plays for, "
    "and open the activity from there."
)
# what a refused viewer can see: every element that is rendered and has a box
SHOWN = """() => [...document.body.querySelectorAll('*')].filter(e => {
  const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
}).map(e => e.id || e.tagName.toLowerCase())"""


async def test_a_viewer_discord_does_not_list_sees_only_the_refusal_and_what_to_do(tmp_path: Path) -> None:
    async with activity_world(tmp_path) as world:
        world.instance.users.clear()
        url = world.handle.url + world.launch_query()
        setup = ClientSetup(url, world.fake.member.user, [])
        async with discord_client(world.fake, setup) as client_url, chromium() as browser:
            page = await browser.new_page(viewport={"width": 960, "height": 700})
            strays = watch_requests(page, origin(url))
            await page.goto(client_url)
            frame = await activity_frame(page, origin(url))
            await frame.wait_for_function(
                "() => document.getElementById('notice').classList.contains('problem')"
            )
            assert (
                await frame.text_content("#notice")
                == "Discord does not list you in this activity, so its play is not shown to you."
            )
            assert await frame.text_content("#todo") == JOIN_CALL
            # the reason and what to do, alone: no "connecting…" pill, no empty dashboard
            assert await frame.evaluate(SHOWN) == ["header", "h1", "notice", "todo"]
            assert await frame.is_hidden("#state") and await frame.is_hidden("main")
            assert await frame.is_hidden("footer")
            assert await page.evaluate("() => window.authenticatedWith") is None
            picture = tmp_path / "refused.png"
            await page.screenshot(path=str(picture))
            shot(picture)
            # in the picture-in-picture frame the reason and what to do still fit, and nothing else
            await page.evaluate(
                "() => { const f = document.getElementById('activity'); f.width = 320; f.height = 180; }"
            )
            await frame.wait_for_function("() => window.innerWidth === 320")
            assert await frame.evaluate(SHOWN) == ["notice", "todo"]
            boxes = []
            for part in ("#notice", "#todo"):
                box = await frame.eval_on_selector(part, "e => e.getBoundingClientRect().toJSON()")
                assert box["top"] >= 0 and box["bottom"] <= 180 and box["right"] <= 320, (part, box)
                boxes.append(box)
            assert boxes[0]["bottom"] <= boxes[1]["top"], boxes  # one under the other, not over it
            small = tmp_path / "refused-pip.png"
            await page.screenshot(path=str(small), clip={"x": 0, "y": 0, "width": 360, "height": 180})
            shot(small)
            assert strays == []


async def test_before_discord_proves_the_viewer_the_page_shows_no_dashboard(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, chromium() as browser:
        page = await browser.new_page()  # opened outside Discord: the SDK waits for a handshake
        await page.goto(world.handle.url + world.launch_query())
        await page.wait_for_function("() => document.getElementById('notice').textContent !== ''")
        assert await page.text_content("#notice") == "Connecting to Discord…"
        assert await page.evaluate(SHOWN) == ["header", "h1", "notice"]


async def test_the_activity_works_behind_the_nginx_prefix(tmp_path: Path) -> None:
    nginx_port = free_port()
    public = f"http://127.0.0.1:{nginx_port}/s0/"
    async with activity_world(tmp_path, public_url=public, pace_seconds=0.4) as world:
        block = on_loopback(readme_nginx_block(), nginx_port, (world.handle.port, free_port()))
        async with running_nginx(tmp_path / "nginx", nginx_port, block) as nginx:
            await run_in_client(world.handle, world, tmp_path, public + world.launch_query(), "nginx")
            assert "[error]" not in nginx.error_log(), nginx.error_log()


async def test_without_its_websocket_the_activity_polls_and_still_follows_play(tmp_path: Path) -> None:
    async with activity_world(tmp_path, pace_seconds=0.2, poll_interval_s=0.5) as world:
        url = world.handle.url + world.launch_query()
        setup = ClientSetup(url, world.fake.member.user, [world.fake.member.user])
        async with discord_client(world.fake, setup) as client_url, chromium() as browser:
            page = await browser.new_page()
            refused: list[str] = []

            async def refuse(ws: Any) -> None:  # the proxy (or a network) that carries no WebSocket
                refused.append(ws.url)
                await ws.close(code=1011, reason="no websockets here")

            await page.route_web_socket("**/embodiment/live", refuse)
            strays = watch_requests(page, origin(url))
            await page.goto(client_url)
            frame = await activity_frame(page, origin(url))
            await frame.wait_for_function(
                "() => document.getElementById('transport').textContent === 'updating every 0.5 s'"
            )
            await frame.wait_for_function(PAINTED)
            turn = "() => Number((document.getElementById('state').textContent.match(/turn (\\d+)/) || [])[1] || 0)"
            first = await frame.evaluate(turn)
            await frame.wait_for_function(
                f"() => ({turn})() > {first}", timeout=10_000
            )  # polling follows play
            assert refused and strays == []


async def test_the_activity_shows_what_the_room_said_under_the_turn_that_heard_it(tmp_path: Path) -> None:
    """Inside the Discord client: a mention in server A reaches its play (the autopilot records it
    as heard, never heeds it), and the Activity shows who said it under the turn that heard it."""
    async with activity_world(tmp_path, pace_seconds=0.4) as world:
        url = world.handle.url + world.launch_query()
        activity_origin = origin(url)
        setup = ClientSetup(url, world.fake.member.user, [world.fake.member.user, world.fake.moderator.user])
        async with discord_client(world.fake, setup) as client_url, chromium() as browser:
            page = await browser.new_page(viewport={"width": 960, "height": 700})
            await page.goto(client_url)
            frame = await activity_frame(page, activity_origin)
            await frame.wait_for_function("() => document.getElementById('transport').textContent === 'live'")
            line = world.plays.heard(
                world.fake.guild.id, "text", 4321, "Pat", "go to the left house @everyone"
            )
            assert line is not None
            await frame.wait_for_function("() => document.querySelectorAll('#turns ul.room li').length === 1")
            shown = await frame.text_content("#turns ul.room li")
            assert shown == "Pat (text): “go to the left house @everyone” — heard"
            path = tmp_path / "room-lines.png"
            await page.screenshot(path=str(path))
            shot(path)
