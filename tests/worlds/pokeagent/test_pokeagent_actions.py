"""PokeAgentWorld's actions against the faithful fake (tests/fakes/pokeagent), frames on a real
clock: what is posted, and that an action returns only once its frames have run on the server.
No test here measures time (bench/pokeagent.py does); they count the fake's frames."""

from __future__ import annotations

import pytest

from bot.worlds.pokeagent.world import PokeAgentWorld
from journal.actions import ButtonPress
from tests.fakes.pokeagent.frames import DIALOG_FPS_FACTOR
from tests.fakes.pokeagent.server import SIGN_TEXT, FakePokeAgent
from tests.worlds.pokeagent.conftest import TEST_FPS, gba


def frames_now(fake: FakePokeAgent) -> int:
    fake.loop.catch_up()
    return fake.loop.frames


async def test_frame_advance_is_one_wait_and_returns_after_its_frames_ran(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    """Facts: one WAIT with release_frames N (not N WAITs); a WAIT never clears queue_empty, so
    the world settles by queue_length and frames at current_fps, and still returns settled."""
    before_frames, before_steps = frames_now(fake), fake.step_count
    result = await world.act(gba("frame_advance", frames=240))
    assert fake.posted[-1] == {
        "buttons": ["WAIT"],
        "speed": "fast",
        "release_frames": 240,
        "source": "clankie",
    }
    assert result.ok and result.data["settled"] is True and result.data["frames"] == 240
    assert frames_now(fake) - before_frames >= 240  # the frames really ran before it returned
    assert fake.loop.queue_empty() is False and fake.loop.current_action == "WAIT"  # as the real one
    assert fake.step_count == before_steps  # a WAIT is no step
    assert (await world.observe()).state["location"]["x"] == 10  # waiting moved nothing


async def test_a_press_returns_after_its_hold_and_release_have_run(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    """Fact: a press lasts hold + 1 frames, then its release; step_count grows per press."""
    before = fake.step_count
    result = await world.act(gba("button_press", button="left", repeat=3))
    assert fake.posted[-1] == {
        "buttons": ["LEFT"] * 3,
        "speed": "slow",
        "hold_frames": 15,  # down 16 frames: the frame it is taken plus 15
        "release_frames": 16,
        "source": "clankie",
    }
    assert result.ok and result.data["settled"] is True and result.data["holdFrames"] == 16
    assert fake.loop.queue_empty() is True  # everything, release included, has run
    assert fake.step_count == before + 3 and result.data["stepCount"] == before + 3
    obs = await world.observe()
    assert obs.state["location"] == {"map": "LITTLEROOT TOWN", "x": 7, "y": 10, "facing": "unknown"}


@pytest.mark.parametrize(
    ("hold", "speed", "sent", "release"),
    [(1, "fast", 1, 3), (6, "fast", 5, 3), (8, "normal", 7, 8), (10, "normal", 9, 8), (40, "slow", 39, 16)],
)
async def test_hold_frames_pick_the_nearest_speed_preset(
    world: PokeAgentWorld, fake: FakePokeAgent, hold: int, speed: str, sent: int, release: int
) -> None:
    """Fact: presets fast 6/3, normal 10/8, slow 16/16 (hold/release frames)."""
    result = await world.act(gba("button_press", button="b", holdFrames=hold))
    assert result.ok and fake.loop.queue_empty() is True
    posted = fake.posted[-1]
    assert (posted["speed"], posted["hold_frames"], posted["release_frames"]) == (speed, sent, release)


async def test_an_unknown_button_is_refused_before_it_is_sent(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    """Fact: the real /action queues an unknown name, presses nothing and answers success."""
    odd = ButtonPress.model_construct(kind="button_press", button="turbo", holdFrames=16, repeat=1)
    result = await world.act(odd)
    assert (result.ok, result.source, result.refusal) == (False, "body", "unknown_button")
    assert "'turbo'" in result.detail and "A, B, DOWN" in result.detail
    assert fake.posted == []


async def test_frames_are_counted_at_the_dialogs_higher_rate(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    """Fact: current_fps is 4× base in dialog (fps_multiplier says 2); each settle reads it."""
    assert (await world.act(gba("button_press", button="up", repeat=3))).ok  # onto the sign
    assert (await world.observe()).scene == "dialog"
    before = frames_now(fake)
    result = await world.act(gba("frame_advance", frames=600))
    assert result.ok and result.data["settled"] is True
    assert result.data["fps"] == TEST_FPS * DIALOG_FPS_FACTOR
    assert frames_now(fake) - before >= 600


async def test_advance_dialog_turns_every_page(world: PokeAgentWorld, fake: FakePokeAgent) -> None:
    refused = await world.act(gba("advance_dialog"))
    assert (refused.ok, refused.refusal) == (False, "dialog_not_open")
    assert (await world.act(gba("button_press", button="up", repeat=3))).ok  # onto the sign
    obs = await world.observe()
    assert obs.scene == "dialog" and obs.state["dialog"] == {"open": True, "text": SIGN_TEXT[0]}
    blocked = await world.act(gba("button_press", button="down"))
    assert blocked.ok and (await world.observe()).state["location"]["y"] == 7  # dialog holds the player
    result = await world.act(gba("advance_dialog"))
    assert result.ok and result.data["endedBy"] == "dialog_closed"
    assert result.data["presses"] == 2 and result.data["pages"] == SIGN_TEXT
    assert [p["buttons"] for p in fake.posted[-2:]] == [["A"], ["A"]]
    assert fake.posted[-1]["hold_frames"] == 5 and fake.loop.queue_empty() is True
    assert (await world.observe()).scene == "overworld"


async def test_a_sticky_dialog_stops_advancing_after_three_unchanged_pages(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    assert (await world.act(gba("button_press", button="up", repeat=3))).ok
    fake.game.dialog_sticks = True
    result = await world.act(gba("advance_dialog"))
    assert result.ok and result.data["endedBy"] == "text_unchanged"
    assert result.data["presses"] == 3 and result.data["pages"] == SIGN_TEXT[:1]


async def test_a_queue_that_does_not_drain_is_reported_unsettled(fake: FakePokeAgent) -> None:
    """Someone else's long queue ahead of ours: the world gives up waiting and says why."""
    world = PokeAgentWorld(fake.base_url, timeout_s=0.3)
    await world.start()
    try:
        fake.loop.enqueue(["B"] * 2000, "slow", None, None)  # 2000 × 33 frames ahead of us
        result = await world.act(gba("button_press", button="a", holdFrames=2))
        assert result.ok and result.data["settled"] is False
        assert "actions queued after" in result.data["settleDetail"]
    finally:
        await world.close()


async def test_a_press_on_a_server_slower_than_its_fps_is_waited_for_to_the_end() -> None:
    """Fact: the real loop runs below current_fps when busy; a press's remaining hold and
    release are re-read from /queue_status until none remain, so the press has really ended."""
    slow = FakePokeAgent(fps=TEST_FPS, work_s=2 / TEST_FPS)  # runs at a third of what it reports
    await slow.start()
    world = PokeAgentWorld(slow.base_url, timeout_s=3.0)
    try:
        await world.start()
        result = await world.act(gba("button_press", button="right", repeat=2))
        assert result.ok and result.data["settled"] is True
        assert slow.loop.queue_empty() is True and slow.step_count == 2
        assert (await world.observe()).state["location"]["x"] == 12
    finally:
        await world.close()
        await slow.die()
