"""``clankie journal …``: list runs, show a journey's story card, trace a sitting, evaluate it,
compare two sittings.

A run without a summary (its process died, or the disk refused the summary) ends where the
event log says it ended: ``runs``, ``eval`` and ``compare`` read the event log given with
``--events``, else the one the configured state keeps beside the journal's directory (found by
``find_events``, which ``clankie`` passes in: journal/ imports nothing of bot/; ``--config``
names the configuration it reads).

Exit codes: 0 success; 1 an invalid journal (``path:line: reason`` on stderr; for ``runs``
and ``story`` the valid journals are still shown), or ``eval --json`` could not spool its
rows (a full temporary directory; nothing is printed); 2 a usage error (bad arguments, or a
directory, file or journey that does not exist).
"""

from __future__ import annotations

import argparse
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import orjson

from journal.actions import HistoricalAction
from journal.compare import compare, write_table
from journal.dialect import Dialect, dialect_of
from journal.evaluate import VERDICTS, evaluate_each
from journal.journeys import JourneyIndex, RunInfo
from journal.metrics import metrics_text
from journal.ours import OURS
from journal.reader import JournalError, validated_lines
from journal.report import JsonRows, Report, SpoolError, run_ends
from journal.room import RoomSection, room_text

__all__ = ["EventLogFinder", "build_parser", "main"]

EventLogFinder = Callable[[Path, Path | None], Path]
"""``(journal directory, --config)`` → the event log the configured state keeps for it; raises
ValueError when the configuration cannot be read (bot/play/state_dir.py ``event_log_beside``)."""

_CONFIG_HELP = (
    "config.toml that says where the event log is (default: $CLANKIE_CONFIG, else the built-in defaults)"
)
_EVENTS_HELP = "the event log (default: the configured state's, beside the journal's directory)"


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clankie journal", description="Read play journals.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    runs = sub.add_parser("runs", help="list the sittings in a journal directory")
    runs.add_argument("directory", type=Path, metavar="DIR")
    runs.add_argument("--events", type=Path, metavar="PATH", help=_EVENTS_HELP + " (for unclosed runs)")
    runs.add_argument("--config", type=Path, metavar="PATH", help=_CONFIG_HELP)
    runs.add_argument("--json", action="store_true", help="print JSON")

    story = sub.add_parser("story", help="show a journey's story card")
    story.add_argument("directory", type=Path, metavar="DIR")
    story.add_argument("--journey", metavar="ID", help="journey id (default: the latest journey)")
    story.add_argument("--json", action="store_true", help="print JSON")

    sight = sub.add_parser("sight", help="a readable trail of one sitting, one line per turn")
    sight.add_argument("file", type=Path, metavar="FILE")

    ev = sub.add_parser("eval", help="evaluate one sitting")
    ev.add_argument("file", type=Path, metavar="FILE")
    ev.add_argument("--events", type=Path, metavar="PATH", help=_EVENTS_HELP)
    ev.add_argument("--config", type=Path, metavar="PATH", help=_CONFIG_HELP)
    ev.add_argument("--voice-receipts", type=Path, metavar="PATH", help="the voice receipt trail")
    ev.add_argument("--json", action="store_true", help="print JSON")

    cmp = sub.add_parser("compare", help="two sittings side by side (e.g. two minds)")
    cmp.add_argument("a", type=Path, metavar="A")
    cmp.add_argument("b", type=Path, metavar="B")
    cmp.add_argument(
        "--events",
        type=Path,
        metavar="PATH",
        action="append",
        help="the event log, for unclosed runs: once for both, or twice, A's then B's (default: each "
        "run's configured state's, beside its journal's directory)",
    )
    cmp.add_argument("--config", type=Path, metavar="PATH", help=_CONFIG_HELP)
    cmp.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _dump(data: Any, out: TextIO) -> None:
    out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def _directory(path: Path) -> Path:
    """A directory that exists (a usage error naming what is wrong otherwise)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise _UsageError(f"{path}: no such directory") from None
    except OSError as exc:
        raise _UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise _UsageError(f"{path}: not a directory")
    return path


def _file(path: Path, what: str = "") -> Path:
    """A path that exists and is not a directory (a usage error otherwise). Anything else a
    reader cannot take — a FIFO, a device, a symlink loop — is the reader's one-line error."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not path.is_symlink():
            raise _UsageError(f"{path}: no such {what or 'file'}") from None
        return path
    except OSError:
        return path
    if stat.S_ISDIR(mode):
        raise _UsageError(f"{path}: not a file")
    return path


def _events(
    args: argparse.Namespace, directory: Path, find: EventLogFinder | None, given: Path | None = None
) -> Path | None:
    """The event log to read: ``--events`` (``given`` where the command takes several), else the
    configured one for ``directory`` when there is one (None: no event log, so an unclosed run's
    end is unknown)."""
    given = given or (args.events if isinstance(args.events, Path) else None)
    if given:
        return _file(given, "event log")
    if find is None:
        return None
    try:
        found = find(directory, args.config)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    return found if found.exists() or found.is_symlink() else None


def _report(errors: list[JournalError], err: TextIO) -> int:
    for exc in errors:
        err.write(f"{exc}\n")
    return 1 if errors else 0


def _runs(args: argparse.Namespace, out: TextIO, err: TextIO, find: EventLogFinder | None) -> int:
    index = JourneyIndex(_directory(args.directory), archival=True)
    runs = index.all_runs()
    events = _events(args, args.directory, find)
    unclosed = [r.runId for r in runs if r.outcome is None]
    ends, skipped = run_ends(events, unclosed) if events is not None else ({}, [])

    def terminal(r: RunInfo) -> dict[str, str]:  # as `journal eval` says it
        if r.outcome is not None:
            return {"source": "summary", "outcome": r.outcome}
        return ends.get(r.runId, {"source": "none", "outcome": "unknown"})

    if args.json:
        _dump(
            {
                "runs": [{**r.to_json(), "terminal": terminal(r)} for r in runs],
                "eventLog": str(events) if events is not None else None,
                "skippedEventLines": skipped,
                "errors": [str(e) for e in index.errors],
            },
            out,
        )
    else:
        journey_w = max((len(r.journeyId) for r in runs), default=0)
        run_w = max((len(r.runId) for r in runs), default=0)
        at_w = max((len(r.startedAt) for r in runs), default=0)  # the original's V1 has no millis
        body_w = max((len(f"{r.world or '-'}/{r.mind or '-'}") for r in runs), default=0)
        for r in runs:  # columns line up however long a journey id is
            end = terminal(r)
            ended = {"summary": end["outcome"], "none": "open"}.get(
                end["source"], f"{end['outcome']} (from {end['source']})"
            )
            body = f"{r.world or '-'}/{r.mind or '-'}"
            out.write(
                f"{r.journeyId:<{journey_w}}  {r.runId:<{run_w}}  {r.startedAt:<{at_w}}  {r.dialect:<8}  "
                f"v{r.schemaVersion}  {body:<{body_w}}  turns={r.turns}  {ended}\n"
            )
        if not runs:
            out.write(f"no runs in {args.directory}\n")
        for reason in skipped:
            out.write(f"skipped a line of the event log: {reason}\n")
    return _report(index.errors, err)


def _story(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    index = JourneyIndex(_directory(args.directory), archival=True)
    journey = args.journey or index.latest_stopped_journey()
    if journey is None:
        _report(index.errors, err)
        raise _UsageError(f"{args.directory}: no journey found")
    card = index.story_card(journey)
    if card is None:
        _report(index.errors, err)
        raise _UsageError(f"{args.directory}: no journey {journey!r}")
    dialects = sorted({r.dialect for r in index.runs(journey)})
    errors = list(index.errors)
    rooms = _room_sections(index.runs(journey), errors) if card.roomLines is not None else []
    if args.json:
        story: dict[str, Any] = {
            "journeyId": journey,
            "dialects": dialects,
            "card": card.model_dump(mode="json"),
        }
        if rooms:
            story["room"] = [{"runId": run_id, **section} for run_id, section in rooms]
        _dump(story, out)
    else:
        out.write(
            f"journey   {journey}  ({' + '.join(dialects)} journal{'s' if len(dialects) > 1 else ''})\n"
        )
        out.write(
            f"session   {card.sessionId}  scenario {card.scenarioId}  env {card.environmentId or '-'}\n"
        )
        out.write(
            f"started   {card.startedAt}  last turn {card.lastTurnAt or '-'}  turns {card.turnsTaken}\n"
        )
        out.write(f"objective {card.objective or '-'}\n")
        out.write(f"progress  {metrics_text(card.metrics) or '-'}\n")
        out.write(f"maps      {', '.join(card.maps) or '-'}\n")
        if card.roomLines is not None:
            room = card.roomLines
            out.write(f"room      {room.heard} lines heard, {room.heeded} heeded\n")
            for run_id, section in rooms:  # each sitting's: what followed the lines it heeded
                first, *rest = room_text(section)
                out.write(f"  {run_id}  {first.removeprefix('room').lstrip()}\n")
                out.writelines(f"  {text}\n" for text in rest)
        for m in card.moments:
            toward = f"  (toward {m.toward})" if m.toward else ""
            said = f'  says "{m.said}"' if m.said else ""
            out.write(f"  {m.at}  {m.effect}{toward}{said}\n")
    return _report(errors, err)


def _room_sections(runs: list[RunInfo], errors: list[JournalError]) -> list[tuple[str, RoomSection]]:
    """The evaluator's room section of each sitting that records room lines (journal/room.py),
    oldest first; a sitting that cannot be evaluated is reported and skipped."""
    out: list[tuple[str, RoomSection]] = []
    for run in runs:
        if run.dialect != OURS.name:
            continue  # room lines are our turn version 5; the original service's journals have none
        try:
            section = evaluate_each(run.path).report.get("room")
        except JournalError as exc:
            errors.append(exc)
            continue
        if section is not None:
            out.append((run.runId, section))
    return out


def _action_text(action: Any, dialect: Dialect) -> str:
    data = dialect.payload(action)
    if data is None:
        return "-"
    kind = data.pop("kind")
    args = ", ".join(f"{k}={v}" for k, v in data.items())
    retired = isinstance(action, HistoricalAction) or kind not in dialect.catalog
    return f"{kind}({args})" + (" [not in the live catalog]" if retired else "")


def _sight(args: argparse.Namespace, out: TextIO) -> int:
    path = _file(args.file, "journal")
    dialect = dialect_of(path)

    def lines() -> Iterator[Any]:
        checker = dialect.checker(path)
        return validated_lines(path, dialect.parse, checker.check, checker.note)

    for _ in lines():  # validate first, so a bad file prints nothing but its error
        pass
    summary: Any = None
    for line in lines():  # then stream: a long sitting is never held in memory
        if line.kind == "header":
            out.write(
                f"run {line.runId}  journey {dialect.journey_id(line)}  started {line.startedAt}"
                f"  v{line.schemaVersion}  {dialect.name}\n"
            )
        elif line.kind == "summary":
            summary = line
        else:
            t = line.turn
            speech = ""
            delivery = getattr(line, "speechDeliveryId", None)
            if delivery:
                said = f'says "{t.speak}" ' if t.speak else ""
                speech = f"  {said}(speech {delivery})"
            out.write(
                f"#{t.turn:<5} {t.outcome:<19} {_action_text(t.action, dialect)}  → "
                f"{t.effect or t.detail or '-'}  [objective: {t.objective or '-'}]{speech}\n"
            )
    if summary is None:
        out.write("(no summary: the sitting did not close)\n")
    else:
        out.write(
            f"summary {summary.outcome}  turns={summary.turnsTaken} accepted={summary.accepted} "
            f"durationMs={summary.durationMs}\n"
        )
    return 0


def write_report(report: Report, out: TextIO) -> None:
    """The evaluator's report as readable text (``clankie journal eval``, end of ``clankie play``)."""
    run, agg = report["run"], report["aggregate"]
    term = run["terminal"]
    out.write(
        f"run {run['runId']}  {run['dialect']} v{run['schemaVersion']}  "
        f"terminal {term['outcome']} (from {term['source']})\n"
    )
    outcomes = "  ".join(f"{k}={v}" for k, v in sorted(agg["outcomes"].items())) or "-"
    out.write(f"turns {agg['turns']}  outcomes {outcomes}  retiredActionTurns {agg['retiredActionTurns']}\n")
    for name in VERDICTS:
        counts = "  ".join(f"{k}={v}" for k, v in sorted(agg["verdicts"][name].items()))
        out.write(f"  {name:<27} {counts or '-'}\n")
    room = report.get("room")
    if room is not None:
        for text in room_text(room):
            out.write(f"{text}\n")
    anomalies = report.get("anomalies", [])
    if anomalies:
        omitted = report.get("anomaliesOmitted", 0)
        count = len(anomalies) + omitted
        out.write(
            f"read past {count} anomal{'y' if count == 1 else 'ies'} (as the {run['dialect']} reader reads them):\n"
        )
        for a in anomalies:
            out.write(f"  line {a['line']}: {a['what']}\n")
        if omitted:
            out.write(f"  … and {omitted} more\n")
    names = {"events": "event log", "receipts": "receipt trail"}
    for source, skipped in report["skippedOperationalLines"].items():
        for reason in skipped:
            out.write(f"skipped a line of the {names.get(source, source)}: {reason}\n")


def _eval(args: argparse.Namespace, out: TextIO, find: EventLogFinder | None) -> int:
    path = _file(args.file, "journal")
    events = _events(args, path.parent, find)
    receipts = args.voice_receipts and _file(args.voice_receipts, "receipt trail")
    if not args.json:  # the text report is the aggregate: no row is kept
        write_report(evaluate_each(path, events, receipts).report, out)
        return 0
    with JsonRows() as rows:  # rows wait in a spool, so an invalid journal prints nothing
        rows.write(evaluate_each(path, events, receipts, rows).report, out)
    return 0


def _compare(args: argparse.Namespace, out: TextIO, find: EventLogFinder | None) -> int:
    a, b = _file(args.a, "journal"), _file(args.b, "journal")
    given: list[Path] = args.events or []
    if len(given) > 2:
        raise _UsageError("--events is given once (both runs' event log) or twice (A's, then B's)")
    for_a, for_b = (given + given)[:2] if given else (None, None)
    report = compare(a, b, _events(args, a.parent, find, for_a), _events(args, b.parent, find, for_b))
    if args.json:
        _dump(report, out)
    else:
        write_table(report, out)
    return 0


def main(
    argv: list[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    find_events: EventLogFinder | None = None,
) -> int:
    """Run ``clankie journal`` with ``argv`` (without the word "journal"); returns the exit code.
    ``find_events`` finds the configured event log when ``--events`` is not given (without it,
    none is read)."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.command == "runs":
            code = _runs(args, out, err, find_events)
        elif args.command == "story":
            code = _story(args, out, err)
        elif args.command == "sight":
            code = _sight(args, out)
        elif args.command == "compare":
            code = _compare(args, out, find_events)
        else:
            code = _eval(args, out, find_events)
        out.flush()
        return code
    except (JournalError, SpoolError) as exc:
        err.write(f"{exc}\n")
        return 1
    except _UsageError as exc:
        err.write(f"clankie journal {args.command}: {exc}\n")
        return 2
    except BrokenPipeError:
        # The reader went away (`clankie journal sight F | head`): stop quietly, as a
        # process killed by SIGPIPE would, and keep the interpreter's final flush silent.
        silence(out)
        return 128 + signal.SIGPIPE


def silence(out: TextIO) -> None:
    """Point ``out``'s descriptor at /dev/null once its reader is gone (``… | head``), so later
    writes and the final flush are quiet."""
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
