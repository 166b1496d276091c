"""``hearth demo``: a bundled spoken request through the whole loop, in real time.

The request is played as a microphone would deliver it; the reply is played
on a clocked WAV sink, so the printed timeline is what a listener would meet.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
import sqlite3
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Protocol

from agent.assistant import Assistant
from agent.listening.listen import Press
from agent.record import ConversationRecord
from agent.results import Outcome, TurnResult
from audio.protocols import AudioChunk, Microphone
from audio.wav import AudioFileError, WavFileMicrophone, WavFileSpeaker, read_wav
from firmware_py.config import HearthConfig
from firmware_py.data_folder import RECORD_NAME
from firmware_py.safe_text import printable
from firmware_py.wiring import build_turn_deps, close_turn_deps


class PlayedRecording(Microphone, Protocol):
    """A recording played as a microphone (one channel, or an array's heard through its front end)."""

    started_at: float | None
    """Monotonic time at which its first sample was 'spoken', once it has started."""

log = logging.getLogger(__name__)


def outcome_words(result: TurnResult) -> str:
    """How the turn ended, as the demo says it.  A turn that asked back ("How long should the pizza
    timer be?") ended answered, but nothing was done: its act waits for an answer."""
    if result.pending is not None and result.outcome == Outcome.ANSWERED:
        return "asked back, nothing done (the answer would be the next turn; a demo has one)"
    return result.outcome.value


def bundled_request(language: str) -> Path:
    return Path(str(resources.files("firmware_py") / "assets" / f"request_{language}.wav"))


async def release_after(mic: PlayedRecording, press: Press, seconds: float) -> None:
    """Release ``press`` ``seconds`` into ``mic``'s recording, on the recording's own clock: a thumb
    lifted as the words end, however late the recording started playing."""
    while mic.started_at is None:
        await asyncio.sleep(0.005)
    await asyncio.sleep(max(0.0, mic.started_at + seconds - time.monotonic()))
    press.release()


async def press_and_play(assistant: Assistant, mic: PlayedRecording, release_s: float | None) -> TurnResult:
    """One turn of ``mic``'s recording: with ``release_s`` None the button is tapped at the start
    (the voice detector ends the utterance); else it is held and released ``release_s`` into the
    recording."""
    press = Press()
    if release_s is None:
        press.release()
        return await assistant.handle(mic.chunks(), press)
    thumb = asyncio.create_task(release_after(mic, press, release_s))
    try:
        return await assistant.handle(mic.chunks(), press)
    finally:
        thumb.cancel()


async def play_request(
    assistant: Assistant,
    audio: AudioChunk,
    *,
    hold: bool = False,
    release_s: float | None = None,
    trailing_silence_s: float = 2.0,
) -> TurnResult:
    """Play one recorded request (16 kHz) into ``assistant`` as a live microphone would.

    ``hold``: the button is held from the start and released ``release_s`` into the recording (its
    end by default); otherwise it is tapped at the start and the voice detector ends the utterance.
    """
    mic = WavFileMicrophone(audio, trailing_silence_s=trailing_silence_s)
    held = (audio.duration if release_s is None else release_s) if hold else None
    return await press_and_play(assistant, mic, held)


async def run_demo(
    config: HearthConfig,
    input_wav: Path | None,
    out_wav: Path,
    timeline_json: Path | None,
    *,
    hold: bool = False,
    data_dir: Path | None = None,
) -> int:
    """One request through the whole loop.  ``data_dir``: the data folder its timers, lists, notes
    and conversation record go to (made already; ``hearth history --data-dir`` reads it); None: a
    scratch folder, removed afterwards, and the turn not recorded."""
    path = input_wav or bundled_request(config.language)
    try:
        audio = read_wav(path, 16000)
    except AudioFileError as exc:
        print(printable(f"hearth demo: {exc}"), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hearth-demo-") as scratch:
        # A demo must not start a real timer in the household's own data, to ring during ``hearth run``.
        where = data_dir or Path(scratch)
        config = config.model_copy(update={"tools": config.tools.model_copy(update={"data_dir": where})})
        kept = "" if data_dir is not None else " (a scratch folder, removed afterwards, and this turn is not recorded; --data-dir DIR keeps both)"
        print(printable(f"data:    {where}{kept}"), flush=True)
        return await _demo(config, path, audio, out_wav, timeline_json, hold, data_dir)


async def _demo(config: HearthConfig, path: Path, audio: AudioChunk, out_wav: Path, timeline_json: Path | None,
                hold: bool, data_dir: Path | None) -> int:
    # Recorded where the history reads, when the data is kept; else in memory, gone with the demo.
    # Opened before the models load, so a file there that is no record is said at once.
    record = None
    if data_dir is not None:
        try:
            record = ConversationRecord.open(data_dir / RECORD_NAME)
        except (OSError, sqlite3.Error) as exc:
            print(printable(f"hearth demo: {data_dir / RECORD_NAME}: not a conversation record ({exc})"), file=sys.stderr)
            return 2
    speaker = WavFileSpeaker(config.audio.output_rate)
    try:
        deps = await build_turn_deps(config, speaker)
    except BaseException:
        if record is not None:
            record.close()
        raise
    assistant = Assistant(deps, config.history_turns, record=record)
    await assistant.warm()
    print(printable(f"request: {path}"), flush=True)
    try:
        result = await play_request(assistant, audio, hold=hold)
        number = assistant.record.next_turn() - 1
    finally:
        await close_turn_deps(deps)
        assistant.close()
    out_wav.parent.mkdir(parents=True, exist_ok=True)
    speaker.save(out_wav)
    # What was said is the units heard, phrases and the line before a tool included: the model's
    # own text is empty when hearth heard nothing and said so.
    said = " ".join(result.spoken)
    print(f"heard:   {result.transcript!r}")
    print(f"said:    {said!r}")
    if " ".join(result.reply.split()) != " ".join(said.split()):
        print(f"model:   {result.reply!r}")
    print(printable(f"outcome: {outcome_words(result)}; reply audio {result.reply_audio_s:.2f} s written to {out_wav}"))
    if data_dir is not None:
        print(printable(f"recorded: turn #{number} in {data_dir / RECORD_NAME}; `hearth history --data-dir {shlex.quote(str(data_dir))}` shows it"))
    print("\n".join(printable(line) for line in result.timeline.render().splitlines()))
    if timeline_json is not None:
        timeline_json.parent.mkdir(parents=True, exist_ok=True)
        data = result.timeline.to_dict() | {
            "request": str(path),
            "transcript": result.transcript,
            "reply": result.reply,
            "said": said,
            "outcome": result.outcome.value,
            "asked_back": result.pending is not None,
        }
        timeline_json.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"timeline written to {timeline_json}")
    return 0
