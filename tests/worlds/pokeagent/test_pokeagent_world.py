"""PokeAgentWorld against the loopback fake PokeAgent server (tests/fakes/pokeagent)."""

from __future__ import annotations

import socket

import pytest
from aiohttp import web

from bot.worlds.base import World, WorldUnavailable
from bot.worlds.pokeagent.world import PokeAgentWorld
from journal.actions import GBA_CATALOG, Click
from tests.fakes.pokeagent.game import PRIZE_MONEY
from tests.fakes.pokeagent.server import FakePokeAgent
from tests.worlds.pokeagent.conftest import TEST_FPS, gba


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_is_a_world_with_the_gba_catalog(world: PokeAgentWorld, fake: FakePokeAgent) -> None:
    assert isinstance(world, World)
    assert world.name == "pokeagent" and world.catalog is GBA_CATALOG
    assert world.provenance["server"] == fake.base_url
    assert world.provenance["fps"] == TEST_FPS  # base_fps from GET /status


async def test_observation_maps_the_server_state(world: PokeAgentWorld) -> None:
    obs = await world.observe()
    assert obs.scene == "overworld"
    s = obs.state
    assert s["location"] == {"map": "LITTLEROOT TOWN", "x": 10, "y": 10, "facing": "unknown"}
    assert s["party"] == [
        {"species": "TORCHIC", "nickname": "TORCHIC", "level": 5, "hp": [19, 20], "status": "OK"}
    ]
    assert s["dialog"] == {"open": False, "text": None} and s["menu"] == "unknown"
    assert s["inBattle"] is False and s["gameState"] == "overworld"
    assert s["milestones"] == ["GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN"]
    assert s["playerName"] == "MAY"
    assert s["metrics"] == {"badges": 0, "pokedexCaught": 1, "money": 3000}
    assert "P" in s["mapView"]
    assert "screenshot_base64" not in str(s)  # the embedded screenshot is dropped


async def test_an_open_start_menu_is_not_claimed_to_be_known(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    """Fact: no menu state in /state — an open START menu reads as overworld."""
    assert (await world.act(gba("button_press", button="start"))).ok
    assert fake.game.menu_open  # the game has its menu open …
    obs = await world.observe()
    assert obs.scene == "overworld" and obs.state["menu"] == "unknown"  # … and we say we cannot tell
    assert (await world.act(gba("button_press", button="b"))).ok and not fake.game.menu_open


async def test_a_battle_is_read_from_is_in_battle(world: PokeAgentWorld) -> None:
    """Fact: game_state is never battle; is_in_battle says it. Battles, money and milestones."""
    assert (await world.act(gba("button_press", button="left"))).ok  # around the sign
    assert (await world.act(gba("button_press", button="up", repeat=8))).ok  # north to the route
    obs = await world.observe()
    assert obs.state["location"] == {"map": "ROUTE 101", "x": 5, "y": 15, "facing": "unknown"}
    assert obs.state["milestones"][-1] == "ROUTE_101"
    assert (await world.act(gba("button_press", button="up", repeat=5))).ok
    battle = await world.observe()
    assert battle.scene == "battle" and battle.state["inBattle"] is True
    assert battle.state["gameState"] == "overworld"
    assert battle.state["battle"]["opponent"]["species"] == "ZIGZAGOON"
    assert (await world.act(gba("button_press", button="a", repeat=2))).ok
    after = await world.observe()
    assert after.scene == "overworld" and after.state["metrics"]["money"] == 3000 + PRIZE_MONEY
    assert after.state["milestones"] == [
        "GAME_RUNNING",
        "PLAYER_NAME_SET",
        "LITTLEROOT_TOWN",
        "ROUTE_101",
        "FIRST_BATTLE_WON",
    ]


async def test_fallback_milestones_are_not_recorded_as_reached(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    """Fact: /milestones' fallback answer (GAME_STARTED, EMULATOR_RUNNING) is not progress."""
    fake.milestones_fail = True
    obs = await world.observe()
    assert obs.state["milestones"] == ["GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN"]
    assert "GAME_STARTED" not in obs.state["milestones"]


@pytest.mark.parametrize(
    "action",
    [
        {"kind": "walk_to", "x": 3, "y": 4},
        {"kind": "select_menu_entry", "entryId": "bag"},
        {"kind": "enter_text", "text": "MAY"},
    ],
)
async def test_what_the_server_cannot_do_is_refused_with_a_reason(
    world: PokeAgentWorld, fake: FakePokeAgent, action: dict[str, object]
) -> None:
    result = await world.act(GBA_CATALOG.validate(action))
    assert (result.ok, result.source, result.refusal) == (False, "body", "unsupported_by_body")
    assert "button_press" in result.detail
    assert fake.posted == []


async def test_browser_actions_are_refused(world: PokeAgentWorld) -> None:
    result = await world.act(Click(kind="click", x=1, y=1))
    assert (result.ok, result.refusal) == (False, "unsupported_by_body")


async def test_still_is_the_servers_png(world: PokeAgentWorld) -> None:
    still = await world.still()
    assert still is not None
    assert still.data.startswith(b"\x89PNG\r\n\x1a\n") and still.mime_type == "image/png"
    assert (still.width, still.height) == (240, 160)


async def test_start_against_a_down_server_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    world = PokeAgentWorld(url, timeout_s=2.0)
    with pytest.raises(WorldUnavailable, match=r"no PokeAgent server answers at http://127\.0\.0\.1:\d+"):
        await world.start()


@pytest.mark.parametrize("garbage", ["html", "shape"])
async def test_start_against_garbage_is_a_clear_error(fake: FakePokeAgent, garbage: str) -> None:
    fake.garbage = garbage  # type: ignore[assignment]
    with pytest.raises(WorldUnavailable, match="does not look like a PokeAgent server"):
        await PokeAgentWorld(fake.base_url).start()


async def test_start_against_another_json_service_is_a_clear_error() -> None:
    async def status(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/status", status)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        world = PokeAgentWorld(f"http://127.0.0.1:{runner.addresses[0][1]}")
        with pytest.raises(WorldUnavailable, match="no 'status' string"):
            await world.start()
    finally:
        await runner.cleanup()


async def test_server_dying_mid_session_is_refused_not_raised(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    assert (await world.act(gba("button_press", button="down"))).ok
    await fake.die()
    result = await world.act(gba("button_press", button="down"))
    assert (result.ok, result.source, result.refusal) == (False, "body", "body_unreachable")
    assert "POST /action" in result.detail
    dialog = await world.act(gba("advance_dialog"))
    assert (dialog.ok, dialog.refusal) == (False, "body_unreachable")
    assert await world.still() is None
    with pytest.raises(WorldUnavailable, match="GET /state"):
        await world.observe()


async def test_garbage_mid_session_is_refused_then_recovers(
    world: PokeAgentWorld, fake: FakePokeAgent
) -> None:
    fake.garbage = "html"
    result = await world.act(gba("button_press", button="a"))
    assert (result.ok, result.refusal) == (False, "body_protocol_error")
    assert "not JSON" in result.detail and "POST /action" in result.detail
    with pytest.raises(WorldUnavailable, match="not JSON"):
        await world.observe()
    fake.garbage = "shape"
    shaped = await world.act(gba("frame_advance", frames=2))
    assert (shaped.ok, shaped.refusal) == (False, "body_protocol_error")
    fake.garbage = None
    assert (await world.act(gba("button_press", button="down"))).ok
    assert (await world.observe()).state["location"]["y"] == 11


async def test_act_after_close_is_refused(world: PokeAgentWorld) -> None:
    await world.close()
    result = await world.act(gba("button_press", button="a"))
    assert (result.ok, result.refusal) == (False, "body_closed")
    with pytest.raises(WorldUnavailable, match="closed"):
        await world.observe()


async def test_a_legacy_server_without_queue_or_milestone_endpoints() -> None:
    legacy = FakePokeAgent(fps=TEST_FPS, legacy=True)
    await legacy.start()
    world = PokeAgentWorld(legacy.base_url)
    try:
        await world.start()
        result = await world.act(gba("button_press", button="left", holdFrames=4, repeat=2))
        assert result.ok and result.data["settled"] is True
        obs = await world.observe()
        assert obs.state["location"]["x"] == 8
        # Milestones come from the object embedded in /state, still in the order reached.
        assert obs.state["milestones"] == ["GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN"]
    finally:
        await world.close()
        await legacy.die()


async def test_a_server_that_hangs_is_unreachable_after_the_timeout(fake: FakePokeAgent) -> None:
    world = PokeAgentWorld(fake.base_url, timeout_s=0.5)
    await world.start()
    try:
        fake.hang = True
        result = await world.act(gba("button_press", button="a"))
        assert (result.ok, result.refusal) == (False, "body_unreachable")
        assert "no answer within 0.5 s" in result.detail
    finally:
        await world.close()


@pytest.mark.parametrize("url", ["notaurl", "127.0.0.1:8000", "ftp://127.0.0.1:8000", "http://"])
def test_a_url_that_is_not_http_is_refused_when_the_world_is_made(url: str) -> None:
    with pytest.raises(ValueError, match="is not an http\\(s\\) URL"):
        PokeAgentWorld(url)
