"""One chat-completions call of a player mind (the openai and agent minds alike), with the
endpoint's faults turned into :class:`MindFailed` sentences a person can act on — naming the
endpoint, never the key — and what the call cost (its bytes, the tokens the endpoint reported).

An answer that is not a chat completion (a 2xx that is an HTML page from a proxy or a captive
portal, plain text, JSON without ``choices``, a body labelled JSON that does not parse; HTTP 511
Network Authentication Required) is an :class:`UnexpectedAnswer` naming the endpoint, the status
and the content type — the captain's consult reads its answers the same way
(:mod:`bot.captain.completion`)."""

from __future__ import annotations

from typing import Any

import openai
import orjson
from openai import AsyncOpenAI
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from bot.captain.completion import NotACompletion, create, endpoint_of
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


def status_failure(status: int, endpoint: str, model: str) -> MindFailed:
    """An HTTP error as a mind failure. 401/403 (the key is refused) and 404 (no such model, or
    no chat-completions route at that address) cannot heal by retrying: they end play. 511 never
    comes here (a captive portal: an UnexpectedAnswer, :func:`bot.captain.completion.create`). Every
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


async def complete(client: AsyncOpenAI, body: CompletionCreateParamsNonStreaming, cost: Cost) -> Any:
    """``client.chat.completions.create(**body)``, its bytes and reported tokens added to
    ``cost``; every fault of the endpoint is a MindFailed (a PermanentMindFailure when retrying
    cannot heal it, an UnexpectedAnswer when the answer is not a chat completion)."""
    endpoint = endpoint_of(client)
    cost.sent(len(orjson.dumps(body)))
    try:
        completion = await create(client, body)
    except NotACompletion as exc:
        raise UnexpectedAnswer(str(exc)) from exc
    except openai.APITimeoutError as exc:
        raise timeout_failure(client, endpoint) from exc
    except openai.APIStatusError as exc:
        raise status_failure(exc.status_code, endpoint, str(body.get("model", ""))) from exc
    except openai.APIConnectionError as exc:
        raise MindFailed(f"cannot reach the model endpoint {endpoint} ({exc})") from exc
    except openai.APIError as exc:
        raise MindFailed(f"the model endpoint failed: {type(exc).__name__}: {exc}") from exc
    cost.answered(getattr(completion, "usage", None))
    return completion


async def complete_message(client: AsyncOpenAI, body: CompletionCreateParamsNonStreaming, cost: Cost) -> Any:
    """:func:`complete`, then the answer's first message (one there is: an answer with no choices
    is an UnexpectedAnswer); a refusal is an InvalidDecision."""
    completion = await complete(client, body, cost)
    message = completion.choices[0].message
    if getattr(message, "refusal", None):
        raise InvalidDecision(f"the model refused: {message.refusal}"[:400])
    return message
