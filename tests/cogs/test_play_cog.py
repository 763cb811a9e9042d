"""/play through the wire-level Discord fake: a real ClankieBot, a real sandbox session."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from aiohttp import web
from pydantic import SecretStr

from bot.character import build_character
from bot.config import Settings
from bot.play.minds.factory import mind_names
from bot.play.play_host import StartRequest
from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.factory import world_names
from bot.worlds.pokeagent.settings import PokeAgentSettings
from journal.oplog import read_events
from journal.reader import read_journal
from tests.cogs.harness import Live, live_bot, wait_turns
from tests.fakes.discord.model import FakeMessage
from tests.fakes.openai import FakeOpenAI, HttpError, Structured
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.fakes.pokeagent.server import FakePokeAgent
from tests.play.wire import wire_decision
from tests.web.browser import need_chromium

OTHER_PAGE = """<!doctype html><title>Someone else's page</title>
<p>A page the project did not write: <button onclick="this.textContent='pressed'">press me</button></p>"""


def using(openai_fake: FakeOpenAI) -> Callable[[Settings], None]:  # noqa: F811
    """Settings that point the bot's model calls at the OpenAI fake (with a made-up key)."""

    def configure(settings: Settings) -> None:
        settings.openai.base_url = openai_fake.base_url
        settings.openai.api_key = SecretStr("sk-test-not-real")

    return configure


@pytest.fixture
async def test_page() -> AsyncIterator[str]:
    """A page on a loopback port of its own, as a moderator's own test server would serve it."""
    app = web.Application()
    app.router.add_get("/", _page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/"
    await runner.cleanup()


async def _page(_request: web.Request) -> web.Response:
    return web.Response(text=OTHER_PAGE, content_type="text/html")


def journals(live: Live) -> list[Path]:
    folder = live.host.journal_dir
    return sorted(folder.glob("*.jsonl")) if folder.exists() else []


async def start_sandbox(live: Live, turns: int = 10_000) -> str:
    handle = await live.fake.send_interaction(
        "play start", {"world": "sandbox", "mind": "autopilot", "turns": turns}, by=live.fake.moderator
    )
    callback = await handle.response(within=3)  # Discord's window
    assert callback.deferred and not callback.ephemeral
    return await handle.reply_text(within=15)


async def test_a_moderator_starts_a_sandbox_session_and_status_follows_its_progress(live: Live) -> None:
    host = live.host
    stream = host.subscribe()
    text = await start_sandbox(live)
    assert "**sandbox**" in text and "**autopilot**" in text and "10000 turns" in text
    assert f"Watch: {live.guild_page}" in text
    session = host.active
    assert session is not None and session.spec.world == "sandbox" and session.spec.max_turns == 10_000

    settled = await wait_turns(stream, 3)
    handle = await live.fake.send_interaction("play status", by=live.fake.member)
    reply = await handle.response()
    assert not reply.ephemeral
    match = re.search(r"turn (\d+) of 10000", reply.content)
    assert match and int(match.group(1)) >= settled.turn >= 3, reply.content
    assert "Objective:" in reply.content and "Last effect:" in reply.content
    assert "milestones:" in reply.content and f"Activity page: {live.guild_page}" in reply.content


async def test_play_start_offers_exactly_the_registered_worlds_and_minds(live: Live) -> None:
    commands = await live.fake.wait_commands(live.fake.guild)
    (play,) = [c for c in commands if c["name"] == "play"]
    (start,) = [o for o in play["options"] if o["name"] == "start"]
    options = {o["name"]: o for o in start["options"]}
    assert [(c["name"], c["value"]) for c in options["world"]["choices"]] == [(w, w) for w in world_names()]
    assert [(c["name"], c["value"]) for c in options["mind"]["choices"]] == [(m, m) for m in mind_names()]


async def test_status_when_idle_says_not_playing(live: Live) -> None:
    handle = await live.fake.send_interaction("play status", by=live.fake.member)
    reply = await handle.response()
    assert reply.content.startswith("Not playing right now.")
    assert live.guild_page in reply.content


async def test_a_second_start_says_a_session_is_already_running(live: Live) -> None:
    await start_sandbox(live)
    first = live.host.active
    handle = await live.fake.send_interaction("play start", {"world": "sandbox"})
    reply = await handle.response(within=3)
    assert reply.ephemeral and not reply.deferred
    assert "already running" in reply.content
    assert live.host.active is first


class HeldDisk:
    """Every fsync in this process waits until :attr:`release` is set (20 s at most): a disk as
    slow as a test wants, without timing anything. :attr:`holding` is set once one waits."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.holding = threading.Event()
        self._real = os.fsync

    def fsync(self, fd: int) -> None:
        self.holding.set()
        self.release.wait(20)
        self._real(fd)


async def test_play_start_defers_before_it_touches_a_slow_disk(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldDisk()
    monkeypatch.setattr(os, "fsync", held.fsync)
    try:
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "autopilot", "turns": 5}, by=live.fake.moderator
        )
        callback = await handle.response(within=3)  # Discord's window, with no fsync done yet
        assert callback.deferred and not callback.ephemeral
        assert await asyncio.to_thread(held.holding.wait, 10)  # then the start reaches the disk
        assert handle.original_edits == 0 and not handle.followup_messages  # and waits there
        assert live.host.session is None
    finally:
        held.release.set()
    text = await handle.reply_text(within=15)
    assert "**sandbox**" in text and "**autopilot**" in text
    # on the wire: the deferral, then the reply (the first REST call of this interaction is its callback)
    calls = [r for r in live.fake.requests if handle.token in r.path]
    assert "/callback" in calls[0].path and calls[0].method == "POST"


async def test_a_member_without_the_permission_is_refused_and_nothing_starts(live: Live) -> None:
    handle = await live.fake.send_interaction("play start", {"world": "sandbox"}, by=live.fake.member)
    reply = await handle.response()
    assert reply.ephemeral and "Only moderators can start play" in reply.content
    assert "Manage Server" in reply.content
    assert live.host.session is None
    assert journals(live) == [] and not live.host.events.path.exists()

    handle = await live.fake.send_interaction("play stop", by=live.fake.member)
    reply = await handle.response()
    assert reply.ephemeral and "Only moderators can stop play" in reply.content


async def test_a_member_with_a_configured_moderator_role_may_start(tmp_path: Path) -> None:
    def configure(settings: Settings) -> None:
        settings.discord.moderator_roles = ["Game Master"]

    async with live_bot(tmp_path, configure) as live:
        role = await live.fake.add_role("game master")  # names match case-insensitively
        player = await live.fake.add_member("sam", [role])
        await live.fake.flush()
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "turns": 10_000}, by=player
        )
        text = await handle.reply_text(within=15)
        assert "**sandbox**" in text
        assert live.host.active is not None

        refused = await live.fake.send_interaction("play stop", by=live.fake.member)
        reply = await refused.response()
        assert reply.ephemeral and "**Game Master**" in reply.content
        assert live.host.active is not None


async def test_stop_ends_the_session_with_a_summary_and_a_stopped_event(live: Live) -> None:
    host = live.host
    stream = host.subscribe()
    await start_sandbox(live)
    session = host.active
    assert session is not None
    await wait_turns(stream, 2)

    handle = await live.fake.send_interaction("play stop")
    callback = await handle.response(within=3)
    assert callback.deferred
    text = await handle.reply_text(within=15)
    assert text.startswith("⏹️ Stopped **sandbox**") and "outcome stopped" in text
    assert host.active is None

    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert journal.summary is not None and journal.summary.outcome == "stopped"
    assert journal.summary.turnsTaken == len(journal.turns) == session.turn >= 2
    assert f"after {session.turn} turn(s)" in text
    events = read_events(live.host.events.path).lines
    assert [e.type for e in events] == ["embodiment.session.running", "embodiment.session.stopped"]
    assert events[-1].data["runId"] == session.run_id and events[-1].data["outcome"] == "stopped"

    again = await live.fake.send_interaction("play stop")
    reply = await again.response()
    assert reply.ephemeral and reply.content == "Nothing is playing."


@pytest.mark.parametrize(
    ("options", "option", "why"),
    [
        ({"turns": 0}, "turns", "outside 1–100000"),
        ({"turns": 100_001}, "turns", "outside 1–100000"),
        ({"turns": "lots"}, "turns", "not a whole number"),
        ({"minutes": 5000.0}, "minutes", "outside 1–1440"),
        ({"world": "moon"}, "world", "not one of sandbox, browser, pokeagent"),
        ({"mind": "psychic"}, "mind", "not one of autopilot, openai"),
    ],
)
async def test_bad_option_values_get_an_ephemeral_error_naming_the_option(
    live: Live, options: dict[str, object], option: str, why: str
) -> None:
    handle = await live.fake.send_interaction("play start", options, validate=False)
    reply = await handle.response()
    assert reply.ephemeral and not reply.deferred
    assert reply.content.startswith(f"Option `{option}`:") and why in reply.content, reply.content
    assert live.host.session is None and journals(live) == []


async def test_story_is_an_embed_live_then_of_the_last_journey(live: Live) -> None:
    handle = await live.fake.send_interaction("play story", by=live.fake.member)
    reply = await handle.response()
    assert reply.ephemeral and reply.content.startswith("No story yet")

    host = live.host
    stream = host.subscribe()
    await start_sandbox(live)
    await wait_turns(stream, 3)
    handle = await live.fake.send_interaction("play story", by=live.fake.member)
    reply = await handle.response()
    (embed,) = reply.data["embeds"]
    assert embed["title"] == "Clankie's story — playing now" and embed["url"] == live.guild_page
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert int(fields["Turns"]) >= 3 and "Objective:" in embed["description"]
    assert {"World", "Maps", "Last moments"} <= set(fields)
    # turn 3 says its line about turn 2's effect (leaving the house): the moment carries both
    assert "left_house" in fields["Last moments"] and "“I'm out of the house" in fields["Last moments"]

    session = await host.stop()
    assert session is not None
    handle = await live.fake.send_interaction("play story", by=live.fake.member)
    reply = await handle.response()
    (embed,) = reply.data["embeds"]
    assert embed["title"] == "Clankie's story — last journey"
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert int(fields["Turns"]) == session.turn


async def test_an_unexpected_failure_is_logged_and_answered_privately(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("journey index unreadable")

    monkeypatch.setattr(live.host, "recall_story", broken)
    handle = await live.fake.send_interaction("play story", by=live.fake.member)
    reply = await handle.response()
    assert reply.ephemeral and reply.content.startswith("Something went wrong")
    assert "journey index" not in reply.content


async def test_a_failure_after_deferring_is_answered_with_an_ephemeral_follow_up(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    await start_sandbox(live)

    async def broken() -> None:
        raise RuntimeError("stop failed")

    monkeypatch.setattr(live.host, "stop", broken)
    handle = await live.fake.send_interaction("play stop")
    assert (await handle.response()).deferred
    (followup,) = await handle.followups(1)
    assert followup.ephemeral and followup.content.startswith("Something went wrong")


async def test_a_world_that_cannot_start_is_reported_in_the_start_reply(tmp_path: Path) -> None:
    def configure(settings: Settings) -> None:
        settings.world_settings(BrowserSettings).chromium_path = str(tmp_path / "no-chromium-here")

    async with live_bot(tmp_path, configure) as live:
        handle = await live.fake.send_interaction("play start", {"world": "browser", "turns": 5})
        assert (await handle.response(within=3)).deferred
        text = await handle.reply_text(within=20)
        assert text.startswith("Play failed to start (browser, autopilot):") and "no-chromium-here" in text
        assert live.host.active is None
        status = await (await live.fake.send_interaction("play status")).response()
        assert "Last session: browser with autopilot, 0 turn(s), ended failed." in status.content
        events = read_events(live.host.events.path).lines
        assert [e.type for e in events] == ["embodiment.session.running", "embodiment.session.failed"]


async def test_a_refused_model_key_ends_play_and_the_start_reply_says_why(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    openai_fake.chat.script(
        HttpError(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
    )

    async with live_bot(tmp_path, using(openai_fake)) as live:
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "openai", "turns": 500}
        )
        assert (await handle.response(within=3)).deferred
        text = await handle.reply_text(within=20)
        endpoint = openai_fake.base_url.rstrip("/")
        assert text == (
            "Play failed (sandbox, openai) on turn 1, and retrying would not heal it: "
            f"the model endpoint {endpoint} answered HTTP 401 (check OPENAI_API_KEY)"
        )
        assert live.host.active is None and len(openai_fake.chat.requests) == 1
        status = await (await live.fake.send_interaction("play status")).response()
        assert "Last session: sandbox with openai, 1 turn(s), ended failed." in status.content
        failed = read_events(live.host.events.path).lines[-1]
        assert failed.type == "embodiment.session.failed" and "HTTP 401" in failed.data["reason"]


async def test_a_failure_after_the_start_reply_is_reported_under_it(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    """The reply says play started; when play later fails in a way retrying cannot heal, a
    follow-up under that reply says so and why (nobody has to ask /play status)."""
    move = wire_decision({"kind": "button_press", "button": "right"}, intent="walk east")
    openai_fake.chat.script(
        Structured(move), HttpError(403, "This key may not use this model", "permission_error")
    )

    async with live_bot(tmp_path, using(openai_fake)) as live:
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "openai", "turns": 500}
        )
        text = await handle.reply_text(within=20)
        assert text.startswith("▶️ Playing **sandbox** with the **openai** mind"), text
        [followup] = await handle.followups(1, within=30)
        assert followup.content.startswith(
            "Play failed (sandbox, openai) on turn 2, and retrying would not heal it:"
        )
        assert "HTTP 403" in followup.content and "sk-test" not in followup.content
        assert live.host.active is None


async def test_a_failure_after_the_interaction_token_expired_is_said_in_the_channel(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    """A follow-up needs the interaction's token, which Discord refuses after 15 minutes (401,
    code 50027): a failure later than that is said in the channel, to the moderator who
    started play, so the reason still reaches them."""
    move = wire_decision({"kind": "button_press", "button": "right"}, intent="walk east")
    later = asyncio.Event()

    async def fail_when_told(_body: dict[str, object]) -> HttpError:
        await later.wait()
        return HttpError(403, "This key may not use this model", "permission_error")

    openai_fake.chat.script(Structured(move))
    openai_fake.chat.responder = fail_when_told

    async with live_bot(tmp_path, using(openai_fake)) as live:
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "openai", "turns": 500}
        )
        assert (await handle.reply_text(within=20)).startswith("▶️ Playing **sandbox**")
        handle.expired = True  # fifteen minutes later
        later.set()
        fake = live.fake

        def failure_said() -> list[FakeMessage]:
            return [m for m in fake.channel_messages(handle.channel) if "Play failed" in m.content]

        await fake.wait_until(lambda: bool(failure_said()), 30, "the failure said in the channel")
        [said] = failure_said()
        user = handle.payload["member"]["user"]["id"]
        assert said.content.startswith(f"<@{user}> Play failed (sandbox, openai) on turn 2"), said.content
        assert "HTTP 403" in said.content and "sk-test" not in said.content
        assert said.body["allowed_mentions"] == {"parse": ["users"], "replied_user": True}
        assert handle.followup_messages == []
        fake.assert_clean()


async def test_play_start_world_browser_plays_the_builtin_2048_page(tmp_path: Path) -> None:
    chromium = need_chromium()

    def configure(settings: Settings) -> None:
        settings.world_settings(BrowserSettings).chromium_path = chromium
        settings.world_settings(BrowserSettings).url = "builtin:2048?seed=2"

    async with live_bot(tmp_path, configure) as live:
        host = live.host
        stream = host.subscribe()
        handle = await live.fake.send_interaction("play start", {"world": "browser", "turns": 50})
        assert (await handle.response(within=3)).deferred
        text = await handle.reply_text(within=30)
        assert text.startswith("▶️ Playing **browser** with the **autopilot** mind"), text
        assert f"Watch: {live.guild_page}" in text
        await wait_turns(stream, 2, within=30)
        status = await (await live.fake.send_interaction("play status", by=live.fake.member)).response()
        assert "**Playing browser** (autopilot)" in status.content, status.content
        # the page's metrics; no map, so no tile count; no milestones declared, so none listed
        assert re.search(r"Progress: score \d[\d\u00a0]* · best tile \d+$", status.content, re.M), (
            status.content
        )
        assert "milestones" not in status.content
        story = await (await live.fake.send_interaction("play story")).response()
        (embed,) = story.data["embeds"]
        fields = {f["name"]: f["value"] for f in embed["fields"]}
        assert re.fullmatch(r"score \d[\d\u00a0]* · best tile \d+", fields["Progress"]), fields
        session = await host.stop()
        assert session is not None and session.outcome == "stopped"
        journal = read_journal(session.journal_path)  # type: ignore[arg-type]
        assert journal.header.world == "browser" and journal.header.scenarioId == "builtin:2048_seed_2"
        assert all(t.turn.action is not None and t.turn.action.kind == "press" for t in journal.turns)


async def test_a_page_outside_allowed_urls_is_refused_privately_naming_the_setting(live: Live) -> None:
    for url in ("https://play2048.co/", "http://127.0.0.1:8000/", "file:///etc/passwd"):
        handle = await live.fake.send_interaction(
            "play start", {"world": "browser", "url": url}, by=live.fake.moderator
        )
        reply = await handle.response(within=3)
        assert reply.ephemeral and not reply.deferred
        assert "`[browser] allowed_urls`" in reply.content and "`builtin:*`" in reply.content, reply.content
    handle = await live.fake.send_interaction("play start", {"world": "sandbox", "url": "builtin:2048"})
    reply = await handle.response(within=3)
    assert reply.ephemeral and "The url option is for the browser world" in reply.content
    assert live.host.session is None and journals(live) == []


async def test_a_moderator_plays_an_allowed_page_of_their_choosing(tmp_path: Path, test_page: str) -> None:
    chromium = need_chromium()

    def configure(settings: Settings) -> None:
        settings.world_settings(BrowserSettings).chromium_path = chromium
        settings.world_settings(BrowserSettings).allowed_urls = ["builtin:*", "http://127.0.0.1:*/*"]

    async with live_bot(tmp_path, configure) as live:
        host = live.host
        tricked = (
            f"http://127.0.0.1:1@{test_page.removeprefix('http://')}"  # a user "127.0.0.1" at another host
        )
        reply = await (
            await live.fake.send_interaction("play start", {"world": "browser", "url": tricked})
        ).response()
        assert reply.ephemeral and "allowed_urls" in reply.content and host.session is None

        stream = host.subscribe()
        handle = await live.fake.send_interaction(
            "play start", {"world": "browser", "url": test_page, "turns": 40}
        )
        assert (await handle.response(within=3)).deferred
        text = await handle.reply_text(within=30)
        assert text.startswith("▶️ Playing **browser**"), text
        await wait_turns(stream, 1, within=30)
        session = await host.stop()
        journal = read_journal(session.journal_path)  # type: ignore[union-attr, arg-type]
        first = journal.turns[0].evidence.decision.observations[0].state
        assert first["url"] == test_page and first["title"] == "Someone else's page"
        assert session.world.provenance["url"] == test_page  # type: ignore[union-attr]


async def test_play_start_world_pokeagent_plays_a_server_and_reports_one_that_is_down(
    tmp_path: Path,
) -> None:
    server = FakePokeAgent()
    await server.start()

    def configure(settings: Settings) -> None:
        settings.world_settings(PokeAgentSettings).url = server.base_url

    try:
        async with live_bot(tmp_path, configure) as live:
            host = live.host
            stream = host.subscribe()
            handle = await live.fake.send_interaction("play start", {"world": "pokeagent", "turns": 50})
            text = await handle.reply_text(within=20)
            assert text.startswith("▶️ Playing **pokeagent**"), text
            await wait_turns(stream, 2)
            status = await (await live.fake.send_interaction("play status")).response()
            assert "LITTLEROOT_TOWN" in status.content, status.content
            assert await host.stop() is not None

            await server.die()
            handle = await live.fake.send_interaction("play start", {"world": "pokeagent", "turns": 5})
            text = await handle.reply_text(within=20)
            assert text.startswith("Play failed to start (pokeagent, autopilot): no PokeAgent server"), text
            assert f"no PokeAgent server answers at {server.base_url}" in text
    finally:
        await server.die()


async def test_play_start_mind_agent_plays_through_tool_calls(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    """/play start mind:agent: the agent mind looks, then moves by an act tool call."""
    from tests.fakes.openai import tool_call

    def model(body: dict) -> object:
        last = body["messages"][-1]
        if isinstance(last.get("content"), str) and last["content"].startswith("Turn "):
            return tool_call("look", {"region": None})
        said = {
            "intent": "wait and watch the town",
            "say": None,
            "objective": None,
            "notes": None,
            "heeded": [],
        }
        return tool_call("frame_advance", {"frames": 30, **said})

    openai_fake.chat.responder = model

    async with live_bot(tmp_path, using(openai_fake)) as live:
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "agent", "turns": 3}, by=live.fake.moderator
        )
        assert (await handle.response(within=3)).deferred
        text = await handle.reply_text(within=20)
        assert text.startswith("▶️ Playing **sandbox** with the **agent** mind"), text
        assert "Turn 1: wait and watch the town" in text
        assert await live.host.wait() == "budget_exhausted"
        journal = read_journal(journals(live)[-1])
        assert journal.header.mind == "agent"
        assert [t.turn.action.kind for t in journal.turns] == ["frame_advance"] * 3
        assert all(t.evidence.usage.requests == 2 for t in journal.turns)
        assert "sk-test-not-real" not in journals(live)[-1].read_text()


async def test_start_with_an_unwritable_journal_directory_says_which_path_and_works_once_fixed(
    live: Live,
) -> None:
    blocker = live.host.journal_dir
    blocker.parent.mkdir(parents=True, exist_ok=True)
    if blocker.is_dir():
        blocker.rmdir()
    blocker.write_text("a file where the journals should go")  # e.g. a bad CLANKIE_JOURNAL_DIR
    handle = await live.fake.send_interaction(
        "play start", {"world": "sandbox", "mind": "autopilot"}, by=live.fake.moderator
    )
    reply = await handle.response(within=3)
    assert reply.deferred  # the disk is looked at only after the defer (Discord's 3 s)
    (refusal,) = await handle.followups(1)
    assert refusal.ephemeral and refusal.content == (
        f"cannot write the journal directory at {blocker}: Not a directory ({blocker} is not a directory)"
    )
    await live.fake.wait_until(
        lambda: reply.message is not None and reply.message.deleted, 5, "thinking… gone"
    )
    assert live.host.session is None and not live.host.events.path.exists()
    blocker.unlink()
    text = await start_sandbox(live)
    assert live.host.active is not None, text


async def test_play_hints_is_for_moderators_and_turns_room_lines_off_and_on(live: Live) -> None:
    handle = await live.fake.send_interaction("play hints", {"state": "off"}, by=live.fake.member)
    reply = await handle.response()
    assert reply.ephemeral and "Only moderators can change play hints" in reply.content
    assert live.host.hints is True  # on by default, and a member cannot change it
    handle = await live.fake.send_interaction("play hints", {"state": "off"}, by=live.fake.moderator)
    reply = await handle.response()
    assert reply.ephemeral and reply.content.startswith("Hints off")
    assert "until a restart" not in reply.content and "restarts included" in reply.content
    assert live.host.hints is False
    handle = await live.fake.send_interaction("play hints", {"state": "on"}, by=live.fake.moderator)
    reply = await handle.response()
    assert reply.content.startswith("Hints on") and "until a restart" not in reply.content
    assert live.host.hints is True


async def test_play_hints_off_is_kept_across_a_restart(tmp_path: Path) -> None:
    async with live_bot(tmp_path) as live:
        handle = await live.fake.send_interaction("play hints", {"state": "off"}, by=live.fake.moderator)
        assert (await handle.response()).content.startswith("Hints off")
        guild, settings = live.fake.guild.id, live.settings
    # a new character over the same state directory: the server's hints are still off, another's on
    character = build_character(settings)
    await character.start()
    try:
        assert character.play_of(guild).hints is False
        assert character.play_of(guild + 1).hints is True
        host = character.play_of(guild)
        stream = host.subscribe()
        await host.start(StartRequest(world="sandbox", mind="autopilot", pace_seconds=0.05))
        await wait_turns(stream, 1)  # playing: a line would be heard, were hints on
        assert character.room_line(guild, "text", 5, "ana", "go south") is None  # the room stays out
        await host.set_hints(True)
        assert character.room_line(guild, "text", 5, "ana", "go south") is not None
    finally:
        await character.close()
    assert json.loads((settings.guild_dir(guild) / "play-switches.json").read_text()) == {"hints": True}


async def test_play_hints_that_cannot_be_saved_says_so_and_changes_nothing(live: Live) -> None:
    folder = live.settings.guild_dir(live.fake.guild.id)
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    folder.write_text("a file where the server's state directory should be")
    handle = await live.fake.send_interaction("play hints", {"state": "off"}, by=live.fake.moderator)
    reply = await handle.response()
    saved = folder / "play-switches.json"
    assert reply.ephemeral and reply.content == (
        f"Not changed: hints stay on. The change could not be saved: cannot write the play switches at "
        f"{saved}: Not a directory ({folder} is not a directory)."
    )
    assert live.host.hints is True


async def test_status_echoing_what_the_room_said_pings_nobody(live: Live) -> None:
    """A model mind may take a room line's words as its objective; /play status shows it as text."""
    await start_sandbox(live)
    session = live.host.active
    assert session is not None
    session.memory.objective = "@everyone <@987654> go to the left house"
    handle = await live.fake.send_interaction("play status", by=live.fake.member)
    reply = await handle.response()
    assert reply.data["allowed_mentions"] == {"parse": []}  # before: the bot's default, which pings users


async def test_status_after_play_ended_budget_says_which_budget_is_spent(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    from tests.fakes.openai import Structured
    from tests.fakes.openai.chat import chat_usage

    openai_fake.chat.usage = chat_usage(1_000_000, 0)  # $0.40 a turn on gpt-4.1-mini
    openai_fake.chat.responder = lambda body: Structured(
        wire_decision({"kind": "button_press", "button": "right"}, intent="walk east")
    )

    def configure(settings: Settings) -> None:
        using(openai_fake)(settings)
        settings.budget.guild_daily_usd = 1.0

    async with live_bot(tmp_path, configure) as live:
        handle = await live.fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "openai", "turns": 10}, by=live.fake.moderator
        )
        assert (await handle.response(within=3)).deferred
        await handle.reply_text(within=20)
        assert await live.host.wait() == "budget"
        status = await (await live.fake.send_interaction("play status")).response()
        assert "Last session: sandbox with openai, 3 turn(s), ended budget." in status.content, status.content
        assert "Why: this server's daily budget of $1.00 is spent ($1.20, UTC day " in status.content
