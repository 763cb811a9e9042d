"""The parts of Clankie that call a model, the kinds of tokens a call is billed for, and how
each endpoint's own ``usage`` object reads as counts of those kinds.

The shapes read here are the ``openai`` package's types:

- chat completions (``openai/types/completion_usage.py`` ``CompletionUsage``): ``prompt_tokens``
  (cached included), ``prompt_tokens_details.cached_tokens``, ``completion_tokens``;
- a realtime ``response.done`` (``openai/types/realtime/realtime_response_usage.py`` and its
  ``_input_token_details``/``_output_token_details``): ``input_token_details`` text/audio/image
  tokens with ``cached_tokens`` (and ``cached_tokens_details`` text/audio/image) a subset of them,
  ``output_token_details`` text/audio tokens;
- input audio transcription
  (``openai/types/realtime/conversation_item_input_audio_transcription_completed_event.py``
  ``usage``): ``{"type": "tokens", input_tokens, input_token_details{text,audio}, output_tokens}``
  or ``{"type": "duration", "seconds"}``.

Each reads as uncached and cached counts apart, because they are priced apart: ``input`` and
``input_cached`` (text), ``input_audio`` and ``input_audio_cached``, ``input_image`` and
``input_image_cached``, ``output`` (text), ``output_audio``, and ``audio_ms`` (milliseconds of audio,
for a model billed by duration). ``calls`` counts the calls themselves (never priced)."""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

Part = Literal["voice", "transcription", "play", "consult", "text"]
PARTS: Final[tuple[Part, ...]] = get_args(Part)

Kind = Literal[
    "calls",
    "input",
    "input_cached",
    "input_audio",
    "input_audio_cached",
    "input_image",
    "input_image_cached",
    "output",
    "output_audio",
    "audio_ms",
]
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
TOKEN_KINDS: Final[tuple[Kind, ...]] = tuple(k for k in KINDS if k not in ("calls", "audio_ms"))

Counts = dict[str, int]
"""Counts by kind (only the kinds a call had); JSON as written in the ledger."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _counts(**kinds: int) -> Counts:
    counts: Counts = {"calls": 1}
    counts.update({k: v for k, v in kinds.items() if v > 0})
    return counts


def chat_counts(usage: Any) -> Counts | None:
    """A chat completion's ``usage`` (``CompletionUsage``) as counts; None when it has none."""
    if usage is None:
        return None
    prompt = _int(getattr(usage, "prompt_tokens", None))
    cached = _int(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None))
    cached = min(cached, prompt)
    output = _int(getattr(usage, "completion_tokens", None))
    return _counts(input=prompt - cached, input_cached=cached, output=output)


def realtime_counts(usage: Any) -> Counts | None:
    """A realtime ``response.done``'s ``response.usage`` (``RealtimeResponseUsage``) as counts.

    The cached tokens are a subset of the input tokens: by kind when the server breaks them
    down (``cached_tokens_details``), else all of them taken from the text first, then audio."""
    if usage is None:
        return None
    inputs = getattr(usage, "input_token_details", None)
    text = _int(getattr(inputs, "text_tokens", None))
    audio = _int(getattr(inputs, "audio_tokens", None))
    image = _int(getattr(inputs, "image_tokens", None))
    if inputs is None or not (text or audio or image):  # no breakdown: all of it is text
        text = _int(getattr(usage, "input_tokens", None))
    cached = _int(getattr(inputs, "cached_tokens", None))
    details = getattr(inputs, "cached_tokens_details", None)
    if details is not None:
        cached_text = min(_int(getattr(details, "text_tokens", None)), text)
        cached_audio = min(_int(getattr(details, "audio_tokens", None)), audio)
        cached_image = min(_int(getattr(details, "image_tokens", None)), image)
    else:
        cached_text = min(cached, text)
        cached_audio = min(cached - cached_text, audio)
        cached_image = min(cached - cached_text - cached_audio, image)
    outputs = getattr(usage, "output_token_details", None)
    out_text = _int(getattr(outputs, "text_tokens", None))
    out_audio = _int(getattr(outputs, "audio_tokens", None))
    if outputs is None or not (out_text or out_audio):
        out_text = _int(getattr(usage, "output_tokens", None))
    return _counts(
        input=text - cached_text,
        input_cached=cached_text,
        input_audio=audio - cached_audio,
        input_audio_cached=cached_audio,
        input_image=image - cached_image,
        input_image_cached=cached_image,
        output=out_text,
        output_audio=out_audio,
    )


def transcription_counts(usage: Any) -> Counts | None:
    """An input transcription's ``usage``: by tokens (``type: "tokens"``) or by duration
    (``type: "duration"``, seconds of audio kept as milliseconds)."""
    if usage is None:
        return None
    if getattr(usage, "type", None) == "duration":
        seconds = getattr(usage, "seconds", None)
        ms = round(seconds * 1000) if isinstance(seconds, (int, float)) and seconds > 0 else 0
        return _counts(audio_ms=ms)
    inputs = getattr(usage, "input_token_details", None)
    text = _int(getattr(inputs, "text_tokens", None))
    audio = _int(getattr(inputs, "audio_tokens", None))
    if not (text or audio):  # no breakdown: the input is the audio
        audio = _int(getattr(usage, "input_tokens", None))
    return _counts(input=text, input_audio=audio, output=_int(getattr(usage, "output_tokens", None)))


def tokens_of(counts: Counts) -> int:
    """All the tokens of some counts (calls and audio milliseconds are not tokens)."""
    return sum(v for k, v in counts.items() if k in TOKEN_KINDS)
