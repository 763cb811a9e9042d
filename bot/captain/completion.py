"""One chat-completions request read as a chat completion, for the captain's consult and the
player minds alike (:mod:`bot.captain.engine`, :mod:`bot.play.minds.endpoint`).

A 2xx answer is read as a chat completion only when it is one: a JSON object whose ``choices``
is a non-empty list of choices with a message. Anything else (an HTML page from a proxy or a captive
portal, plain text, JSON without ``choices``, a body labelled JSON that does not parse) is
:class:`NotACompletion`, and so is HTTP 511 Network Authentication Required (RFC 6585 §6: the
status a captive portal answers with in place of the server asked), each naming the endpoint,
the status and the content type — never the body (what a login page or a proxy says is nobody's
business in a log) and never the key."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import orjson
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from bot import metrics
from bot.usage.scope import record_chat

NETWORK_AUTHENTICATION_REQUIRED = 511
"""RFC 6585 §6: "the client needs to authenticate to gain network access" — sent by the
network in the way (a captive portal), not by the server asked."""


class NotACompletion(Exception):
    """Something other than a model endpoint answered at its address; ``str()`` is a sentence a
    person can act on, naming the endpoint, the status and the content type."""


def endpoint_of(client: Any) -> str:
    """The endpoint's address as a person would check it (no credentials, no query)."""
    url = client.base_url
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}".rstrip("/")


def _where(response: Any, endpoint: str) -> str:
    """The endpoint, and the address a redirect took the request to (no query: it may hold a
    token), for a person to check."""
    url = getattr(response, "url", None)
    if not getattr(response, "history", None) or url is None:
        return endpoint
    port = f":{url.port}" if url.port else ""
    return f"{endpoint} (redirected to {url.scheme}://{url.host}{port}{url.path})"


def not_a_completion(response: Any, endpoint: str, what: str) -> NotACompletion:
    """An answer that is not a chat completion, named by where, its status and content type."""
    kind = str(response.headers.get("content-type") or "no content type")[:80]
    return NotACompletion(
        f"the model endpoint {_where(response, endpoint)} answered HTTP {response.status_code} with "
        f"{kind}, {what} (a proxy, captive portal or login page in the way, or the wrong address? "
        "check OPENAI_BASE_URL)"
    )


def _why_not(response: Any) -> str | None:
    """Why a 2xx body is not a chat completion (None: it is one, as far as a caller reads it)."""
    try:
        data = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        labelled = "json" in str(response.headers.get("content-type", "")).lower()
        return "a body that does not parse as JSON" if labelled else "not a chat completion"
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not a chat completion"
    choices = data.get("choices")
    if not isinstance(choices, list):
        keys = ", ".join(sorted(str(k)[:40] for k in data)[:6]) or "none"
        return f"JSON without choices (its keys: {keys}), not a chat completion"
    if not choices:  # nothing to read: no answer at all, whatever else the body says
        return "JSON whose choices are empty, not a chat completion"
    if not all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices):
        return "JSON whose choices hold no message, not a chat completion"
    return None


def failure_kind(exc: BaseException) -> str:
    """A failed request's kind for the metrics (:data:`bot.metrics.MODEL_FAILURE_KINDS`)."""
    if isinstance(exc, NotACompletion):
        return "unexpected"
    if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return "429" if status == 429 else "5xx" if status >= 500 else "refused"
    return "unexpected"


async def create(client: Any, body: CompletionCreateParamsNonStreaming) -> Any:
    """``client.chat.completions.create(**body)``, read only when the answer is a chat
    completion: anything else is :class:`NotACompletion`. The SDK's own errors (timeouts,
    connections, other HTTP statuses) pass through for the caller to name. Its time, failure
    kind and reported tokens go to :mod:`bot.metrics`, its ``usage`` to the usage ledger of the
    scope it runs in (:func:`bot.usage.scope.counting`: a play session's, a consult's)."""
    started = metrics.now()
    try:
        completion = await _create(client, body)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        metrics.model_request(metrics.now() - started, failure_kind(exc))
        raise
    metrics.model_request(metrics.now() - started)
    usage = getattr(completion, "usage", None)
    metrics.model_tokens(getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
    record_chat(str(body.get("model", "")), usage)  # the ledger of whoever runs this call
    return completion


def as_sent(body: CompletionCreateParamsNonStreaming) -> dict[str, Any]:
    """``create``'s arguments for ``body``, sent as it is. The SDK walks every message and tool
    schema of a request against its TypedDicts before sending (``async_maybe_transform``: 10–60 ms
    for a text-lane reply's request on a 2-core VM, bench/text.py), and for chat-completions
    parameters that walk changes nothing (no aliased or formatted field:
    tests/captain/test_completion_body.py holds it to that), so everything but the model goes in
    ``extra_body``, which the SDK sends as given (``messages`` is required by name; the empty one
    is replaced by the body's)."""
    rest = {key: value for key, value in body.items() if key != "model"}
    return {"model": body["model"], "messages": (), "extra_body": rest}


async def _create(client: Any, body: CompletionCreateParamsNonStreaming) -> Any:
    endpoint = endpoint_of(client)
    try:
        raw = await client.chat.completions.with_raw_response.create(**as_sent(body))
    except openai.APIStatusError as exc:
        if exc.status_code != NETWORK_AUTHENTICATION_REQUIRED:
            raise
        raise not_a_completion(
            exc.response, endpoint, "Network Authentication Required: the network wants a sign-in first"
        ) from exc
    response = raw.http_response
    if (why := _why_not(response)) is not None:
        raise not_a_completion(response, endpoint, why)
    try:
        return raw.parse()
    except ValueError as exc:  # checked above; the SDK's own reading of the body refused it still
        raise not_a_completion(
            response, endpoint, f"a body the client cannot read ({type(exc).__name__})"
        ) from exc
