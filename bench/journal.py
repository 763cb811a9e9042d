"""Journal benchmarks (docs/architecture.md §14).

1. Validated read vs bare parse: a generated 50 000-turn V2 journal (V3 header, V2 turns
   with a full evidence packet: three observations of a game state with a 15×11 tile view,
   a mind's monologue and notes of a few hundred characters; ~4 KB a line) is read line by
   line by ``journal.reader.iter_journal`` (every line validated and order-checked) and, on
   the same bytes, split and parsed with bare ``orjson.loads`` per line; both discard each
   line. Both sides are timed in process CPU time, interleaved chunk by chunk over five
   rounds (see :func:`_interleaved_pass`). Target: reader MB/s ≥ 30% of orjson's. For
   information, the same with every line kept in memory (``read_journal`` beside a list of
   orjson dicts).
   The same on a generated 50 000-turn journal in the original service's dialect
   (``journal.original.samples``: three observation stages of scene, overworld with
   surroundings, minimap, occupants and exits, and party; an environment action result;
   ~7.7 KB a line), read by ``journal.original.reader.iter_original``. Target: ≥ 30%.
2. Story card cost: ``JourneyIndex.story_card`` on a warm index for a 100-turn journey and a
   100 000-turn journey (two sittings each; compact observation states keep the big one
   near 150 MB — the card's cost must not depend on either size). Target: the big one costs ≤ 2× the small one. The
   live ``StoryProjector.card()`` after 100 vs 100 000 fed turns is measured the same way.
3. Evaluation cost: ``clankie journal eval`` of the 50 000-turn journal of (1) streams it through
   the evaluator (``journal.evaluate.evaluate_each``: the aggregate only, and with
   ``--json``'s row spool printing to /dev/null), in process CPU time beside a bare validated
   read (``iter_journal``) of the same file. Target: evaluation ≥ 60% of the validated read's
   MB/s (judging a turn costs less than half of validating it). And its memory: a fresh
   process evaluates the 100-turn and then the 50 000-turn journal; the growth of its peak RSS
   (VmHWM) between the two must stay ≤ 32 MB (the file is ~250 MB; holding every turn, as
   eval did before, grows it by ~30 MB per 1 000 turns).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
sys.path.append(str(HERE))

import orjson  # noqa: E402
from _common import SMOKE, Report, best_of, paired_per_call  # noqa: E402

from journal import samples  # noqa: E402
from journal.evaluate import evaluate_each  # noqa: E402
from journal.journeys import JourneyIndex  # noqa: E402
from journal.original import samples as original_samples  # noqa: E402
from journal.original.reader import iter_original  # noqa: E402
from journal.reader import _gc_paused, iter_journal, read_journal  # noqa: E402
from journal.report import JsonRows  # noqa: E402
from journal.schema import TurnV3  # noqa: E402
from journal.story import StoryProjector  # noqa: E402

READ_TURNS = 500 if SMOKE else 50_000
SMALL, BIG = 100, 1_000 if SMOKE else 100_000
ROUNDS = 1 if SMOKE else 5
CHUNK = 200 if SMOKE else 2_000  # lines (~10 MB) per timed step of the read comparison
CARD_CALLS = 20 if SMOKE else 2000


def write_journal(
    path: Path, turns: int, *, run_id: str, journey_id: str, first: int = 1, compact: bool = False
) -> int:
    """Write a valid journal as raw lines (the writer's per-turn fsync is not under test)."""
    header = samples.header(run_id=run_id, journey_id=journey_id, started_at=samples.stamp(first * 2))
    size = 0
    with open(path, "wb") as fh:
        for line in [header, *(samples.turn_v3(n, compact=compact) for n in range(first, first + turns))]:
            data = orjson.dumps(line) + b"\n"
            fh.write(data)
            size += len(data)
    return size


def _interleaved_pass(
    path: Path, rounds: int, iterate: Callable[[Path], Iterator[object]] = iter_journal
) -> tuple[float, float]:
    """CPU seconds of the validated reader and of bare orjson over the same file.

    Each round walks the file once on both sides, alternating chunk by chunk: CHUNK lines
    taken from the real :func:`iter_journal` generator (or ``iterate``), then the same CHUNK raw lines through
    ``orjson.loads`` (which side goes first alternates too). Each side keeps, per chunk, its
    fastest round; the totals are the sums of those. Process CPU time leaves out the time
    other processes hold the core, and the fine interleaving lets both sides share whatever
    slowdown is left (caches, frequency), so the ratio holds steady on a busy machine.
    """
    clock = time.process_time
    best_validated: list[float] = []
    best_bare: list[float] = []
    for round_no in range(rounds):
        times_validated: list[float] = []
        times_bare: list[float] = []
        # Chunk 0 on each side: read and split the file, then the header line.
        start = clock()
        lines = iterate(path)
        next(lines)
        times_validated.append(clock() - start)
        start = clock()
        raws = path.read_bytes().split(b"\n")
        raws.pop()
        orjson.loads(raws[0])
        times_bare.append(clock() - start)
        for index, first in enumerate(range(1, len(raws), CHUNK)):
            chunk = raws[first : first + CHUNK]
            sides = [("validated", len(chunk)), ("bare", chunk)]
            if (index + round_no) % 2:
                sides.reverse()
            for side, work in sides:
                start = clock()
                if side == "validated":
                    assert isinstance(work, int)
                    for _ in islice(lines, work):
                        pass
                    times_validated.append(clock() - start)
                else:
                    assert isinstance(work, list)
                    for raw in work:
                        orjson.loads(raw)
                    times_bare.append(clock() - start)
        assert next(lines, None) is None, "the reader yielded more lines than the file holds"
        del raws
        if round_no == 0:
            best_validated, best_bare = times_validated, times_bare
        else:
            best_validated = [min(a, b) for a, b in zip(best_validated, times_validated, strict=True)]
            best_bare = [min(a, b) for a, b in zip(best_bare, times_bare, strict=True)]
    return sum(best_validated), sum(best_bare)


def bench_read(report: Report, root: Path) -> None:
    path = root / "20261130T020000Z-read.jsonl"
    size = write_journal(path, READ_TURNS, run_id="read", journey_id="read")
    report.info(
        "journal", f"{READ_TURNS} V2 turns, {size / 1e6:.1f} MB, {size / (READ_TURNS + 1):.0f} B/line"
    )
    validated_s, bare_s = _interleaved_pass(path, ROUNDS)
    report.info("orjson.loads per line (CPU time)", f"{size / bare_s / 1e6:.0f} MB/s")
    report.info("iter_journal, validated (CPU time)", f"{size / validated_s / 1e6:.0f} MB/s")

    def bare_kept() -> None:
        with _gc_paused():
            kept = [orjson.loads(raw) for raw in path.read_bytes().split(b"\n")[:-1]]
        assert len(kept) == READ_TURNS + 1

    def validated_kept() -> None:
        assert len(read_journal(path).turns) == READ_TURNS

    bare_kept_s = best_of(bare_kept, 2, clock=time.process_time)
    validated_kept_s = best_of(validated_kept, 2, clock=time.process_time)
    report.info(
        "kept in memory: orjson list / read_journal (CPU time)",
        f"{size / bare_kept_s / 1e6:.0f} / {size / validated_kept_s / 1e6:.0f} MB/s",
    )
    ratio = bare_s / validated_s
    report.check("validated read / bare orjson", ratio * 100, "≥ 30%", ratio >= 0.30, "{:.1f}%")


def bench_read_original(report: Report, root: Path) -> None:
    """The same comparison on a journal of the original service's dialect (issue 14)."""
    path = root / "2026-08-19T04-15-14-694Z-original.jsonl"
    lines = [
        original_samples.header(),
        *(original_samples.turn(n, speech=n % 7 == 0) for n in range(READ_TURNS)),
        original_samples.summary(READ_TURNS),
    ]
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    del lines
    path.write_bytes(data)
    size = len(data)
    report.info(
        "original-dialect journal",
        f"{READ_TURNS} V2 turns, {size / 1e6:.1f} MB, {size / (READ_TURNS + 2):.0f} B/line",
    )
    validated_s, bare_s = _interleaved_pass(path, ROUNDS, iter_original)
    report.info("orjson.loads per line, original (CPU time)", f"{size / bare_s / 1e6:.0f} MB/s")
    report.info("iter_original, validated (CPU time)", f"{size / validated_s / 1e6:.0f} MB/s")
    ratio = bare_s / validated_s
    report.check("original dialect: validated / bare orjson", ratio * 100, "≥ 30%", ratio >= 0.30, "{:.1f}%")
    path.unlink()


def bench_story(report: Report, root: Path) -> None:
    small_dir, big_dir = root / "small", root / "big"
    small_dir.mkdir()
    big_dir.mkdir()
    for directory, turns in ((small_dir, SMALL), (big_dir, BIG)):
        half = turns // 2  # two sittings each, so both indexes watch the same number of files
        write_journal(directory / "20261130T020000Z-a.jsonl", half, run_id="a", journey_id="J", compact=True)
        write_journal(
            directory / "20261201T020000Z-b.jsonl",
            turns - half,
            run_id="b",
            journey_id="J",
            first=half + 1,
            compact=True,
        )
    small, big = JourneyIndex(small_dir), JourneyIndex(big_dir)
    for index, turns in ((small, SMALL), (big, BIG)):
        card = index.story_card("J")
        assert card is not None and card.turnsTaken == turns, card
    calls = CARD_CALLS
    small_s, big_s = paired_per_call(lambda: small.story_card("J"), lambda: big.story_card("J"), calls)
    report.info("story_card, 100-turn journey", f"{small_s * 1e6:.1f} µs")
    report.info("story_card, 100 000-turn journey", f"{big_s * 1e6:.1f} µs")
    report.check("story card 100 000 / 100 turns", big_s / small_s, "≤ 2×", big_s / small_s <= 2.0, "{:.2f}×")

    lines = [TurnV3.model_validate(samples.turn_v3(n)) for n in range(1, 1001)]
    header = read_journal(small_dir / "20261130T020000Z-a.jsonl").header
    live: dict[int, StoryProjector] = {}
    for turns in (SMALL, BIG):
        projector = StoryProjector()
        projector.feed_header(header)
        for i in range(turns):
            projector.feed_turn(lines[i % len(lines)])
        live[turns] = projector
    live_small, live_big = paired_per_call(live[SMALL].card, live[BIG].card, calls)
    report.info("live card after 100 / 100 000 turns", f"{live_small * 1e6:.1f} / {live_big * 1e6:.1f} µs")
    report.check(
        "live card 100 000 / 100 turns",
        live_big / live_small,
        "≤ 2×",
        live_big / live_small <= 2.0,
        "{:.2f}×",
    )


_PEAK_RSS = """
import sys
from journal.evaluate import evaluate_each

def peak_kib():  # this process's own high-water RSS (ru_maxrss would carry the parent's over exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

evaluate_each(sys.argv[1])
before = peak_kib()
evaluate_each(sys.argv[2])
print(peak_kib() - before)
"""


def bench_eval(report: Report, root: Path) -> None:
    path = root / "20261130T020000Z-read.jsonl"  # bench_read's
    size = path.stat().st_size

    def read() -> None:
        for _ in iter_journal(path):
            pass

    def aggregate() -> None:
        assert evaluate_each(path).report["aggregate"]["turns"] == READ_TURNS

    def as_json() -> None:
        with JsonRows() as rows, open(os.devnull, "w") as out:
            rows.write(evaluate_each(path, None, None, rows).report, out)
        assert rows.rows == READ_TURNS

    read_s = best_of(read, 2, clock=time.process_time)
    eval_s = best_of(aggregate, 2, clock=time.process_time)
    json_s = best_of(as_json, 2, clock=time.process_time)
    report.info(
        "iter_journal / eval / eval --json (CPU time)",
        " / ".join(f"{size / s / 1e6:.0f} MB/s" for s in (read_s, eval_s, json_s)),
    )
    ratio = read_s / json_s
    report.check("eval --json / validated read", ratio * 100, "≥ 60%", ratio >= 0.60, "{:.1f}%")

    small = root / "small-eval.jsonl"
    write_journal(small, SMALL, run_id="small", journey_id="small")
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(small), str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parent,
    )
    grown_mb = int(done.stdout.strip()) / 1024
    report.info("journal evaluated in a fresh process", f"{READ_TURNS} turns, {size / 1e6:.0f} MB")
    report.check("eval peak RSS growth, 100 → 50 000 turns", grown_mb, "≤ 32 MB", grown_mb <= 32, "{:.1f} MB")


def main() -> int:
    report = Report("journal", smoke=SMOKE)
    with tempfile.TemporaryDirectory(prefix="clankie-bench-") as tmp:
        root = Path(tmp)
        bench_read(report, root)
        bench_eval(report, root)
        bench_read_original(report, root)
        bench_story(report, root)
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(main())
