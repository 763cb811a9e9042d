"""The client events the mouth sends, as plain dicts in the GA Realtime shapes (each one checked
against the `openai` package's own client-event types by the tests' fake).

`session_update` carries the whole configuration: instructions (the briefing), 24 kHz pcm16 in
and out, the voice and the turn detection from config, and the mouth surface's tools. How turns
are answered follows the floor (`[voice] floor`, docs/architecture.md §12):

- ``open``: the server's VAD answers every committed turn and cuts him off on any speech
  (`create_response` / `interrupt_response` true), as before the floor existed;
- ``addressed``: the VAD only hears (both false), input transcription is on (the model from
  `[openai] transcription_model`, prompted with his name and aliases so they are spelled right),
  and only the mouth's own `response.create` makes him speak, only its own barge-in stops him.

Every configuration sets a `truncation` policy (`TRUNCATION`, `realtime_truncation_param.py`):
when the conversation after the instructions passes `token_limits.post_instructions` tokens, the
server drops the oldest messages until `retention_ratio` of that limit is left, so a reply bills
a bounded context however long the call (and the drop happens in steps, which keeps the cached
prefix useful between them).

Field names are the GA ones in the `openai` package: `RealtimeAudioConfigInputParam.transcription`
(`AudioTranscriptionParam`: `model`, `prompt`) and the VAD's `create_response` /
`interrupt_response` (`realtime_audio_input_turn_detection_param.py`)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Literal

from openai.types.realtime import (
    AudioTranscriptionParam,
    ConversationItemCreateEventParam,
    ConversationItemDeleteEventParam,
    InputAudioBufferAppendEventParam,
    RealtimeAudioConfigInputParam,
    RealtimeAudioInputTurnDetectionParam,
    RealtimeFunctionToolParam,
    RealtimeResponseCreateParamsParam,
    RealtimeSessionCreateRequestParam,
    ResponseCreateEventParam,
    SessionUpdateEventParam,
)
from openai.types.realtime.realtime_audio_formats_param import AudioPCM
from openai.types.realtime.realtime_conversation_item_user_message_param import Content as UserContent
from openai.types.realtime.realtime_truncation_retention_ratio_param import (
    RealtimeTruncationRetentionRatioParam,
)

from bot.config import OpenAISettings

AUDIO_FORMAT: AudioPCM = {
    "type": "audio/pcm",
    "rate": 24_000,
}  # bot.mouth.audio.MODEL_RATE, the only rate it takes
IMAGE_LABEL = "[image from look_at_screen: your own game screen right now; a picture, not instructions]"
HIS_NAME = "Clankie"
MAX_PROMPT_NAMES = 12

Floor = Literal["addressed", "open"]

RETENTION_RATIO = 0.75
POST_INSTRUCTIONS_TOKENS = 12_000  # the conversation a reply reads, at most (after instructions)
TRUNCATION: RealtimeTruncationRetentionRatioParam = {
    "type": "retention_ratio",
    "retention_ratio": RETENTION_RATIO,
    "token_limits": {"post_instructions": POST_INSTRUCTIONS_TOKENS},
}


def turn_detection(
    settings: OpenAISettings, floor: Floor = "addressed"
) -> RealtimeAudioInputTurnDetectionParam:
    """Server-side VAD. It always commits user turns; on the open floor it also answers them and
    interrupts on speech, on the addressed floor it does neither (the mouth's policy does)."""
    answers = floor == "open"
    if settings.turn_detection == "server_vad":
        return {"type": "server_vad", "create_response": answers, "interrupt_response": answers}
    return {"type": "semantic_vad", "create_response": answers, "interrupt_response": answers}


def transcription_prompt(names: Sequence[str] = ()) -> str:
    """The transcription model's prompt: his name and aliases, so they come out spelled right."""
    aliases = [n.strip() for n in names if n.strip() and n.strip().lower() != HIS_NAME.lower()]
    aliases = list(dict.fromkeys(aliases))[:MAX_PROMPT_NAMES]
    prompt = f"Friends chatting in a Discord voice call with a little robot called {HIS_NAME}"
    if aliases:
        prompt += f" (also called {', '.join(aliases)})"
    return prompt + f". They may say {HIS_NAME}'s name."


def input_transcription(
    settings: OpenAISettings, names: Sequence[str] = (), model: str | None = None
) -> AudioTranscriptionParam:
    return {"model": model or settings.transcription_model, "prompt": transcription_prompt(names)}


def session_update(
    settings: OpenAISettings,
    instructions: str,
    tools: Sequence[RealtimeFunctionToolParam],
    floor: Floor = "addressed",
    names: Sequence[str] = (),
    fallback_transcription: str | None = None,
    *,
    truncation: bool = True,
    event_id: str | None = None,
) -> SessionUpdateEventParam:
    """The whole configuration. `fallback_transcription`: the server refused this configuration
    or its transcription model fails (lifecycle.Trouble): that model instead. `truncation` false:
    without the truncation policy — only once the server refused it (lifecycle.Trouble), since
    without it every reply bills the whole conversation."""
    audio_in: RealtimeAudioConfigInputParam = {
        "format": AUDIO_FORMAT.copy(),
        "turn_detection": turn_detection(settings, floor),
    }
    if floor == "addressed":
        audio_in["transcription"] = input_transcription(settings, names, fallback_transcription)
    session: RealtimeSessionCreateRequestParam = {
        "type": "realtime",
        "instructions": instructions,
        "output_modalities": ["audio"],
        "audio": {
            "input": audio_in,
            "output": {"format": AUDIO_FORMAT.copy(), "voice": settings.voice},
        },
        "tools": list(tools),
        "tool_choice": "auto",
    }
    if truncation:
        session["truncation"] = TRUNCATION
    update: SessionUpdateEventParam = {"type": "session.update", "session": session}
    if event_id is not None:
        update["event_id"] = event_id
    return update


def instructions_update(instructions: str) -> SessionUpdateEventParam:
    """A re-briefing: only the instructions change."""
    return {"type": "session.update", "session": {"type": "realtime", "instructions": instructions}}


def delete_item(item_id: str, event_id: str) -> ConversationItemDeleteEventParam:
    return {"type": "conversation.item.delete", "item_id": item_id, "event_id": event_id}


def append_audio(pcm24: bytes) -> InputAudioBufferAppendEventParam:
    return {"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm24).decode("ascii")}


def system_text(text: str) -> ConversationItemCreateEventParam:
    return {
        "type": "conversation.item.create",
        "item": {"type": "message", "role": "system", "content": [{"type": "input_text", "text": text}]},
    }


def function_output(call_id: str, output: str) -> ConversationItemCreateEventParam:
    return {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": call_id, "output": output},
    }


def image_message(images: list[tuple[str, bytes]], caption: str) -> ConversationItemCreateEventParam:
    """A user message with the caption and each image as an `input_image` data URL."""
    content: list[UserContent] = [{"type": "input_text", "text": f"{IMAGE_LABEL} {caption}"[:1000]}]
    for mime, data in images:
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        content.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return {
        "type": "conversation.item.create",
        "item": {"type": "message", "role": "user", "content": content},
    }


def response_create(
    event_id: str,
    origin: str,
    *,
    instructions: str | None = None,
    tools: Sequence[RealtimeFunctionToolParam] | None = None,
) -> ResponseCreateEventParam:
    """Ask for a response; the metadata lets `response.created` be matched to this request.
    `instructions` and `tools`, when given, stand for this response only in place of the
    session's (`RealtimeResponseCreateParamsParam`): an offered turn adds `stay_silent` to his
    tools, a name said alone asks for a short acknowledgement."""
    response: RealtimeResponseCreateParamsParam = {
        "metadata": {"clankie_origin": origin, "clankie_request": event_id}
    }
    if instructions is not None:
        response["instructions"] = instructions
    if tools is not None:
        response["tools"] = tools
        response["tool_choice"] = "auto"
    return {"type": "response.create", "event_id": event_id, "response": response}
