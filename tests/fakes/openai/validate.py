"""Strict validators built from the `openai` package's own request types.

The package describes what a client may send as TypedDicts (`openai.types.chat`,
`openai.types.realtime`). Pydantic's `TypeAdapter` accepts them, but by default it ignores
unknown keys (the real service rejects them: "Unknown parameter") and checks `Iterable[...]`
fields lazily. So the adapter's core schema is rewritten before use: every typed dict forbids
extra keys and every iterable is checked eagerly as a list.

Unions are dispatched on their discriminating key (`type` for realtime events and tools, `role`
for chat messages) so an error names the one member that was meant, not all of them.

What the service sends is described as pydantic models (`openai.types.realtime.RealtimeServerEvent`,
`openai.types.chat.ChatCompletion`), whose base class allows extra keys (`openai/_models.py`:
`extra="allow"`, so a client keeps working when the API adds a field). A fake must not lean on
that: a misspelled `input_token_detials` would pass and the code under test would read `None`.
`ModelChecker` validates with the models and then refuses every key, at any depth, that the
model chosen for that place has no field for — in the whole object, or only inside the fields
of one name (`usage`) where the package's types describe all the service sends: its session
types, say, lack the `id` and `object` the GA service puts in `session.created`.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
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


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """The JSON keys of `model`, each to its attribute name (an alias is the key when there is one)."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        names[alias or name] = name
    return names


def unknown_keys(raw: Any, parsed: Any, path: str = "", under: str | None = None) -> list[str]:
    """The keys of `raw` (JSON as sent) for which the model that `parsed` was validated into has
    no field, at any depth, each as a dotted path (`usage.input_token_detials`). `under`: only
    those inside a field of that name (anywhere), the rest let through."""
    found: list[str] = []
    if isinstance(parsed, BaseModel) and isinstance(raw, dict):
        names = _field_names(type(parsed))
        for key, value in raw.items():
            where = f"{path}.{key}" if path else str(key)
            name = names.get(key)
            if name is None:
                if under is None:
                    found.append(where)
            else:
                inner = None if key == under else under
                found.extend(unknown_keys(value, getattr(parsed, name), where, inner))
    elif isinstance(parsed, list) and isinstance(raw, list):
        for i, (item_raw, item) in enumerate(zip(raw, parsed, strict=False)):
            found.extend(unknown_keys(item_raw, item, f"{path}[{i}]", under))
    elif isinstance(parsed, dict) and isinstance(raw, dict):  # a mapping field: its values
        for key, value in raw.items():
            where = f"{path}.{key}" if path else str(key)
            found.extend(unknown_keys(value, parsed.get(key), where, under))
    return found


class ModelChecker:
    """Checks a dict against a pydantic model (or a union of them) of the `openai` package,
    with unknown keys refused at every depth — or, with `under`, at every depth inside a field
    of that name (where the package's type is known to hold all the service sends)."""

    def __init__(self, tp: Any, what: str, under: str | None = None, key: str = "type") -> None:
        self.what = what
        self.under = under
        self.key = key
        self._adapter: TypeAdapter[Any] = TypeAdapter(tp)
        # a union's members by their `key` literal, so an error names the member meant
        self._by_tag: dict[str, TypeAdapter[Any]] = {}
        union = typing.get_args(tp)[0] if typing.get_origin(tp) is typing.Annotated else tp
        for member in typing.get_args(union):
            info = (
                member.model_fields.get(key)
                if isinstance(member, type) and issubclass(member, BaseModel)
                else None
            )
            for tag in _literal_values(info.annotation) if info is not None else []:
                self._by_tag[tag] = TypeAdapter(member)

    def problem(self, value: Any, where: str) -> str | None:
        """None when valid, else one paragraph naming `where` and what was wrong."""
        tag = value.get(self.key) if isinstance(value, dict) else None
        adapter = self._by_tag.get(tag, self._adapter) if isinstance(tag, str) else self._adapter
        try:
            parsed = adapter.validate_python(value)
        except ValidationError as exc:
            details = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
            )
            return f"{where}: invalid {self.what}: {details[:1500]}"
        unknown = unknown_keys(value, parsed, under=self.under)
        if unknown:
            return f"{where}: {self.what} has keys the API does not send: {', '.join(unknown)}"
        return None
