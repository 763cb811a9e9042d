"""The Activity across processes (docs/architecture.md §10 "Several processes"): two web surfaces
that each own one shard of two, behind README's nginx block; Discord's URL mapping reaches the
root, which shard 0's process serves; a server on shard 1 is redirected to ``/s1/`` with Discord's
whole query, and the viewer, in real Chromium inside the stand-in Discord client, sees that
server's play from shard 1's process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pydantic import ValidationError

from bot.config import ClusterSettings, ConfigError, Settings, WebSettings, load_settings
from bot.play.guild_hosts import PlayHosts
from bot.play.play_host import StartRequest
from bot.setup.activity_checks import public_url_check
from bot.web.activity_shards import ROUTED, ShardRoutes
from bot.web.app import WebHandle, WebSurface
from bot.web.auth import WebConfigError
from bot.web.share_store import ShareStore
from tests.fakes.discord import DiscordFake
from tests.fakes.discord.activity_routes import FakeInstance
from tests.fakes.discord.server import SeededGuild
from tests.web.activity_world import activity_settings
from tests.web.browser import chromium
from tests.web.discord_client import ORIGIN, ClientSetup, discord_client
from tests.web.nginx import free_port, running_nginx
from tests.web.test_activity_browser import PAINTED, shot, watch_requests
from tests.web.test_behind_nginx import on_loopback, readme_nginx_block

# The Discord client page is served on the fixed port 3333 (tests/web/discord_client): these
# tests run on one xdist worker, one after another.
pytestmark = pytest.mark.xdist_group("discord_client_port")

PREFIX = "/s{shard}/"


def sharded(settings: Settings, shard: int, count: int = 2) -> Settings:
    settings.discord.shard_count = count
    settings.discord.shard_ids = [shard]
    settings.cluster.shard_prefix = PREFIX
    return settings


@dataclass
class TwoProcesses:
    fake: DiscordFake
    front: WebHandle  # shard 0's surface: nginx's `location /` and /s0/
    owner: WebHandle  # shard 1's: /s1/
    guild: SeededGuild  # on shard 1, playing on the owner
    instance: FakeInstance  # in its voice channel, its member watching

    def query(self) -> str:
        i = self.instance
        return (
            f"frame_id=frame-{i.launch_id}&instance_id={i.instance_id}&platform=desktop"
            f"&guild_id={i.guild.id}&channel_id={i.channel.id}"
        )


@asynccontextmanager
async def two_processes(tmp_path: Path, public: tuple[str, str] | None = None) -> AsyncIterator[TwoProcesses]:
    """Two surfaces as two `clankie run` with `--shard-count 2 --shard-ids 0` and `… 1` would
    have them: each its own play hosts and state, the same application and client secret."""
    fake = DiscordFake()
    await fake.start()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(fake.stop)
        guild = await fake.add_guild("Shard One Server", shard=(1, 2))
        handles: list[WebHandle] = []
        hosts: list[PlayHosts] = []
        for shard in (0, 1):
            url = public[shard] if public else None
            settings = sharded(activity_settings(tmp_path / f"s{shard}", fake, public_url=url), shard)
            plays = PlayHosts(settings)
            stack.push_async_callback(plays.close)
            handle = await WebSurface(settings, plays.local, ShareStore(), plays=plays).start()
            stack.push_async_callback(handle.close)
            handles.append(handle)
            hosts.append(plays)
        owner_host = hosts[1].of(guild.guild.id)
        await owner_host.start(
            StartRequest(world="sandbox", mind="autopilot", turns=10_000, pace_seconds=0.4)
        )
        instance = fake.activity.launch(guild.guild, guild.voice_channel, [guild.member.user])
        yield TwoProcesses(fake, handles[0], handles[1], guild, instance)


def test_the_shard_prefix_is_a_path_with_the_shard_in_it() -> None:
    assert ClusterSettings(shard_prefix="/s{shard}/").shard_prefix == "/s{shard}/"
    assert ClusterSettings(shard_prefix="/clankie/shard-{shard}/").shard_prefix
    for bad, said in (
        ("/s/", "must hold {shard} once"),
        ("/s{shard}{shard}/", "must hold {shard} once"),
        ("s{shard}/", "a path from the host's root"),
        ("/s{shard}", "a path from the host's root"),
        ("https://x.example/s{shard}/", "a path from the host's root"),
        ("/s{shard}/?a=1/", "may hold letters"),
        ("//s{shard}/", "may hold letters"),
        ("/../s{shard}/", "may hold letters"),
    ):
        with pytest.raises(ValidationError, match=said.replace("{", r"\{").replace("?", r"\?")):
            ClusterSettings(shard_prefix=bad)


def test_a_bad_shard_prefix_in_the_file_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[cluster]\nshard_prefix = "s{shard}/"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert str(caught.value) == (
        f"{path}: [cluster] shard_prefix: shard_prefix is a path from the host's root: /…/, "
        "e.g. /s{shard}/ (got 's{shard}/')"
    )


def test_the_doctor_maps_the_activity_to_the_hosts_root_when_shards_have_prefixes() -> None:
    settings = Settings(web=WebSettings(public_url="https://clankie.example.org/s1/"))
    assert public_url_check(settings).found.endswith("URL Mappings: / → clankie.example.org/s1)")
    settings.cluster.shard_prefix = PREFIX
    assert public_url_check(settings).found.endswith("URL Mappings: / → clankie.example.org)")


def test_who_owns_a_server_and_where_its_process_is() -> None:
    on_shard_1 = (1 << 22) * 3  # (id >> 22) % 2 == 1
    routes = ShardRoutes(2, frozenset({0}), PREFIX)
    assert routes.shard_of(on_shard_1) == 1 and not routes.owns(on_shard_1)
    assert routes.owns(on_shard_1 + (1 << 22))
    assert routes.launch_location(on_shard_1, "frame_id=f&x=%2F") == f"/s1/?frame_id=f&x=%2F&{ROUTED}=1"
    assert routes.launch_location(on_shard_1 + (1 << 22), "frame_id=f") is None  # its own
    assert ShardRoutes(2, frozenset({0}), None).launch_location(on_shard_1, "q=1") is None  # nowhere known
    assert ShardRoutes(None, None, PREFIX).owns(on_shard_1)  # one process runs every shard
    assert ShardRoutes(2, None, PREFIX).owns(on_shard_1)
    assert routes.problem("https://clankie.example.org/s0/") is None
    assert routes.problem(None) is None
    problem = routes.problem("https://clankie.example.org/s1/")
    assert problem is not None and "/s1/" in problem and "/s0/" in problem


async def test_a_process_that_does_not_own_the_server_redirects_with_the_whole_query(tmp_path: Path) -> None:
    async with two_processes(tmp_path) as world, aiohttp.ClientSession() as http:
        query = world.query() + "&extra=a%20b"
        async with http.get(f"{world.front.url}?{query}", allow_redirects=False) as moved:
            assert moved.status == 307
            assert moved.headers["Location"] == f"/s1/?{query}&{ROUTED}=1"
            assert "Referrer-Policy" not in moved.headers  # the SDK answers to document.referrer
            assert moved.headers["Cache-Control"] == "no-store"
        async with http.get(f"{world.owner.url}?{query}&{ROUTED}=1", allow_redirects=False) as page:
            assert page.status == 200 and 'data-application-id="' in await page.text()
        # the proxy sent it back to a process that does not own it: a sentence, not a loop
        async with http.get(f"{world.front.url}?{query}&{ROUTED}=1", allow_redirects=False) as back:
            assert back.status == 421
            assert "shard 1, which this Clankie process does not run" in await back.text()
        # without Discord's query the root is the local page, whatever the guild
        async with http.get(f"{world.front.url}?guild_id={world.guild.guild.id}", allow_redirects=False) as r:
            assert r.status != 307


async def test_a_public_url_that_is_not_one_of_its_shards_prefixes_stops_start(tmp_path: Path) -> None:
    fake = DiscordFake()
    await fake.start()
    try:
        settings = sharded(activity_settings(tmp_path, fake, public_url="https://c.example.org/s1/"), 0)
        plays = PlayHosts(settings)
        try:
            with pytest.raises(WebConfigError, match=r"public_url's path is /s1/.*at /s0/"):
                await WebSurface(settings, plays.local, ShareStore(), plays=plays).start()
        finally:
            await plays.close()
    finally:
        await fake.stop()


async def check_in_client(world: TwoProcesses, root: str, owner_prefix: str, tmp_path: Path) -> None:
    activity_origin = "/".join(root.split("/")[:3])
    member, moderator = world.guild.member.user, world.guild.moderator.user
    setup = ClientSetup(f"{root}?{world.query()}", member, [member, moderator])
    async with discord_client(world.fake, setup) as client_url, chromium() as browser:
        page = await browser.new_page(viewport={"width": 960, "height": 700})
        strays = watch_requests(page, activity_origin)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        await page.goto(client_url)
        frame = await owner_frame(page, activity_origin + owner_prefix)
        # the 307 inside the iframe kept the referrer: the client's origin, where the SDK posts
        assert await frame.evaluate("() => document.referrer") == ORIGIN + "/"
        assert f"{ROUTED}=1" in frame.url and f"frame_id=frame-{world.instance.launch_id}" in frame.url
        await frame.wait_for_function(PAINTED, timeout=20_000)
        await frame.wait_for_function(
            "() => /turn \\d+/.test(document.getElementById('state').textContent)", timeout=10_000
        )
        await frame.wait_for_function("() => document.getElementById('transport').textContent === 'live'")
        handshake = await page.evaluate("() => window.handshake")
        assert handshake["frame_id"] == f"frame-{world.instance.launch_id}"
        assert await frame.is_hidden("#notice")
        src = await frame.get_attribute("#still", "src")
        assert src is not None and "sig=" in src
        path = tmp_path / "sharded.png"
        await page.screenshot(path=str(path))
        shot(path)
        assert strays == [] and problems == []


async def owner_frame(page: Any, owner_root: str) -> Any:
    await page.wait_for_function("() => document.getElementById('activity').src !== ''")
    for _ in range(400):
        for frame in page.frames:
            if frame.parent_frame is not None and frame.url.startswith(owner_root):
                return frame
        await page.wait_for_timeout(25)
    raise AssertionError(f"the activity's iframe never reached {owner_root}: {[f.url for f in page.frames]}")


async def test_the_viewer_of_a_server_on_another_process_sees_its_play_through_nginx(tmp_path: Path) -> None:
    nginx_port = free_port()
    base = f"http://127.0.0.1:{nginx_port}"
    public = (f"{base}/s0/", f"{base}/s1/")
    async with two_processes(tmp_path, public) as world:
        block = on_loopback(readme_nginx_block(), nginx_port, (world.front.port, world.owner.port))
        async with running_nginx(tmp_path / "nginx", nginx_port, block) as nginx:
            await check_in_client(world, base + "/", "/s1/", tmp_path)
            assert "[error]" not in nginx.error_log(), nginx.error_log()
