"""Names for JSON whose shape nobody fixes (a world's observation state, a line read before it
is validated): a JSON value, and a JSON object as read or built."""

from __future__ import annotations

JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject = dict[str, object]
