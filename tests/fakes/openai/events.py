"""Builders for Realtime (GA) server events, plus a pcm16 tone generator.

Each builder returns a plain dict; `RealtimeFake.send` checks it against the `openai` package's
own `RealtimeServerEvent` model before it goes on the wire, so a typo in a test fails loudly.
"""

from __future__ import annotations

import base64
import itertools
import math
from typing import Any

import numpy as np

from bot.config import OpenAISettings

_ids = itertools.count(1)

RATE = 24_000  # Realtime audio: 24 kHz mono pcm16


def new_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids)}"


def tone_pcm16(ms: int, freq: float = 440.0, amplitude: float = 0.3, start_sample: int = 0) -> bytes:
    """`ms` of a sine at 24 kHz mono pcm16; `start_sample` continues a tone across chunks."""
    count = RATE * ms // 1000
    n = np.arange(start_sample, start_sample + count, dtype=np.float64)
    wave = amplitude * 32767.0 * np.sin(2.0 * math.pi * freq * n / RATE)
    return wave.astype("<i2").tobytes()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def default_session(model: str) -> dict[str, Any]:
    return {
        "type": "realtime",
        "id": new_id("sess"),
        "object": "realtime.session",
        "model": model,
        "output_modalities": ["audio"],
        "audio": {
            "input": {"format": {"type": "audio/pcm", "rate": RATE}, "turn_detection": None},
            "output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "marin"},
        },
    }


def session_created(session: dict[str, Any]) -> dict[str, Any]:
    return {"type": "session.created", "session": session}


def session_updated(session: dict[str, Any]) -> dict[str, Any]:
    return {"type": "session.updated", "session": session}


def speech_started(audio_start_ms: int = 0, item_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "input_audio_buffer.speech_started",
        "audio_start_ms": audio_start_ms,
        "item_id": item_id or new_id("item"),
    }


def speech_stopped(audio_end_ms: int, item_id: str) -> dict[str, Any]:
    return {"type": "input_audio_buffer.speech_stopped", "audio_end_ms": audio_end_ms, "item_id": item_id}


def committed(item_id: str, previous_item_id: str | None = None) -> dict[str, Any]:
    return {"type": "input_audio_buffer.committed", "item_id": item_id, "previous_item_id": previous_item_id}


def realtime_usage(
    *,
    text_in: int = 120,
    audio_in: int = 300,
    image_in: int = 0,
    cached_text: int = 64,
    cached_audio: int = 128,
    text_out: int = 24,
    audio_out: int = 180,
) -> dict[str, Any]:
    """A response's `usage` as the real server sends it (openai/types/realtime/
    realtime_response_usage.py `RealtimeResponseUsage` and its `_input_token_details.py`,
    `_output_token_details.py`): the cached tokens are a subset of the input tokens, broken
    down by kind in `cached_tokens_details`."""
    inputs, outputs = text_in + audio_in + image_in, text_out + audio_out
    return {
        "total_tokens": inputs + outputs,
        "input_tokens": inputs,
        "output_tokens": outputs,
        "input_token_details": {
            "text_tokens": text_in,
            "audio_tokens": audio_in,
            "image_tokens": image_in,
            "cached_tokens": cached_text + cached_audio,
            "cached_tokens_details": {
                "text_tokens": cached_text,
                "audio_tokens": cached_audio,
                "image_tokens": 0,
            },
        },
        "output_token_details": {"text_tokens": text_out, "audio_tokens": audio_out},
    }


def response_object(
    response_id: str,
    status: str,
    output: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "realtime.response",
        "status": status,
        "output": output or [],
        "output_modalities": ["audio"],
        "usage": usage,  # RealtimeResponse.usage: null until the response is done
    }


def response_created(response_id: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """`metadata`: what the `response.create` carried, echoed as the service does
    (`realtime_response.py` `RealtimeResponse.metadata`)."""
    response = response_object(response_id, "in_progress")
    if metadata is not None:
        response["metadata"] = metadata
    return {"type": "response.created", "response": response}


def response_done(
    response_id: str,
    status: str = "completed",
    output: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    done = response_object(response_id, status, output, usage if usage is not None else realtime_usage())
    return {"type": "response.done", "response": done}


def assistant_item(item_id: str, status: str, transcript: str | None = None) -> dict[str, Any]:
    content = [{"type": "output_audio", "transcript": transcript}] if status != "in_progress" else []
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": content,
    }


def function_call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def output_item_added(response_id: str, item: dict[str, Any], output_index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_item.added",
        "response_id": response_id,
        "output_index": output_index,
        "item": item,
    }


def output_item_done(response_id: str, item: dict[str, Any], output_index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_item.done",
        "response_id": response_id,
        "output_index": output_index,
        "item": item,
    }


def _part(kind: str, response_id: str, item_id: str, output_index: int) -> dict[str, Any]:
    return {
        "type": kind,
        "response_id": response_id,
        "item_id": item_id,
        "output_index": output_index,
        "content_index": 0,
    }


def audio_delta(response_id: str, item_id: str, pcm: bytes, output_index: int = 0) -> dict[str, Any]:
    return {**_part("response.output_audio.delta", response_id, item_id, output_index), "delta": b64(pcm)}


def audio_done(response_id: str, item_id: str, output_index: int = 0) -> dict[str, Any]:
    return _part("response.output_audio.done", response_id, item_id, output_index)


def transcript_delta(response_id: str, item_id: str, text: str, output_index: int = 0) -> dict[str, Any]:
    return {
        **_part("response.output_audio_transcript.delta", response_id, item_id, output_index),
        "delta": text,
    }


def transcript_done(response_id: str, item_id: str, text: str, output_index: int = 0) -> dict[str, Any]:
    return {
        **_part("response.output_audio_transcript.done", response_id, item_id, output_index),
        "transcript": text,
    }


def function_call_arguments_done(
    response_id: str, item_id: str, call_id: str, name: str, arguments: str, output_index: int = 0
) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "response_id": response_id,
        "item_id": item_id,
        "output_index": output_index,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def item_truncated(item_id: str, content_index: int, audio_end_ms: int) -> dict[str, Any]:
    return {
        "type": "conversation.item.truncated",
        "item_id": item_id,
        "content_index": content_index,
        "audio_end_ms": audio_end_ms,
    }


def error(
    message: str,
    code: str | None = None,
    type_: str = "invalid_request_error",
    event_id: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    """`RealtimeErrorEvent` (types/realtime/realtime_error.py): `event_id` names the client event
    that caused it, when there is one."""
    body = {"type": type_, "code": code, "message": message, "param": param, "event_id": event_id}
    return {"type": "error", "error": body}


def item_deleted(item_id: str) -> dict[str, Any]:
    # types/realtime/conversation_item_deleted_event.py
    return {"type": "conversation.item.deleted", "item_id": item_id}


# -- input audio transcription (GA). Source: the openai package's
# types/realtime/conversation_item_input_audio_transcription_{delta,completed,failed}_event.py
def transcription_delta(item_id: str, delta: str, content_index: int = 0) -> dict[str, Any]:
    return {
        "type": "conversation.item.input_audio_transcription.delta",
        "item_id": item_id,
        "content_index": content_index,
        "delta": delta,
    }


# How the service bills an input transcription, by model — the `usage` it sends follows it
# (`conversation_item_input_audio_transcription_completed_event.py`: `UsageTranscriptTextUsageTokens`,
# `type: "tokens"`, "for models billed by token usage"; `UsageTranscriptTextUsageDuration`,
# `type: "duration"`, "for models billed by audio input duration"). Which model is which, from the
# same package's `types/audio/`: `transcription_create_params.py` says `gpt-4o-transcribe` and
# `gpt-4o-mini-transcribe` answer only `json` and that streaming "is not supported for the
# `whisper-1` model"; the streamed `transcription_text_done_event.py` carries only the tokens
# usage, and `verbose_json`'s `transcription_verbose.py` (whisper-1's) only the duration one.
# OpenAI's model page (developers.openai.com/api/docs/models/gpt-4o-transcribe) prices
# gpt-4o-transcribe per million audio tokens; whisper-1 is priced per minute of audio.
TRANSCRIPTION_BILLED_BY: dict[str, str] = {
    "gpt-4o-transcribe": "tokens",
    "gpt-4o-mini-transcribe": "tokens",
    "whisper-1": "duration",
}
DEFAULT_TRANSCRIPTION_MODEL = OpenAISettings.model_fields["transcription_model"].default
"""The bot's own default `[openai] transcription_model` (bot/config.py)."""


def transcription_usage(
    model: str, seconds: float = 1.0, audio_tokens: int = 40, text_out: int = 8
) -> dict[str, Any]:
    """The `usage` of an input transcription by `model`, in the shape the service bills that
    model by: seconds of audio for `whisper-1`, tokens for the gpt-4o transcribe models."""
    billed_by = TRANSCRIPTION_BILLED_BY.get(model)
    if billed_by is None:
        known = ", ".join(sorted(TRANSCRIPTION_BILLED_BY))
        raise ValueError(f"the fake does not know how {model!r} transcriptions are billed (known: {known})")
    if billed_by == "duration":
        return {"type": "duration", "seconds": seconds}
    return transcription_tokens_usage(audio_in=audio_tokens, text_out=text_out)


def transcription_completed(
    item_id: str,
    transcript: str,
    model: str = DEFAULT_TRANSCRIPTION_MODEL,
    *,
    seconds: float = 1.0,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A transcript of `item_id` by `model`; its required `usage` in that model's shape
    (`transcription_usage`) unless `usage` is given."""
    return {
        "type": "conversation.item.input_audio_transcription.completed",
        "item_id": item_id,
        "content_index": 0,
        "transcript": transcript,
        "usage": usage if usage is not None else transcription_usage(model, seconds),
    }


def transcription_tokens_usage(audio_in: int = 40, text_in: int = 0, text_out: int = 8) -> dict[str, Any]:
    """A token-billed transcription's `usage` (conversation_item_input_audio_transcription_
    completed_event.py `UsageTranscriptTextUsageTokens`)."""
    return {
        "type": "tokens",
        "input_tokens": audio_in + text_in,
        "input_token_details": {"audio_tokens": audio_in, "text_tokens": text_in},
        "output_tokens": text_out,
        "total_tokens": audio_in + text_in + text_out,
    }


def transcription_failed(item_id: str, message: str = "transcription failed") -> dict[str, Any]:
    return {
        "type": "conversation.item.input_audio_transcription.failed",
        "item_id": item_id,
        "content_index": 0,
        "error": {"type": "transcription_error", "code": "audio_unintelligible", "message": message},
    }
