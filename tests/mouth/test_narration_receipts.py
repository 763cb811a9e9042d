"""The narration gate's three suppressions and the allowed case; the receipt trail read back
with journal.oplog.read_receipts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.mouth.narration_gate import COOLDOWN_S, GateDecision, NarrationGate
from bot.mouth.receipts import ENV_PATH, ReceiptTrail
from journal.oplog import read_receipts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_gate_suppressions_and_allowed() -> None:
    clock = Clock()
    gate = NarrationGate(clock)
    assert gate.decide(listening=False, speaking=False) == GateDecision(False, "not_listening")
    assert gate.decide(listening=True, speaking=True) == GateDecision(False, "speaking")
    assert gate.decide(listening=True, speaking=False) == GateDecision(True)
    clock.now += COOLDOWN_S - 0.5
    decision = gate.decide(listening=True, speaking=False)
    assert (decision.allowed, decision.reason) == (False, "cooldown")
    assert decision.wait_s == pytest.approx(0.5)
    clock.now += 0.5
    assert gate.decide(listening=True, speaking=False).allowed
    # suppressed attempts do not restart the cooldown; not listening wins over the others
    clock.now += 1.0
    assert gate.decide(listening=False, speaking=True).reason == "not_listening"
    assert gate.decide(listening=True, speaking=True).reason == "speaking"
    clock.now += COOLDOWN_S - 1.0
    assert gate.decide(listening=True, speaking=False).allowed


def test_receipts_are_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "voice" / "receipts.jsonl"
    trail = ReceiptTrail(path, run_id="run-1")
    trail.requested("d1", turn=3)
    trail.done("d1", turn=3)
    trail.played("d1", True, turn=3)
    trail.requested("d2", turn=4)
    trail.failed("d2", "socket closed", turn=4)
    trail.suppressed("d3", "cooldown", turn=5)
    trail.refused("d4", "no_voice_session")
    read = read_receipts(path)
    assert read.skipped == []
    got = [(line.type, line.deliveryId, line.data) for line in read.lines]
    assert got == [
        ("discord.voice.model_response", "d1", {"phase": "requested", "runId": "run-1", "turn": 3}),
        ("discord.voice.model_response", "d1", {"phase": "done", "runId": "run-1", "turn": 3}),
        ("discord.voice.response", "d1", {"played": True, "runId": "run-1", "turn": 3}),
        ("discord.voice.model_response", "d2", {"phase": "requested", "runId": "run-1", "turn": 4}),
        (
            "discord.voice.model_response",
            "d2",
            {"phase": "failed", "error": "socket closed", "runId": "run-1", "turn": 4},
        ),
        (
            "discord.voice.play_narration_suppressed",
            "d3",
            {"reason": "cooldown", "runId": "run-1", "turn": 5},
        ),
        ("discord.voice.play_refusal", "d4", {"reason": "no_voice_session", "runId": "run-1"}),
    ]
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_failed_write_is_counted_not_raised(tmp_path: Path) -> None:
    trail = ReceiptTrail(tmp_path)  # a directory: the append fails (on the writer's thread)
    assert trail.played("d1", False) is not None  # made and given to the writer
    assert trail.write_errors == 1  # no loop here: the writer was waited for
    bad = ReceiptTrail(tmp_path / "x.jsonl")
    assert bad.refused("", "empty delivery id") is None  # invalid: refused at once
    assert bad.write_errors == 1 and not bad.path.exists()


def test_trail_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_PATH, raising=False)
    assert ReceiptTrail.from_env() is None
    monkeypatch.setenv(ENV_PATH, str(tmp_path / "r.jsonl"))
    trail = ReceiptTrail.from_env(run_id="r9")
    assert trail is not None and trail.path == tmp_path / "r.jsonl" and trail.run_id == "r9"


def test_gate_narration_writes_each_suppression(tmp_path: Path) -> None:
    from bot.mouth.receipts import gate_narration

    clock = Clock()
    gate = NarrationGate(clock)
    trail = ReceiptTrail(tmp_path / "r.jsonl")
    assert (
        gate_narration(gate, trail, "t1", listening=False, speaking=False, turn=1).reason == "not_listening"
    )
    assert gate_narration(gate, trail, "t2", listening=True, speaking=True, turn=2).reason == "speaking"
    assert gate_narration(gate, trail, "t3", listening=True, speaking=False, turn=3).allowed
    assert gate_narration(gate, trail, "t4", listening=True, speaking=False, turn=4).reason == "cooldown"
    lines = read_receipts(trail.path).lines
    assert [(line.deliveryId, line.data["reason"]) for line in lines] == [
        ("t1", "not_listening"),
        ("t2", "speaking"),
        ("t4", "cooldown"),
    ]
    assert {line.type for line in lines} == {"discord.voice.play_narration_suppressed"}
