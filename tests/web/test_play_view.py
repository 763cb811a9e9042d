"""One typed digest (docs/architecture.md §10): the web surface reads play through
bot/web/play_view.py's protocols, and every digest it answers — live or last, on the API, the event
stream's status and the Activity's — is the ActivityDigest that PlayHost built."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import orjson
from aiohttp.test_utils import TestClient

from bot.play.play_host import PlayHost
from bot.web.embodiment import UNPLAYED, status_of
from bot.web.play_view import ActivityDigest, PlayView, WebPlayView
from bot.worlds.sandbox.milestones import MILESTONE_IDS
from tests.web.sandbox import sandbox_playing

ROOT = Path(__file__).resolve().parents[2]
BASE = "/v1/embodiment/sessions/live"
DIGEST_KEYS = set(ActivityDigest.__required_keys__)
SEAM = (
    "bot/web/play_view.py",
    "bot/web/embodiment.py",
    "bot/web/activity_routes.py",
    "bot/web/activity_sockets.py",
    "bot/web/socket_sender.py",
    "bot/web/views.py",
    "bot/web/app.py",
    "bot/web/embed.py",
)


async def get_json(client: TestClient, path: str) -> dict:
    response = await client.get(path, headers={"Accept": "application/json"})
    assert response.status == 200, await response.text()
    return await response.json()


def as_json(value: object) -> object:
    return orjson.loads(orjson.dumps(value))


async def test_the_live_and_the_last_digest_are_the_play_hosts_with_the_same_keys(
    api: TestClient, host: PlayHost
) -> None:
    async with sandbox_playing(host, pace_seconds=60) as settled:
        answered = await get_json(api, BASE + "/activity")
        built = host.activity()
        status = status_of(host)
        assert answered["outcome"] == "activity" and "last" not in answered
        assert built is not None and set(built) == DIGEST_KEYS
        assert answered["activity"] == as_json(built) == as_json(status["activity"])
        assert status["lastActivity"] is None and host.last_activity() is None
        first = settled[0]
        assert built["at"] == first.at and built["scene"] and built["observationSha256"]
        assert built["milestoneTotal"] == len(MILESTONE_IDS)
    assert host.active is None

    answered = await get_json(api, BASE + "/activity")
    last = host.last_activity()
    status = status_of(host)
    assert answered["outcome"] == "not_playing" and "activity" not in answered
    assert last is not None and set(last) == DIGEST_KEYS  # the union: nothing drifts between the two
    assert answered["last"] == as_json(last) == as_json(status["lastActivity"])
    assert status["activity"] is None and host.activity() is None
    final = host.recent_turns()[-1]  # an ended session's digest is its last settled turn's
    assert (last["state"], last["turn"], last["at"]) == ("stopped", final.turn, final.at)
    assert (last["objective"], last["lastEffect"]) == (final.objective, final.effect)
    seen_last = status["lastFrame"]  # the frame the page shows after play, as every digest names it
    assert seen_last is not None and last["frameSha256"] == seen_last["sha256"]
    assert last["progress"] == final.progress and last["milestoneTotal"] == len(MILESTONE_IDS)
    assert "imageBase64" not in json.dumps(answered)


async def test_a_server_with_no_play_and_a_host_read_the_same_way(host: PlayHost) -> None:
    assert isinstance(host, WebPlayView) and isinstance(host, PlayView)
    assert isinstance(UNPLAYED, WebPlayView)
    assert host.activity() is None and host.last_activity() is None  # nothing played yet
    assert (
        status_of(UNPLAYED)
        == status_of(host)
        == {
            "session": None,
            "activity": None,
            "frameSha256": None,
            "lastFrame": None,
            "lastActivity": None,
        }
    )


def _any_at(path: str) -> list[str]:
    """Where a module names ``Any`` (a name, ``typing.Any``, or inside a quoted annotation) or
    reads an attribute by name (``getattr``/``hasattr``): each as ``path:line what``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "Any":
            found.append(f"{path}:{node.lineno} Any")
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            found.append(f"{path}:{node.lineno} .Any")
        elif isinstance(node, ast.alias) and node.name == "Any":
            found.append(f"{path}:{node.lineno} import Any")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"[\w\[\], .|\"']*\bAny\b[\w\[\], .|\"']*", node.value)
        ):
            found.append(f"{path}:{node.lineno} {node.value!r}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id
            in (
                "getattr",
                "hasattr",
            )
        ):
            found.append(f"{path}:{node.lineno} {node.func.id}()")
    return found


def test_no_any_where_the_web_surface_meets_play() -> None:
    assert [hit for path in SEAM for hit in _any_at(path)] == []


def test_the_seam_check_sees_what_it_looks_for(tmp_path: Path, monkeypatch) -> None:
    sample = tmp_path / "bot" / "web" / "sample.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "import typing\nfrom typing import Any\n"
        "def f(host: Any) -> 'dict[str, Any]':\n    return getattr(host, 'session')\n"
        "x: typing.Any = None\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert sorted(hit.split(" ", 1)[0] for hit in _any_at("bot/web/sample.py")) == [
        "bot/web/sample.py:2",
        "bot/web/sample.py:3",
        "bot/web/sample.py:3",
        "bot/web/sample.py:4",
        "bot/web/sample.py:5",
    ]


def test_the_play_host_answers_the_one_digest() -> None:
    """PlayHost's digest methods are annotated with the model itself (mypy checks the rest:
    ``WebSurface`` takes the host as a ``WebPlayView``)."""
    tree = ast.parse((ROOT / "bot/play/play_host.py").read_text(encoding="utf-8"))
    returns = {
        node.name: ast.unparse(node.returns)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.returns is not None
    }
    assert returns["activity"] == returns["last_activity"] == "ActivityDigest | None"
    assert returns["activity_digest"] == "ActivityDigest"
