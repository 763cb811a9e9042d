"""What the budget said is said once a server, window and limit — across a real restart (a new
ledger and budget over the same state directory) too; a server's own 80% notice does not hide
the one of the limit of all servers; a said file that cannot be read is taken as nothing said."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from structlog.testing import capture_logs

from bot.config import Settings
from bot.usage.ledger import usage_dir
from bot.usage.meter import Meter
from bot.usage.said import SAID
from tests.usage.clock import FakeClock, at

G = 4242
MODEL = "gpt-4.1-mini"  # $0.40 a million input tokens


def cents(n: int) -> dict[str, int]:
    """A call costing ``n`` cents on gpt-4.1-mini."""
    return {"calls": 1, "input": n * 25_000}


def meter_for(
    tmp_path: Path, clock: FakeClock, **budget: float
) -> tuple[Meter, list[tuple[int | None, str]]]:
    meter = Meter(Settings.model_validate({"paths": {"state_dir": tmp_path}, "budget": budget}), clock=clock)
    heard: list[tuple[int | None, str]] = []
    meter.budget.on_notice.append(lambda guild, text: heard.append((guild, text)))
    return meter, heard


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(at("2026-12-06T12:00:00"))


async def test_a_restart_neither_notices_again_nor_says_out_of_budget_again(
    tmp_path: Path, clock: FakeClock
) -> None:
    meter, heard = meter_for(tmp_path, clock, guild_daily_usd=1.0)
    meter.ledger.record(G, "play", MODEL, cents(85))
    assert [t for _g, t in heard] == [
        "85% of this server's daily budget of $1.00 is spent (UTC day 2026-12-06)"
    ]
    meter.ledger.record(G, "play", MODEL, cents(20))
    assert meter.budget.out(G) is not None
    assert meter.budget.first_said(G, "text") and meter.budget.first_said(G, "voice")
    assert not meter.budget.first_said(G, "text")
    await meter.aclose()
    kept = orjson.loads((usage_dir(tmp_path, G) / SAID).read_bytes())
    assert {(s["who"], s["window"]) for s in kept["said"]} == {
        ("text", "day 2026-12-06"),
        ("voice", "day 2026-12-06"),
    }

    again, heard_again = meter_for(tmp_path, clock, guild_daily_usd=1.0)  # a new process
    again.ledger.record(G, "play", MODEL, cents(1))
    assert heard_again == []  # the 80% notice was given before the restart
    assert again.budget.notice(G) == heard[0][1]  # and is still shown while the day lasts
    assert not again.budget.first_said(G, "text") and not again.budget.first_said(G, "voice")
    assert again.budget.first_said(G, "play")  # a part that had not said it yet says it once
    await again.aclose()

    clock.set("2026-12-07T00:00:01")  # a new UTC day: a new window, and the old one is let go
    third, heard_third = meter_for(tmp_path, clock, guild_daily_usd=1.0)
    assert third.budget.notice(G) is None
    third.ledger.record(G, "play", MODEL, cents(100))
    assert [t for _g, t in heard_third] == [
        "100% of this server's daily budget of $1.00 is spent (UTC day 2026-12-07)"
    ]
    assert third.budget.first_said(G, "text")
    await third.aclose()
    kept = orjson.loads((usage_dir(tmp_path, G) / SAID).read_bytes())
    assert [s["window"] for s in kept["said"]] == ["day 2026-12-07"]  # only live windows are kept
    assert [n["window"] for n in kept["notices"]] == ["day 2026-12-07"]


async def test_an_unreadable_said_file_is_logged_and_taken_as_nothing_said(
    tmp_path: Path, clock: FakeClock
) -> None:
    directory = usage_dir(tmp_path, G)
    directory.mkdir(parents=True)
    (directory / SAID).write_bytes(b'{"version": 1, "said": [{"who": "text"')  # torn
    meter, _heard = meter_for(tmp_path, clock, guild_daily_usd=1.0)
    with capture_logs() as logs:
        meter.ledger.record(G, "play", MODEL, cents(100))
    assert [e["event"] for e in logs] == ["usage_said_unreadable", "usage_budget_notice"]
    assert meter.budget.first_said(G, "text")  # errs toward saying once more
    await meter.aclose()
    kept = orjson.loads((directory / SAID).read_bytes())  # replaced whole by what holds now
    assert [s["who"] for s in kept["said"]] == ["text"]


async def test_the_limit_of_all_servers_gets_its_own_notice_after_a_servers_own(
    tmp_path: Path, clock: FakeClock
) -> None:
    meter, heard = meter_for(tmp_path, clock, guild_daily_usd=1.0, daily_usd=2.0)
    meter.ledger.record(G, "play", MODEL, cents(85))
    meter.ledger.record(G, "play", MODEL, cents(80))  # $1.65: 82% of the daily limit of all servers
    meter.ledger.record(G, "play", MODEL, cents(5))
    assert heard == [
        (G, "85% of this server's daily budget of $1.00 is spent (UTC day 2026-12-06)"),
        (G, "82% of the daily budget of $2.00 is spent (UTC day 2026-12-06)"),
    ]
    assert meter.budget.notice(G) == heard[1][1]  # the latest is the one shown
    await meter.aclose()
