"""``clankie play`` and ``clankie demo``: a session in the terminal, one line per turn,
ending with the evaluator's aggregate (docs/architecture.md §5). What the progress line shows
of a world (its milestones out of how many, its metrics) is what the world declares in its
``info`` (docs/architecture.md §4)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from bot.config import Settings
from bot.play.journal_lines import one_line
from bot.play.minds.factory import AUTOPILOT, OPENAI
from bot.play.play_host import PlayHost, PlayRefused, StartRequest
from bot.play.session import SettledTurn
from bot.usage.meter import Meter
from journal.cli import silence
from journal.metrics import metrics_text


def _defaults() -> dict[str, dict[str, object]]:
    """Each live action kind's default argument values (left out of the progress line)."""
    from journal.actions import BROWSER_CATALOG, GBA_CATALOG

    out: dict[str, dict[str, object]] = {}
    for catalog in (GBA_CATALOG, BROWSER_CATALOG):
        for model, kind in zip(catalog.models, catalog.kinds, strict=True):
            out[kind] = {
                name: f.default
                for name, f in model.model_fields.items()
                if name != "kind" and not f.is_required()
            }
    return out


_DEFAULTS = _defaults()


def _action_text(action: Mapping[str, object] | None) -> str:
    if not action:
        return "—"
    kind = str(action.get("kind"))
    defaults = _DEFAULTS.get(kind, {})
    args = ",".join(
        f"{k}={v}" for k, v in action.items() if k != "kind" and not (k in defaults and defaults[k] == v)
    )
    return f"{kind}({args})"


def format_turn(
    t: SettledTurn, total_milestones: int | None, metric_labels: dict[str, str] | None = None
) -> str:
    """One progress line: turn, milestones reached (count and latest) and/or the world's
    metrics ("score 4 520 · best tile 512"), outcome, action, effect. A world that declares
    metrics and no milestones shows only its metrics.

    What he says is printed above the line: it was decided before the action, from what he
    had seen by then."""
    columns = [f"turn {t.turn:>4}"]
    milestones = t.progress.get("milestones")
    reached = milestones if isinstance(milestones, list) else []
    if total_milestones or reached or not metric_labels:
        mark = f"{len(reached)}/{total_milestones}" if total_milestones else str(len(reached))
        latest = reached[-1] if reached else "—"
        columns.append(f"milestones {mark:>5} {latest:<16}")
    if metric_labels:
        metrics = t.progress.get("metrics")
        numbers = (
            {k: v for k, v in metrics.items() if isinstance(v, int | float)}
            if isinstance(metrics, dict)
            else {}
        )
        shown = metrics_text(numbers, metric_labels) or "—"
        columns.append(f"{shown:<30}")
    effect = t.effect or t.detail or ""
    columns += [f"{t.outcome:<19}", f"{_action_text(t.action):<28}", effect]
    line = " │ ".join(columns)
    if t.speak and t.speak_wanted and not t.speak_suppressed:  # numbered as the page numbers it
        line = f'           says: "{t.speak}" (turn {t.turn})\n' + line
    return line


def _evaluation(journal: Path, settings: Settings, out: TextIO) -> None:
    """The closing evaluation; an invalid journal is reported as ``clankie journal eval``
    reports one (``path:line: reason``), never with a traceback."""
    from journal.cli import write_report
    from journal.evaluate import evaluate_each
    from journal.reader import JournalError

    print("\nevaluation:", file=out)
    try:  # streamed: the closing summary keeps no row per turn, however long the sitting
        report = evaluate_each(journal, events=settings.event_log).report
    except JournalError as exc:
        print(f"the journal is not valid: {exc}", file=out)
        return
    write_report(report, out)


class _Out:
    """The command's standard output. Once its reader is gone (``clankie play … | head``), every
    later print is skipped and the descriptor points at /dev/null, so the final flush is quiet
    too — what Python's documentation advises for SIGPIPE (``signal``, "Note on SIGPIPE")."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.gone = False

    def write(self, what: Callable[[TextIO], None]) -> bool:
        """Run ``what`` on the stream and flush; False once the reader is gone."""
        if not self.gone:
            try:
                what(self.stream)
                self.stream.flush()
            except BrokenPipeError:
                self.gone = True
                silence(self.stream)
        return not self.gone

    def say(self, line: str) -> bool:
        return self.write(lambda stream: print(line, file=stream))


READER_GONE = 128 + signal.SIGPIPE
"""The exit status when standard output's reader went away, as a process killed by SIGPIPE has."""


async def run_play(args: argparse.Namespace, settings: Settings, stream: TextIO | None = None) -> int:
    usage = Meter(settings)  # the local host's model calls are counted too (clankie usage)
    try:
        return await _run_play(args, settings, stream, usage)
    finally:
        await usage.aclose()


async def _run_play(args: argparse.Namespace, settings: Settings, stream: TextIO | None, usage: Meter) -> int:
    out = _Out(stream or sys.stdout)
    demo = args.command == "demo"
    mind = args.mind
    if demo and mind is None:  # the demo needs no key: with one, a model plays; without, the autopilot
        mind = OPENAI.name if settings.openai.api_key else AUTOPILOT.name
    host = PlayHost(settings, log_failures=False, usage=usage)  # a failure is this command's last line
    try:
        host.preflight()  # before anything is taken: the page, a world, a mind
    except PlayRefused as exc:
        print(f"clankie: cannot start play: {exc}", file=sys.stderr)
        return 2
    lapsed = host.reconcile()
    if lapsed and not out.say(
        f"closed {len(lapsed)} session(s) left running by a process that died: lease_lapsed"
    ):
        return READER_GONE
    web = None
    if demo and not args.no_web:
        from bot.web.auth import WebConfigError
        from bot.web.embed import start_web_for_demo

        try:
            web = await start_web_for_demo(host, settings, host=args.host, port=args.port)
        except WebConfigError as exc:
            print(f"clankie: {exc}", file=sys.stderr)
            return 2
        needs = " (open it as /?token=<your [web] token>)" if settings.web.token is not None else ""
        if not out.say(f"activity page: {web.url}{needs}"):
            await web.close()
            return READER_GONE
    request = StartRequest(
        world=args.world,  # the demo's default world is the CLI's (bot/cli.py)
        mind=mind,
        turns=args.turns,
        minutes=args.minutes,
        seed=args.seed,
        pace_seconds=args.pace,
        exit_when_done=args.exit_when_done or demo,  # the demo stops playing once the story is done
        url=args.url,
    )
    try:
        session = await host.start(request)
    except PlayRefused as exc:
        print(f"clankie: cannot start play: {exc}", file=sys.stderr)
        if web is not None:
            await web.close()
        return 2
    total = len(session.world.info.milestones) or None  # what the world declares it can reach
    turns = session.subscribe()  # before anything is awaited: it ends when the session does
    if not out.say(
        f"playing {session.spec.world} with the {session.spec.mind} mind · run {session.run_id} · "
        f"budget {session.spec.max_turns} turns / {session.spec.max_minutes:g} min"
    ):
        await host.stop()  # the reader is gone already: play ends, the printer prints nothing

    async def printer() -> None:
        async for settled in turns:
            if not out.say(format_turn(settled, total, session.metric_labels)):
                # `clankie play … | head`: the reader went away, so stop play (the journal gets
                # its summary) and finish quietly, as a process killed by SIGPIPE would.
                await host.stop()
                return

    interrupted = False
    async with asyncio.TaskGroup() as tasks:  # the printer ends with play's stream of turns
        tasks.create_task(printer(), name="terminal-printer")
        try:
            outcome = await host.wait()
        except asyncio.CancelledError:  # Ctrl-C / SIGTERM: stop play, report, and quit (page included)
            interrupted = True
            await host.stop()
            outcome = session.outcome
    kept = f" · journal {session.journal_path}" if session.journal_path is not None else ""
    if session.journal_path is not None and session.summary is None:
        kept += " (no summary: it could not be written)"
    journal = session.journal_path
    if out.say(f"\nsession ended: {outcome} after {session.turns_taken} turns{kept}") and journal:
        out.write(lambda stream: _evaluation(journal, settings, stream))
    if outcome == "budget":
        out.say(f"out of budget: {one_line(session.error or 'the money budget is spent', 400)}")
    if outcome == "failed":  # last, on one line, where a script or a person looks for it
        print(
            f"clankie: play failed: {one_line(session.error or 'no reason was given', 1000)}", file=sys.stderr
        )
    if web is not None and demo and not args.exit_when_done and not interrupted and not out.gone:
        if out.say(f"the activity page stays up at {web.url} — Ctrl-C to quit"):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
    if web is not None:
        await web.close()
    if out.gone:
        return READER_GONE
    return 0 if outcome in ("stopped", "budget_exhausted", "budget") else 1
