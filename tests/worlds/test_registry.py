"""Worlds and minds are declared once (docs/architecture.md §4, §5): a world defined here, in
the test, becomes playable everywhere — config, CLI, play host, progress — by one
registration line."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from bot.cli import build_parser
from bot.config import ConfigError, Settings
from bot.play.minds.factory import MINDS, mind_names
from bot.play.play_host import PlayHost, PlayRefused, StartRequest
from bot.play.terminal import run_play
from bot.registered import load_checked
from bot.worlds.base import ActionResult, Metric, Observation, Still, World
from bot.worlds.factory import WORLDS, make_world, register_world, world_info, world_names
from bot.worlds.info import WorldEntry, WorldInfo, WorldRequest
from journal.actions import GBA_CATALOG
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI, Structured
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401  (fixture)
from tests.play.wire import wire_decision

LAMP_INFO = WorldInfo(
    name="lamp",
    label="a room with one lamp and its switch",
    milestones=("lit", "lit_again"),
    metrics=(Metric("toggles", "switch presses"),),
    resumes_across_sittings=True,
)


class LampWorld:
    """A whole world in a few lines: pressing ``a`` flips the lamp; lighting it is a
    milestone, lighting it a second time another."""

    info = LAMP_INFO
    name = LAMP_INFO.name
    catalog = GBA_CATALOG

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.lit = False
        self.toggles = 0
        self.reached: list[str] = []

    @property
    def provenance(self) -> dict[str, str | int | float | bool | None]:
        return {"body": self.name, "adapterVersion": "test", "seed": self.seed}

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def observe(self) -> Observation:
        state = {"lit": self.lit, "milestones": list(self.reached), "metrics": {"toggles": self.toggles}}
        return Observation.of(state, "room")

    async def still(self) -> Still | None:
        return None  # a world without a picture

    async def act(self, action: BaseModel) -> ActionResult:
        payload = action.model_dump()
        if payload["kind"] != "button_press" or payload["button"] != "a":
            return ActionResult(ok=False, source="body", refusal="unsupported_by_body", detail="only a")
        self.lit = not self.lit
        self.toggles += 1
        if self.lit and len(self.reached) < len(LAMP_INFO.milestones):
            self.reached.append(LAMP_INFO.milestones[len(self.reached)])
        return ActionResult(ok=True, source="environment", data={"lit": self.lit})


def build_lamp(request: WorldRequest, settings: Settings) -> tuple[World, str, str]:
    seed = settings.play.seed if request.seed is None else request.seed
    return LampWorld(seed), "lamp-room", "switch"


LAMP = WorldEntry(LAMP_INFO, build_lamp)


@pytest.fixture
def registry() -> Iterator[None]:
    """Whatever a test registers is gone afterwards (the registry is one dict, shared)."""
    before = dict(WORLDS)
    yield
    WORLDS.clear()
    WORLDS.update(before)


@pytest.fixture
def lamp(registry: None) -> None:
    register_world(LAMP)  # the one line a new world needs


def settings_for(tmp_path: Path, openai: FakeOpenAI | None = None, config: str = "") -> Settings:
    env = {"CLANKIE_STATE": str(tmp_path / "state")}
    if openai is not None:
        env |= {"OPENAI_API_KEY": "sk-test-not-real", "OPENAI_BASE_URL": openai.base_url}
    path = None
    if config:
        path = tmp_path / "config.toml"
        path.write_text(config)
    return load_checked(path, env=env)


def press_a(openai: FakeOpenAI) -> None:
    openai.chat.responder = lambda body: Structured(
        wire_decision({"kind": "button_press", "button": "a"}, intent="flip the switch")
    )


def world_choices() -> tuple[tuple[str, ...], str]:
    parser = build_parser()
    play = parser._subparsers._group_actions[0].choices["play"]  # type: ignore[union-attr]
    (world,) = [a for a in play._actions if a.dest == "world"]
    return tuple(world.choices), world.help


def test_the_registry_holds_the_bundled_worlds_and_minds_with_what_each_declares() -> None:
    assert world_names() == ("sandbox", "browser", "pokeagent")
    assert mind_names() == ("autopilot", "openai", "agent")
    assert len(world_info("sandbox").milestones) == 7 and world_info("sandbox").metrics == ()
    assert [m.name for m in world_info("browser").metrics] == ["score", "bestTile"]
    assert world_info("browser").still_region and "builtin:2048[?seed=N]" in world_info("browser").url_forms
    assert world_info("pokeagent").resumes_across_sittings and world_info("pokeagent").takes_url
    assert not world_info("sandbox").takes_url
    assert [m.info.wants_still for m in MINDS.values()] == [False, True, False]
    with pytest.raises(ValueError, match=r"'sandbx' is not a world \(did you mean `sandbox`\?\)"):
        world_info("sandbx")


def test_each_world_built_by_name_carries_the_info_it_is_registered_with(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    for name in ("sandbox", "pokeagent"):  # the browser's build is tested with Chromium in browser/
        world, _environment, _scenario = make_world(name, WorldRequest(url="http://127.0.0.1:9"), settings)
        assert world.info is world_info(name) and world.name == name


def test_a_world_name_taken_twice_is_refused(registry: None) -> None:
    register_world(LAMP)
    with pytest.raises(ValueError, match="a world named 'lamp' is already registered"):
        register_world(LAMP)


def test_before_it_is_registered_no_part_of_the_bot_knows_the_world(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[play\] world: 'lamp' is not a world; choose one of sandbox,"):
        settings_for(tmp_path, config='[play]\nworld = "lamp"\n')
    assert "lamp" not in world_choices()[0]


async def test_one_registration_line_makes_a_world_playable_from_config_cli_and_host(
    lamp: None,
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    settings = settings_for(tmp_path, openai_fake, config='[play]\nworld = "lamp"\nmind = "openai"\n')
    assert settings.play.world == "lamp"
    choices, help_text = world_choices()
    assert choices[-1] == "lamp" and "lamp: a room with one lamp and its switch" in help_text

    press_a(openai_fake)
    args = build_parser().parse_args("play --exit-when-done --turns 20 --pace 0".split())
    out = io.StringIO()
    assert await run_play(args, settings, out) == 0, out.getvalue()
    text = out.getvalue()
    assert text.startswith("playing lamp with the openai mind")
    # the progress line reads the world's declarations: 2 milestones, its metric's label
    assert "milestones   2/2 lit_again" in text and "switch presses 3" in text
    # all its declared milestones reached: done, after the one last turn a finished story gets
    assert "session ended: stopped after 4 turns" in text
    (journal_path,) = settings.journal_dir.glob("*.jsonl")
    journal = read_journal(journal_path)
    assert journal.header.environmentId == "lamp-room" and len(journal.turns) == 4


async def test_what_a_registered_world_declares_is_what_the_host_acts_on(
    lamp: None,
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    press_a(openai_fake)
    host = PlayHost(settings_for(tmp_path, openai_fake))
    journeys = []
    for _sitting in range(2):
        session = await host.start(StartRequest(world="lamp", mind="openai", turns=1, pace_seconds=0))
        await host.wait()
        assert session.metric_labels == {"toggles": "switch presses"}
        journeys.append(session.journey_id)
    assert journeys == ["lamp-room", "lamp-room"]  # it resumes across sittings: one journey

    with pytest.raises(PlayRefused) as refused:
        await host.start(StartRequest(world="lamp", mind="autopilot"))
    assert refused.value.code == "mind_unavailable"
    assert str(refused.value) == "The autopilot mind cannot play lamp; it plays sandbox, browser, pokeagent."
    with pytest.raises(PlayRefused) as refused:
        await host.start(StartRequest(world="lamp", mind="openai", url="http://127.0.0.1:9"))
    assert refused.value.code == "url_not_taken"
    assert str(refused.value) == "The lamp world takes no URL (these do: browser, pokeagent)."


def test_a_world_declaring_a_metric_or_milestone_twice_or_a_bad_name_is_refused() -> None:
    with pytest.raises(ValueError, match="declares a metric twice"):
        WorldInfo("twice", "x", metrics=(Metric("a", "a"), Metric("a", "b")))
    with pytest.raises(ValueError, match="declares a milestone twice"):
        WorldInfo("twice", "x", milestones=("a", "a"))
    with pytest.raises(ValueError, match="world name 'Lamp Room'"):
        WorldInfo("Lamp Room", "x")
