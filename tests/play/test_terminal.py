"""`clankie play` and `clankie demo` as a person runs them: the flags of the issue, the
progress display, the evaluator's aggregate at the end."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pytest

from bot.cli import build_parser
from bot.config import load_settings
from bot.play.terminal import run_play
from bot.worlds.sandbox import MILESTONE_IDS
from journal.reader import read_journal
from tests.fakes.openai import Structured
from tests.play.wire import wire_decision


def settings_for(tmp_path, **env):
    return load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state"), **env})


async def run(argv, settings):
    args = build_parser().parse_args(argv)
    if args.journal_dir:
        settings.paths.journal_dir = Path(args.journal_dir)
    out = io.StringIO()
    code = await run_play(args, settings, out)
    return code, out.getvalue()


def test_play_takes_exactly_the_flags_of_the_issue():
    args = build_parser().parse_args(
        "play --world sandbox --mind openai --turns 7 --minutes 1.5 --seed 3 --journal-dir /tmp/j "
        "--pace 0.25 --exit-when-done".split()
    )
    assert (args.world, args.mind, args.turns, args.minutes, args.seed) == ("sandbox", "openai", 7, 1.5, 3)
    assert (args.journal_dir, args.pace, args.exit_when_done) == ("/tmp/j", 0.25, True)
    bare = build_parser().parse_args(["play"])
    assert (
        bare.pace == 0.0 and bare.exit_when_done is False
    )  # headless play runs flat out; /play start uses the config pace
    assert build_parser().parse_args(["demo"]).pace == 0.6  # the demo is paced to be watched
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--mind", "psychic"])


async def test_play_to_the_last_milestone_with_the_progress_display(tmp_path):
    settings = settings_for(tmp_path)
    journals = tmp_path / "journals"
    code, out = await run(
        f"play --world sandbox --mind autopilot --turns 80 --minutes 5 --seed 7 --journal-dir {journals} "
        "--pace 0 --exit-when-done".split(),
        settings,
    )
    assert code == 0, out
    rows = [line for line in out.splitlines() if line.startswith("turn ")]
    assert rows[0].startswith("turn    1 │ milestones   0/7 —")
    # every row: turn, milestones reached/total and the latest, outcome, action, effect
    pattern = re.compile(r"^turn +(\d+) │ milestones +(\d)/7 (\S+) +│ (\w+) +│ (\w+\(.*\)) +│ (.+)$")
    parsed = [pattern.match(r) for r in rows]
    assert all(parsed), [r for r, p in zip(rows, parsed, strict=True) if not p]
    assert [int(p.group(1)) for p in parsed] == list(range(1, len(rows) + 1))
    assert parsed[-1].group(2) == "7" and parsed[-1].group(3) == MILESTONE_IDS[-1]
    assert {p.group(4) for p in parsed} == {"accepted"}
    assert "says: \"I'm out of the house" in out
    assert "button_press(button=a)" in out  # default arguments are left out
    assert "session ended: stopped after" in out
    assert "evaluation:" in out and "terminal stopped (from summary)" in out
    [journal_path] = journals.glob("*.jsonl")
    journal = read_journal(journal_path)
    assert journal.header.environmentId == "sandbox-seed7"
    assert journal.summary.progress.milestones == list(MILESTONE_IDS)
    assert len(journal.turns) == len(rows)


async def test_a_turn_budget_ends_the_session_budget_exhausted(tmp_path):
    code, out = await run(
        "play --world sandbox --mind autopilot --turns 3 --pace 0".split(), settings_for(tmp_path)
    )
    assert code == 0
    assert len([line for line in out.splitlines() if line.startswith("turn ")]) == 3
    assert "session ended: budget_exhausted after 3 turns" in out


async def test_a_bad_budget_is_refused_before_play_starts(tmp_path, capsys):
    code, out = await run("play --world sandbox --mind autopilot --turns 0".split(), settings_for(tmp_path))
    assert code == 2 and "turn " not in out
    assert "cannot start play: turns must be between 1 and 100000" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        ("--turns -5", "turns must be between 1 and 100000"),
        ("--pace -1", "pace must be between 0 and 60 seconds"),
        ("--pace 61", "pace must be between 0 and 60 seconds"),
        ("--pace nan", "pace must be between 0 and 60 seconds"),
        ("--url http://127.0.0.1:9", "The sandbox world takes no URL (these do: browser, pokeagent)"),
    ],
)
async def test_a_bad_flag_value_is_refused_before_play_starts(tmp_path, capsys, flags, why):
    settings = settings_for(tmp_path)
    code, out = await run(f"play --world sandbox --mind autopilot {flags}".split(), settings)
    assert code == 2 and "turn " not in out
    assert f"clankie: cannot start play: {why}." in capsys.readouterr().err
    assert list(settings.journal_dir.glob("*.jsonl")) == []  # no session was started


def _subcommands():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: p for name, p in sub.choices.items() if name != "journal"}  # journal: its own CLI


def test_every_command_has_a_description_and_every_option_help_with_its_default():
    for name, parser in _subcommands().items():
        assert parser.description, f"clankie {name} --help has no description"
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flag = f"clankie {name} {action.option_strings[0]}"
            assert action.help, f"{flag} has no help"
            assert "default" in action.help, f"{flag}: its help does not say its default"


def test_world_and_mind_choices_and_their_help_come_from_the_registries():
    from bot.play.minds.factory import MINDS
    from bot.worlds.factory import WORLDS

    play = _subcommands()["play"]
    options = {a.dest: a for a in play._actions}
    assert tuple(options["world"].choices) == tuple(WORLDS)
    assert tuple(options["mind"].choices) == tuple(MINDS)
    for name, entry in WORLDS.items():
        assert f"{name}: {entry.info.label}" in options["world"].help
    for name, entry in MINDS.items():
        assert f"{name}: {entry.info.label}" in options["mind"].help
    assert "(default: [play] world, sandbox)" in options["world"].help
    assert "browser: builtin:2048[?seed=N] or http(s)://…" in options["url"].help
    demo = {a.dest: a for a in _subcommands()["demo"]._actions}
    assert demo["world"].default == "sandbox" and "(default: sandbox)" in demo["world"].help


async def test_demo_without_a_key_plays_the_sandbox_with_the_autopilot_until_done(tmp_path, monkeypatch):
    settings = settings_for(tmp_path)
    assert settings.openai.api_key is None
    code, out = await run("demo --no-web --exit-when-done --pace 0".split(), settings)
    assert code == 0
    assert out.startswith("playing sandbox with the autopilot mind")
    assert f"milestones   7/7 {MILESTONE_IDS[-1]}" in out and "session ended: stopped" in out


async def test_the_demo_stops_playing_once_the_story_is_done(tmp_path):
    code, out = await run("demo --no-web --pace 0".split(), settings_for(tmp_path))
    assert code == 0
    assert "session ended: stopped after 28 turns" in out  # not an idle run to the 500-turn budget


async def test_demo_with_a_key_plays_with_the_openai_mind(tmp_path, openai_fake):
    decision = wire_decision({"kind": "button_press", "button": "down"}, intent="look around")
    openai_fake.chat.responder = lambda body: Structured(decision)
    settings = settings_for(tmp_path, OPENAI_API_KEY="sk-test-not-real", OPENAI_BASE_URL=openai_fake.base_url)
    code, out = await run("demo --no-web --turns 2 --pace 0".split(), settings)
    assert code == 0, out
    assert out.startswith("playing sandbox with the openai mind")
    assert len(openai_fake.chat.requests) == 2
    assert "sk-test-not-real" not in out


async def test_a_refused_key_ends_play_with_exit_1_and_the_reason_on_one_line(tmp_path, openai_fake, capsys):
    from tests.fakes.openai import HttpError

    openai_fake.chat.script(
        HttpError(
            401, "Incorrect API key provided: sk-test*****real.", "invalid_request_error", "invalid_api_key"
        )
    )
    settings = settings_for(tmp_path, OPENAI_API_KEY="sk-test-not-real", OPENAI_BASE_URL=openai_fake.base_url)
    code, out = await run("play --world sandbox --mind openai --turns 300 --pace 0".split(), settings)
    assert code == 1
    assert len(openai_fake.chat.requests) == 1  # not 300 turns of backing off
    assert "session ended: failed after 1 turns" in out and "terminal failed (from summary)" in out
    endpoint = openai_fake.base_url.rstrip("/")
    last = capsys.readouterr().err.splitlines()[-1]
    assert (
        last
        == f"clankie: play failed: the model endpoint {endpoint} answered HTTP 401 (check OPENAI_API_KEY)"
    )


class _ClosedAfter(io.StringIO):
    """Standard output whose reader goes away after ``lines`` lines (`clankie play | head`)."""

    def __init__(self, lines: int) -> None:
        super().__init__()
        self.left = lines

    def write(self, s: str) -> int:
        if self.left <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.left -= s.count("\n")
        return super().write(s)


async def test_a_reader_that_goes_away_stops_play_quietly_and_the_journal_is_closed(tmp_path):
    settings = settings_for(tmp_path)
    args = build_parser().parse_args("play --world sandbox --mind autopilot --turns 400 --pace 0".split())
    out = _ClosedAfter(lines=2)
    code = await run_play(args, settings, out)
    assert code == 141  # 128 + SIGPIPE, as `head` expects; no traceback
    assert "session ended" not in out.getvalue()
    [journal_path] = settings.journal_dir.glob("*.jsonl")
    journal = read_journal(journal_path)
    assert journal.summary is not None and journal.summary.outcome == "stopped"
    assert journal.summary.turnsTaken < 400


async def test_a_world_that_cannot_start_names_no_journal(tmp_path, capsys):
    settings = settings_for(tmp_path)
    code, out = await run(
        "play --world pokeagent --url http://127.0.0.1:9 --turns 2 --pace 0".split(), settings
    )
    assert code == 1
    assert "session ended: failed after 0 turns\n" in out and "journal None" not in out
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("clankie: play failed: no PokeAgent server answers at http://127.0.0.1:9")
