"""``hearth demo``: what it prints, on scripted models (the real ones: tests/test_loop_integration.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import firmware_py.demo as demo
from agent.deciding.confirm import PendingAct
from agent.deciding.tool_calls import ToolPlan
from agent.results import Outcome, TurnResult
from agent.timeline import Timeline
from agent.listening.listen import ListenSettings
from audio.protocols import AudioChunk
from audio.wav import write_wav
from firmware_py.cli import main
from firmware_py.config import parse_config
from tests.fakes import ScriptedChatModel, ScriptedRecognizer, ToneSynthesizer, speech_like
from tests.test_turn import make_deps


def _scripted(monkeypatch, heard: str, reply: str) -> None:
    async def deps_over(config, speaker):
        return make_deps(recognizer=ScriptedRecognizer(heard), chat=ScriptedChatModel(reply), speaker=speaker,
                         synthesizer=ToneSynthesizer(seconds_per_char=0.001), listen=ListenSettings(no_speech_timeout_s=0.5))

    async def nothing_to_close(deps) -> None:
        pass

    monkeypatch.setattr(demo, "build_turn_deps", deps_over)
    monkeypatch.setattr(demo, "close_turn_deps", nothing_to_close)


async def test_a_silent_request_prints_what_was_said(tmp_path, monkeypatch, capsys) -> None:
    _scripted(monkeypatch, "", "never asked")
    silence = tmp_path / "silence.wav"
    write_wav(silence, AudioChunk(np.zeros(16000, np.float32), 16000))
    assert await demo.run_demo(parse_config({}), silence, tmp_path / "reply.wav", None, data_dir=tmp_path) == 0
    out = capsys.readouterr().out
    # The model wrote nothing, but the listener heard a phrase: that is what was said.
    assert "said:    \"I didn't hear anything. Press the button and try again.\"" in out
    assert "outcome: no_speech" in out


async def test_words_from_the_recognizer_and_the_model_are_printed_escaped(tmp_path, monkeypatch, capsys) -> None:
    _scripted(monkeypatch, "hello \x1b[2J there", "Hi \x1b]0;pwned\x07 there.")
    request = tmp_path / "request.wav"
    write_wav(request, speech_like(0.6, silence_before_s=0.1, silence_after_s=0.0))
    assert await demo.run_demo(parse_config({}), request, tmp_path / "reply.wav", None, data_dir=tmp_path) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "hello \\x1b[2J there" in out


def _request(tmp_path: Path) -> Path:
    request = tmp_path / "request.wav"
    write_wav(request, speech_like(0.6, silence_before_s=0.1, silence_after_s=0.0))
    return request


def _demo_argv(tmp_path: Path, *more: str) -> list[str]:
    empty = tmp_path / "hearth.toml"
    empty.write_text("")
    return ["demo", "--config", str(empty), "--input", str(_request(tmp_path)), "--out", str(tmp_path / "reply.wav"), *more]


def test_a_demo_given_a_data_folder_records_its_turn_and_the_history_of_that_folder_shows_it(tmp_path, monkeypatch, capsys) -> None:
    _scripted(monkeypatch, "what time is it", "It is noon.")
    folder = tmp_path / "data"
    assert main(_demo_argv(tmp_path, "--data-dir", str(folder))) == 0
    out = capsys.readouterr().out
    assert f"recorded: turn #1 in {folder / 'conversation.sqlite3'}; `hearth history --data-dir {folder}` shows it" in out
    assert main(["history", "--data-dir", str(folder), "--config", str(tmp_path / "hearth.toml")]) == 0
    history = capsys.readouterr().out.splitlines()
    assert history[0].startswith("#1  ") and history[0].endswith("answered")
    assert history[1:] == ["  you:    what time is it", "  hearth: It is noon.  (spoken)"]


def test_a_demo_in_a_scratch_folder_says_plainly_that_its_turn_is_not_recorded(tmp_path, monkeypatch, capsys) -> None:
    _scripted(monkeypatch, "what time is it", "It is noon.")
    assert main(_demo_argv(tmp_path)) == 0
    data = [line for line in capsys.readouterr().out.splitlines() if line.startswith("data:")]
    assert len(data) == 1
    assert data[0].endswith("(a scratch folder, removed afterwards, and this turn is not recorded; --data-dir DIR keeps both)")


def _no_model_may_load(monkeypatch) -> None:
    async def loading(config, speaker):
        raise AssertionError("a model was loaded before the flags were checked")

    monkeypatch.setattr(demo, "build_turn_deps", loading)


def test_an_empty_data_dir_flag_is_refused_in_the_flags_own_words(tmp_path, monkeypatch, capsys) -> None:
    _no_model_may_load(monkeypatch)
    assert main(_demo_argv(tmp_path, "--data-dir", "")) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["hearth: --data-dir '': an empty name; give a folder, or leave --data-dir out"]


def test_a_data_dir_that_is_a_file_is_refused_before_any_model_loads(tmp_path, monkeypatch, capsys) -> None:
    _no_model_may_load(monkeypatch)
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    assert main(_demo_argv(tmp_path, "--data-dir", str(passwd))) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"hearth: --data-dir {passwd}: a file, not a folder"]
    assert passwd.read_text().startswith("root:")


@pytest.mark.parametrize(("content", "why"), [
    (b"hello\n", "not a WAV file (it does not begin with RIFF)"),
    (b"", "not a WAV file (empty)"),
    (b"RIFF\x10\x00", "not a WAV file (6 bytes, too short for a WAV header)"),
])
def test_a_file_that_is_not_audio_says_why_in_words(content, why, tmp_path, monkeypatch, capsys) -> None:
    _no_model_may_load(monkeypatch)
    notwav = tmp_path / "notwav.wav"
    notwav.write_bytes(content)
    empty = tmp_path / "hearth.toml"
    empty.write_text("")
    assert main(["demo", "--config", str(empty), "--input", str(notwav), "--out", str(tmp_path / "r.wav")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"hearth demo: {notwav}: {why}"]


async def test_a_demo_that_only_asked_back_says_so_and_not_that_it_answered(tmp_path, monkeypatch, capsys) -> None:
    _scripted(monkeypatch, "start a timer for the pizza", "")
    asked = "How long should the pizza timer be?"

    async def asked_back(assistant, audio, *, hold=False, trailing_silence_s=2.0) -> TurnResult:
        # What the turn returns when it asked instead of acting: its outcome is still "answered".
        return TurnResult(Outcome.ANSWERED, Timeline(), transcript="start a timer for the pizza", spoken=[asked],
                          pending=PendingAct(ToolPlan("", "timer_start", {"label": "pizza"}), needs="duration_s"))

    monkeypatch.setattr(demo, "play_request", asked_back)
    assert await demo.run_demo(parse_config({}), _request(tmp_path), tmp_path / "reply.wav", None) == 0
    outcome = [line for line in capsys.readouterr().out.splitlines() if line.startswith("outcome:")]
    assert len(outcome) == 1
    assert outcome[0].startswith("outcome: asked back, nothing done (the answer would be the next turn; a demo has one);")
