"""The fake PokeAgent server against the facts of the real one (server/app.py at commit ff23387,
and FACTS.md "PokeAgent server, as its code behaves"), over HTTP, one test per fact.

The fake's clock is stepped by hand here, one frame at a time, so each test counts frames
exactly instead of timing anything."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.fakes.pokeagent.frames import SPEED_PRESETS
from tests.fakes.pokeagent.server import FakePokeAgent

FPS = 64.0  # a power of two: a frame is an exact binary fraction of a second


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Server:
    def __init__(self, fake: FakePokeAgent, clock: Clock, http: aiohttp.ClientSession) -> None:
        self.fake, self.clock, self.http = fake, clock, http

    def frames(self, n: int, *, fps: float = FPS) -> None:
        """Let n frames (at ``fps``) pass on the fake's clock."""
        self.clock.now += n / fps

    async def get(self, path: str) -> dict[str, Any]:
        async with self.http.get(self.fake.base_url + path) as r:
            assert r.status == 200, await r.text()
            body: dict[str, Any] = await r.json()
            return body

    async def post(self, body: Any) -> tuple[int, Any]:
        async with self.http.post(self.fake.base_url + "/action", json=body) as r:
            return r.status, await r.json()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    clock = Clock()
    fake = FakePokeAgent(fps=FPS, clock=clock)
    await fake.start()
    async with aiohttp.ClientSession() as http:
        yield Server(fake, clock, http)
    await fake.die()


async def frames_until_queue_empty(s: Server, limit: int = 200) -> int:
    for n in range(1, limit):
        s.frames(1)
        if (await s.get("/queue_status"))["queue_empty"]:
            return n
    raise AssertionError("the queue never emptied")


@pytest.mark.parametrize("speed", ["fast", "normal", "slow"])
async def test_speed_presets_and_a_press_down_hold_plus_one_frames(server: Server, speed: str) -> None:
    """Facts: presets fast 6/3, normal 10/8, slow 16/16; the game loop presses a button on the
    frame it takes it and for hold frames more (hold + 1), then releases for release frames;
    step_count grows by one per completed press (app.py game_loop, SPEED_PRESETS)."""
    hold, release = SPEED_PRESETS[speed]
    status, answer = await server.post({"buttons": ["B"], "speed": speed})
    downs: list[int] = []  # from the frame after the post on: how many keys were down
    server.fake.loop.on_frame = lambda keys: downs.append(len(keys))
    assert status == 200 and answer == {
        "status": "success",
        "actions_queued": 1,
        "queue_length": 1,
        "message": "Added 1 actions to queue",
    }
    assert await frames_until_queue_empty(server) == hold + 1 + release
    assert downs[: hold + 1] == [1] * (hold + 1) and not any(downs[hold + 1 :])
    assert (await server.get("/status"))["step_count"] == 1


async def test_explicit_hold_and_release_frames_override_the_preset(server: Server) -> None:
    """Fact: hold_frames/release_frames in the body replace the preset's (game_loop)."""
    await server.post({"buttons": ["A"], "speed": "slow", "hold_frames": 2, "release_frames": 1})
    assert await frames_until_queue_empty(server) == 2 + 1 + 1


async def test_an_unknown_speed_is_normal(server: Server) -> None:
    """Fact: take_action swaps an unknown speed for normal (10/8)."""
    await server.post({"buttons": ["A"], "speed": "ludicrous"})
    assert await frames_until_queue_empty(server) == 10 + 1 + 8


async def test_a_wait_takes_one_frame_whatever_its_release_frames(server: Server) -> None:
    """Fact (app.py game_loop, checked by running it): WAIT presses nothing and its release is
    never counted — the next entry is taken on the very next frame."""
    await server.post({"buttons": ["WAIT", "A"], "speed": "fast", "release_frames": 30})
    downs: list[frozenset[str]] = []
    server.fake.loop.on_frame = downs.append
    server.frames(1)
    queue = await server.get("/queue_status")
    assert (queue["queue_length"], queue["current_action"]) == (1, "WAIT")
    server.frames(1)
    assert (await server.get("/queue_status"))["current_action"] == "A"  # 30 frames were not waited
    assert downs[:2] == [frozenset(), frozenset({"a"})]


async def test_after_a_wait_queue_empty_stays_false_and_current_action_stays_wait(server: Server) -> None:
    """Fact: queue_empty needs current_action None, which a WAIT never resets; queue_length is
    the honest count (get_queue_status)."""
    await server.post({"buttons": ["WAIT"], "release_frames": 5})
    server.frames(500)
    queue = await server.get("/queue_status")
    assert queue == {
        "queue_empty": False,
        "queue_length": 0,
        "current_action": "WAIT",
        "action_frames_remaining": 0,
        "release_frames_remaining": 0,
    }
    assert (await server.get("/status"))["step_count"] == 0  # a WAIT is no step
    await server.post({"buttons": ["A"], "speed": "fast"})
    assert await frames_until_queue_empty(server) == 10  # a real button clears it


async def test_thirty_waits_hold_the_queue_thirty_frames(server: Server) -> None:
    """Fact: each queued WAIT is one frame, whatever the speed."""
    await server.post({"buttons": ["WAIT"] * 30, "speed": "slow"})
    server.frames(29)
    assert (await server.get("/queue_status"))["queue_length"] == 1
    server.frames(1)
    assert (await server.get("/queue_status"))["queue_length"] == 0


async def test_unknown_buttons_are_accepted_take_their_frames_and_press_nothing(server: Server) -> None:
    """Fact: take_action queues any name and answers success; run_frame_with_buttons presses a
    name only if its lower case is a KEY_MAP key, so "left" moves and "TURBO" does nothing
    (yet takes hold + 1 + release frames and counts a step)."""
    status, answer = await server.post({"buttons": ["TURBO", "left"], "speed": "fast"})
    assert status == 200 and answer["status"] == "success" and answer["actions_queued"] == 2
    assert await frames_until_queue_empty(server) == 2 * (6 + 1 + 3)
    assert (await server.get("/status"))["step_count"] == 2
    assert (await server.get("/state"))["player"]["position"] == {"x": 9, "y": 10}


async def test_status_has_the_real_fields_and_the_dialog_runs_four_times_faster(server: Server) -> None:
    """Facts: /status is {status, step_count, base_fps, current_fps, is_dialog, fps_multiplier};
    in dialog current_fps is 4× base while fps_multiplier says 2 (get_status, get_current_fps)."""
    status = await server.get("/status")
    assert status == {
        "status": "running",
        "step_count": 0,
        "base_fps": FPS,
        "current_fps": FPS,
        "is_dialog": False,
        "fps_multiplier": 1,
    }
    server.fake.game.x, server.fake.game.y = 10, 8
    await server.post({"buttons": ["UP"], "speed": "fast"})  # onto the sign: a dialog opens
    server.frames(1)
    dialog = await server.get("/status")
    assert dialog["is_dialog"] is True and dialog["current_fps"] == 4 * FPS and dialog["fps_multiplier"] == 2
    server.frames(6 + 3, fps=4 * FPS)  # the rest of the press, at the dialog's rate
    assert (await server.get("/queue_status"))["queue_empty"] is True


async def test_state_has_no_facing_and_no_menu_or_battle_state(server: Server) -> None:
    """Facts: /state's player has no facing; game_state is forced to dialog|overworld, so an
    open START menu and a battle both read overworld (battle only in is_in_battle)."""
    await server.post({"buttons": ["START"], "speed": "fast"})
    server.frames(10)
    state = await server.get("/state")
    assert server.fake.game.menu_open
    assert set(state["player"]) == {"position", "location", "name", "party"}
    assert state["game"]["game_state"] == "overworld" and state["game"]["party"] is None
    assert set(state) == {
        "visual",
        "player",
        "game",
        "map",
        "milestones",
        "location_connections",
        "step_number",
        "status",
        "action_queue_length",
    }
    server.fake.game.menu_open = False
    server.fake.game.battle_hp = 1
    battle = (await server.get("/state"))["game"]
    assert battle["game_state"] == "overworld" and battle["is_in_battle"] is True


async def test_milestones_list_the_trackers_and_a_fallback_on_request(server: Server) -> None:
    """Facts: /milestones lists the tracker's recorded milestones (tracking_system file_based);
    on an internal error it answers 200 with GAME_STARTED/EMULATOR_RUNNING stamped now and
    tracking_system "fallback" (get_milestones' except branch)."""
    listing = await server.get("/milestones")
    assert listing["tracking_system"] == "file_based"
    assert [m["name"] for m in listing["milestones"]] == [
        "GAME_RUNNING",
        "PLAYER_NAME_SET",
        "LITTLEROOT_TOWN",
    ]
    server.fake.milestones_fail = True
    fallback = await server.get("/milestones")
    assert fallback["tracking_system"] == "fallback" and fallback["progress"] == 1.0
    assert [m["name"] for m in fallback["milestones"]] == ["GAME_STARTED", "EMULATOR_RUNNING"]


@pytest.mark.parametrize(
    "body",
    [[1, 2], {"buttons": "A"}, {"buttons": [1]}, {"buttons": ["A"], "hold_frames": "many"}],
)
async def test_a_body_actionrequest_cannot_validate_is_422(server: Server, body: Any) -> None:
    """Fact: /action's body is a pydantic ActionRequest; FastAPI answers 422 when it fails."""
    status, answer = await server.post(body)
    assert status == 422 and isinstance(answer["detail"], list)
    assert server.fake.loop.queue == []


async def test_frames_run_on_the_wall_clock_by_default() -> None:
    """The fake's emulator runs without being asked: a queued press completes on its own."""
    fake = FakePokeAgent(fps=2000.0)
    await fake.start()
    try:
        async with aiohttp.ClientSession() as http:
            await http.post(fake.base_url + "/action", json={"buttons": ["A"], "speed": "fast"})
            for _ in range(2000):
                async with http.get(fake.base_url + "/queue_status") as r:
                    if (await r.json())["queue_empty"]:
                        break
            assert fake.step_count == 1 and fake.loop.frames >= 10
    finally:
        await fake.die()


async def test_a_busy_server_runs_slower_than_the_fps_it_reports() -> None:
    """Fact: game_loop sleeps 1 / current_fps after each frame's own work, so its real rate is
    below current_fps while /status still reports current_fps."""
    clock = Clock()
    fake = FakePokeAgent(fps=FPS, clock=clock, work_s=1 / FPS)  # each frame's work = one period
    await fake.start()
    try:
        fake.loop.catch_up()
        before = fake.loop.frames
        clock.now += 64 / FPS
        fake.loop.catch_up()
        assert fake.loop.frames - before == 32  # half the frames the reported rate promises
        async with aiohttp.ClientSession() as http, http.get(fake.base_url + "/status") as r:
            assert (await r.json())["current_fps"] == FPS
    finally:
        await fake.die()
