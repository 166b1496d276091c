"""The whole loop on the real models: the demo, Korean end to end, and bad input that must not break it."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.listening.listen import Press
from agent.results import Outcome
from audio.protocols import AudioChunk
from audio.wav import WavFileMicrophone, WavFileSpeaker, read_wav, write_wav
from firmware_py.cli import main
from firmware_py.config import parse_config
from firmware_py.demo import bundled_request
from firmware_py.wiring import StartupError, build_turn_deps, required_models

pytestmark = pytest.mark.integration
REQUESTS = Path(__file__).parent.parent / "bench" / "loop" / "requests"
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def test_demo_speaks_a_reply_and_writes_the_timeline(models_dir: Path, tmp_path: Path, capsys):
    out, timeline = tmp_path / "reply.wav", tmp_path / "timeline.json"
    code = main(["demo", "--models-dir", str(models_dir), "--out", str(out), "--timeline", str(timeline)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    data = json.loads(timeline.read_text())
    names = [m["name"] for m in data["marks"]]
    for key in ("speech_start", "partial_transcript", "speech_end", "final_transcript", "first_token", "first_audio_out", "last_audio_out"):
        assert key in names, key
    assert "dinner" in data["transcript"].lower()
    assert data["outcome"] == "answered" and data["reply"]
    reply = read_wav(out)
    assert reply.duration > 0.5 and float(np.abs(reply.samples).max()) > 0.05
    assert "speech_end_to_first_audio_s" in printed
    # The demo's timers and lists went to a scratch folder, named, and gone afterwards.
    (data_line,) = [line for line in printed.splitlines() if line.startswith("data:")]
    assert "scratch folder" in data_line
    assert not Path(data_line.split()[1]).exists()


def test_korean_end_to_end(models_dir: Path, tmp_path: Path, capsys):
    out, timeline = tmp_path / "reply.wav", tmp_path / "timeline.json"
    code = main(["demo", "--language", "ko", "--models-dir", str(models_dir), "--out", str(out), "--timeline", str(timeline)])
    assert code == 0, capsys.readouterr().out
    data = json.loads(timeline.read_text())
    # "지금 몇 시야?" in Kokoro's voice (bench.loop.make_requests): heard, and answered with the time.
    assert "몇 시" in data["transcript"], data["transcript"]
    tools = [m["detail"].get("tool") for m in data["marks"] if m["name"] == "tool_end"]
    assert data["outcome"] == "answered" and tools == ["time_now"], (data["outcome"], tools)
    assert re.search(r"\d+시", data["reply"]) and data["reply"].rstrip(".").endswith("요"), data["reply"]
    assert read_wav(out).duration > 1.0


def test_a_file_that_is_not_audio_gets_one_clear_line(models_dir: Path, tmp_path: Path, capsys):
    bogus = tmp_path / "notes.wav"
    bogus.write_text("this is not audio")
    code = main(["demo", "--models-dir", str(models_dir), "--input", str(bogus), "--out", str(tmp_path / "r.wav")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{bogus}: not a WAV file (it does not begin with RIFF)" in err


def test_a_truncated_model_stops_start_up_naming_the_file_and_the_fix(models_dir: Path, tmp_path: Path):
    config = parse_config({"models_dir": str(tmp_path)})
    for name in required_models(config):
        shutil.copytree(models_dir / name, tmp_path / name, symlinks=True)
    gguf = tmp_path / config.llm.model / "model.gguf"
    gguf.write_bytes(gguf.read_bytes()[: 1 << 20])
    with pytest.raises(StartupError) as info:
        asyncio.run(build_turn_deps(config, WavFileSpeaker()))
    message = str(info.value)
    assert "\n" not in message
    assert "model.gguf" in message and f"hearth models install {config.llm.model}" in message


@pytest.fixture(scope="module")
def request_audio() -> AudioChunk:
    return read_wav(bundled_request("en"), 16000)


async def test_bad_input_gets_an_answer_and_the_loop_keeps_serving(models_dir: Path, tmp_path: Path, request_audio: AudioChunk):
    config = parse_config({"models_dir": str(models_dir), "llm": {"max_tokens": 24}, "listen": {"max_utterance_s": 8.0}})
    speaker = WavFileSpeaker(config.audio.output_rate)
    deps = await build_turn_deps(config, speaker)
    assistant = Assistant(deps, history_turns=0)
    await assistant.warm()

    async def turn(audio: AudioChunk, realtime: bool = False, hold: bool = False):
        press = Press()
        if not hold:
            press.release()
        mic = WavFileMicrophone(audio, realtime=realtime, trailing_silence_s=1.0)
        return await assistant.handle(mic.chunks(), press)

    rate = 16000
    silence = AudioChunk(np.zeros(rate * 7, np.float32), rate)
    result = await turn(silence)
    assert result.outcome == Outcome.NO_SPEECH and result.spoken

    # 44.1 kHz stereo, read the way every WAV is read: mixed down and resampled.
    stereo = tmp_path / "stereo.wav"
    samples = request_audio.samples
    wide = np.interp(np.arange(0, len(samples), rate / 44100), np.arange(len(samples)), samples)
    import wave

    with wave.open(str(stereo), "wb") as handle:
        handle.setnchannels(2)
        handle.setsampwidth(2)
        handle.setframerate(44100)
        pcm = (np.repeat(wide[:, None], 2, axis=1) * 32767).astype("<i2")
        handle.writeframes(pcm.tobytes())
    result = await turn(read_wav(stereo, 16000))
    assert result.outcome == Outcome.ANSWERED and "dinner" in result.transcript.lower()

    clipped = AudioChunk(np.clip(samples * 30, -1, 1).astype(np.float32), rate)
    result = await turn(clipped)
    assert result.outcome in (Outcome.ANSWERED, Outcome.NOT_UNDERSTOOD, Outcome.NO_ANSWER) and result.spoken

    # A minute of talking: different sentences one after another (a repeated one would be
    # dropped as a Whisper repetition loop).
    sentences = [read_wav(p, rate).samples for p in sorted((REQUESTS / "en").glob("*.wav"))]
    talk = np.concatenate(sentences)
    monologue = AudioChunk(np.tile(talk, int(60 * rate / len(talk)) + 1)[: rate * 60], rate)
    result = await turn(monologue, hold=True)  # held down for a minute of talking
    assert result.timeline.first("utterance_capped") is not None
    assert result.outcome in (Outcome.ANSWERED, Outcome.NO_ANSWER) and result.spoken

    # And after all that, an ordinary request in real time is answered as usual.
    result = await turn(request_audio, realtime=True)
    assert result.outcome == Outcome.ANSWERED and "dinner" in result.transcript.lower()
    write_wav(tmp_path / "all.wav", speaker.recording())
