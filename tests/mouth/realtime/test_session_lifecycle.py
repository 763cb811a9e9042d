"""A voice session's cost and life on the server (docs/architecture.md §12), on the wire-level
realtime fake:

- the configuration carries a `truncation` policy; side talk only listened to leaves the
  conversation once newer side talk has come (`conversation.item.delete`);
- a socket lost mid-reply ends that reply: he is not left speaking;
- before the server's maximum session length he rotates the session at a quiet moment (never
  while he speaks) and the new session gets a short recap; a session the server ends is reopened;
- a rejected `session.update` and a failing transcription model are said once (log + receipt,
  the server's error) and the configuration falls back instead of leaving him deaf.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from bot.mouth.realtime.client_events import TRUNCATION
from bot.mouth.realtime.lifecycle import (
    FAILED_TRANSCRIPTS_IN_A_ROW,
    FALLBACK_TRANSCRIPTION_MODEL,
    RECAP_HEADER,
)
from bot.usage.ledger import UsageLedger
from bot.usage.scope import UsageScope
from journal.oplog import read_receipts
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai import events as ev
from tests.mouth.realtime.test_session import response_done
from tests.mouth.realtime.test_session_floor import ADA, BOB, HOUR, Room, floor_mouth
from tests.mouth.realtime.test_session_slot import played_bytes


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def session_errors(path: Path) -> list[dict[str, Any]]:
    read = read_receipts(path)
    assert read.skipped == []
    return [dict(r.data) for r in read.lines if r.type == "discord.voice.session_error"]


async def test_the_configuration_bounds_what_a_reply_reads(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})):
        update = openai_fake.realtime.connections[0].events[0]
        assert update["type"] == "session.update"
        assert update["session"]["truncation"] == TRUNCATION
        assert TRUNCATION["type"] == "retention_ratio" and 0 < TRUNCATION["retention_ratio"] < 1
        assert openai_fake.realtime.connections[0].session["truncation"] == TRUNCATION  # taken


async def test_side_talk_only_listened_to_leaves_the_conversation(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), side_talk_keep=2) as session:
        room = Room(openai_fake, session)
        said = []
        for n, who in enumerate((ADA, BOB, ADA, BOB)):
            item = await room.say(who)
            await room.heard(item, f"so the weather turned again, part {n}")
            assert await room.decided(item) == "listened"
            said.append(item)
        addressed = await room.say(ADA)
        await room.heard(addressed, "Clankie, what do you think?")
        assert await room.decided(addressed) == "answered"
        await room.barrier()
        deletes = openai_fake.realtime.events_of("conversation.item.delete")
        assert [d["item_id"] for d in deletes] == said[:2]  # the two oldest; two newest kept
        assert openai_fake.realtime.connections[0].deleted == said[:2]  # the server had them
        assert addressed not in openai_fake.realtime.connections[0].deleted


async def test_a_socket_lost_mid_reply_ends_that_reply(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA})) as session:
        room = Room(openai_fake, session)
        await room.say(ADA)  # one person: answered at its commit
        await openai_fake.realtime.wait_for_client_event("response.create")
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(200, chunk_ms=50)
        await session.wait_until(lambda: session.playback.active)
        await openai_fake.realtime.drop()  # no output_audio.done, no response.done ever
        await session.wait_until(lambda: session.connects == 2 and session.listening)
        assert played_bytes(session) > 0  # what had come plays out ...
        await session.tick()
        assert not session.speaking  # ... and then he is done, not "speaking" forever
        assert not session.slot.busy
        await room.say(ADA)  # and the next turn is answered on the new socket
        await openai_fake.realtime.wait_for_client_event("response.create")


async def test_the_session_rotates_at_a_quiet_moment_with_a_recap(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = Clock()
    openai_fake.realtime.max_session_s = HOUR  # the server would end it at 60 minutes
    async with floor_mouth(
        openai_fake, tmp_path, frozenset({ADA}), rotate_after_s=55 * 60.0, clock=clock
    ) as session:
        room = Room(openai_fake, session)
        item = await room.say(ADA)
        await openai_fake.realtime.wait_for_client_event("response.create")
        await room.heard(item, "Clankie, where are we going?")
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.transcript("To the lab.")
        await script.audio(100, chunk_ms=50)
        clock.now += 56 * 60.0  # old enough, but he is speaking: no rotation
        await session.tick()
        assert session.rotation.rotations == 0
        await script.finish()
        await session.wait_until(lambda: response_done(session, script.response_id))
        played_bytes(session)
        await session.tick()  # quiet now: rotated
        assert session.rotation.rotations == 1
        new = await openai_fake.realtime.wait_connected(2)
        await session.wait_until(lambda: session.listening)
        recap = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", lambda e: RECAP_HEADER in e["item"]["content"][0]["text"]
        )
        assert new.events[0]["type"] == "session.update" and recap in new.events
        text = recap["item"]["content"][0]["text"]
        assert "Ada: Clankie, where are we going?" in text and "Clankie (you): To the lab." in text
        await session.tick()  # the new session is young: no second rotation
        assert session.rotation.rotations == 1


async def test_a_session_the_server_ends_is_reopened(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA})) as session:
        with capture_logs() as logs:
            await openai_fake.realtime.expire()
            await session.wait_until(lambda: session.connects == 2 and session.listening)
        expired = [e for e in logs if e.get("code") == "session_expired"]
        assert [e["log_level"] for e in expired] == ["info"]
        assert not session.speaking


async def test_a_rejected_session_update_is_said_once_and_falls_back(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    message = "Invalid value: 'gpt-nope'. Supported values are: 'whisper-1', 'gpt-4o-transcribe'."
    param = "session.audio.input.transcription.model"
    openai_fake.realtime.reject_session_update(message, param=param)
    with capture_logs() as logs:
        async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
            assert session.listening  # not left deaf: the fallback configuration was taken
            updates = openai_fake.realtime.connections[0].events
            first, second = (e for e in updates if e["type"] == "session.update")
            assert first["session"]["audio"]["input"]["transcription"]["model"] == "gpt-4o-mini-transcribe"
            fallback = second["session"]["audio"]["input"]["transcription"]["model"]
            assert fallback == FALLBACK_TRANSCRIPTION_MODEL
            assert second["session"]["truncation"] == TRUNCATION  # a reply still bills a bounded context
            assert openai_fake.realtime.connections[0].session["truncation"] == TRUNCATION
    said = [e for e in logs if e["event"] == "mouth_session_trouble"]
    assert [(e["what"], e["code"], e["param"]) for e in said] == [("session_update", "invalid_value", param)]
    assert session_errors(tmp_path / "receipts.jsonl") == [
        {"what": "session_update", "code": "invalid_value", "message": message, "param": param}
    ]


async def test_a_refused_truncation_policy_is_left_out_and_the_transcription_model_kept(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    message = "Invalid value: 2.0. Expected a number between 0 and 1."
    param = "session.truncation.retention_ratio"
    openai_fake.realtime.reject_session_update(message, param=param)
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        assert session.listening
        first, second = (
            e for e in openai_fake.realtime.connections[0].events if e["type"] == "session.update"
        )
        assert first["session"]["truncation"] == TRUNCATION and "truncation" not in second["session"]
        model = second["session"]["audio"]["input"]["transcription"]["model"]
        assert model == "gpt-4o-mini-transcribe"  # the model was not what the server refused
        assert session.transcription_model == "gpt-4o-mini-transcribe"
    assert session_errors(tmp_path / "receipts.jsonl") == [
        {"what": "session_update", "code": "invalid_value", "message": message, "param": param}
    ]


async def test_a_fallback_refused_again_without_a_param_leaves_the_truncation_policy_out(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.realtime.reject_session_update("Invalid session configuration.", param=None, times=2)
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        assert session.listening  # the third configuration was taken
        updates = [e for e in openai_fake.realtime.connections[0].events if e["type"] == "session.update"]
        shapes = [
            (u["session"]["audio"]["input"]["transcription"]["model"], "truncation" in u["session"])
            for u in updates
        ]
        assert shapes == [
            ("gpt-4o-mini-transcribe", True),
            (FALLBACK_TRANSCRIPTION_MODEL, True),  # the model first: the policy kept
            (FALLBACK_TRANSCRIPTION_MODEL, False),  # refused again, naming nothing: the policy too
        ]


async def test_a_failing_transcription_model_is_said_once_and_replaced(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        for _ in range(FAILED_TRANSCRIPTS_IN_A_ROW + 2):
            item = await room.say(ADA)
            await openai_fake.realtime.transcription_failed(item, "the model is unavailable")
            await room.decided(item)
        await room.barrier()
        updates = openai_fake.realtime.events_of("session.update")
        models = [
            u["session"]["audio"]["input"]["transcription"]["model"]
            for u in updates
            if "audio" in u["session"]
        ]
        assert models == ["gpt-4o-mini-transcribe", FALLBACK_TRANSCRIPTION_MODEL]
        assert all(u["session"]["truncation"] == TRUNCATION for u in updates if "audio" in u["session"])
        assert session.listening
    errors = session_errors(tmp_path / "receipts.jsonl")
    assert errors == [
        {
            "what": "transcription",
            "code": "audio_unintelligible",
            "message": "the model is unavailable",
            "param": None,
        }
    ]


async def test_an_error_about_the_transcription_model_is_said_once_and_replaced(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    param = "session.audio.input.transcription.model"
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        for _ in range(2):
            await openai_fake.realtime.send(
                ev.error("The model is not available.", "model_not_found", param=param)
            )
        fallback = await openai_fake.realtime.wait_for_client_event("session.update")
        assert fallback["session"]["audio"]["input"]["transcription"]["model"] == FALLBACK_TRANSCRIPTION_MODEL
        await session.wait_until(lambda: session.listening)
        await Room(openai_fake, session).barrier()
        assert (
            len(openai_fake.realtime.events_of("session.update")) == 3
        )  # the barrier's rebrief is the third
    assert session_errors(tmp_path / "receipts.jsonl") == [
        {
            "what": "transcription",
            "code": "model_not_found",
            "message": "The model is not available.",
            "param": param,
        }
    ]


async def test_transcription_usage_is_counted_under_the_model_in_use_after_the_fallback(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    ledger = UsageLedger(tmp_path / "state")
    usage = UsageScope(ledger, 42, "voice")
    try:
        async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), usage=usage) as session:
            room = Room(openai_fake, session)
            heard = await room.say(ADA)
            await room.heard(heard, "so the weather turned again")  # by tokens, as gpt-4o-mini-transcribe
            await room.decided(heard)
            for _ in range(FAILED_TRANSCRIPTS_IN_A_ROW):
                item = await room.say(ADA)
                await openai_fake.realtime.transcription_failed(item, "the model is unavailable")
                await room.decided(item)
            fallback = await openai_fake.realtime.wait_for_client_event(
                "session.update", lambda e: "audio" in e["session"] and e is not first_update(openai_fake)
            )
            assert (
                fallback["session"]["audio"]["input"]["transcription"]["model"]
                == FALLBACK_TRANSCRIPTION_MODEL
            )
            await session.wait_until(lambda: session.transcription_model == FALLBACK_TRANSCRIPTION_MODEL)
            item = await room.say(BOB)
            await openai_fake.realtime.send(
                ev.transcription_completed(
                    item, "and now it rains", FALLBACK_TRANSCRIPTION_MODEL, seconds=2.5
                )
            )
            await room.decided(item)
        assert ledger.day(42)["transcription"] == {
            "gpt-4o-mini-transcribe": {"calls": 1, "input_audio": 40, "output": 8},
            FALLBACK_TRANSCRIPTION_MODEL: {"calls": 1, "audio_ms": 2500},
        }
    finally:
        await ledger.aclose()


def first_update(fake: FakeOpenAI) -> dict[str, Any]:
    return fake.realtime.connections[0].events[0]
