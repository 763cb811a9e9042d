"""`clankie journal runs|story DIR`: a directory that is missing is said to be missing, one that
is a file is said not to be a directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from journal.cli import main


@pytest.mark.parametrize("command", ["runs", "story"])
def test_a_missing_directory_is_named_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    missing = tmp_path / "nonexistent"
    assert main([command, str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"clankie journal {command}: {missing}: no such directory\n"
    assert captured.out == ""


@pytest.mark.parametrize("command", ["runs", "story"])
def test_a_file_is_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    a_file = tmp_path / "journal.jsonl"
    a_file.write_text("")
    assert main([command, str(a_file)]) == 2
    assert capsys.readouterr().err == f"clankie journal {command}: {a_file}: not a directory\n"
