"""Each committed user turn is attributed to its dominant speaker."""

from __future__ import annotations

from bot.mouth.audio import FRAME_MS, RoomMixer, SpeakerTracker
from tests.mouth.tones import room_frames, silent_frames


def run_room(mixer: RoomMixer, tracks: dict[int, list[bytes]]) -> None:
    """Feed every speaker's frame for each 20 ms tick, then pull one mixed frame."""
    ticks = max(len(frames) for frames in tracks.values())
    for i in range(ticks):
        for user, frames in tracks.items():
            if i < len(frames):
                mixer.feed(user, frames[i])
        mixer.pull()


def test_the_louder_speaker_wins_a_turn_of_equal_length() -> None:
    mixer = RoomMixer()
    run_room(mixer, {1: room_frames(300.0, 50, 3000.0), 2: room_frames(500.0, 50, 9000.0)})
    tracker = mixer.tracker
    tracker.speech_started("item_a", 0)
    assert tracker.speech_stopped("item_a", 50 * FRAME_MS) == 2
    assert tracker.speaker_of("item_a") == 2


def test_the_longer_speaker_wins_at_equal_loudness() -> None:
    mixer = RoomMixer()
    a = room_frames(300.0, 15, 6000.0) + silent_frames(45)
    b = silent_frames(10) + room_frames(500.0, 50, 6000.0)
    run_room(mixer, {1: a, 2: b})
    tracker = mixer.tracker
    tracker.speech_started("item_b", 0)
    assert tracker.speech_stopped("item_b", 60 * FRAME_MS) == 2
    # a turn covering only the first 200 ms belongs to speaker 1 alone
    tracker.speech_started("item_c", 0)
    assert tracker.speech_stopped("item_c", 200) == 1


def test_turns_use_the_servers_timeline_and_commit_closes_an_open_span() -> None:
    mixer = RoomMixer()
    run_room(mixer, {1: room_frames(300.0, 25, 6000.0) + silent_frames(25)})
    run_room(mixer, {2: room_frames(500.0, 25, 6000.0)})
    tracker = mixer.tracker
    assert tracker.position_ms == 75 * FRAME_MS
    tracker.speech_started("first", 0)
    tracker.speech_stopped("first", 500)
    tracker.speech_started("second", 1000)
    assert tracker.committed("first") == 1
    assert tracker.committed("second") == 2  # no speech_stopped: the span runs to the newest frame
    assert tracker.committed("never-started") is None


def test_silence_is_nobodys_turn_and_a_new_session_resets() -> None:
    tracker = SpeakerTracker()
    tracker.record(0, {1: 1e-7, 2: 0.0})  # below the floor
    tracker.speech_started("x", 0)
    assert tracker.speech_stopped("x", 20) is None
    tracker.record(20, {3: 0.1})
    assert tracker.dominant(0, 40) == 3
    tracker.reset()
    assert tracker.dominant(0, 40) is None and tracker.speaker_of("x") is None


def test_the_speaker_so_far_of_an_open_turn_reads_only_its_own_frames() -> None:
    mixer = RoomMixer()
    ada = room_frames(300.0, 30, 9000.0) + silent_frames(20)
    bob = silent_frames(30) + room_frames(500.0, 20, 3000.0)
    run_room(mixer, {1: ada, 2: bob})
    tracker = mixer.tracker
    assert tracker.dominant_since(0) == tracker.dominant(0, 50 * FRAME_MS) == 1
    assert tracker.dominant_since(30 * FRAME_MS) == 2  # Ada's loud start is before it
    assert tracker.dominant_since(50 * FRAME_MS) is None  # nothing pulled since
    tracker.speech_started("item_d", 600)
    assert tracker.span("item_d") == (600, None)
    tracker.speech_stopped("item_d", 1000)
    assert tracker.span("item_d") == (600, 1000) and tracker.span("nope") is None


def test_only_the_humans_count_when_the_tracker_knows_them() -> None:
    mixer = RoomMixer()
    run_room(mixer, {1: room_frames(300.0, 50, 3000.0), 9: room_frames(660.0, 50, 20000.0)})
    tracker = mixer.tracker
    tracker.speech_started("song", 0)
    assert tracker.speech_stopped("song", 50 * FRAME_MS) == 9  # nobody said who the humans are
    tracker.humans = lambda: {1}  # 9 is a music bot in the call
    tracker.speech_started("turn", 0)
    assert tracker.speech_stopped("turn", 50 * FRAME_MS) == 1
    assert tracker.dominant_since(0) == 1 and tracker.dominant(0, 1000) == 1
    tracker.humans = lambda: set()
    assert tracker.dominant(0, 1000) is None


def test_a_stop_that_arrives_before_its_start_still_spans_the_turn() -> None:
    mixer = RoomMixer()
    ada = room_frames(300.0, 35, 9000.0) + silent_frames(15)
    bob = silent_frames(35) + room_frames(500.0, 15, 9000.0)
    run_room(mixer, {1: ada, 2: bob})
    tracker = mixer.tracker
    assert tracker.speech_stopped("late", 50 * FRAME_MS) == 2  # only its last frame is known yet
    tracker.speech_started("late", 0)
    assert tracker.span("late") == (0, 50 * FRAME_MS)
    assert tracker.speaker_of("late") == tracker.committed("late") == 1  # the whole turn: Ada's
