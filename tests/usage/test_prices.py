"""``[prices]`` in the configuration: a row replaces or adds a model's prices over the built-in
table; a kind a row leaves out is unknown, never $0; a row without its source or date, or a
negative price, is refused naming the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bot.config import DEFAULT_PRICES, ConfigError, ModelPrice, load_settings
from bot.usage.prices import cost_of


def settings_from_toml(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_settings(path, env={})


REPO = Path(__file__).resolve().parents[2]


def test_every_built_in_price_says_where_and_when_it_was_read() -> None:
    assert DEFAULT_PRICES and all(
        p.source.startswith(("https://openai.com/", "https://developers.openai.com/")) and p.checked
        for p in DEFAULT_PRICES.values()
    )


def test_config_example_lists_the_built_in_prices_exactly() -> None:
    rows = tomllib.loads((REPO / "config.example.toml").read_text())["prices"]
    assert {model: ModelPrice.model_validate(row) for model, row in rows.items()} == DEFAULT_PRICES
    assert load_settings(REPO / "config.example.toml", env={}).prices == DEFAULT_PRICES


# The day each model came out: the date in its first snapshot's name (gpt-realtime-2025-08-28,
# gpt-realtime-mini-2025-10-06, gpt-4o-mini-transcribe-2025-03-20 — gpt-4o-transcribe came with
# it —, gpt-4.1-2025-04-14 and its -mini and -nano, gpt-4o-mini-2024-07-18).
CAME_OUT = {
    "gpt-realtime": "2025-08-28",
    "gpt-realtime-mini": "2025-10-06",
    "gpt-4o-mini-transcribe": "2025-03-20",
    "gpt-4o-transcribe": "2025-03-20",
    "gpt-4.1": "2025-04-14",
    "gpt-4.1-mini": "2025-04-14",
    "gpt-4.1-nano": "2025-04-14",
    "gpt-4o-mini": "2024-07-18",
}


def test_no_built_in_price_claims_a_reading_before_its_model_came_out() -> None:
    early = {m: p.checked for m, p in DEFAULT_PRICES.items() if p.checked < CAME_OUT.get(m, "")}
    assert early == {}


def test_a_row_of_the_file_replaces_one_model_and_adds_another(tmp_path: Path) -> None:
    settings = settings_from_toml(
        tmp_path,
        '[prices."gpt-4.1-mini"]\nsource = "https://example.com/p"\nchecked = "2026-12-01"\ninput = 1\noutput = 2\n'
        '[prices."my-model"]\nsource = "https://example.com/p"\nchecked = "2026-12-01"\ninput = 0.5\n',
    )
    prices = settings.prices
    assert cost_of(prices, "gpt-4.1-mini", {"calls": 1, "input": 1_000_000, "output": 500_000}) == 2.0
    assert cost_of(prices, "gpt-4.1-mini-2025-04-14", {"input": 1_000_000}) == 1.0  # a dated snapshot
    assert cost_of(prices, "my-model", {"input": 2_000_000}) == 1.0
    assert cost_of(prices, "my-model", {"input": 10, "output": 10}) is None  # output has no price
    assert cost_of(prices, "gpt-realtime", {"output_audio": 1_000_000}) == 64.0  # the rest stay built in
    assert cost_of(prices, "nobody-priced-me", {"input": 1}) is None


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ('input = 1.0\nchecked = "2026-12-01"', "[prices] m.source: Field required"),
        (
            'source = "x"\nchecked = "yesterday"\ninput = 1.0',
            "[prices] m.checked: String should match pattern",
        ),
        (
            'source = "x"\nchecked = "2026-12-01"\ninput = -1.0',
            "[prices] m.input: Input should be greater than or equal to 0",
        ),
        ('source = "x"\nchecked = "2026-12-01"\nimput = 1.0', "[prices] m.imput"),
    ],
)
def test_a_bad_row_is_refused_naming_the_key(tmp_path: Path, row: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        settings_from_toml(tmp_path, f'[prices."m"]\n{row}\n')
    assert said in str(refused.value)
