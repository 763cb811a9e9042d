"""A world for the Discord Activity's tests: the Discord fake (OAuth2, Bearer ``/users/@me``,
activity instances), a web surface with ``[activity] enabled`` pointed at it, server A (the
fake's default guild, playing the sandbox) and server B (its own host, never playing), and an
activity instance in A's voice channel with ``fake.member`` in it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.config import ActivitySettings, DiscordSettings, PathSettings, Settings, WebSettings
from bot.play.guild_hosts import PlayHosts
from bot.play.play_host import StartRequest
from bot.web.activity_routes import ActivitySetup
from bot.web.app import WebHandle, WebSurface
from bot.web.share_store import ShareStore
from tests.fakes.discord import DiscordFake
from tests.fakes.discord.activity_routes import FakeInstance
from tests.fakes.discord.server import SeededGuild
from tests.web.discord_client import ORIGIN as CLIENT_ORIGIN

WEB_TOKEN = "web-token-for-the-activity-tests"
HEADER = "X-Clankie-Viewer"


def activity_settings(
    tmp_path: Path,
    fake: DiscordFake,
    *,
    public_url: str | None = None,
    trusted_proxies: list[str] | None = None,
    **activity: Any,
) -> Settings:
    """The settings of the world; the Activity may be framed by the test's stand-in for the
    Discord client (``extra_frame_ancestors``, unless ``activity`` says otherwise)."""
    return Settings(
        discord=DiscordSettings(
            token=SecretStr(fake.token), api_url=fake.api_base, application_id=fake.application_id
        ),
        activity=ActivitySettings(
            enabled=True,
            client_secret=SecretStr(fake.activity.client_secret),
            **{"extra_frame_ancestors": [CLIENT_ORIGIN], **activity},
        ),
        web=WebSettings(
            port=0,
            token=SecretStr(WEB_TOKEN),
            public_url=public_url,
            max_subscribers=256,
            trusted_proxies=trusted_proxies or [],
        ),
        paths=PathSettings(state_dir=tmp_path / "state"),
    )


@dataclass
class ActivityWorld:
    fake: DiscordFake
    settings: Settings
    plays: PlayHosts
    surface: WebSurface
    handle: WebHandle
    other: SeededGuild  # server B
    instance: FakeInstance  # in A's voice channel, fake.member watching
    setup: ActivitySetup  # the Activity's, as the running surface holds it

    @property
    def activity(self) -> ActivitySetup:
        return self.setup

    @property
    def a(self) -> int:
        return self.fake.guild.id

    @property
    def b(self) -> int:
        return self.other.guild.id

    def launch_query(self, instance: FakeInstance | None = None, guild_id: int | None = None) -> str:
        instance = instance or self.instance
        guild = instance.guild.id if guild_id is None else guild_id
        return (
            f"?frame_id=frame-{instance.launch_id}&instance_id={instance.instance_id}&platform=desktop"
            f"&guild_id={guild}&channel_id={instance.channel.id}"
        )


class OffsetClock:
    """The server's clock: the wall clock moved on by ``offset`` seconds."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def _with_clock(
    make: Callable[[str | None], ActivitySetup | None],
    clock: Callable[[], float] | None,
    kept: list[ActivitySetup],
) -> Callable[[str | None], ActivitySetup | None]:
    def made(token: str | None) -> ActivitySetup | None:
        setup = make(token)
        if setup is not None:
            if clock is not None:
                setup.clock = clock
                setup.proof.instances.clock = clock  # how long an instance's answer is kept
            kept.append(setup)
        return setup

    return made


@asynccontextmanager
async def activity_world(
    tmp_path: Path,
    *,
    play: bool = True,
    pace_seconds: float = 0.05,
    public_url: str | None = None,
    clock: Callable[[], float] | None = None,
    trusted_proxies: list[str] | None = None,
    **activity: Any,
) -> AsyncIterator[ActivityWorld]:
    """The world; ``clock`` replaces the Activity's (credential expiry, signed stills) when given."""
    fake = DiscordFake()
    await fake.start()
    plays: PlayHosts | None = None
    handle: WebHandle | None = None
    try:
        other = await fake.add_guild("Other Server")
        settings = activity_settings(
            tmp_path, fake, public_url=public_url, trusted_proxies=trusted_proxies, **activity
        )
        plays = PlayHosts(settings)
        surface = WebSurface(settings, plays.local, ShareStore(), plays=plays)
        kept: list[ActivitySetup] = []
        surface.activity_setup = _with_clock(surface.activity_setup, clock, kept)  # type: ignore[method-assign,assignment]
        handle = await surface.start()
        host_a = plays.of(fake.guild.id)
        plays.of(other.guild.id)  # B has a host, and never plays
        if play:
            await host_a.start(
                StartRequest(world="sandbox", mind="autopilot", turns=10_000, pace_seconds=pace_seconds)
            )
        instance = fake.activity.launch(fake.guild, fake.voice_channel, [fake.member.user])
        yield ActivityWorld(fake, settings, plays, surface, handle, other, instance, kept[-1])
        fake.assert_clean()
    finally:
        if handle is not None:
            await handle.close()
        if plays is not None:
            await plays.close()
        await fake.stop()
