"""Chaos probes of the model endpoint (issue 24, items 1 and 4): `clankie play` plays the sandbox
with the openai mind, through the real client, against the OpenAI fake on loopback answering
as a misbehaving network does — a captive portal's page (straight, with the status RFC 6585 asks
of it, 511, or by a redirect to its login server), a load balancer's fixed text or JSON that is no chat completion, a body labelled JSON
that is not JSON, an endpoint that never answers, HTTP 500 three times.

Each probe asserts what the person running it sees (the progress lines, `session ended`, the
one `clankie: play failed:` line on stderr), what the journal says (each turn's outcome and
detail, the summary's outcome and reason), what the event log says, and that no settled turn is
lost (turn lines written == turns reported == turns printed). The pauses play asks for between
turns are recorded instead of waited out (the backoff is asserted, not slept through)."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.cli import build_parser
from bot.config import Settings, load_settings
from bot.play.terminal import run_play
from bot.play.turn import StopRequest
from journal.oplog import read_events
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI, Hang, HttpError, Malformed, Structured
from tests.fakes.openai.chat import Reply
from tests.fakes.openai.fixtures import fake_openai
from tests.fakes.openai.intercepted import (
    LoginServer,
    captive_portal_511,
    captive_portal_page,
    captive_portal_redirect,
    fixed_response,
)
from tests.play.wire import wire_decision

KEY = "sk-test-not-real"
RIGHT = wire_decision({"kind": "button_press", "button": "right"}, intent="walk east")


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The pauses play asks for between turns, in order; not waited out (a stop still ends one)."""
    asked: list[float] = []

    async def recorded(self: StopRequest, seconds: float) -> bool:
        asked.append(seconds)
        return bool(self)

    monkeypatch.setattr(StopRequest, "wait", recorded)
    yield asked


@pytest_asyncio.fixture
async def model_endpoint() -> AsyncIterator[FakeOpenAI]:
    """The OpenAI fake on loopback; at the end, every request it saw was a valid one."""
    async with fake_openai() as fake:
        yield fake


@dataclass
class Probe:
    code: int
    out: str  # what `clankie play` printed
    err: str  # its standard error
    logs: str  # the process's log lines (structlog, on standard output)
    settings: Settings
    journal: Any

    @property
    def turn_lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if re.match(r"turn +\d+ │", line)]

    @property
    def ended(self) -> str:
        return next(line for line in self.out.splitlines() if line.startswith("session ended:"))

    def events(self) -> list[Any]:
        run_id = self.journal.header.runId
        return [e for e in read_events(self.settings.event_log).lines if e.data.get("runId") == run_id]

    def no_turn_lost(self) -> None:
        """Every settled turn is in the journal, counted and shown once."""
        journaled = len(self.journal.turns)
        assert [t.turn.turn for t in self.journal.turns] == list(range(1, journaled + 1))
        assert self.journal.summary.turnsTaken == journaled == len(self.turn_lines)
        assert f"after {journaled} turns" in self.ended

    def nothing_crashed(self) -> None:
        everything = self.out + self.err + self.logs
        assert "Traceback" not in everything and "mind_crashed" not in everything
        assert "AttributeError" not in everything
        assert KEY not in everything + self.journal.path.read_text()


async def play(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], turns: int, **openai: Any
) -> Probe:
    settings = load_settings(
        None,
        env={
            "CLANKIE_STATE": str(tmp_path / "state"),
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": fake.base_url,
        },
    )
    settings.openai = settings.openai.model_copy(update=openai)
    args = build_parser().parse_args(f"play --world sandbox --mind openai --turns {turns} --pace 0".split())
    out = io.StringIO()
    capsys.readouterr()
    code = await run_play(args, settings, out)
    logs, err = capsys.readouterr()
    [name] = [p for p in (settings.journal_dir).iterdir() if p.suffix == ".jsonl"]
    return Probe(code, out.getvalue(), err, logs, settings, read_journal(settings.journal_dir / name))


def always(reply: Reply) -> Any:
    return lambda body: reply


UNEXPECTED = {
    # id: (the reply, the content type the person is told, what is said of the body)
    "captive-portal-page": (captive_portal_page(), "text/html; charset=utf-8", "not a chat completion"),
    "fixed-text": (fixed_response("OK"), "text/plain", "not a chat completion"),
    "json-without-choices": (
        fixed_response('{"status": "maintenance", "retry": "later"}', "application/json"),
        "application/json",
        "JSON without choices (its keys: retry, status), not a chat completion",
    ),
    "labelled-json-not-json": (
        fixed_response("Service under maintenance", "application/json"),
        "application/json",
        "a body that does not parse as JSON",
    ),
    "truncated-json": (  # issue 24's probe: a non-JSON body labelled JSON (here one cut short)
        Malformed(b'{"id": "chatcmpl-1", "object": "chat.completion", "choi'),
        "application/json",
        "a body that does not parse as JSON",
    ),
}


@pytest.mark.parametrize("case", list(UNEXPECTED), ids=list(UNEXPECTED))
async def test_an_answer_that_is_no_chat_completion_is_one_named_failure_and_three_end_play(
    tmp_path: Path,
    model_endpoint: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    pauses: list[float],
    case: str,
) -> None:
    reply, content_type, said = UNEXPECTED[case]
    model_endpoint.chat.responder = always(reply)
    probe = await play(tmp_path, model_endpoint, capsys, turns=20)
    endpoint = model_endpoint.base_url.rstrip("/")
    detail = (
        f"the model endpoint {endpoint} answered HTTP 200 with {content_type}, {said} (a proxy, captive "
        "portal or login page in the way, or the wrong address? check OPENAI_BASE_URL)"
    )
    reason = f"3 turns in a row: {detail}"
    # the person: three failed turns naming the endpoint, then one line saying why play ended
    assert probe.code == 1
    assert len(probe.turn_lines) == 3
    assert all("mind_failed" in line and line.endswith(detail) for line in probe.turn_lines)
    assert probe.ended.startswith("session ended: failed after 3 turns")
    assert probe.err.splitlines() == [f"clankie: play failed: {reason}"]
    probe.nothing_crashed()
    # the journal and the event log
    assert [(t.turn.outcome, t.turn.detail) for t in probe.journal.turns] == [("mind_failed", detail)] * 3
    assert (probe.journal.summary.outcome, probe.journal.summary.reason) == ("failed", reason)
    [running, failed] = probe.events()
    assert running.type == "embodiment.session.running" and failed.type == "embodiment.session.failed"
    assert (failed.data["outcome"], failed.data["reason"]) == ("failed", reason)
    probe.no_turn_lost()
    # what it cost: one request a turn (a 2xx is not retried), backing off 1 s then 2 s
    assert len(model_endpoint.chat.requests) == 3
    assert pauses == [1.0, 2.0]


async def test_a_captive_portal_answering_511_is_an_unexpected_answer_and_three_end_play(
    tmp_path: Path, model_endpoint: FakeOpenAI, capsys: pytest.CaptureFixture[str], pauses: list[float]
) -> None:
    """RFC 6585 §6's own response (511 with its login page): not a transient 5xx to back off
    from for ever, but an answer from the network in the way, named, and three of them end play."""
    model_endpoint.chat.responder = always(captive_portal_511())
    probe = await play(tmp_path, model_endpoint, capsys, turns=20)  # the default timeout and retries
    endpoint = model_endpoint.base_url.rstrip("/")
    detail = (
        f"the model endpoint {endpoint} answered HTTP 511 with text/html; charset=utf-8, Network "
        "Authentication Required: the network wants a sign-in first (a proxy, captive portal or login "
        "page in the way, or the wrong address? check OPENAI_BASE_URL)"
    )
    reason = f"3 turns in a row: {detail}"
    assert probe.code == 1
    assert all("mind_failed" in line and line.endswith(detail) for line in probe.turn_lines)
    assert probe.ended.startswith("session ended: failed after 3 turns")
    assert probe.err.splitlines() == [f"clankie: play failed: {reason}"]
    assert [(t.turn.outcome, t.turn.detail) for t in probe.journal.turns] == [("mind_failed", detail)] * 3
    assert (probe.journal.summary.outcome, probe.journal.summary.reason) == ("failed", reason)
    assert probe.events()[-1].data["reason"] == reason
    # the SDK retries any 5xx once ([openai] max_retries 1) before the turn hears of it
    assert len(model_endpoint.chat.requests) == 6
    assert pauses == [1.0, 2.0]
    probe.nothing_crashed()
    probe.no_turn_lost()


async def test_a_captive_portal_redirect_names_where_the_request_was_sent(
    tmp_path: Path, model_endpoint: FakeOpenAI, capsys: pytest.CaptureFixture[str], pauses: list[float]
) -> None:
    async with LoginServer() as portal:
        model_endpoint.chat.responder = always(captive_portal_redirect(portal.url("/login?session=Zq81tok")))
        probe = await play(tmp_path, model_endpoint, capsys, turns=20)
    endpoint = model_endpoint.base_url.rstrip("/")
    assert portal.seen == ["/login?session=Zq81tok"] * 3  # the client followed each redirect
    where = f"{endpoint} (redirected to http://127.0.0.1:{portal.port}/login)"  # the query left out
    reason = probe.journal.summary.reason
    assert reason.startswith(f"3 turns in a row: the model endpoint {where} answered HTTP 200 with text/html")
    assert probe.err.splitlines() == [f"clankie: play failed: {reason}"]
    assert "Zq81tok" not in probe.out + probe.err + probe.logs + probe.journal.path.read_text()
    assert probe.events()[-1].data["reason"] == reason
    probe.nothing_crashed()
    probe.no_turn_lost()


async def test_unexpected_answers_between_good_turns_do_not_end_play(
    tmp_path: Path, model_endpoint: FakeOpenAI, capsys: pytest.CaptureFixture[str], pauses: list[float]
) -> None:
    page, good = captive_portal_page(), Structured(RIGHT)
    model_endpoint.chat.script(page, page, good, page, page, good)
    probe = await play(tmp_path, model_endpoint, capsys, turns=6)
    outcomes = [t.turn.outcome for t in probe.journal.turns]
    assert outcomes == ["mind_failed", "mind_failed", "accepted", "mind_failed", "mind_failed", "accepted"]
    assert probe.code == 0 and probe.ended.startswith("session ended: budget_exhausted after 6 turns")
    assert probe.err == "" and probe.journal.summary.reason is None
    assert pauses == [1.0, 2.0, 1.0, 2.0]
    probe.nothing_crashed()
    probe.no_turn_lost()


async def test_a_silent_endpoint_is_found_out_within_the_configured_tries(
    tmp_path: Path, model_endpoint: FakeOpenAI, capsys: pytest.CaptureFixture[str], pauses: list[float]
) -> None:
    model_endpoint.chat.responder = always(Hang())
    probe = await play(tmp_path, model_endpoint, capsys, turns=2, timeout_s=0.2, max_retries=1)
    endpoint = model_endpoint.base_url.rstrip("/")
    detail = (
        f"the model endpoint {endpoint} did not answer in time (nothing within 0.2 s, 2 tries; "
        "[openai] timeout_s and max_retries)"
    )
    assert probe.code == 0 and probe.ended.startswith("session ended: budget_exhausted after 2 turns")
    assert all("mind_failed" in line and line.endswith(detail) for line in probe.turn_lines)
    assert [(t.turn.outcome, t.turn.detail) for t in probe.journal.turns] == [("mind_failed", detail)] * 2
    assert probe.journal.summary.outcome == "budget_exhausted"
    assert probe.events()[-1].type == "embodiment.session.stopped"
    assert len(model_endpoint.chat.requests) == 4  # two tries a turn, as configured
    for line in probe.journal.turns:  # each turn waited out both tries, and no more than that
        timing = line.evidence.timing
        took = (_at(timing.decisionSettledAt) - _at(timing.decisionStartedAt)).total_seconds()
        assert 0.4 <= took < 5.0, took
    assert pauses == [1.0]  # and none after the second: the budget is spent
    assert probe.err == ""
    probe.nothing_crashed()
    probe.no_turn_lost()


async def test_500_three_times_is_one_failed_turn_then_play_heals(
    tmp_path: Path, model_endpoint: FakeOpenAI, capsys: pytest.CaptureFixture[str], pauses: list[float]
) -> None:
    model_endpoint.chat.script(
        *[HttpError(500, "The server had an error while processing your request.")] * 3
    )
    model_endpoint.chat.responder = always(Structured(RIGHT))
    probe = await play(tmp_path, model_endpoint, capsys, turns=3)  # the default timeout and retries
    endpoint = model_endpoint.base_url.rstrip("/")
    outcomes = [(t.turn.outcome, t.turn.detail) for t in probe.journal.turns]
    assert outcomes == [
        ("mind_failed", f"the model endpoint {endpoint} answered HTTP 500"),
        ("accepted", None),
        ("accepted", None),
    ]
    assert "mind_failed" in probe.turn_lines[0] and probe.turn_lines[0].endswith("answered HTTP 500")
    # turn 1: the try and its one retry; turn 2: a 500, then the retry is answered; turn 3: one
    assert len(model_endpoint.chat.requests) == 5
    assert probe.code == 0 and probe.ended.startswith("session ended: budget_exhausted after 3 turns")
    assert probe.journal.summary.outcome == "budget_exhausted" and probe.journal.summary.accepted == 2
    assert probe.events()[-1].type == "embodiment.session.stopped"
    assert probe.events()[-1].data["outcome"] == "budget_exhausted"
    assert pauses == [1.0]
    assert probe.err == ""
    probe.nothing_crashed()
    probe.no_turn_lost()


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
