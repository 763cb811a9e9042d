"""The PokeAgent world through the real play loop (PlayHost → PlaySession → journal) against the
loopback fake server: a session configured by URL journals and evaluates, and a server that dies
while the mind is deciding costs a refused turn, not the session."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings, load_settings
from bot.play.minds.autopilot import AutopilotMind
from bot.play.play_host import PlayHost, StartRequest
from bot.play.session import SettledTurn
from journal.evaluate import evaluate
from journal.reader import read_journal
from tests.fakes.pokeagent.server import FakePokeAgent


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})


async def test_a_session_by_url_journals_the_servers_milestones_and_evaluates(
    settings: Settings, fake: FakePokeAgent
) -> None:
    host = PlayHost(settings)
    session = await host.start(
        StartRequest(world="pokeagent", mind="autopilot", url=fake.base_url, turns=6, pace_seconds=0)
    )
    assert await host.wait() == "budget_exhausted", session.error
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert journal.header.world == "pokeagent" and journal.header.scenarioId.endswith(
        fake.base_url.rsplit(":", 1)[1]
    )
    assert len(journal.turns) == 6 and all(t.turn.outcome == "accepted" for t in journal.turns)
    assert journal.summary is not None
    assert journal.summary.progress.milestones == ["GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN"]
    assert [p["buttons"] for p in fake.posted][:1] == [[journal.turns[0].turn.action.button.upper()]]  # type: ignore[union-attr]
    report = evaluate(session.journal_path, events=settings.event_log)  # type: ignore[arg-type]
    assert report["aggregate"]["turns"] == 6


class DiesWhileThinking(AutopilotMind):
    """The autopilot; while deciding turn ``at`` the emulator server goes away."""

    def __init__(self, fake: FakePokeAgent, at: int) -> None:
        super().__init__("pokeagent")
        self.fake, self.at = fake, at

    async def decide(self, view: Any) -> dict[str, Any]:
        if view.turn == self.at:
            await self.fake.die()
        return await super().decide(view)


async def next_settled(stream: AsyncIterator[SettledTurn], within: float = 20.0) -> SettledTurn:
    async with asyncio.timeout(within):
        return await anext(stream)


async def test_a_server_dying_mid_session_is_a_refused_turn_and_play_goes_on_when_it_returns(
    settings: Settings, fake: FakePokeAgent
) -> None:
    port = int(fake.base_url.rsplit(":", 1)[1])
    host = PlayHost(settings, mind_factory=lambda name, world, s: DiesWhileThinking(fake, at=2))
    stream = host.subscribe()
    session = await host.start(StartRequest(world="pokeagent", url=fake.base_url, turns=4, pace_seconds=0))
    assert (await next_settled(stream)).outcome == "accepted"
    refused = await next_settled(stream)
    assert refused.turn == 2 and refused.outcome == "rejected_by_adapter"
    assert refused.detail is not None and "127.0.0.1" in refused.detail, refused.detail
    assert session.state == "running"

    await fake.start(port)  # the user restarts the emulator server on the same port
    rest = [await next_settled(stream), await next_settled(stream)]
    assert [t.outcome for t in rest] == ["accepted", "accepted"]
    assert await host.wait() == "budget_exhausted", session.error
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert [t.turn.outcome for t in journal.turns] == [
        "accepted",
        "rejected_by_adapter",
        "accepted",
        "accepted",
    ]
    assert journal.summary is not None and journal.summary.outcome == "budget_exhausted"
    refused_line = journal.turns[1]
    assert refused_line.evidence.actionResult is not None
    assert refused_line.evidence.actionResult.refusal == "world_unavailable"
    assert refused_line.evidence.immediatePreAction is None and refused_line.evidence.postAction is None
    report = evaluate(session.journal_path, events=settings.event_log)  # type: ignore[arg-type]
    assert report["aggregate"]["turns"] == 4


class PaidWhileThinking(AutopilotMind):
    """The autopilot; while deciding turn ``at`` the game pays out and awards a badge (as a won
    gym battle would), so the next observations show the metrics rise."""

    def __init__(self, fake: FakePokeAgent, at: int) -> None:
        super().__init__("pokeagent")
        self.fake, self.at = fake, at

    async def decide(self, view: Any) -> dict[str, Any]:
        if view.turn == self.at:
            self.fake.game.money += 500
            self.fake.game.badges.append("Stone")
        return await super().decide(view)


async def test_badges_pokedex_and_money_flow_into_journal_progress(
    settings: Settings, fake: FakePokeAgent
) -> None:
    host = PlayHost(settings, mind_factory=lambda name, world, s: PaidWhileThinking(fake, at=2))
    session = await host.start(StartRequest(world="pokeagent", url=fake.base_url, turns=3, pace_seconds=0))
    assert await host.wait() == "budget_exhausted", session.error
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    first = journal.turns[0].evidence
    assert first.progressBefore.metrics == {"badges": 0, "pokedexCaught": 1, "money": 3000}  # type: ignore[attr-defined]
    assert journal.summary is not None
    assert journal.summary.progress.metrics == {"badges": 1, "pokedexCaught": 1, "money": 3500}  # type: ignore[attr-defined]


async def test_a_count_the_server_could_not_read_is_left_out_of_progress(
    settings: Settings, fake: FakePokeAgent
) -> None:
    fake.game.money = None  # type: ignore[assignment]  # the server's memory read failed: null
    host = PlayHost(settings)
    session = await host.start(StartRequest(world="pokeagent", url=fake.base_url, turns=1, pace_seconds=0))
    assert await host.wait() == "budget_exhausted", session.error
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert journal.summary is not None
    assert journal.summary.progress.metrics == {"badges": 0, "pokedexCaught": 1}  # type: ignore[attr-defined]
