"""``hearth demo``: what it prints, on scripted models (the real ones: tests/test_loop_integration.py)."""

from __future__ import annotations

import numpy as np

import firmware_py.demo as demo
from agent.listening.listen import ListenSettings
from audio.protocols import AudioChunk
from audio.wav import write_wav
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
