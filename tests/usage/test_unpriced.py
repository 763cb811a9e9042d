"""A ``[budget]`` limit with a configured model it cannot price: said once at start, naming the
model (a call of it would count as $0 against the limit); nothing said without a limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from bot.config import Settings
from bot.usage.meter import Meter
from bot.usage.unpriced import unpriced


def settings(tmp_path: Path, **tables: Any) -> Settings:
    return Settings.model_validate({"paths": {"state_dir": tmp_path}, **tables})


async def test_a_limit_with_an_unpriced_model_is_warned_once_at_start_naming_it(tmp_path: Path) -> None:
    limited = settings(tmp_path, budget={"daily_usd": 5.0}, openai={"model": "my-local-model"})
    with capture_logs() as logs:
        meter = Meter(limited)
    warned = [e for e in logs if e["event"] == "usage_unpriced_under_budget"]
    assert len(warned) == 1
    assert warned[0]["model"] == "my-local-model" and warned[0]["setting"] == "[openai] model"
    assert (
        warned[0]["problem"]
        == "[openai] model my-local-model (play, the captain, the text lane) has no price in [prices]"
    )
    meter.ledger.record(7, "play", "my-local-model", {"calls": 1, "input": 10_000_000})
    assert meter.budget.spent_day(7) == 0.0  # what the warning is about
    await meter.aclose()


async def test_no_limit_no_warning_and_a_kind_without_a_price_is_named(tmp_path: Path) -> None:
    with capture_logs() as logs:
        await Meter(settings(tmp_path, openai={"model": "my-local-model"})).aclose()
    assert [e for e in logs if e["event"] == "usage_unpriced_under_budget"] == []
    # a server's own limit is a limit too; gpt-realtime-mini's built-in row has no image prices
    own = settings(
        tmp_path,
        budget={"guilds": {"123": {"monthly_usd": 20.0}}},
        openai={"realtime_model": "gpt-realtime-mini", "transcription_model": "whisper-1"},
    )
    assert [g.sentence() for g in unpriced(own)] == [
        "[openai] realtime_model gpt-realtime-mini (his voice) has no price for input_image, input_image_cached"
    ]  # whisper-1 is priced by the minute, which is how it is billed


def test_the_defaults_under_a_limit_are_all_priced(tmp_path: Path) -> None:
    assert unpriced(settings(tmp_path, budget={"guild_daily_usd": 1.0})) == []
