"""Strict validators built from the `openai` package's own request types.

The package describes what a client may send as TypedDicts (`openai.types.chat`,
`openai.types.realtime`). Pydantic's `TypeAdapter` accepts them, but by default it ignores
unknown keys (the real service rejects them: "Unknown parameter") and checks `Iterable[...]`
fields lazily. So the adapter's core schema is rewritten before use: every typed dict forbids
extra keys and every iterable is checked eagerly as a list.

Unions are dispatched on their discriminating key (`type` for realtime events and tools, `role`
for chat messages) so an error names the one member that was meant, not all of them.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import SchemaValidator


def _strict_schema(node: Any) -> Any:
    if isinstance(node, dict):
        out = {key: _strict_schema(value) for key, value in node.items()}
        if out.get("type") == "typed-dict":
            out["extra_behavior"] = "forbid"
        elif out.get("type") == "generator":
            out = {"type": "list", "items_schema": out.get("items_schema", {"type": "any"})}
        return out
    if isinstance(node, list):
        return [_strict_schema(value) for value in node]
    return node


def strict_validator(tp: Any) -> SchemaValidator:
    """A validator for `tp` that forbids unknown keys and checks iterables eagerly."""
    return SchemaValidator(_strict_schema(TypeAdapter(tp).core_schema))


def _literal_values(annotation: Any) -> list[str]:
    """The string literals inside `Required[Literal[...]]` and friends."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return [value for value in typing.get_args(annotation) if isinstance(value, str)]
    values: list[str] = []
    for arg in typing.get_args(annotation):
        values.extend(_literal_values(arg))
    return values


class UnionChecker:
    """Checks a dict against the member of a TypedDict union named by its `key` field."""

    def __init__(self, union: Any, key: str, what: str) -> None:
        self.key = key
        self.what = what
        self._by_tag: dict[str, SchemaValidator] = {}
        members = typing.get_args(union) or (union,)
        for member in members:
            hints = typing.get_type_hints(member, include_extras=True)
            for tag in _literal_values(hints.get(key)):
                self._by_tag[tag] = strict_validator(member)

    @property
    def tags(self) -> list[str]:
        return sorted(self._by_tag)

    def problem(self, value: Any, where: str) -> str | None:
        """None when valid, else a one-paragraph explanation naming `where`."""
        if not isinstance(value, dict):
            return f"{where}: {self.what} must be a JSON object, got {type(value).__name__}"
        tag = value.get(self.key)
        validator = self._by_tag.get(tag) if isinstance(tag, str) else None
        if validator is None:
            return f"{where}: unknown {self.what} {self.key}={tag!r} (known: {', '.join(self.tags)})"
        try:
            validator.validate_python(value)
        except ValidationError as exc:
            details = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
            )
            return f"{where}: invalid {self.what} {tag!r}: {details}"
        return None
