"""The usage series on /metrics: tokens by part, model and kind, audio seconds, calls priced or
not, estimated dollars; model names outside the configured ones and [prices] are ``other``, and
a guild label only with ``[metrics] per_guild``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot import metrics
from bot.config import Settings
from bot.usage.meter import Meter


def samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("clankie_usage_")
    }


@pytest.fixture
def fresh_metrics() -> Iterator[None]:
    yield
    metrics.configure()


@pytest.mark.parametrize("per_guild", [False, True])
async def test_usage_series_by_part_and_model_with_bounded_labels(
    tmp_path: Path, per_guild: bool, fresh_metrics: None
) -> None:
    settings = Settings.model_validate({"paths": {"state_dir": tmp_path}})
    metrics.configure(per_guild=per_guild, models=[*settings.prices, "gpt-4.1-mini"])
    meter = Meter(settings)
    meter.ledger.record(7, "voice", "gpt-realtime", {"calls": 1, "input_audio": 1000, "output_audio": 500})
    meter.ledger.record(7, "transcription", "whisper-1", {"calls": 1, "audio_ms": 30_000})
    meter.ledger.record(7, "play", "some-local-model:7b", {"calls": 1, "input": 10})
    await meter.aclose()
    seen = samples()
    g = (("guild", "7"),) if per_guild else ()

    def key(name: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        return name, tuple(sorted({**labels, **dict(g)}.items()))

    assert (
        seen[key("clankie_usage_tokens_total", part="voice", model="gpt-realtime", kind="input_audio")]
        == 1000
    )
    assert seen[key("clankie_usage_cost_usd_total", part="voice", model="gpt-realtime")] == pytest.approx(
        1000 / 1e6 * 32 + 500 / 1e6 * 64
    )
    assert seen[key("clankie_usage_audio_seconds_total", part="transcription", model="whisper-1")] == 30
    assert seen[key("clankie_usage_calls_total", part="play", model="other", priced="no")] == 1
    assert not any("some-local-model" in str(k) for k in seen)
    assert all(("guild" in dict(labels)) == per_guild for _name, labels in seen)
