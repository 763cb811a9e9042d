"""The minds' declarations (docs/architecture.md §5): what each says it can do is what it does."""

from __future__ import annotations

import pytest

from bot.config import load_settings
from bot.play.minds.autopilot import AutopilotMind
from bot.play.minds.factory import AGENT, AUTOPILOT, MINDS, OPENAI, make_mind, mind_info
from bot.play.minds.openai_mind import OpenAIMind


def test_the_autopilot_plays_exactly_the_worlds_it_declares() -> None:
    assert AUTOPILOT.worlds is not None
    for world in AUTOPILOT.worlds:
        assert AutopilotMind(world).info is AUTOPILOT
    with pytest.raises(ValueError, match="the autopilot does not know how to play 'lamp'"):
        AutopilotMind("lamp")
    assert AUTOPILOT.plays("sandbox") and not AUTOPILOT.plays("lamp")
    assert OPENAI.plays("lamp") and AGENT.plays("lamp")  # a model plays any world


def test_the_openai_mind_wants_a_still_only_when_the_model_may_see() -> None:
    assert OpenAIMind(client=None, model="m").info.wants_still is True  # type: ignore[arg-type]
    assert OpenAIMind(client=None, model="m", vision=False).info.wants_still is False  # type: ignore[arg-type]
    assert OpenAIMind(client=None, model="m", vision=False).info.name == "openai"  # type: ignore[arg-type]


def test_a_mind_that_needs_a_key_says_so_when_built_without_one(tmp_path) -> None:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path)})
    assert [name for name, entry in MINDS.items() if entry.info.needs_openai] == ["openai", "agent"]
    for name in ("openai", "agent"):
        with pytest.raises(RuntimeError, match=f"the {name} mind needs OPENAI_API_KEY"):
            make_mind(name, "sandbox", settings)
    with pytest.raises(ValueError, match=r"'agnet' is not a mind \(did you mean `agent`\?\)"):
        mind_info("agnet")
