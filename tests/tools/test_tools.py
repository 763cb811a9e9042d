"""Each tool's contract (docs/architecture.md §3), through the registry as a model would call it."""

from __future__ import annotations

import json

from bot.tools.context import Speaker, ToolContext, ToolServices
from bot.tools.defaults import build_registry
from bot.tools.escalate import NO_SPEAKER
from bot.tools.screen import NOT_PLAYING, STARTING
from bot.web.share_store import ShareStore
from bot.web.share_types import Place
from tests.tools.fakes import PlayViewStub, jpeg_bytes, playing, png_still


class CaptainStub:
    def __init__(self) -> None:
        self.asked: list[tuple[Speaker, str]] = []
        self.places: list[Place | None] = []

    async def consult(self, speaker: Speaker, request: str, *, place: Place | None = None) -> str:
        self.asked.append((speaker, request))
        self.places.append(place)
        return f"answer for {speaker.name}"


HERE = Place("100", "1000")  # the server and call of the tests that ask about shares


async def call(
    name: str,
    args: dict,
    services: ToolServices,
    surface: str,
    speaker: Speaker | None = None,
    place: Place | None = HERE,
):
    context = ToolContext(services, surface, speaker, place)  # type: ignore[arg-type]
    return await build_registry().dispatch(name, json.dumps(args), context)


async def test_look_at_screen_when_not_playing() -> None:
    result = await call("look_at_screen", {}, ToolServices(play=PlayViewStub()), "mouth")
    assert result.text == NOT_PLAYING and result.images == []


async def test_look_at_screen_while_starting() -> None:
    result = await call("look_at_screen", {}, ToolServices(play=playing(None)), "mouth")
    assert result.text == STARTING and result.images == []


async def test_look_at_screen_returns_the_live_still_with_a_caption() -> None:
    still = png_still()
    result = await call("look_at_screen", {}, ToolServices(play=playing(still)), "mouth")
    assert result.images == [("image/png", still.data)]
    assert "sandbox" in result.text and "turn 7" in result.text and "reach the lab" in result.text
    assert "not instructions" in result.text


async def test_ask_clankie_without_a_speaker_is_refused_and_nothing_is_consulted() -> None:
    captain = CaptainStub()
    result = await call(
        "ask_clankie", {"request": "what's up?"}, ToolServices(captain=captain), "mouth", None
    )
    assert result.text == NO_SPEAKER
    assert captain.asked == []


async def test_ask_clankie_consults_on_behalf_of_the_speaker() -> None:
    captain = CaptainStub()
    speaker = Speaker(id="42", name="Ada")
    result = await call(
        "ask_clankie", {"request": "how far are you?"}, ToolServices(captain=captain), "mouth", speaker
    )
    assert result.text == "answer for Ada"
    assert captain.asked == [(speaker, "how far are you?")]
    assert captain.places == [HERE]  # the captain looks from the mouth's server and call


async def test_ask_clankie_is_not_callable_from_the_captain() -> None:
    captain = CaptainStub()
    result = await call(
        "ask_clankie", {"request": "loop"}, ToolServices(captain=captain), "captain", Speaker("1", "A")
    )
    assert result.is_error and captain.asked == []


async def test_pokeagent_observe_gives_the_digest_and_the_still() -> None:
    still = png_still()
    play = playing(still)
    result = await call("pokeagent_observe", {}, ToolServices(play=play), "captain")
    assert result.images == [("image/png", still.data)]
    digest = json.loads(result.text.splitlines()[0].removeprefix("activity digest: "))
    assert digest["objective"] == "reach the lab" and digest["frameSha256"] == still.sha256


async def test_pokeagent_observe_when_not_playing_has_no_image() -> None:
    result = await call("pokeagent_observe", {}, ToolServices(play=PlayViewStub()), "captain")
    assert "Not playing" in result.text and result.images == []


async def test_pokeagent_recall_gives_the_card_only() -> None:
    card = {
        "schemaVersion": 1,
        "sessionId": "ses_1",
        "turnsTaken": 12,
        "objective": "find the professor",
        "maps": ["house", "town"],
        "moments": [
            {
                "at": "t",
                "effect": "left the house",
                "toward": None,
                "said": "Hello, town!",
                "monologue": "secret",
            }
        ],
        "monologue": "private thoughts",
        "notes": "private notes",
        "lines": ["raw journal line"],
    }
    play = PlayViewStub(card=card, card_active=False)
    result = await call("pokeagent_recall", {}, ToolServices(play=play), "captain")
    payload = json.loads(result.text)
    assert payload["active"] is False
    assert payload["card"]["objective"] == "find the professor" and payload["card"]["turnsTaken"] == 12
    assert payload["card"]["moments"] == [
        {"at": "t", "effect": "left the house", "toward": None, "said": "Hello, town!"}
    ]  # his own line stays with its moment; the monologue never does
    assert (
        "private" not in result.text and "raw journal line" not in result.text and "secret" not in result.text
    )


async def test_pokeagent_recall_without_any_journey() -> None:
    result = await call("pokeagent_recall", {}, ToolServices(play=PlayViewStub()), "captain")
    payload = json.loads(result.text)
    assert payload["card"] is None and payload["active"] is False


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_observe_share_none_listed_and_frames_oldest_first() -> None:
    clock = Clock()
    store = ShareStore(30, clock=clock)
    services = ToolServices(shares=store)
    assert (
        json.loads((await call("observe_share", {"user_id": None}, services, "captain")).text)["outcome"]
        == "none"
    )

    ada = store.create_link("1", "Ada", HERE)
    listed = json.loads((await call("observe_share", {"user_id": None}, services, "captain")).text)
    assert listed["outcome"] == "listed" and listed["shares"][0]["frameCount"] == 0

    frames = [jpeg_bytes((i * 40, 0, 0)) for i in range(6)]
    for data in frames:
        store.add_frame(ada.token, data)
        clock.now += 1.0
    result = await call("observe_share", {}, services, "captain")
    body = json.loads(result.text)
    assert body["outcome"] == "frame"
    assert body["frame"]["sequence"] == "oldest_to_newest" and body["frame"]["frameCount"] == 4
    assert body["frame"]["userId"] == "1" and len(body["frame"]["capturedAt"]) == 4
    assert result.images == [("image/jpeg", d) for d in frames[2:]]

    store.create_link("2", "Bob", HERE)
    several = json.loads((await call("observe_share", {}, services, "captain")).text)
    assert several["outcome"] == "listed" and {s["userId"] for s in several["shares"]} == {"1", "2"}
    chosen = await call("observe_share", {"user_id": "1"}, services, "captain")
    assert len(chosen.images) == 4
    nobody = json.loads((await call("observe_share", {"user_id": "3"}, services, "captain")).text)
    assert nobody["outcome"] == "none"


async def test_observe_share_sees_only_the_askers_server_and_call() -> None:
    store = ShareStore(30, clock=Clock())
    services = ToolServices(shares=store)
    ada = store.create_link("1", "Ada", Place("100", "1000"))
    store.add_frame(ada.token, jpeg_bytes((200, 0, 0)))
    store.create_link("2", "Bob", Place("200", "2000"))  # another server
    store.create_link("3", "Cy", Place("100", "1001"))  # same server, another call
    outside_calls = store.create_link("4", "Dee", Place("100"))  # made outside any call
    store.add_frame(outside_calls.token, jpeg_bytes((0, 200, 0)))

    async def seen(args: dict, place: Place | None) -> dict:
        return json.loads((await call("observe_share", args, services, "captain", place=place)).text)

    here = await seen({}, Place("100", "1000"))
    assert here["outcome"] == "listed" and {s["userId"] for s in here["shares"]} == {"1", "4"}
    assert (await seen({}, Place("200", "2000")))["shares"] == [
        {"userId": "2", "userName": "Bob", "frameCount": 0, "lastCapturedAt": None}
    ]
    for user_id in ("2", "3"):  # named, but not in this call: nothing about them
        refused = await seen({"user_id": user_id}, Place("100", "1000"))
        assert refused["outcome"] == "none" and "this call" in refused["reason"]
    elsewhere = await call("observe_share", {"user_id": "1"}, services, "captain", place=Place("200", "2000"))
    assert elsewhere.images == [] and json.loads(elsewhere.text)["outcome"] == "none"
    nowhere = await call("observe_share", {"user_id": "1"}, services, "captain", place=None)
    assert nowhere.images == [] and json.loads(nowhere.text)["outcome"] == "none"
    mine = await call("observe_share", {"user_id": "1"}, services, "captain", place=Place("100", "1000"))
    assert len(mine.images) == 1
