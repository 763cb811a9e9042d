"""The voice events the metrics count (bot/metrics.py), at the mouth's own objects: a barge-in, a
delta that finds nothing queued timed to the player's first read of it, a frame DAVE cannot open,
and each narration outcome's receipt; a full disk under the receipt trail is a disk failure."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bot import metrics
from bot.mouth.bargein import BargeIn
from bot.mouth.playback import PlaybackBuffer
from bot.mouth.receipts import ReceiptTrail, ReceiptWriter
from tests.faults import fill, mounted_tmpfs
from tests.mouth.receive.dave_room import Group
from tests.mouth.receive.test_pipeline import ALICE, BOT, make
from tests.mouth.receive.wire import DiscordSender, opus_frames

DELTA = (3000 * np.sin(np.arange(2400) / 10)).astype("<i2").tobytes()  # 100 ms at 24 kHz


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return metrics.current().registry.get_sample_value(name, labels or {}) or 0.0


def test_model_to_room_times_a_delta_that_found_nothing_queued_and_a_barge_in_is_counted() -> None:
    metrics.configure()
    playback = PlaybackBuffer()
    playback.push("item_1", DELTA)
    playback.push("item_1", DELTA)  # behind audio still queued: the model's pace, not timed
    while playback.read_audio() is not None:
        pass
    assert sample("clankie_voice_model_to_room_seconds_count") == 1
    playback.push("item_1", DELTA)  # nothing queued any more: timed again
    barge = BargeIn(playback)
    events = barge.speech_started()  # the room talks over him: cleared before anything was read
    assert [e["type"] for e in events] == ["conversation.item.truncate"]
    assert playback.read_audio() is None
    assert sample("clankie_voice_model_to_room_seconds_count") == 1  # cleared audio is never timed
    assert sample("clankie_voice_barge_ins_total") == 1
    assert barge.speech_started() == [] and sample("clankie_voice_barge_ins_total") == 1


def test_a_frame_dave_cannot_open_is_counted() -> None:
    metrics.configure()
    group, stranger = Group(BOT, ALICE), Group(BOT, ALICE)
    pipe, _, _ = make(group.bot)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(2)
    pipe.feed(alice.packet(group.seal(ALICE, frames[0])))
    pipe.feed(alice.packet(stranger.seal(ALICE, frames[1])))  # another group's key
    assert sample("clankie_voice_dave_decrypt_failures_total") == pipe.stats.dave_failures == 1


async def test_narration_outcomes_and_a_receipt_the_disk_refuses_are_counted(tmp_path: Path) -> None:
    metrics.configure()
    writer = ReceiptWriter("receipts-metrics")
    with mounted_tmpfs(tmp_path, "64k") as disk:
        trail = ReceiptTrail(disk / "voice-receipts.jsonl", "run_1", writer)
        trail.played("dlv_1_1", True, 1)
        trail.played("dlv_1_2", False, 2)
        trail.suppressed("dlv_1_3", "cooldown", 3)
        trail.refused("dlv_1_4", "no_voice_session", 4)
        await writer.drain()
        trail.refused("dlv_1_5", "no_voice_session", 5)
        await writer.drain()
        fill(disk)  # the file's last page still takes a few lines: write until the disk refuses
        for n in range(60):
            trail.failed(f"dlv_1_{6 + n}", "x" * 400, 6 + n)
            await writer.drain()
            if writer.write_errors:
                break
        await writer.close()
    outcomes = {
        o: sample("clankie_voice_narrations_total", {"outcome": o}) for o in metrics.NARRATION_OUTCOMES
    }
    assert outcomes == {"played": 1, "not_played": 1, "suppressed": 1, "refused": 2}
    assert writer.write_errors == 1
    assert sample("clankie_disk_failures_total", {"file": "receipts"}) == 1
