"""The chat-completions rule on tool-call order, and the API's 400 when a request breaks it.

An assistant message with `tool_calls` must be followed by one `tool` message per call id,
before any other message: "An assistant message with 'tool_calls' must be followed by tool
messages responding to each 'tool_call_id'. The following tool_call_ids did not have response
messages: call_…" (as reported from api.openai.com in aliasrobotics/cai#111 and
BerriAI/litellm#10083); and a `tool` message must answer such a call: "Invalid parameter:
messages with role 'tool' must be a response to a preceeding message with 'tool_calls'." (the
API's own spelling). Both are HTTP 400 `invalid_request_error` with `param: "messages"`.
"""

from __future__ import annotations

from typing import Any


def sequence_problem(messages: Any) -> str | None:
    if not isinstance(messages, list):
        return None
    waiting: list[str] = []  # call ids of the last assistant message not answered yet
    answerable: set[str] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in answerable:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'."
                )
            answerable.discard(call_id)
            if call_id in waiting:
                waiting.remove(call_id)
            continue
        if waiting:
            break
        answerable = set()
        if role == "assistant":
            ids = [c.get("id") for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            waiting = [i for i in ids if isinstance(i, str)]
            answerable = set(waiting)
    if waiting:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding to "
            "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            + ", ".join(waiting)
        )
    return None
