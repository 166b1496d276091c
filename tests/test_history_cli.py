"""``hearth history``: what it prints of the record, and that nothing in it can drive the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.record import ConversationRecord, RecordEntry
from agent.text_turns import TextTurns
from audio.wav import WavFileSpeaker
from firmware_py.cli import main
from firmware_py.history_cli import format_turns, print_history
from tests.fakes import ScriptedChatModel, ToneSynthesizer, say
from tests.test_turn import make_deps

ROOT = Path(__file__).resolve().parent.parent

ESCAPES = "\x1b[2J\x1b]0;pwned\x07"
"""Clears the screen and retitles the terminal, if printed raw."""


def _raw(text: str) -> bool:
    return any(ch in text for ch in ("\x1b", "\x07", "\u202e"))


def test_control_characters_kept_in_older_records_are_printed_escaped(tmp_path, capsys) -> None:
    path = tmp_path / "conversation.sqlite3"
    record = ConversationRecord.open(path)
    record.append([
        RecordEntry(1, "user", f"hello {ESCAPES} there", "heard"),
        RecordEntry(1, "tool", "shopping_add", "ok", "shopping_add", data={"args": {"item": f"milk{ESCAPES}\u202eevil"}, "origin": "user"}),
        RecordEntry(1, "assistant", f"Added milk{ESCAPES}.", "spoken", "answer"),
        RecordEntry(1, "turn", "", "answered"),
    ])
    record.close()
    assert print_history(path, 5) == 0
    out = capsys.readouterr().out
    assert not _raw(out)
    assert "hello \\x1b[2J\\x1b]0;pwned\\x07 there" in out
    assert "\\u202eevil" in out and "Added milk\\x1b[2J" in out


async def test_a_text_turn_is_shown_as_sent_as_text_and_a_spoken_one_as_spoken() -> None:
    deps = make_deps(chat=ScriptedChatModel("It is noon."), speaker=WavFileSpeaker(16000),
                     synthesizer=ToneSynthesizer(seconds_per_char=0.001))
    assistant = Assistant(deps)
    assert [u async for u in TextTurns(assistant).answer_text("what time is it")] == ["It is noon."]
    await say(assistant, "and now")
    lines = format_turns(assistant.record.entries(), 2).splitlines()
    assert [line for line in lines if line.startswith("  you:")] == ["  you:    what time is it  (sent as text)", "  you:    and now"]
    assert [line for line in lines if line.startswith("  hearth:")] == [
        "  hearth: It is noon.  (sent as text)",  # nothing was played: it went back to whoever asked
        "  hearth: It is noon.  (spoken)",
    ]


def _recorded(folder: Path, turns: int, words: str = "what time is it") -> Path:
    """A conversation record of ``turns`` answered turns in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    record = ConversationRecord.open(folder / "conversation.sqlite3")
    for _ in range(turns):
        number = record.begin_turn()
        record.append([
            RecordEntry(number, "user", words, "heard"),
            RecordEntry(number, "assistant", "It is noon.", "spoken", "answer"),
            RecordEntry(number, "turn", "", "answered"),
        ])
    record.close()
    return folder


def _no_config(tmp_path: Path) -> str:
    empty = tmp_path / "hearth.toml"
    empty.write_text("")
    return str(empty)


def test_a_reader_that_stops_after_one_line_ends_the_history_quietly(tmp_path) -> None:
    # `hearth history | head -1`: far more than a pipe holds, so the writer is still writing when
    # the reader goes away, every time.
    folder = _recorded(tmp_path / "data", 60, "a long request " * 200)
    env = {**os.environ, "HEARTH_DATA_DIR": str(folder)}
    argv = [sys.executable, "-m", "firmware_py.cli", "history", "--last", "60", "--config", _no_config(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert first.startswith(b"#1  ")
    assert err == ""


@pytest.mark.parametrize("last", ["0", "-1"])
def test_a_count_of_turns_below_one_is_refused_in_one_line(last, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("HEARTH_DATA_DIR", str(_recorded(tmp_path / "data", 23)))
    assert main(["history", "--last", last, "--config", _no_config(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"hearth: --last {last}: give how many of the latest turns to show, 1 or more"]


def test_a_data_folder_that_is_a_file_is_said_to_be_one(tmp_path, monkeypatch, capsys) -> None:
    # As HEARTH_DATA_DIR=/etc/passwd: a file where the folder should be.
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("HEARTH_DATA_DIR", str(passwd))
    assert main(["history", "--config", _no_config(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"hearth: $HEARTH_DATA_DIR {passwd}: a file, not a folder"]
    monkeypatch.setenv("HEARTH_DATA_DIR", str(passwd / "data"))
    assert main(["history", "--config", _no_config(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"hearth: $HEARTH_DATA_DIR {passwd / 'data'}: {passwd} is a file, not a folder"]


def test_a_record_that_is_no_record_is_said_to_be_none(tmp_path, capsys) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "conversation.sqlite3").write_text("not a database, " * 100)
    assert main(["history", "--data-dir", str(folder), "--config", _no_config(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"hearth: {folder / 'conversation.sqlite3'}: not a conversation record (file is not a database)"]


def test_the_history_of_the_data_folder_named_by_the_flag_is_shown(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("HEARTH_DATA_DIR", str(_recorded(tmp_path / "household", 2, "elsewhere")))
    folder = _recorded(tmp_path / "data", 3)
    assert main(["history", "--data-dir", str(folder), "--config", _no_config(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines() if line.startswith("#")] == ["#1", "#2", "#3"]
    assert "elsewhere" not in out
