"""Names for the JSON that goes to OpenAI which no `openai` request type describes.

The request shapes themselves are the `openai` package's own TypedDicts (``openai.types.chat``,
``openai.types.realtime``), checked against what is sent by the fakes in tests/fakes/openai; what
is left is JSON whose keys are not ours to fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

from journal.json_types import JSONObject

__all__ = ["JSONObject", "JSONView"]
# JSONObject (journal/json_types.py, which bot/ may import and journal/ may not import back): a
# JSON object of arbitrary keys and values (a JSON Schema, a model's free arguments, a story card).

JSONView: TypeAlias = Mapping[str, object]
"""A JSON object of arbitrary keys and values, only read."""
