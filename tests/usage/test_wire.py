"""Every model call's ``usage``, as the OpenAI fake sends it in the real shapes, reaches the
ledger of the server and part that made it: a play turn, a consult, a realtime response with
audio and cached tokens, and an input transcription — billed by tokens by the gpt-4o transcribe
models, by duration by whisper-1, as the fake sends it for the session's transcription model."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.captain.consult import Captain
from bot.config import OpenAISettings, PathSettings, Settings, WebSettings
from bot.play.guild_hosts import PlayHosts
from bot.play.minds.openai_mind import OpenAIMind
from bot.play.play_host import StartRequest
from bot.tools.context import Speaker, ToolServices
from bot.tools.defaults import build_registry
from bot.usage.costing import by_part
from bot.usage.ledger import UsageLedger
from bot.web.share_types import Place
from tests.fakes.openai import FakeOpenAI, Structured, Text
from tests.fakes.openai import events as ev
from tests.fakes.openai.chat import chat_usage
from tests.play.scripted import GridWorld
from tests.play.wire import wire_decision

GUILD = 4242


def settings_for(
    fake: FakeOpenAI, tmp_path: Path, transcription_model: str = "gpt-4o-mini-transcribe", **budget: float
) -> Settings:
    return Settings.model_validate(
        {
            "openai": OpenAISettings(
                base_url=fake.base_url,
                api_key=SecretStr("test"),
                max_retries=0,
                transcription_model=transcription_model,
            ),
            "web": WebSettings(enabled=False),
            "paths": PathSettings(state_dir=tmp_path / "state", receipt_path=tmp_path / "r.jsonl"),
            "budget": budget,
        }
    )


def decision() -> dict[str, object]:
    return wire_decision({"kind": "button_press", "button": "right"}, monologue="east", intent="walk east")


def hosts_for(settings: Settings, fake: FakeOpenAI) -> PlayHosts:
    return PlayHosts(
        settings,
        world_factory=lambda name, req, s: (GridWorld(), "grid-test", "scripted"),
        mind_factory=lambda name, world, s: OpenAIMind(fake.client(), "gpt-4.1-mini"),
    )


async def test_a_play_turns_usage_is_counted_for_its_server_with_cached_tokens(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.usage = chat_usage(1500, 80, cached=1024)
    openai_fake.chat.responder = lambda body: Structured(decision())
    plays = hosts_for(settings_for(openai_fake, tmp_path), openai_fake)
    host = plays.of(GUILD)
    await host.start(StartRequest(world="sandbox", mind="autopilot", turns=2, pace_seconds=0))
    await host.wait()
    await plays.close()
    day = UsageLedger(tmp_path / "state").day(GUILD)  # read back from disk
    assert day == {"play": {"gpt-4.1-mini": {"calls": 2, "input": 952, "input_cached": 2048, "output": 160}}}
    tally = by_part(plays.usage.prices, [day])["play"]
    assert tally.cost == 952 / 1e6 * 0.4 + 2048 / 1e6 * 0.1 + 160 / 1e6 * 1.6


async def test_a_model_without_a_price_has_an_unknown_cost_never_zero(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path)
    ledger.record(GUILD, "play", "llama3:8b", {"calls": 1, "input": 500, "output": 20})
    tally = by_part(Settings().prices, [ledger.day(GUILD)])["play"]
    assert tally.tokens == 520 and tally.cost is None and tally.unpriced == {"llama3:8b"}
    await ledger.aclose()


async def test_a_consults_usage_is_counted_as_consult_for_its_server(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    settings = settings_for(openai_fake, tmp_path)
    plays = PlayHosts(settings)
    captain = Captain(settings, build_registry(), ToolServices(play=plays.local, plays=plays.of))
    captain.usage = plays.usage
    openai_fake.chat.usage = chat_usage(900, 40, cached=0)
    openai_fake.chat.script(Text("Four."))
    reply = await captain.consult(Speaker(id="1", name="Ada"), "two and two?", place=Place.of(GUILD, 77))
    assert reply == "Four."
    assert plays.usage.ledger.day(GUILD) == {
        "consult": {settings.openai.model: {"calls": 1, "input": 900, "output": 40}}
    }
    await captain.aclose()
    await plays.close()


async def test_a_realtime_response_with_audio_and_cached_tokens_is_counted_as_voice(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    from bot.character import build_character
    from bot.mouth.realtime.session import MouthSession

    character = build_character(settings_for(openai_fake, tmp_path))
    meter = character.plays.usage
    session = MouthSession(
        character.in_call(GUILD, 77),
        client=openai_fake.client(),
        pump_interval=None,
        usage=meter.scope(GUILD, "voice"),
    )
    await session.start()
    try:
        await session.wait_until(lambda: session.listening)
        usage = ev.realtime_usage(
            text_in=300, audio_in=2000, cached_text=256, cached_audio=1024, audio_out=400
        )
        await openai_fake.realtime.send(ev.response_done("resp_1", "completed", [], usage))
        await session.wait_until(lambda: "voice" in meter.ledger.day(GUILD))
    finally:
        await session.close()
        await character.close()
    day = UsageLedger(tmp_path / "state").day(GUILD)
    assert day["voice"]["gpt-realtime"] == {
        "calls": 1,
        "input": 44,
        "input_cached": 256,
        "input_audio": 976,
        "input_audio_cached": 1024,
        "output": 24,
        "output_audio": 400,
    }
    tallies = by_part(meter.prices, [day])
    assert tallies["voice"].cost is not None and tallies["voice"].cost > 0


@pytest.mark.parametrize(
    ("model", "counts", "cost"),
    [
        # billed by tokens: the fake's default transcription usage, 40 audio tokens in, 8 text out
        (
            "gpt-4o-mini-transcribe",
            {"calls": 1, "input_audio": 40, "output": 8},
            40 / 1e6 * 3.0 + 8 / 1e6 * 5.0,
        ),
        ("gpt-4o-transcribe", {"calls": 1, "input_audio": 40, "output": 8}, 40 / 1e6 * 6.0 + 8 / 1e6 * 10.0),
        # billed by duration: 3.25 s of audio at $0.006 a minute
        ("whisper-1", {"calls": 1, "audio_ms": 3250}, 3.25 / 60 * 0.006),
    ],
    ids=["gpt-4o-mini-transcribe", "gpt-4o-transcribe", "whisper-1"],
)
async def test_an_input_transcription_is_counted_as_its_model_is_billed(
    openai_fake: FakeOpenAI, tmp_path: Path, model: str, counts: dict[str, int], cost: float
) -> None:
    from bot.character import build_character
    from bot.mouth.realtime.session import MouthSession

    character = build_character(settings_for(openai_fake, tmp_path, transcription_model=model))
    meter = character.plays.usage
    session = MouthSession(
        character.in_call(GUILD, 77),
        client=openai_fake.client(),
        pump_interval=None,
        usage=meter.scope(GUILD, "voice"),
    )
    await session.start()
    try:
        await session.wait_until(lambda: session.listening)
        assert openai_fake.realtime.connections[-1].transcription_model == model
        await openai_fake.realtime.transcribe("item_1", "hello there", seconds=3.25)
        await session.wait_until(lambda: "transcription" in meter.ledger.day(GUILD))
    finally:
        await session.close()
        await character.close()
    day = UsageLedger(tmp_path / "state").day(GUILD)
    assert day == {"transcription": {model: counts}}
    assert by_part(meter.prices, [day])["transcription"].cost == pytest.approx(cost)
