"""One chat-completions call of a player mind (the openai and agent minds alike), with the
endpoint's faults turned into :class:`MindFailed` sentences a person can act on — naming the
endpoint, never the key — and what the call cost (its bytes, the tokens the endpoint reported).

A 2xx answer is read as a chat completion only when it is one: a JSON object whose ``choices``
is a list of choices with a message. Anything else (an HTML page from a proxy or a captive
portal, plain text, JSON without ``choices``, a body labelled JSON that does not parse) is an
:class:`UnexpectedAnswer` naming the endpoint, the status and the content type."""

from __future__ import annotations

from typing import Any

import openai
import orjson
from openai import AsyncOpenAI

from bot.config import Settings
from bot.play.decision import InvalidDecision, MindFailed, PermanentMindFailure, UnexpectedAnswer
from bot.play.minds.base import Cost


def client_from_settings(settings: Settings, mind: str) -> AsyncOpenAI:
    key = settings.openai.api_key.get_secret_value() if settings.openai.api_key else None
    if not key and not settings.openai.base_url:
        raise RuntimeError(f"the {mind} mind needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local endpoint)")
    return AsyncOpenAI(
        api_key=key or "unused",
        base_url=settings.openai.base_url,
        timeout=settings.openai.timeout_s,
        max_retries=settings.openai.max_retries,
    )


def endpoint_of(client: AsyncOpenAI) -> str:
    """The endpoint's address as a person would check it (no credentials, no query)."""
    url = client.base_url
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}".rstrip("/")


def status_failure(status: int, endpoint: str, model: str) -> MindFailed:
    """An HTTP error as a mind failure. 401/403 (the key is refused) and 404 (no such model, or
    no chat-completions route at that address) cannot heal by retrying: they end play. Every
    other status (429, 5xx, …) is transient and the loop backs off. The server's own message
    is left out: for a refused key it quotes part of the key."""
    where = f"the model endpoint {endpoint} answered HTTP {status}"
    if status in (401, 403):
        return PermanentMindFailure(f"{where} (check OPENAI_API_KEY)")
    if status == 404:
        return PermanentMindFailure(
            f"{where}: it has no model {model[:80]!r} (check [openai] model and OPENAI_BASE_URL)"
        )
    return MindFailed(where)


def timeout_failure(client: AsyncOpenAI, endpoint: str) -> MindFailed:
    """A request that had no answer within the client's timeout, on every try."""
    timeout = client.timeout
    seconds = timeout if isinstance(timeout, (int, float)) else getattr(timeout, "read", None)
    within = f" within {seconds:g} s" if isinstance(seconds, (int, float)) else ""
    tries = client.max_retries + 1
    return MindFailed(
        f"the model endpoint {endpoint} did not answer in time (nothing{within}, "
        f"{tries} {'try' if tries == 1 else 'tries'}; [openai] timeout_s and max_retries)"
    )


def _where(response: Any, endpoint: str) -> str:
    """The endpoint, and the address a redirect took the request to (no query: it may hold a
    token), for a person to check."""
    url = getattr(response, "url", None)
    if not getattr(response, "history", None) or url is None:
        return endpoint
    port = f":{url.port}" if url.port else ""
    return f"{endpoint} (redirected to {url.scheme}://{url.host}{port}{url.path})"


def unexpected_answer(response: Any, endpoint: str, what: str) -> UnexpectedAnswer:
    """A 2xx answer that is not a chat completion, named by where, its status and its content
    type (the body is left out: what a login page or a proxy says is nobody's business in a log)."""
    kind = str(response.headers.get("content-type") or "no content type")[:80]
    return UnexpectedAnswer(
        f"the model endpoint {_where(response, endpoint)} answered HTTP {response.status_code} with "
        f"{kind}, {what} (a proxy, captive portal or login page in the way, or the wrong address? "
        "check OPENAI_BASE_URL)"
    )


def _not_a_completion(response: Any) -> str | None:
    """Why a 2xx body is not a chat completion (None: it is one, as far as a mind reads it)."""
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
    if not all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices):
        return "JSON whose choices hold no message, not a chat completion"
    return None


async def complete(client: AsyncOpenAI, body: dict[str, Any], cost: Cost) -> Any:
    """``client.chat.completions.create(**body)``, its bytes and reported tokens added to
    ``cost``; every fault of the endpoint is a MindFailed (a PermanentMindFailure when retrying
    cannot heal it, an UnexpectedAnswer when a 2xx body is not a chat completion)."""
    endpoint = endpoint_of(client)
    cost.sent(len(orjson.dumps(body)))
    try:
        raw = await client.chat.completions.with_raw_response.create(**body)
    except openai.APITimeoutError as exc:
        raise timeout_failure(client, endpoint) from exc
    except openai.APIStatusError as exc:
        raise status_failure(exc.status_code, endpoint, str(body.get("model", ""))) from exc
    except openai.APIConnectionError as exc:
        raise MindFailed(f"cannot reach the model endpoint {endpoint} ({exc})") from exc
    except openai.APIError as exc:
        raise MindFailed(f"the model endpoint failed: {type(exc).__name__}: {exc}") from exc
    response = raw.http_response
    if (why := _not_a_completion(response)) is not None:
        raise unexpected_answer(response, endpoint, why)
    try:
        completion = raw.parse()
    except ValueError as exc:  # checked above; the SDK's own reading of the body refused it still
        raise unexpected_answer(
            response, endpoint, f"a body the client cannot read ({type(exc).__name__})"
        ) from exc
    cost.answered(getattr(completion, "usage", None))
    return completion


async def complete_message(client: AsyncOpenAI, body: dict[str, Any], cost: Cost) -> Any:
    """:func:`complete`, then the answer's first message; an answer with no choices, or a
    refusal, is an InvalidDecision."""
    completion = await complete(client, body, cost)
    if not completion.choices:
        raise InvalidDecision("the model returned no choices")
    message = completion.choices[0].message
    if getattr(message, "refusal", None):
        raise InvalidDecision(f"the model refused: {message.refusal}"[:400])
    return message
