"""``hearth history``: what it prints of the record, and that nothing in it can drive the terminal."""

from __future__ import annotations

from agent.assistant import Assistant
from agent.record import ConversationRecord, RecordEntry
from agent.text_turns import TextTurns
from audio.wav import WavFileSpeaker
from firmware_py.history_cli import format_turns, print_history
from tests.fakes import ScriptedChatModel, ToneSynthesizer, say
from tests.test_turn import make_deps

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
