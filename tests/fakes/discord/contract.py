"""Validate REST request bodies against Discord's OpenAPI description (discord-openapi.json).

The spec file sits next to this module (MIT, see discord-openapi.LICENSE). An operation is found
by HTTP method + path template (literal segments beat `{param}` segments, so `/users/@me` wins
over `/users/{user_id}`); its `requestBody` JSON schema is checked with jsonschema (draft 2020-12,
which OpenAPI 3.1 uses). Multipart bodies are checked through their `payload_json` part.

Two deliberate deviations: discord.py 2.7 sends `attachments[].id` (in interaction callbacks
`data.attachments[].id`) as an integer, the index of the uploaded file, and `recipient_id` when
it opens a DM (`POST /users/@me/channels`) as an integer, where the spec says snowflake string;
such ids are turned into strings before validation; so are the ids it sends as integers in a
message's `message_reference` (`message_id`, `channel_id`, `guild_id`: discord.py 2.7
`MessageReference.to_dict`) and `allowed_mentions` (`users`, `roles`: `AllowedMentions.to_dict`),
which Discord accepts as numbers. Nothing else is relaxed.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

SPEC_PATH = Path(__file__).with_name("discord-openapi.json")


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    operation_id: str
    params: dict[str, str]


@dataclass(frozen=True)
class Violation:
    """A request the real Discord API would reject or that the spec does not describe."""

    method: str
    path: str
    operation: str
    errors: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.operation}): " + "; ".join(self.errors)


class Contract:
    def __init__(self, spec_path: Path = SPEC_PATH) -> None:
        with spec_path.open("rb") as fh:
            self.spec: dict[str, Any] = json.load(fh)
        self._templates: list[tuple[str, list[str]]] = [
            (template, template.strip("/").split("/")) for template in self.spec["paths"]
        ]

    def find(self, method: str, path: str) -> Operation | None:
        """The spec operation for `method path` (path relative to /api/v10), or None."""
        segments = path.strip("/").split("/")
        best: tuple[int, str, dict[str, str]] | None = None
        for template, parts in self._templates:
            if len(parts) != len(segments):
                continue
            params: dict[str, str] = {}
            literal = 0
            for part, seg in zip(parts, segments, strict=True):
                if part.startswith("{") and part.endswith("}"):
                    params[part[1:-1]] = seg
                elif part == seg:
                    literal += 1
                else:
                    break
            else:
                if method.lower() in self.spec["paths"][template] and (best is None or literal > best[0]):
                    best = (literal, template, params)
        if best is None:
            return None
        _, template, params = best
        op = self.spec["paths"][template][method.lower()]
        return Operation(method.upper(), template, op.get("operationId", template), params)

    @functools.cache  # noqa: B019 - one Contract per process, cache lives as long as it
    def _validator(self, method: str, template: str) -> jsonschema.protocols.Validator | None:
        op = self.spec["paths"][template][method.lower()]
        body = op.get("requestBody")
        if body is None:
            return None
        schema = body["content"].get("application/json", {}).get("schema")
        if schema is None:
            return None
        # Keep the spec's components beside the schema so "#/components/..." refs resolve.
        root = {"allOf": [schema], "components": self.spec["components"]}
        cls = jsonschema.validators.validator_for(root, default=jsonschema.Draft202012Validator)
        return cls(root)

    @functools.cache  # noqa: B019 - one Contract per process, cache lives as long as it
    def _answer_validator(self, method: str, template: str, status: str) -> jsonschema.protocols.Validator:
        op = self.spec["paths"][template][method.lower()]
        schema = op["responses"][status]["content"]["application/json"]["schema"]
        root = {"allOf": [schema], "components": self.spec["components"]}
        cls = jsonschema.validators.validator_for(root, default=jsonschema.Draft202012Validator)
        return cls(root)

    def check_answer(self, op: Operation, status: int, body: Any) -> tuple[str, ...]:
        """Problems of an answer the fake gave against the operation's response schema for
        ``status`` (for checking the fake itself; () when it conforms)."""
        responses = self.spec["paths"][op.template][op.method.lower()]["responses"]
        if str(status) not in responses:
            return (f"the spec has no {status} answer for {op.operation_id}",)
        validator = self._answer_validator(op.method, op.template, str(status))
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        return tuple(_describe(e) for e in errors)

    def body_required(self, op: Operation) -> bool:
        body = self.spec["paths"][op.template][op.method.lower()].get("requestBody")
        return bool(body and body.get("required"))

    def check(self, op: Operation, path: str, body: Any, *, has_body: bool) -> Violation | None:
        """Validate one request body; None when it conforms."""
        validator = self._validator(op.method, op.template)
        if validator is None:
            if has_body and body not in (None, {}, b""):
                return Violation(op.method, path, op.operation_id, ("operation takes no request body",))
            return None
        if not has_body:
            if self.body_required(op):
                return Violation(op.method, path, op.operation_id, ("request body is required",))
            return None
        errors = sorted(validator.iter_errors(tolerate_discordpy(body)), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        return Violation(op.method, path, op.operation_id, tuple(_describe(e) for e in errors))


def tolerate_discordpy(body: Any) -> Any:
    """Apply the documented deviations: integer attachment ids become strings, in a message
    body's `attachments` and an interaction callback's `data.attachments`, and so does a DM's
    integer `recipient_id`, and a message's integer `message_reference` and `allowed_mentions`
    ids. Returns a copy."""
    if not isinstance(body, dict):
        return body
    fixed = copy.deepcopy(body)
    if type(fixed.get("recipient_id")) is int:
        fixed["recipient_id"] = str(fixed["recipient_id"])
    reference = fixed.get("message_reference")
    if isinstance(reference, dict):
        for key in ("message_id", "channel_id", "guild_id"):
            if type(reference.get(key)) is int:
                reference[key] = str(reference[key])
    allowed = fixed.get("allowed_mentions")
    if isinstance(allowed, dict):
        for key in ("users", "roles"):
            if isinstance(allowed.get(key), list):
                allowed[key] = [str(v) if type(v) is int else v for v in allowed[key]]
    for holder in (fixed, fixed.get("data")):
        if isinstance(holder, dict) and isinstance(holder.get("attachments"), list):
            for item in holder["attachments"]:
                if isinstance(item, dict) and type(item.get("id")) is int:
                    item["id"] = str(item["id"])
    return fixed


def _describe(error: jsonschema.ValidationError) -> str:
    """Say where and what; for anyOf unions, report the branch the body most nearly matched
    (its `type` discriminator fits, it failed deepest, with the fewest errors)."""
    while error.context:
        branches: dict[Any, list[jsonschema.ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)

        def score(errs: list[jsonschema.ValidationError]) -> tuple[bool, int, int]:
            wrong_kind = any(list(e.relative_path) == ["type"] for e in errs)
            depth = max(len(e.absolute_path) + len(e.context) for e in errs)
            return (wrong_kind, -depth, len(errs))

        nearest = min(branches.values(), key=score)
        error = max(nearest, key=lambda e: len(e.absolute_path))
    where = "/".join(str(p) for p in error.absolute_path) or "<body>"
    return f"at {where}: {error.message[:300]}"


@functools.cache
def default_contract() -> Contract:
    """The spec is ~1 MB; load it once per test process."""
    return Contract()
