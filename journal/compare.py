"""``clankie journal compare A B``: two sittings side by side — who played (world, mind), how
each ended, its turn outcomes, the evaluator's verdict rates, the progress and metrics it
reached, the turn each milestone came at and turns per milestone, and what each turn cost:
requests, request bytes and tokens (turn V4's ``usage``) and decision time (every V2+ turn's
timing). What a journal does not record is ``unknown``, never zero: a V1–V3 turn has no
usage, a mind that asked no model has none, and an endpoint that reported no tokens leaves
the token counts unknown.
"""

from __future__ import annotations

import statistics
from array import array
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO, TypedDict

from journal.evaluate import VERDICTS, evaluate_each
from journal.report import TurnRow
from journal.schema import ProgressV2, Summary, TurnV2, TurnV4

__all__ = ["compare", "run_summary", "write_table"]

Number = int | float


def _ms(start: str, end: str) -> float:
    def parse(stamp: str) -> datetime:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))

    return (parse(end) - parse(start)).total_seconds() * 1000


def _spread(values: Sequence[Number]) -> dict[str, Number] | None:
    """mean, median and max of ``values``; None when there are none (unknown)."""
    if not values:
        return None
    return {
        "mean": round(statistics.fmean(values), 2),
        "median": round(float(statistics.median(values)), 2),
        "max": max(values),
    }


class SideProgress(TypedDict):
    """A sitting's last progress; unknown (null) for a dialect whose progress is not read."""

    distinctTiles: int | None
    maps: list[str]
    milestones: list[str]
    metrics: dict[str, Number] | None


class SideCost(TypedDict):
    """What a sitting's decisions cost, per turn (mean, median, max), where it is known."""

    turnsWithUsage: int
    turnsRecordingUsage: int
    requestsPerTurn: dict[str, Number] | None
    requestBytesPerTurn: dict[str, Number] | None
    promptTokensPerTurn: dict[str, Number] | None
    completionTokensPerTurn: dict[str, Number] | None
    decisionMsPerTurn: dict[str, Number] | None


VerdictRate = TypedDict("VerdictRate", {"pass": int, "fail": int, "rate": float | None})
"""How often a verdict passed: ``pass`` is a keyword, so the functional form."""


class RunSide(TypedDict):
    """One sitting's side of the comparison."""

    runId: str
    dialect: str
    path: str
    world: str | None
    mind: str | None
    terminal: dict[str, str]
    turns: int
    outcomes: dict[str, int]
    acceptedRate: float | None
    durationMs: int | None
    verdicts: dict[str, VerdictRate]
    progress: SideProgress
    milestoneTurns: dict[str, int]
    turnsPerMilestone: float | None
    cost: SideCost


class MilestoneRow(TypedDict):
    id: str
    turns: list[int | None]  # the turn each side first reached it, or null


class Comparison(TypedDict):
    runs: list[RunSide]
    milestones: list[MilestoneRow]


UNKNOWN_PROGRESS: SideProgress = {"distinctTiles": None, "maps": [], "milestones": [], "metrics": None}
UNKNOWN_COST: SideCost = {
    "turnsWithUsage": 0,
    "turnsRecordingUsage": 0,
    "requestsPerTurn": None,
    "requestBytesPerTurn": None,
    "promptTokensPerTurn": None,
    "completionTokensPerTurn": None,
    "decisionMsPerTurn": None,
}


class _Sitting:
    """A turn sink (:func:`journal.evaluate.evaluate_each`) that gathers, as the turns of one of
    our journals stream by, what the comparison shows beside the evaluator's report: the last
    progress, the turn each milestone was first reached and each V2+ turn's cost. Exact
    medians need every value, so the costs are kept as packed numbers (8 bytes a turn each),
    never as turns."""

    def __init__(self) -> None:
        self.progress: Any = None  # the last V2+ turn's
        self.milestones: dict[str, int] = {}
        self.timed_turns = 0
        self.v4_turns = 0
        self.usages = 0
        self.decision_ms = array("d")
        self.requests = array("Q")
        self.request_bytes = array("Q")
        self.prompt = array("Q")
        self.completion = array("Q")

    def __call__(self, line: Any, row: TurnRow) -> None:
        if not isinstance(line, TurnV2):
            return
        ev = line.evidence
        self.progress = ev.progressAfter or ev.progressBefore
        for milestone in self.progress.milestones:
            self.milestones.setdefault(milestone, line.turn.turn)
        self.decision_ms.append(round(_ms(ev.timing.decisionStartedAt, ev.timing.decisionSettledAt), 1))
        if not isinstance(line, TurnV4):
            return
        self.v4_turns += 1
        usage = line.evidence.usage
        if usage is None:
            return
        self.usages += 1
        self.requests.append(usage.requests)
        self.request_bytes.append(usage.requestBytes)
        if usage.promptTokens is not None:
            self.prompt.append(usage.promptTokens)
        if usage.completionTokens is not None:
            self.completion.append(usage.completionTokens)

    def final_progress(self, summary: Summary | None) -> SideProgress:
        """The last progress the sitting recorded: the summary's, else the last turn's."""
        progress: Any = summary.progress if summary is not None else self.progress
        if progress is None:
            return UNKNOWN_PROGRESS.copy()
        return {
            "distinctTiles": progress.distinctTiles,
            "maps": list(progress.maps),
            "milestones": list(progress.milestones),
            "metrics": dict(progress.metrics) if isinstance(progress, ProgressV2) else None,
        }

    def cost(self) -> SideCost:
        every = self.usages
        return {
            "turnsWithUsage": every,
            "turnsRecordingUsage": self.v4_turns,  # V4 turns: usage recorded, null when no model was asked
            "requestsPerTurn": _spread(self.requests),
            "requestBytesPerTurn": _spread(self.request_bytes),
            "promptTokensPerTurn": _spread(self.prompt) if len(self.prompt) == every else None,
            "completionTokensPerTurn": _spread(self.completion) if len(self.completion) == every else None,
            "decisionMsPerTurn": _spread(self.decision_ms),
        }


def _rate(tally: dict[str, int]) -> VerdictRate:
    passed, failed = tally.get("pass", 0), tally.get("fail", 0)
    return {
        "pass": passed,
        "fail": failed,
        "rate": round(passed / (passed + failed), 4) if passed + failed else None,
    }


def run_summary(path: Path | str, events: Path | None = None) -> RunSide:
    """One sitting's side of the comparison, read in one streamed pass (raising JournalError
    naming file and line if it is invalid). A journal of another dialect (the original
    service's) is compared by the evaluator's report (terminal, outcomes, verdicts); its
    progress, milestones and cost are unknown here."""
    sitting = _Sitting()
    done = evaluate_each(path, events, None, sitting)
    report = done.report
    ours = report["run"]["dialect"] == "clankie"
    aggregate = report["aggregate"]
    outcomes: dict[str, int] = aggregate["outcomes"]
    turns = aggregate["turns"]
    milestones = sitting.milestones if ours else {}
    last = max(milestones.values(), default=None)
    return {
        "runId": report["run"]["runId"],
        "dialect": report["run"]["dialect"],
        "path": report["run"]["path"],
        "world": getattr(done.header, "world", None),
        "mind": getattr(done.header, "mind", None),
        "terminal": report["run"]["terminal"],
        "turns": turns,
        "outcomes": outcomes,
        "acceptedRate": round(outcomes.get("accepted", 0) / turns, 4) if turns else None,
        "durationMs": done.summary.durationMs if ours and done.summary is not None else None,
        "verdicts": {name: _rate(aggregate["verdicts"][name]) for name in VERDICTS},
        "progress": sitting.final_progress(done.summary) if ours else UNKNOWN_PROGRESS.copy(),
        "milestoneTurns": milestones,
        "turnsPerMilestone": round(last / len(milestones), 2) if last is not None else None,
        "cost": sitting.cost() if ours else UNKNOWN_COST.copy(),
    }


def compare(
    a: Path | str, b: Path | str, events_a: Path | None = None, events_b: Path | None = None
) -> Comparison:
    """Read both journals, of either dialect (raising JournalError naming file and line if
    either is invalid), and put them side by side; each run's end, when its journal has no
    summary, is read from its own event log (``events_a``, ``events_b``: two servers' sittings
    each have theirs)."""
    runs = [run_summary(path, events) for path, events in ((a, events_a), (b, events_b))]
    ids: list[str] = []
    for run in runs:
        ids += [m for m in run["milestoneTurns"] if m not in ids]
    return {
        "runs": runs,
        "milestones": [{"id": m, "turns": [run["milestoneTurns"].get(m) for run in runs]} for m in ids],
    }


# --- the table --------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value * 100:.1f}%"


def _count(value: Number) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _bytes(value: Number) -> str:
    return f"{value / 1000:.1f} kB" if value >= 1000 else f"{value:.0f} B"


def _spread_text(spread: dict[str, Number] | None, fmt: Any = "{:.2f}".format, why: str = "") -> str:
    if spread is None:
        return "unknown" + (f" ({why})" if why else "")
    return f"{fmt(spread['mean'])} mean · {fmt(spread['median'])} median · {fmt(spread['max'])} max"


def _no_usage(run: RunSide) -> str:
    cost = run["cost"]
    if run["dialect"] != "clankie":
        return f"the {run['dialect']} dialect records none"
    if not cost["turnsRecordingUsage"]:
        return "not recorded before turn V4"
    if not cost["turnsWithUsage"]:
        return "no model was asked"
    return "the endpoint reported none"


def _rows(report: Comparison) -> list[tuple[str, list[str]]]:
    runs = report["runs"]

    def each(fn: Any) -> list[str]:
        return [fn(run) for run in runs]

    rows: list[tuple[str, list[str]]] = [
        ("run", each(lambda r: r["runId"])),
        ("world / mind", each(lambda r: f"{r['world'] or '?'} / {r['mind'] or '?'}")),
        ("terminal", each(lambda r: f"{r['terminal']['outcome']} ({r['terminal']['source']})")),
        ("turns", each(lambda r: str(r["turns"]))),
        ("outcomes", each(lambda r: " ".join(f"{k}={v}" for k, v in sorted(r["outcomes"].items())) or "-")),
        ("accepted", each(lambda r: _pct(r["acceptedRate"]))),
    ]
    for name in VERDICTS:
        rows.append(
            (
                name,
                each(
                    lambda r, n=name: (
                        f"{_pct(r['verdicts'][n]['rate'])} "
                        f"({r['verdicts'][n]['pass']}/{r['verdicts'][n]['pass'] + r['verdicts'][n]['fail']})"
                        if r["verdicts"][n]["rate"] is not None
                        else "unknown"
                    )
                ),
            )
        )
    rows.append(("distinct tiles", each(lambda r: str(r["progress"]["distinctTiles"] or 0))))
    rows.append(("maps", each(lambda r: str(len(r["progress"]["maps"])))))
    rows.append(("milestones", each(lambda r: str(len(r["progress"]["milestones"])))))
    names: list[str] = []
    for run in runs:
        names += [n for n in (run["progress"]["metrics"] or {}) if n not in names]
    for name in names:
        rows.append(
            (
                f"metric {name}",
                each(
                    lambda r, n=name: (
                        "unknown"
                        if r["progress"]["metrics"] is None
                        else str(r["progress"]["metrics"].get(n, "-"))
                    )
                ),
            )
        )
    for milestone in report["milestones"]:
        cells = [f"turn {t}" if t is not None else "-" for t in milestone["turns"]]
        rows.append((f"  {milestone['id']}", cells))
    rows.append(("turns per milestone", each(lambda r: str(r["turnsPerMilestone"] or "-"))))
    rows.append(
        ("requests / turn", each(lambda r: _spread_text(r["cost"]["requestsPerTurn"], why=_no_usage(r))))
    )
    rows.append(
        (
            "request bytes / turn",
            each(lambda r: _spread_text(r["cost"]["requestBytesPerTurn"], _bytes, _no_usage(r))),
        )
    )
    for key, label in (
        ("promptTokensPerTurn", "prompt tokens / turn"),
        ("completionTokensPerTurn", "completion tokens / turn"),
    ):
        rows.append((label, each(lambda r, k=key: _spread_text(r["cost"][k], _count, _no_usage(r)))))
    rows.append(
        (
            "decision time / turn",
            each(
                lambda r: _spread_text(
                    r["cost"]["decisionMsPerTurn"],
                    "{:.0f} ms".format,
                    "not read from this dialect" if r["dialect"] != "clankie" else "no V2 turns",
                )
            ),
        )
    )
    return rows


def write_table(report: Comparison, out: TextIO) -> None:
    rows = _rows(report)
    label = max(len(name) for name, _ in rows)
    width = max(max(len(cells[0]) for _, cells in rows), 2)
    out.write(f"{'':<{label}}  {'A':<{width}}  B\n")
    for name, (a, b) in rows:
        out.write(f"{name:<{label}}  {a:<{width}}  {b}\n")
