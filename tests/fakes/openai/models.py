"""``GET /v1/models``: the models the key may use, as OpenAI lists them (``openai.types.Model``:
``id``, ``object: "model"``, ``created``, ``owned_by``, in ``{"object": "list", "data": […]}``).

``ids`` is what the account has; ``api_key`` (None: any ``Bearer`` key) is the one key the route
accepts — another gets OpenAI's 401 ``invalid_api_key`` answer, no key its 401
``missing_api_key``-style answer ("You didn't provide an API key…").
"""

from __future__ import annotations

from aiohttp import web

DEFAULT_MODELS = ("gpt-4.1-mini", "gpt-4.1", "gpt-realtime", "gpt-realtime-mini", "gpt-4o-mini")


class ModelsFake:
    def __init__(self) -> None:
        self.ids: list[str] = list(DEFAULT_MODELS)
        self.api_key: str | None = None
        self.requests = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.requests += 1
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth.removeprefix("Bearer ").strip():
            return _unauthorized(
                "You didn't provide an API key. You need to provide your API key in an Authorization "
                "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                None,
            )
        key = auth.removeprefix("Bearer ").strip()
        if self.api_key is not None and key != self.api_key:
            shown = key[:3] + "*" * max(0, len(key) - 7) + key[-4:] if len(key) > 8 else "****"
            return _unauthorized(
                f"Incorrect API key provided: {shown}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "invalid_api_key",
            )
        data = [
            {"id": i, "object": "model", "created": 1_700_000_000, "owned_by": "system"} for i in self.ids
        ]
        return web.json_response({"object": "list", "data": data})


def _unauthorized(message: str, code: str | None) -> web.Response:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return web.json_response({"error": error}, status=401)
