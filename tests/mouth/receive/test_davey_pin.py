"""The davey pin: the installed release, pyproject's requirement and the receiver agree."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from bot.mouth.receive.dave import DAVEY_RANGE, davey_version_problem

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


def davey_requirement() -> Requirement:
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    found = [Requirement(d) for d in deps if Requirement(d).name == "davey"]
    assert len(found) == 1, f"pyproject.toml must pin davey once among {deps}"
    return found[0]


def test_the_installed_davey_is_inside_the_range_discord_py_drives() -> None:
    installed = importlib.metadata.version("davey")
    requirement = davey_requirement()
    assert Version(installed) in requirement.specifier, (
        f"davey {installed} is installed; discord.py 2.7.x drives davey{requirement.specifier}"
    )
    assert davey_version_problem() is None


def test_pyproject_pins_the_range_the_receiver_checks() -> None:
    assert davey_requirement().specifier == Requirement(f"davey{DAVEY_RANGE}").specifier
    # and discord.py itself still asks for davey only through its voice extra
    assert any(r.startswith("davey") for r in importlib.metadata.requires("discord.py") or [])


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ("0.1.7", True),
        ("0.1.7.post1", True),
        ("0.1.9", True),
        ("0.1.6", False),
        ("0.2.0", False),
        ("0.2.0rc1", False),
        ("1.0", False),
    ],
)
def test_the_receivers_check_agrees_with_the_pin(version: str, ok: bool) -> None:
    assert (davey_version_problem(version) is None) is ok
    assert (Version(version) in davey_requirement().specifier) is ok


def test_a_davey_0_2_says_why_it_cannot_work() -> None:
    problem = davey_version_problem("0.2.0")
    assert problem is not None
    assert "0.2.0" in problem and "execute_transition" in problem and DAVEY_RANGE in problem
