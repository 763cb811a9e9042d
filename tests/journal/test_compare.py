"""``clankie journal compare A B``: two sittings side by side. The sandbox is played by both
model minds against the wire-level OpenAI fake (a scripted model that follows the sandbox's
walkthrough from the state it is sent), and the two journals are compared; journals built from
samples pin what is unknown (no usage before V4, none for a mind that asked no model) and the
CLI's errors."""

from __future__ import annotations

import io
import json
import statistics
from pathlib import Path
from typing import Any

from bot.config import load_settings
from bot.play.minds.agent import AgentMind
from bot.play.minds.openai_mind import OpenAIMind
from bot.play.play_host import PlayHost, StartRequest
from bot.worlds.sandbox import guide
from journal import samples
from journal.cli import main
from journal.compare import compare, run_summary
from tests.fakes.openai import FakeOpenAI, Structured, tool_call
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401  (fixture)
from tests.journal.build import ours_journal, play_turn, traced_peak
from tests.play.wire import full_action, wire_decision


def _state_after(marker: str, text: str, end: str = "\n") -> dict[str, Any]:
    return json.loads(text.split(marker, 1)[1].split(end, 1)[0])


def decision_model(body: dict[str, Any]) -> Structured:
    """The openai mind's model: reads the state it was sent, answers the walkthrough's move."""
    text = next(p["text"] for p in body["messages"][-1]["content"] if p["type"] == "text")
    state = _state_after("\nState:\n", text, "\nDecide this turn.")
    action = full_action(guide.next_action(state))
    return Structured(
        wire_decision(action, monologue=guide.describe(state), intent=guide.describe(state)[:200])
    )


def agent_model(body: dict[str, Any]) -> Any:
    """The agent mind's model: looks first on odd turns, then moves as the walkthrough says,
    from the newest state in its conversation."""
    messages = body["messages"]
    last = messages[-1]
    opening = (
        last["role"] == "user" and isinstance(last["content"], str) and last["content"].startswith("Turn ")
    )
    if opening and int(last["content"].split(".", 1)[0].split()[1]) % 2:
        return tool_call("look", {"region": None})
    newest = next(
        m["content"]
        for m in reversed(messages)
        if isinstance(m.get("content"), str) and "\nstate: " in m["content"]
    )
    state = _state_after("\nstate: ", newest)
    action = full_action(guide.next_action(state))
    kind = action.pop("kind")
    said = {
        "intent": guide.describe(state)[:200],
        "say": None,
        "objective": None,
        "notes": None,
        "heeded": [],
    }
    return tool_call(kind, {**action, **said})


async def play(tmp_path: Path, fake: FakeOpenAI, mind: Any, name: str) -> Path:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / name)})
    host = PlayHost(settings, mind_factory=lambda *_: mind)
    session = await host.start(
        StartRequest(world="sandbox", mind=name, turns=60, pace_seconds=0, exit_when_done=True)
    )
    assert await host.wait() == "stopped", session.error
    assert session.journal_path is not None
    return session.journal_path


async def test_both_minds_play_the_sandbox_and_compare_side_by_side(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    openai_fake.chat.responder = decision_model
    a = await play(tmp_path, openai_fake, OpenAIMind(openai_fake.client(), "decision-model"), "openai")
    decision_requests = len(openai_fake.chat.requests)
    openai_fake.chat.responder = agent_model
    b = await play(tmp_path, openai_fake, AgentMind(openai_fake.client(), "agent-model"), "agent")
    agent_requests = len(openai_fake.chat.requests) - decision_requests

    report = compare(a, b)
    left, right = report["runs"]
    assert (left["mind"], right["mind"]) == ("openai", "agent")
    for run in (left, right):
        assert run["terminal"] == {"source": "summary", "outcome": "stopped"}
        assert len(run["progress"]["milestones"]) == 7 and run["acceptedRate"] == 1.0
        assert run["verdicts"]["intentToAction"]["rate"] is not None
    assert left["turns"] == right["turns"]  # the same walkthrough, a move per turn either way
    assert [m["turns"][0] == m["turns"][1] for m in report["milestones"]] == [True] * 7
    # cost: one request per turn for the decision mind; looks make the agent's more
    assert left["cost"]["requestsPerTurn"]["mean"] == 1 and left["cost"]["turnsWithUsage"] == left["turns"]
    assert right["cost"]["requestsPerTurn"]["max"] == 2 and 1 < right["cost"]["requestsPerTurn"]["mean"] < 2
    assert left["turns"] == decision_requests
    assert round(right["cost"]["requestsPerTurn"]["mean"] * right["turns"]) == agent_requests
    assert left["cost"]["promptTokensPerTurn"]["mean"] == 1  # the fake reports 1 prompt token a request
    assert right["cost"]["requestBytesPerTurn"]["mean"] > left["cost"]["requestBytesPerTurn"]["mean"]

    out = io.StringIO()
    assert main(["compare", str(a), str(b)], out=out) == 0
    table = out.getvalue()
    assert "world / mind" in table and "sandbox / openai" in table and "sandbox / agent" in table
    assert "request bytes / turn" in table and "left_house" in table
    out = io.StringIO()
    assert main(["compare", str(a), str(b), "--json"], out=out) == 0
    assert json.loads(out.getvalue())["runs"][1]["mind"] == "agent"


def write(tmp_path: Path, name: str, turns: list[dict[str, Any]]) -> Path:
    return samples.write_journal(tmp_path / name, turns)


def test_what_a_journal_does_not_record_is_unknown_and_says_why(tmp_path: Path) -> None:
    usage = {"requests": 3, "requestBytes": 30_000, "promptTokens": None, "completionTokens": None}
    v3 = write(tmp_path, "a", [samples.turn_v3(n) for n in (1, 2, 3)])
    v4 = write(tmp_path, "b", [samples.turn_v4(n, usage=usage) for n in (1, 2)])
    asked_none = write(tmp_path, "c", [samples.turn_v4(n, usage=None) for n in (1, 2)])
    report = compare(v3, v4)
    old, new = report["runs"]
    assert old["cost"]["requestBytesPerTurn"] is None and old["cost"]["decisionMsPerTurn"] is not None
    assert new["cost"]["requestBytesPerTurn"] == {"mean": 30_000, "median": 30_000, "max": 30_000}
    assert new["cost"]["promptTokensPerTurn"] is None  # the endpoint reported no tokens
    out = io.StringIO()
    main(["compare", str(v3), str(asked_none)], out=out)
    rows = {line.split("  ")[0]: line for line in out.getvalue().splitlines()}
    assert "not recorded before turn V4" in rows["request bytes / turn"]
    assert "no model was asked" in rows["request bytes / turn"]
    out = io.StringIO()
    main(["compare", str(v4), str(v4)], out=out)
    assert "the endpoint reported none" in out.getvalue()


def test_bad_input_is_named(tmp_path: Path) -> None:
    good = write(tmp_path, "a", [samples.turn_v4(1, usage=None)])
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(good.read_bytes()[:-5])
    out, err = io.StringIO(), io.StringIO()
    assert main(["compare", str(good), str(torn)], out=out, err=err) == 1
    assert err.getvalue().startswith(f"{torn}:")
    err = io.StringIO()
    assert main(["compare", str(good), str(tmp_path / "nope.jsonl")], out=out, err=err) == 2
    assert "no such journal" in err.getvalue()


def test_a_journal_of_the_original_dialect_compares_by_its_verdicts(tmp_path: Path) -> None:
    from journal.original import samples as original

    ours = write(tmp_path, "a", [samples.turn_v4(1, usage=None)])
    theirs = tmp_path / "original.jsonl"
    lines = [original.header(), original.turn(1), original.turn(2), original.summary(2)]
    theirs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = compare(ours, theirs)
    other = report["runs"][1]
    assert other["dialect"] == "original" and other["turns"] == 2
    assert other["cost"]["requestBytesPerTurn"] is None and other["progress"]["metrics"] is None
    out = io.StringIO()
    assert main(["compare", str(ours), str(theirs)], out=out) == 0
    assert "the original dialect records none" in out.getvalue()


def test_two_long_sittings_compare_in_memory_far_below_their_turns(tmp_path: Path) -> None:
    """Each sitting is read in one streamed pass; what grows with it is the packed cost numbers
    its exact medians need (a few dozen bytes a turn), never the turns (~3 KB a line here)."""
    small = ours_journal(tmp_path / "small.jsonl", 1_500)
    large = ours_journal(tmp_path / "large.jsonl", 6_000)
    runs: list[dict[str, Any]] = []
    peaks = {
        turns: traced_peak(lambda p=path: runs.append(run_summary(p)))
        for path, turns in ((small, 1_500), (large, 6_000))
    }
    run = runs[-1]
    per_turn = (peaks[6_000] - peaks[1_500]) / 4_500
    line = large.stat().st_size / 6_000
    assert per_turn < line / 20, (per_turn, line)
    # the sums are over every turn of the large one
    played = [play_turn(n) for n in range(1, 6_001)]
    request_bytes = [t["evidence"]["usage"]["requestBytes"] for t in played]
    assert run["turns"] == 6_000 and run["cost"]["turnsWithUsage"] == 6_000
    assert run["cost"]["requestBytesPerTurn"] == {
        "mean": round(statistics.fmean(request_bytes), 2),
        "median": round(float(statistics.median(request_bytes)), 2),
        "max": max(request_bytes),
    }
    assert run["outcomes"] == {"accepted": 4_500, "rejected_by_adapter": 1_500}
    assert run["milestoneTurns"] == {"left_house": 1}


async def test_two_servers_unclosed_runs_each_end_as_their_own_event_log_says(
    tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    """Two servers' sittings, each journal without its summary (a disk that refused it): each
    run's end is read from its own server's event log, found beside its own journal directory
    (or named with ``--events`` once per run)."""
    from bot.cli import main as clankie
    from tests.play.scripted import GridWorld, ScriptedMind, press

    state = tmp_path / "state"
    for name in ("CLANKIE_CONFIG", "CLANKIE_EVENT_LOG", "CLANKIE_JOURNAL_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLANKIE_STATE", str(state))
    settings = load_settings(None)
    paths, logs = [], []
    for guild, (turns, stop) in {111: (3, False), 222: (50, True)}.items():
        host = PlayHost(
            settings,
            guild_id=guild,
            world_factory=lambda name, req, s: (GridWorld(), "grid-test", "scripted"),
            mind_factory=lambda name, w, s: ScriptedMind(default=press("right")),
        )
        session = await host.start(StartRequest(turns=turns, pace_seconds=0 if not stop else 60))
        if stop:
            await host.stop()
        await host.wait()
        path = session.journal_path
        assert path is not None
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-1]))  # the summary is gone: only the event log knows the end
        paths.append(path)
        logs.append(host.events.path)
    assert paths[0].parent != paths[1].parent and logs[0] != logs[1]
    capsys.readouterr()
    assert clankie(["journal", "compare", str(paths[0]), str(paths[1]), "--json"]) == 0
    a, b = json.loads(capsys.readouterr().out)["runs"]
    assert (a["terminal"]["outcome"], a["terminal"]["source"]) == ("budget_exhausted", "event_log")
    assert (b["terminal"]["outcome"], b["terminal"]["source"]) == ("stopped", "event_log")
    argv = ["journal", "compare", str(paths[0]), str(paths[1]), "--json", "--events", str(logs[1])]
    assert clankie(argv) == 0  # one --events: both runs read it (A's end is not in B's log)
    a, b = json.loads(capsys.readouterr().out)["runs"]
    assert a["terminal"]["source"] == "none" and b["terminal"]["outcome"] == "stopped"
    assert clankie([*argv[:-2], "--events", str(logs[0]), "--events", str(logs[1])]) == 0
    a, b = json.loads(capsys.readouterr().out)["runs"]
    assert [a["terminal"]["outcome"], b["terminal"]["outcome"]] == ["budget_exhausted", "stopped"]
    assert clankie([*argv, "--events", str(logs[0]), "--events", str(logs[1])]) == 2
    assert "--events is given once" in capsys.readouterr().err
