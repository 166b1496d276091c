"""Cadence on the real components: piper's voice with its own quiet edges, and Silero hearing a voice in a pause."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.listening.barge_in import PauseListener
from agent.speaking.cadence import split_units
from agent.deps import TurnDeps
from agent.listening.listen import ListenSettings, Press
from audio.levels import QUIET
from audio.piper_tts import PiperSettings, PiperSynthesizer
from audio.protocols import AudioChunk
from audio.vad import SileroVad, VadSettings
from audio.wav import WavFileMicrophone, WavFileSpeaker, read_wav
from firmware_py.demo import bundled_request
from tests.fakes import EnergyVad, ScriptedChatModel, ScriptedRecognizer, speech_like

pytestmark = pytest.mark.integration

REPLY = "Preheat the oven to two hundred degrees. Then grease a small tin with butter and line it with paper."


def voice_gaps(recording: AudioChunk, min_gap_s: float = 0.1) -> list[float]:
    """The silences inside a recording longer than ``min_gap_s``, in seconds (its edges left out)."""
    loud = np.abs(recording.samples) >= QUIET
    idx = np.flatnonzero(loud)
    steps = np.diff(idx) / recording.sample_rate
    return [float(s) for s in steps if s >= min_gap_s]


async def test_the_pause_between_two_units_is_heard_in_the_recording(model_path):
    voice = PiperSynthesizer(PiperSettings(voice_dir=model_path("piper-en-joe"), espeak_bridge=model_path("espeak-ng/espeakbridge.so")))
    await voice.load()
    speaker = WavFileSpeaker(voice.sample_rate)
    deps = TurnDeps(
        vad=EnergyVad(),
        recognizer=ScriptedRecognizer("how do I start a cake"),
        chat=ScriptedChatModel(REPLY, token_s=0),
        synthesizer=voice,
        speaker=speaker,
        language="en",
        system_prompt="be brief",
        listen=ListenSettings(),
    )
    turn = Assistant(deps).start_turn(WavFileMicrophone(speech_like(0.5), realtime=False).chunks(), Press())
    result = await turn.wait()
    assert [u.text for u in result.units] == [u.strip() for u in split_units(REPLY)]
    mark = result.timeline.first("pause")
    planned, edges = mark.detail["pause_s"], mark.detail["voice_edges_s"]
    assert edges > 0.05, "piper leaves some quiet around what it says"
    # Between the two sentences the listener hears the plan, or the voice's own quiet if longer.
    between = max(voice_gaps(speaker.recording()))
    assert between == pytest.approx(max(planned, edges), abs=0.06)


async def test_silero_hears_a_spoken_request_in_a_pause_and_not_silence(model_path):
    vad = SileroVad(VadSettings(model_path("silero-vad/silero_vad.onnx")))
    vad.load()
    heard: list[float] = []
    listener = PauseListener(vad, lambda: heard.append(1), guard_s=0.0)
    request = read_wav(bundled_request("en"), 16000)
    listener.open()
    silence = AudioChunk(np.zeros(16000, np.float32), 16000)
    for at in range(0, len(silence.samples), 512):
        listener.accept(AudioChunk(silence.samples[at : at + 512], 16000))
    assert heard == [], "a quiet room is not the user speaking up"
    for at in range(0, len(request.samples), 512):
        listener.accept(AudioChunk(request.samples[at : at + 512], 16000))
        await asyncio.sleep(0)
    assert heard == [1]
