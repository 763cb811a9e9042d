"""JSON schemas made strict for OpenAI's structured outputs (``strict: true``), for tool
arguments and for a mind's structured decision alike.

Strict mode accepts only a subset of JSON Schema (OpenAI, "Structured Outputs — supported
schemas"): the root is an object; every object lists all its properties in ``required`` and sets
``additionalProperties: false`` (an optional value is nullable, never omitted); unions are
``anyOf`` (never ``oneOf``); strings may carry ``pattern``/``format``, numbers
``minimum``/``maximum``/``multipleOf``, arrays ``minItems``/``maxItems`` — and nothing else
(no ``default``, ``minLength``, ``maxLength``, ``discriminator``, …). So this conversion inlines
definitions, turns ``oneOf`` into ``anyOf`` and ``const`` into a one-value ``enum``, drops
annotations the model need not see, and moves each length limit it drops into the property's
description, where the model still reads it; the pydantic model behind the schema enforces it
when the call arrives.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from bot.tools.wire_types import JSONObject, JSONView

_DROP = frozenset({"title", "default", "examples", "discriminator", "$schema", "readOnly", "writeOnly"})
_LIMITS = frozenset({"minLength", "maxLength", "minProperties", "maxProperties", "uniqueItems"})
MAX_DEPTH = 32


def strict_schema(model: type[BaseModel], *, keep_limits: bool = False) -> JSONObject:
    """The strict schema of a tool's argument model (an object). ``keep_limits`` keeps the length
    keywords as they are, for a format with no strict mode (the Realtime API's tools)."""
    raw = model.model_json_schema()
    raw.pop("description", None)  # the model's docstring is for programmers, not the model
    out = strict_json_schema(raw, keep_limits=keep_limits)
    if out.get("type") != "object":
        raise TypeError(f"{model.__name__}: a tool's arguments must be an object schema")
    return out


def strict_json_schema(raw: JSONView, *, keep_limits: bool = False) -> JSONObject:
    """A strict-mode copy of ``raw`` (its ``$defs`` inlined); ``raw`` is left as it was."""
    raw = dict(raw)
    defs = raw.pop("$defs", {})
    if not isinstance(defs, dict):
        raise TypeError("a JSON schema's $defs must be an object")
    out = _clean(raw, defs, 0, frozenset() if keep_limits else _LIMITS)
    if not isinstance(out, dict):
        raise TypeError("a JSON schema must be an object")
    return out


def _limits(node: JSONView) -> list[str]:
    """What a dropped keyword said, in words for the description."""
    said: list[str] = []
    low, high = node.get("minLength"), node.get("maxLength")
    if low is not None and high is not None:
        said.append(f"{low}–{high} characters")
    elif high is not None:
        said.append(f"at most {high} characters")
    elif low is not None:
        said.append(f"at least {low} characters")
    low, high = node.get("minProperties"), node.get("maxProperties")
    if low is not None:
        said.append(f"at least {low} entries")
    if high is not None:
        said.append(f"at most {high} entries")
    if node.get("uniqueItems") is True:
        said.append("no repeated items")
    default = node.get("default")
    if default is not None and not isinstance(default, (dict, list)):
        said.append(f"usually {json.dumps(default)}")
    return said


def _clean(node: object, defs: JSONView, depth: int, drop: frozenset[str]) -> object:
    if depth > MAX_DEPTH:
        raise TypeError("schema nests too deeply (recursive model?)")
    if isinstance(node, list):
        return [_clean(item, defs, depth + 1, drop) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in defs:
            raise TypeError(f"schema refers to unknown definition {ref!r}")
        found = defs[name]
        if not isinstance(found, dict):
            raise TypeError(f"schema definition {name!r} is not an object")
        merged = {**found, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs, depth + 1, drop)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:  # pydantic's wrapper for a described $ref
        merged = {**all_of[0], **{k: v for k, v in node.items() if k != "allOf"}}
        return _clean(merged, defs, depth + 1, drop)
    out: JSONObject = {}
    limits = _limits(node) if drop else []
    for key, value in node.items():
        if key in _DROP or key in drop:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, depth + 1, drop) for name, sub in value.items()}
        elif key == "oneOf":
            out["anyOf"] = _clean(value, defs, depth + 1, drop)
        elif key == "const":
            out["enum"] = [value]
        else:
            out[key] = _clean(value, defs, depth + 1, drop)
    if limits:
        said = out.get("description")
        out["description"] = (f"{said} " if said else "") + f"({', '.join(limits)})"
    if out.get("type") == "object" or "properties" in out:
        props = out.setdefault("properties", {})
        if not isinstance(props, dict):
            raise TypeError("a schema's properties must be an object")
        out["type"] = "object"
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out
