"""JSON schema of a tool's argument model, made strict for function calling: no titles, no
``$ref`` (definitions inlined), every object closed (``additionalProperties: false``) and every
property listed in ``required`` (optional values are nullable, not omitted)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_DROP = {"title", "default", "examples"}


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.pop("$defs", {})
    raw.pop("description", None)  # the model's docstring is for programmers, not the model
    out = _clean(raw, defs, depth=0)
    if not isinstance(out, dict) or out.get("type") != "object":
        raise TypeError(f"{model.__name__}: a tool's arguments must be an object schema")
    return out


def _clean(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if depth > 32:
        raise TypeError("tool argument schema nests too deeply (recursive model?)")
    if isinstance(node, list):
        return [_clean(item, defs, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in defs:
            raise TypeError(f"tool argument schema refers to unknown definition {ref!r}")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _clean(value, defs, depth + 1)
    if out.get("type") == "object":
        props = out.setdefault("properties", {})
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out
