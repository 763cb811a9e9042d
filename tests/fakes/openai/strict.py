"""OpenAI's strict-mode rules for a JSON schema (structured outputs and function calling with
`strict: true`), and the error the API answers when a schema breaks them.

Written from OpenAI's "Structured Outputs" guide, section "Supported schemas" (mirrored for Azure
OpenAI, which "supports the same subset of the JSON Schema as OpenAI": Microsoft Foundry docs
"Structured outputs — JSON Schema support and limitations"):
- supported types: string, number, boolean, integer, object, array, enum, anyOf (and null in a
  union); "Root objects must not be anyOf" and the root must be an object;
- "All fields must be required": every key of `properties` is listed in `required`; an optional
  value is emulated with a union with null;
- "additionalProperties: false must always be set in objects";
- supported keywords beyond the type: strings `pattern`, `format` (date-time, time, date,
  duration, email, hostname, ipv4, ipv6, uuid); numbers `multipleOf`, `maximum`,
  `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; arrays `minItems`, `maxItems`; definitions
  (`$defs`, `$ref`) and recursion; `description`, `title`. Anything else (`oneOf`, `allOf`,
  `not`, `minLength`, `maxLength`, `default`, `discriminator`, `patternProperties`, …) is refused
  — with strict on, "unsupported schemas return an API error" (dottxt "providers comparison");
  `default` is refused by Azure ("'default' is not permitted", openai/openai-agents-python#4390);
- limits: up to 5000 object properties in total, up to 10 levels of nesting, at most 120 000
  characters of property names, definition names, enum and const values, at most 1000 enum
  values in total.

The error body mirrors what the API sends (HTTP 400, `invalid_request_error`):
`Invalid schema for response_format 'NAME': In context=('properties', 'x'), 'minLength' is not
permitted.` with `param: "response_format"` (dottxt-ai/outlines#844), and for a tool
`Invalid schema for function 'NAME': In context=(...), ...` with
`param: "tools[i].function.parameters"`, `code: "invalid_function_parameters"`
(567-labs/instructor#1074).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

TYPES = frozenset({"string", "number", "boolean", "integer", "object", "array", "null"})
COMMON = frozenset({"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs"})
BY_TYPE: dict[str, frozenset[str]] = {
    "string": frozenset({"pattern", "format"}),
    "number": frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}),
    "integer": frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "boolean": frozenset(),
    "null": frozenset(),
}
FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
MAX_PROPERTIES = 5000
MAX_NESTING = 10
MAX_STRING_CHARS = 120_000
MAX_ENUM_VALUES = 1000


@dataclass(frozen=True)
class Rejection:
    """The API's answer to a schema strict mode refuses."""

    message: str
    param: str
    code: str | None


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


class _Checker:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.properties = 0
        self.enum_values = 0
        self.chars = 0

    def problem(self) -> tuple[tuple[str, ...], str] | None:
        root = self.root
        if not isinstance(root, dict):
            return (), "schema must be a JSON Schema of 'type: \"object\"'"
        if _types(root) != ["object"] or any(k in root for k in ("anyOf", "oneOf", "allOf", "enum", "not")):
            got = root.get("type")
            return (), f"schema must be a JSON Schema of 'type: \"object\"', got 'type: {got}'"
        defs = root.get("$defs", {})
        if not isinstance(defs, dict):
            return ("$defs",), "'$defs' must be an object"
        for name, sub in defs.items():
            self.chars += len(name)
            found = self.node(sub, ("$defs", name), 0)
            if found:
                return found
        found = self.node(root, (), 0)
        if found:
            return found
        if self.properties > MAX_PROPERTIES:
            return (), f"too many object properties ({self.properties} > {MAX_PROPERTIES})"
        if self.enum_values > MAX_ENUM_VALUES:
            return (), f"too many enum values ({self.enum_values} > {MAX_ENUM_VALUES})"
        if self.chars > MAX_STRING_CHARS:
            return (), f"names and enum values are too long in total ({self.chars} > {MAX_STRING_CHARS})"
        return None

    def node(self, node: Any, where: tuple[str, ...], depth: int) -> tuple[tuple[str, ...], str] | None:
        if not isinstance(node, dict):
            return where, "a schema must be an object"
        ref = node.get("$ref")
        if ref is not None:
            if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/$defs/")):
                return where, f"'$ref' {ref!r} must point into '#/$defs'"
            name = ref.removeprefix("#/$defs/")
            if ref != "#" and name not in self.root.get("$defs", {}):
                return where, f"'$ref' {ref!r} names no definition"
            extra = set(node) - {"$ref", "description", "title"}
            if extra:
                return where, f"'$ref' cannot have keywords {sorted(extra)}"
            return None
        if "anyOf" in node:
            variants = node["anyOf"]
            extra = set(node) - {"anyOf", "description", "title"}
            if extra:
                return where, f"{sorted(extra)[0]!r} is not permitted beside 'anyOf'"
            if not isinstance(variants, list) or not variants:
                return where, "'anyOf' must be a non-empty list"
            for i, sub in enumerate(variants):
                found = self.node(sub, (*where, "anyOf", str(i)), depth)
                if found:
                    return found
            return None
        types = _types(node)
        unknown = [t for t in types if t not in TYPES]
        if unknown:
            return where, f"type {unknown[0]!r} is not supported"
        allowed = set(COMMON)
        for t in types:
            allowed |= BY_TYPE[t]
        for key in node:
            if key not in allowed:
                return where, f"{key!r} is not permitted"
        if not types and "enum" not in node and "const" not in node:
            return where, "a schema needs a 'type', 'enum', 'const', 'anyOf' or '$ref'"
        if "enum" in node:
            values = node["enum"]
            if not isinstance(values, list) or not values:
                return where, "'enum' must be a non-empty list"
            self.enum_values += len(values)
            self.chars += sum(len(v) for v in values if isinstance(v, str))
        if isinstance(node.get("const"), str):
            self.chars += len(node["const"])
        if "format" in node and node["format"] not in FORMATS:
            return where, f"format {node['format']!r} is not supported"
        if "pattern" in node:
            try:
                re.compile(node["pattern"])
            except (re.error, TypeError):
                return where, f"pattern {node['pattern']!r} is not a valid regular expression"
        if "object" in types:
            found = self.object(node, where, depth + 1)
            if found:
                return found
        if "array" in types:
            if "items" not in node:
                return where, "an array needs 'items'"
            found = self.node(node["items"], (*where, "items"), depth)
            if found:
                return found
        return None

    def object(
        self, node: dict[str, Any], where: tuple[str, ...], depth: int
    ) -> tuple[tuple[str, ...], str] | None:
        if depth > MAX_NESTING:
            return where, f"objects nest more than {MAX_NESTING} levels"
        if node.get("additionalProperties") is not False:
            return where, "'additionalProperties' is required to be supplied and to be false"
        props = node.get("properties", {})
        if not isinstance(props, dict):
            return where, "'properties' must be an object"
        required = node.get("required")
        if not isinstance(required, list):
            return (
                where,
                "'required' is required to be supplied and to be an array including every key in properties",
            )
        missing = [k for k in props if k not in required]
        if missing:
            return (
                where,
                f"'required' is required to be supplied and to be an array including every key in properties. Missing '{missing[0]}'",
            )
        extra = [k for k in required if k not in props]
        if extra:
            return where, f"'required' names '{extra[0]}', which is not in properties"
        self.properties += len(props)
        for name, sub in props.items():
            self.chars += len(name)
            found = self.node(sub, (*where, "properties", name), depth)
            if found:
                return found
        return None


def schema_problem(schema: Any) -> str | None:
    """None when strict mode accepts ``schema``, else the API's own words for the first problem
    (``In context=(...), ...``)."""
    found = _Checker(schema).problem() if isinstance(schema, dict) else ((), "schema must be an object")
    if found is None:
        return None
    where, what = found
    return f"In context={where!r}, {what}."


def rejection(body: Any) -> Rejection | None:
    """The 400 the API answers for a request whose strict schema it refuses, or None."""
    if not isinstance(body, dict):
        return None
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        if isinstance(spec, dict) and spec.get("strict") is True:
            problem = schema_problem(spec.get("schema"))
            if problem:
                name = spec.get("name", "")
                return Rejection(
                    f"Invalid schema for response_format '{name}': {problem}", "response_format", None
                )
    for i, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("strict") is True:
            problem = schema_problem(function.get("parameters"))
            if problem:
                return Rejection(
                    f"Invalid schema for function '{function.get('name', '')}': {problem}",
                    f"tools[{i}].function.parameters",
                    "invalid_function_parameters",
                )
    return None


def strict_schemas(body: Any) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """The strict response schema and the strict tools' parameter schemas of a request (by tool
    name): what the API guarantees its answer conforms to."""
    response: dict[str, Any] | None = None
    tools: dict[str, dict[str, Any]] = {}
    if not isinstance(body, dict):
        return response, tools
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        if isinstance(spec, dict) and spec.get("strict") is True and isinstance(spec.get("schema"), dict):
            response = spec["schema"]
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("strict") is True:
            tools[str(function.get("name"))] = function.get("parameters") or {}
    return response, tools
