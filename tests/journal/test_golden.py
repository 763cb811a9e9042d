"""Golden outputs of ``clankie journal eval|compare|runs|story|sight`` on every journal fixture
and on journals built to take every branch of every verdict rule, in both dialects.

Each case's exit code, stdout and stderr are pinned in tests/journal/golden/<case>.json (paths
read ``<tmp>`` and ``<fixtures>``). A change to what the evaluator says about a journal shows
here as a diff of the report; when the change is meant, rewrite the files with
``CLANKIE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/journal/test_golden.py`` and review
the diff.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from journal.cli import main
from journal.oplog import ReceiptLine, append_line
from journal.original import samples as original_samples
from tests.journal import golden_original, golden_ours
from tests.journal.original.build import EVENTS, FIXTURES, OPEN, RECEIPTS, V1, V3, lines_of, write_lines

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("CLANKIE_UPDATE_GOLDEN") == "1"

Argv = list[str]


class Built:
    """Every journal and trail the cases read, written once into one directory."""

    def __init__(self, where: Path) -> None:
        self.where = where
        ours = where / "ours"
        theirs = where / "theirs"
        ours.mkdir()
        theirs.mkdir()
        self.ours: dict[str, Path] = golden_ours.built(ours)
        for name in ("intent", "goal", "metrics", "goal_v2", "plan", "scene", "movement", "facing"):
            self.ours[name] = getattr(golden_ours, name)(ours)
        self.ours["rejection"] = golden_ours.rejection(ours)
        self.ours["retired"] = golden_ours.retired(ours)
        self.ours["narration"], self.our_receipts = golden_ours.narration(where)
        self.our_events = golden_ours.events(where)
        self.play_receipts = where / "receipts-play.jsonl"
        for n in range(7, 31, 14):
            append_line(
                self.play_receipts,
                ReceiptLine(type="discord.voice.response", deliveryId=f"d-{n}", data={"played": True}),
            )
        self.theirs: dict[str, Path] = {
            name: getattr(golden_original, name)(theirs)
            for name in ("intent", "goal", "plan", "scene", "movement", "rejection", "narration", "generated")
        }
        # One trail both services appended to: the original's fixture receipts, then ours.
        self.both_receipts = where / "receipts-both.jsonl"
        self.both_receipts.write_bytes(RECEIPTS.read_bytes() + self.our_receipts.read_bytes())
        self.both_events = where / "events-both.jsonl"
        self.both_events.write_bytes(EVENTS.read_bytes() + self.our_events.read_bytes())
        generated_receipts = [
            original_samples.receipt("discord.voice.response", n, deliveryId=f"play-{n}", type="response")
            for n in range(0, 25, 10)
        ]
        self.generated_receipts = write_lines(where / "receipts-generated.jsonl", generated_receipts)
        # A directory holding both services' journals, and a journey that goes from theirs into ours.
        self.mixed = where / "mixed"
        self.mixed.mkdir()
        for path in (V3, V1, OPEN):
            shutil.copy(path, self.mixed / path.name)
        shutil.copy(EVENTS, self.mixed / EVENTS.name)
        for name in ("v3", "open", "play"):
            shutil.copy(self.ours[name], self.mixed / self.ours[name].name)
        unclosed = lines_of(V3)[:-1]
        for line in unclosed[1:]:
            line["at"] = line["at"].replace("2026-08-19", "2026-08-21")
        unclosed[0].update(runId="embodiment-later", startedAt="2026-08-21T00:00:00.000Z")
        write_lines(self.mixed / "2026-08-21T00-00-00-000Z-embodiment-later.jsonl", unclosed)


def _eval(path: Path, *trails: str) -> list[Argv]:
    return [["eval", str(path), *trails, "--json"], ["eval", str(path), *trails]]


def _cases() -> dict[str, Callable[[Built], list[Argv]]]:
    cases: dict[str, Callable[[Built], list[Argv]]] = {}
    for fixture in (V3, V1, OPEN):
        name = fixture.stem.split("Z-", 1)[1]
        cases[f"original-fixture-{name}"] = lambda b, f=fixture: [
            *_eval(f),
            *_eval(f, "--events", str(EVENTS), "--voice-receipts", str(RECEIPTS)),
            *_eval(f, "--events", str(b.both_events), "--voice-receipts", str(b.both_receipts)),
            ["sight", str(f)],
        ]
    for name in ("intent", "goal", "plan", "scene", "movement", "rejection", "narration"):
        cases[f"original-{name}"] = lambda b, n=name: _eval(
            b.theirs[n], "--voice-receipts", str(b.both_receipts)
        )
    cases["original-generated"] = lambda b: [
        *_eval(b.theirs["generated"], "--voice-receipts", str(b.generated_receipts)),
        ["sight", str(b.theirs["generated"])],
    ]
    for name in ("v3", "open", "no-turns", "header-only", "v1", "v2-unicode"):
        cases[f"ours-{name}"] = lambda b, n=name: [
            *_eval(b.ours[n]),
            *_eval(b.ours[n], "--events", str(b.both_events), "--voice-receipts", str(b.both_receipts)),
            ["sight", str(b.ours[n])],
        ]
    cases["ours-play"] = lambda b: [
        *_eval(b.ours["play"], "--events", str(b.our_events), "--voice-receipts", str(b.play_receipts)),
        ["sight", str(b.ours["play"])],
    ]
    for name in (
        "intent", "goal", "metrics", "goal_v2", "plan", "scene", "movement", "facing", "rejection", "retired",
    ):  # fmt: skip
        cases[f"ours-{name.replace('_', '-')}"] = lambda b, n=name: _eval(
            b.ours[n], "--events", str(b.our_events)
        )
    cases["ours-narration"] = lambda b: [
        *_eval(b.ours["narration"]),
        *_eval(b.ours["narration"], "--voice-receipts", str(b.our_receipts)),
        *_eval(b.ours["narration"], "--voice-receipts", str(b.both_receipts)),
    ]
    cases["compare"] = lambda b: [
        ["compare", str(b.ours["play"]), str(b.theirs["generated"]), "--json"],
        ["compare", str(b.ours["play"]), str(b.theirs["generated"])],
        ["compare", str(V3), str(b.ours["metrics"]), "--events", str(b.both_events), "--json"],
        ["compare", str(OPEN), str(b.ours["open"]), "--events", str(b.both_events)],
        ["compare", str(b.ours["v1"]), str(b.ours["goal"]), "--json"],
    ]
    cases["runs-and-story"] = lambda b: [
        ["runs", str(b.mixed), "--json"],
        ["runs", str(b.mixed)],
        ["runs", str(b.mixed), "--events", str(b.both_events), "--json"],
        ["runs", str(b.mixed), "--events", str(b.both_events)],
        ["story", str(b.mixed), "--json"],
        ["story", str(b.mixed), "--journey", "local:pokemon-firered:main", "--json"],
        ["story", str(b.mixed), "--journey", "local:pokemon-firered:main"],
        ["story", str(b.mixed), "--journey", "legacy", "--json"],
        ["story", str(b.mixed), "--journey", "journey-big"],
    ]
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("golden"))


def _run(argv: Argv, built: Built) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out=out, err=err)

    def plain(text: str) -> list[str]:
        return text.replace(str(built.where), "<tmp>").replace(str(FIXTURES), "<fixtures>").splitlines()

    shown = [plain(arg)[0] if arg else arg for arg in argv]
    return {"argv": shown, "code": code, "out": plain(out.getvalue()), "err": plain(err.getvalue())}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_journal_commands_say_what_they_said(case: str, built: Built) -> None:
    got = [_run(argv, built) for argv in CASES[case](built)]
    path = GOLDEN / f"{case}.json"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(orjson.dumps(got, option=orjson.OPT_INDENT_2) + b"\n")
    assert path.exists(), f"{path} is missing: run with CLANKIE_UPDATE_GOLDEN=1 to write it"
    expected = orjson.loads(path.read_bytes())
    for run, pinned in zip(got, expected, strict=True):
        assert run == pinned, " ".join(run["argv"])


def test_every_golden_file_is_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(CASES)


def test_the_cases_read_every_fixture_and_every_verdict_value(built: Built) -> None:
    """The golden journals are worth pinning: between them every verdict takes every value its
    rule can give, in each dialect."""
    from journal.evaluate import evaluate

    seen: dict[str, dict[str, set[str]]] = {"clankie": {}, "original": {}}
    paths = [*built.ours.values(), *built.theirs.values(), V3, V1, OPEN]
    for path, receipts in [(p, r) for p in paths for r in (None, built.both_receipts)]:
        report = evaluate(path, built.both_events, receipts)
        for row in report["turns"]:
            for name, value in row["verdicts"].items():
                seen[report["run"]["dialect"]].setdefault(name, set()).add(value)
    play = {"pass", "fail", "unknown", "not_applicable"}
    for dialect in seen:
        for name in ("intentToAction", "goalToAction", "sceneActionAppropriateness", "movementEffectiveness"):
            assert seen[dialect][name] == play, (dialect, name)
        assert seen[dialect]["rejectionRecovery"] == play, dialect
        assert seen[dialect]["planContinuity"] >= {"pass", "fail", "not_applicable"}, dialect
    assert seen["clankie"]["narration"] == {
        "no_attempt", "unspoken", "unknown", "attempted_no_receipt", "played", "failed", "refused", "suppressed",
        "model_silent",
    }  # fmt: skip
    assert seen["original"]["narration"] == {
        "no_attempt", "suppressed", "model_silent", "attempted_no_receipt", "played", "refused", "failed",
        "unspoken", "unknown",
    }  # fmt: skip
    assert {p.name for p in FIXTURES.glob("*.jsonl")} == {
        V3.name, V1.name, OPEN.name, EVENTS.name, RECEIPTS.name,
    }  # fmt: skip
