"""The usage ledger on disk: day totals per server, part and model that survive a restart and a
crash, count no call twice, turn over at midnight UTC and stay bounded."""

from __future__ import annotations

from pathlib import Path

import orjson

from bot.usage.kinds import chat_counts, realtime_counts, transcription_counts
from bot.usage.ledger import MAX_MODELS, OTHER, UsageLedger, usage_dir
from bot.usage.store import COMPACT_EVERY, DELTAS, KEEP_DAYS, SNAPSHOT, read_book
from tests.usage.clock import FakeClock, at

GUILD = 111
CALL = {"calls": 1, "input": 100, "input_cached": 20, "output": 7}


def test_a_chat_completions_usage_reads_cached_tokens_apart() -> None:
    from openai.types.completion_usage import CompletionUsage

    from tests.fakes.openai.chat import chat_usage

    usage = CompletionUsage.model_validate(chat_usage(120, 7, cached=20))  # as the fake sends it
    assert chat_counts(usage) == CALL


def test_a_realtime_usage_reads_audio_and_cached_tokens_by_kind() -> None:
    from openai.types.realtime.realtime_response_usage import RealtimeResponseUsage

    from tests.fakes.openai.events import realtime_usage

    usage = RealtimeResponseUsage.model_validate(realtime_usage())
    assert realtime_counts(usage) == {
        "calls": 1,
        "input": 56,
        "input_cached": 64,
        "input_audio": 172,
        "input_audio_cached": 128,
        "output": 24,
        "output_audio": 180,
    }


def test_a_transcription_reads_by_duration_or_by_tokens() -> None:
    from openai.types.realtime.conversation_item_input_audio_transcription_completed_event import (
        ConversationItemInputAudioTranscriptionCompletedEvent as Done,
    )

    from tests.fakes.openai.events import transcription_completed

    by_time = Done.model_validate(
        {"event_id": "e", **transcription_completed("i", "hi", "whisper-1", seconds=2.5)}
    )
    assert transcription_counts(by_time.usage) == {"calls": 1, "audio_ms": 2500}
    by_tokens = Done.model_validate(
        {"event_id": "e", **transcription_completed("i", "hi", "gpt-4o-mini-transcribe")}
    )
    assert transcription_counts(by_tokens.usage) == {"calls": 1, "input_audio": 40, "output": 8}


async def test_a_restart_mid_day_keeps_the_days_totals(tmp_path: Path) -> None:
    clock = FakeClock(at("2026-12-06T10:00:00"))
    ledger = UsageLedger(tmp_path, clock=clock)
    ledger.record(GUILD, "play", "gpt-4.1-mini", CALL)
    ledger.record(GUILD, "play", "gpt-4.1-mini", CALL)
    await ledger.aclose()
    again = UsageLedger(tmp_path, clock=clock)
    assert again.day(GUILD)["play"]["gpt-4.1-mini"] == {k: 2 * v for k, v in CALL.items()}
    again.record(GUILD, "play", "gpt-4.1-mini", CALL)
    await again.aclose()
    assert UsageLedger(tmp_path, clock=clock).day(GUILD)["play"]["gpt-4.1-mini"]["calls"] == 3


async def test_a_crash_loses_no_recorded_call_and_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    clock = FakeClock(at("2026-12-06T10:00:00"))
    ledger = UsageLedger(tmp_path, clock=clock)
    for _ in range(3):
        ledger.record(GUILD, "voice", "gpt-realtime", {"calls": 1, "output_audio": 50})
    await ledger.drain()  # on disk; no close, no snapshot: the process dies here
    directory = usage_dir(tmp_path, GUILD)
    with (directory / DELTAS).open("ab") as fh:
        fh.write(b'{"seq": 4, "day": "2026-12-06", "part": "voi')  # the line being written
    read = UsageLedger(tmp_path, clock=clock)
    assert read.day(GUILD)["voice"]["gpt-realtime"] == {"calls": 3, "output_audio": 150}
    assert read.skipped_lines == 1
    read.record(GUILD, "voice", "gpt-realtime", {"calls": 1, "output_audio": 50})
    await read.aclose()
    assert UsageLedger(tmp_path, clock=clock).day(GUILD)["voice"]["gpt-realtime"]["calls"] == 4


async def test_deltas_the_snapshot_already_holds_are_not_counted_twice(tmp_path: Path) -> None:
    clock = FakeClock(at("2026-12-06T10:00:00"))
    ledger = UsageLedger(tmp_path, clock=clock)
    ledger.record(GUILD, "play", "m", CALL)
    await ledger.drain()
    directory = usage_dir(tmp_path, GUILD)
    deltas = (directory / DELTAS).read_bytes()
    await ledger.aclose()  # the snapshot holds seq 1 and the deltas are emptied
    (directory / DELTAS).write_bytes(deltas)  # a crash between the rename and the emptying
    assert UsageLedger(tmp_path, clock=clock).day(GUILD)["play"]["m"]["calls"] == 1


async def test_a_clock_crossing_midnight_utc_starts_a_new_day(tmp_path: Path) -> None:
    clock = FakeClock(at("2026-12-06T23:59:59"))
    ledger = UsageLedger(tmp_path, clock=clock)
    ledger.record(GUILD, "play", "m", CALL)
    clock.set("2026-12-07T00:00:01")
    ledger.record(GUILD, "play", "m", CALL)
    assert ledger.day(GUILD)["play"]["m"]["calls"] == 1
    assert ledger.day(GUILD, "2026-12-06")["play"]["m"]["calls"] == 1
    assert list(ledger.days(GUILD, 30)) == ["2026-12-06", "2026-12-07"]
    await ledger.drain()
    seq, days, _ = read_book(usage_dir(tmp_path, GUILD))
    assert seq == 2 and sorted(days) == ["2026-12-06", "2026-12-07"]
    assert (usage_dir(tmp_path, GUILD) / SNAPSHOT).exists()  # the new day folded the old one in
    await ledger.aclose()


async def test_the_ledger_stays_bounded_however_long_he_runs(tmp_path: Path) -> None:
    clock = FakeClock(at("2026-10-01T12:00:00"))
    ledger = UsageLedger(tmp_path, clock=clock)
    for _day in range(KEEP_DAYS + 20):
        clock.now += 86_400
        ledger.record(GUILD, "play", "model-0", CALL)
    for n in range(MAX_MODELS + 4):
        ledger.record(GUILD, "play", f"model-{n}", CALL)
    for _ in range(COMPACT_EVERY + 1):
        ledger.record(GUILD, "play", "model-0", CALL)
    await ledger.drain()
    directory = usage_dir(tmp_path, GUILD)
    assert len((directory / DELTAS).read_bytes().splitlines()) <= COMPACT_EVERY
    snapshot = orjson.loads((directory / SNAPSHOT).read_bytes())
    assert len(snapshot["days"]) <= KEEP_DAYS
    today = ledger.day(GUILD)["play"]
    assert len(today) == MAX_MODELS + 1 and today[OTHER]["calls"] == 4
    await ledger.aclose()


async def test_two_servers_keep_their_own_books(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path, clock=FakeClock(at("2026-12-06T10:00:00")))
    ledger.record(1, "play", "m", CALL)
    ledger.record(2, "consult", "m", CALL)
    ledger.record(None, "play", "m", CALL)
    await ledger.aclose()
    assert list(ledger.day(1)) == ["play"] and list(ledger.day(2)) == ["consult"]
    assert (tmp_path / "guilds" / "1" / "usage" / SNAPSHOT).exists()
    assert (tmp_path / "usage" / SNAPSHOT).exists()
