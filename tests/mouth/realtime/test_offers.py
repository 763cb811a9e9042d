"""`Offers` on its own (bot/mouth/realtime/offers.py): an offer's audio is held until its first
output item decides; the session's use of it is in test_session_slot.py."""

from __future__ import annotations

import base64
from types import SimpleNamespace

from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.offers import Offers
from bot.mouth.realtime.responses import Response
from tests.fakes.openai.events import tone_pcm16

DELTA = base64.b64encode(tone_pcm16(100)).decode("ascii")


def message(item_id: str = "item_msg") -> SimpleNamespace:
    return SimpleNamespace(type="message", id=item_id)


def call(name: str, call_id: str = "call_1") -> SimpleNamespace:
    return SimpleNamespace(type="function_call", id="item_call", name=name, call_id=call_id)


def offered(response_id: str = "resp_1") -> tuple[Offers, PlaybackBuffer, Response]:
    playback = PlaybackBuffer()
    offers = Offers(playback)
    response = Response(response_id, "user", offered=True)
    offers.created(response)
    return offers, playback, response


def test_held_until_the_first_message_is_done_then_heard_whole() -> None:
    offers, playback, response = offered()
    offers.item_added(response, message())
    offers.audio(response, "item_msg", DELTA)
    offers.audio_done(response.id, "item_msg")
    assert playback.progress("item_msg") is None and not playback.active  # nothing queued yet
    offers.item_done(response, message())
    assert playback.has_audio and not offers.holding(response.id)
    while playback.read_audio() is not None:
        pass
    assert not playback.active  # its end was released with it


def test_stay_silent_before_the_message_is_done_drops_everything_and_wants_an_output() -> None:
    offers, playback, response = offered()
    offers.item_added(response, message())
    offers.audio(response, "item_msg", DELTA)
    assert offers.item_added(response, call("stay_silent", "call_9"))  # declined
    assert playback.progress("item_msg") is None
    assert offers.unanswered_call(response.id) == "call_9"  # the cancel won: the session answers it


def test_a_call_already_answered_is_not_answered_twice() -> None:
    offers, _playback, response = offered()
    assert offers.item_added(response, call("stay_silent", "call_9"))
    offers.answered_calls.add("call_9")
    assert offers.unanswered_call(response.id) is None


def test_another_tool_first_takes_the_offer() -> None:
    offers, playback, response = offered()
    assert not offers.item_added(response, call("look_at_screen"))
    offers.audio(response, "item_msg", DELTA)
    assert playback.has_audio


def test_a_barge_in_drops_what_is_held_for_good() -> None:
    offers, playback, response = offered()
    offers.item_added(response, message())
    offers.audio(response, "item_msg", DELTA)
    offers.drop_held()
    offers.audio(response, "item_msg", DELTA)
    offers.taken(response.id)
    assert playback.progress("item_msg") is None and not playback.active


def test_an_answered_turn_is_never_held() -> None:
    playback = PlaybackBuffer()
    offers = Offers(playback)
    response = Response("resp_2", "user")
    offers.created(response)
    offers.audio(response, "item_msg", DELTA)
    assert playback.has_audio
