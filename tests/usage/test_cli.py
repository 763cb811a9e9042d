"""The issue's done-when, as an operator sees it: a demo session on the OpenAI fake, then
``clankie usage`` shows its turns' tokens and cost by part; with a low daily limit play ends
``budget`` and says so, and the next run (a restart) still holds the day's total."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.cli import main
from tests.fakes.openai import FakeOpenAI, Structured
from tests.fakes.openai.chat import chat_usage
from tests.play.test_terminal import run, settings_for
from tests.play.wire import wire_decision


@pytest.fixture
def playing_fake(openai_fake: FakeOpenAI) -> FakeOpenAI:
    decision = wire_decision({"kind": "button_press", "button": "down"}, intent="look around")
    openai_fake.chat.responder = lambda body: Structured(decision)
    openai_fake.chat.usage = chat_usage(250_000, 1_000, cached=50_000)
    return openai_fake


def keyed(tmp_path: Path, fake: FakeOpenAI):  # type: ignore[no-untyped-def]
    return settings_for(tmp_path, OPENAI_API_KEY="sk-test-not-real", OPENAI_BASE_URL=fake.base_url)


async def test_clankie_usage_shows_a_demo_sessions_tokens_and_cost_by_part(
    tmp_path: Path,
    playing_fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = await run("demo --no-web --turns 2 --pace 0".split(), keyed(tmp_path, playing_fake))
    assert code == 0, out
    monkeypatch.setenv("CLANKIE_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("CLANKIE_CONFIG", raising=False)
    monkeypatch.setattr("bot.logs.configure", lambda **_: None)  # the process's logging stays the tests'
    assert main(["usage"]) == 0
    shown = capsys.readouterr().out
    # 2 turns of 250 000 prompt tokens (50 000 cached) and 1 000 out, gpt-4.1-mini:
    # 400 000 × $0.40 + 100 000 × $0.10 + 2 000 × $1.60 per million = $0.1732
    assert "local (clankie play / demo)" in shown
    today, month = shown.split("last 30 days:")
    assert "play" in today and "2 calls      502,000 tokens  $0.1732" in today
    assert "2 calls      502,000 tokens  $0.1732" in month


async def test_a_low_daily_limit_ends_play_budget_said_once_and_a_restart_keeps_the_day(
    tmp_path: Path, playing_fake: FakeOpenAI
) -> None:
    settings = keyed(tmp_path, playing_fake)
    settings.budget.daily_usd = 0.1  # each turn costs $0.0866: the second crosses it
    code, out = await run("demo --no-web --turns 5 --pace 0".split(), settings)
    assert code == 0, out
    assert "session ended: budget after 2 turns" in out
    assert out.count("out of budget: the daily budget of $0.1000 is spent") == 1
    again = keyed(tmp_path, playing_fake)  # a new process, the same state directory
    again.budget.daily_usd = 0.1
    code, out = await run("demo --no-web --turns 5 --pace 0".split(), again)
    assert code == 2 and len(playing_fake.chat.requests) == 2


def test_clankie_usage_across_servers_ends_with_all_of_them_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.config import Settings
    from bot.usage.meter import Meter
    from tests.usage.clock import FakeClock, at

    now = at("2026-12-06T12:00:00")
    clock = FakeClock(now)
    meter = Meter(Settings.model_validate({"paths": {"state_dir": tmp_path / "state"}}), clock=clock)
    record = meter.ledger.record
    record(1001, "play", "gpt-4.1-mini", {"calls": 1, "input": 1_000_000})  # $0.40
    record(2002, "voice", "gpt-realtime", {"calls": 1, "output_audio": 10_000})  # $0.64
    record(2002, "text", "my-local-model", {"calls": 1, "input": 1_000})  # no price
    record(None, "play", "gpt-4.1-mini", {"calls": 1, "input": 500_000})  # $0.20, clankie play
    clock.set("2026-12-03T09:00:00")
    record(2002, "play", "gpt-4.1-mini", {"calls": 1, "input": 1_000_000})  # $0.40, three days ago
    clock.set("2026-10-01T09:00:00")
    record(1001, "play", "gpt-4.1-mini", {"calls": 1, "input": 9_000_000})  # over 30 days ago
    asyncio.run(meter.aclose())

    monkeypatch.setenv("CLANKIE_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("CLANKIE_CONFIG", raising=False)
    monkeypatch.setattr("bot.logs.configure", lambda **_: None)
    monkeypatch.setattr("time.time", lambda: now)  # `clankie usage` reads today off the clock
    assert main(["usage"]) == 0
    shown = capsys.readouterr().out.splitlines()
    blocks = "\n".join(shown).split("\nserver ")
    assert shown[1] == "local (clankie play / demo)" and len(blocks) == 3
    assert blocks[1].startswith("1001\n") and blocks[2].startswith("2002\n")
    every = shown[shown.index("all servers") :]
    assert every == [
        "all servers",
        "  today (2026-12-06 UTC):",
        "    voice              1 calls       10,000 tokens  $0.6400",
        "    play               2 calls    1,500,000 tokens  $0.6000",
        "    text               1 calls        1,000 tokens  unknown (no price for my-local-model)",
        "    total              4 calls    1,511,000 tokens  unknown (≥ $1.24; no price for my-local-model)",
        "  last 30 days:",
        "    voice              1 calls       10,000 tokens  $0.6400",
        "    play               3 calls    2,500,000 tokens  $1.00",
        "    text               1 calls        1,000 tokens  unknown (no price for my-local-model)",
        "    total              5 calls    2,511,000 tokens  unknown (≥ $1.64; no price for my-local-model)",
    ]
    assert main(["usage", "--guild", "2002"]) == 0  # one server: no block of all of them
    one = capsys.readouterr().out
    assert "server 2002" in one and "all servers" not in one and "server 1001" not in one
