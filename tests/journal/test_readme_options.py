"""README's ``clankie journal`` lines are true (issue 29, item 8): each command it lists takes
exactly the options it names there, as journal/cli.py's parser declares them, and the journal
commands README lists are all there are."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from journal.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_lines() -> dict[str, str]:
    """``{command: its line}`` for each ``clankie journal COMMAND …`` line of README's usage block."""
    found = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        if match := re.match(r"^clankie journal (\w+)\b(.*)$", line):
            found[match.group(1)] = match.group(2)
    return found


def parser_options() -> dict[str, set[str]]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: {opt for action in sub._actions for opt in action.option_strings if opt.startswith("--")}
        - {"--help"}
        for name, sub in subparsers.choices.items()
    }


def test_readme_names_every_journal_command_with_exactly_its_options() -> None:
    lines, options = readme_lines(), parser_options()
    assert set(lines) == set(options) == {"runs", "story", "sight", "eval", "compare"}
    for name, line in lines.items():
        named = set(re.findall(r"--[a-z][a-z-]*", line))
        assert named == options[name], f"README's `clankie journal {name}` line: {line.strip()}"


def test_compare_takes_events_once_or_twice_as_readme_says() -> None:
    assert "[--events PATH [--events PATH]]" in readme_lines()["compare"]
    args = build_parser().parse_args(["compare", "a", "b", "--events", "x", "--events", "y"])
    assert args.events == [Path("x"), Path("y")]
