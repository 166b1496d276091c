"""``hearth demo``: a bundled spoken request through the whole loop, in real time.

The request is played as a microphone would deliver it; the reply is played
on a clocked WAV sink, so the printed timeline is what a listener would meet.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import tempfile
from importlib import resources
from pathlib import Path

from agent.assistant import Assistant
from agent.listening.listen import Press
from agent.results import TurnResult
from audio.protocols import AudioChunk
from audio.wav import AudioFileError, WavFileMicrophone, WavFileSpeaker, read_wav
from firmware_py.config import HearthConfig
from firmware_py.safe_text import printable
from firmware_py.wiring import build_turn_deps, close_turn_deps

log = logging.getLogger(__name__)


def bundled_request(language: str) -> Path:
    return Path(str(resources.files("firmware_py") / "assets" / f"request_{language}.wav"))


async def play_request(
    assistant: Assistant,
    audio: AudioChunk,
    *,
    hold: bool = False,
    trailing_silence_s: float = 2.0,
) -> TurnResult:
    """Play one recorded request (16 kHz) into ``assistant`` as a live microphone would.

    ``hold``: the button is held for the whole recording (release at its end);
    otherwise it is tapped at the start and the voice detector ends the utterance.
    """
    mic = WavFileMicrophone(audio, trailing_silence_s=trailing_silence_s)
    press = Press()
    if hold:
        asyncio.get_running_loop().call_later(audio.duration, press.release)
    else:
        press.release()
    return await assistant.handle(mic.chunks(), press)


async def run_demo(
    config: HearthConfig,
    input_wav: Path | None,
    out_wav: Path,
    timeline_json: Path | None,
    *,
    hold: bool = False,
    data_dir: Path | None = None,
) -> int:
    path = input_wav or bundled_request(config.language)
    with tempfile.TemporaryDirectory(prefix="hearth-demo-") as scratch:
        # A demo must not start a real timer in the household's own data, to ring during ``hearth run``.
        where = data_dir or Path(scratch)
        config = config.model_copy(update={"tools": config.tools.model_copy(update={"data_dir": where})})
        print(f"data:    {where}" + (" (a scratch folder, removed afterwards; --data-dir DIR to keep one)" if data_dir is None else ""),
              flush=True)
        return await _demo(config, path, out_wav, timeline_json, hold)


async def _demo(config: HearthConfig, path: Path, out_wav: Path, timeline_json: Path | None, hold: bool) -> int:
    try:
        audio = read_wav(path, 16000)
    except AudioFileError as exc:
        print(f"hearth demo: {exc}", file=sys.stderr)
        return 2
    speaker = WavFileSpeaker(config.audio.output_rate)
    deps = await build_turn_deps(config, speaker)
    assistant = Assistant(deps, config.history_turns)
    await assistant.warm()
    print(f"request: {path}", flush=True)
    try:
        result = await play_request(assistant, audio, hold=hold)
    finally:
        await close_turn_deps(deps)
    out_wav.parent.mkdir(parents=True, exist_ok=True)
    speaker.save(out_wav)
    # What was said is the units heard, phrases and the line before a tool included: the model's
    # own text is empty when hearth heard nothing and said so.
    said = " ".join(result.spoken)
    print(f"heard:   {result.transcript!r}")
    print(f"said:    {said!r}")
    if " ".join(result.reply.split()) != " ".join(said.split()):
        print(f"model:   {result.reply!r}")
    print(f"outcome: {result.outcome.value}; reply audio {result.reply_audio_s:.2f} s written to {out_wav}")
    print("\n".join(printable(line) for line in result.timeline.render().splitlines()))
    if timeline_json is not None:
        timeline_json.parent.mkdir(parents=True, exist_ok=True)
        data = result.timeline.to_dict() | {
            "request": str(path),
            "transcript": result.transcript,
            "reply": result.reply,
            "said": said,
            "outcome": result.outcome.value,
        }
        timeline_json.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"timeline written to {timeline_json}")
    return 0
