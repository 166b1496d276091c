"""A stop word said over hearth's reply, heard by the real ear: Silero VAD and Whisper.

hearth's reply (espeak-ng) is what the canceller has left of it, 25 dB down (the residual), and
the user's words (espeak-ng, another voice) are mixed over it at a known time.  The listener is
built as the appliance builds its parts (:func:`firmware_py.wiring.make_vad`, ``make_recognizer``:
Whisper tiny.en, Whisper base for Korean).  Latency is counted in audio, from the first sample of
the user's word to the chunk that brought the onset, not on a clock.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import numpy as np
import pytest

from agent.listening.barge_in import EchoLevel, ReplyListener
from audio.protocols import AudioChunk
from audio.wav import read_wav
from firmware_py.config import HearthConfig
from firmware_py.wiring import make_recognizer, make_vad
from models.store import ModelStore
from tests.speech import RATE, espeak, silence

pytestmark = pytest.mark.integration

ERLE_DB = 25.0
CHUNK = 320  # 20 ms, as a sound card delivers it
REPLY = {
    "en": "Preheat the oven to one hundred and eighty degrees. Grease a twenty centimetre tin with butter, "
          "then whisk three eggs with the sugar until pale.",
    "ko": "오븐을 백팔십 도로 예열하세요. 버터를 바른 틀에 반죽을 붓고 이십오 분 동안 구우세요.",
}
VOICE = {"en": "en-us+m3", "ko": "ko"}
"""hearth's voice; the user's differ."""
USER_VOICE = {"en": "en-gb+f3", "ko": "ko+f3"}


class Ear:
    def __init__(self, language: str, models_dir: Path) -> None:
        config = HearthConfig(models_dir=models_dir, language=language)
        store = ModelStore(models_dir)
        self.vad = make_vad(config, store)
        self.recognizer = make_recognizer(config, store)
        self.recognizer.load()
        self.recognizer.warm()
        self.calls: list[tuple] = []
        self.decided = asyncio.Event()
        self.far_rms = 0.0
        self.listener = ReplyListener(
            self.vad, self.recognizer, lambda: self.calls.append(("speech", self.fed)),
            lambda text: self._decide("stop", text), lambda chunks, text: self._decide("request", text),
            echo_level=lambda: EchoLevel(self.far_rms, ERLE_DB),
        )
        self.fed = 0

    def _decide(self, kind: str, text: str) -> None:
        self.calls.append((kind, text))
        self.decided.set()

    async def hear(self, reply: np.ndarray, user: np.ndarray | None, at_s: float) -> list[tuple]:
        """Feed the residual of ``reply`` with ``user`` mixed in at ``at_s``; what was reported."""
        self.calls, self.decided, self.fed = [], asyncio.Event(), 0
        mic = reply * 10 ** (-ERLE_DB / 20)
        if user is not None:
            start = int(at_s * RATE)
            mic = np.concatenate([mic, silence(max(0.0, (start + len(user) - len(mic)) / RATE + 1.0))])
            mic[start : start + len(user)] += user
        far = np.concatenate([reply, np.zeros(len(mic) - len(reply), np.float32)])
        self.listener.open()
        for i in range(0, len(mic), CHUNK):
            self.far_rms = float(np.sqrt(np.mean(far[i : i + CHUNK] ** 2)))
            self.fed = i + CHUNK
            self.listener.accept(AudioChunk(mic[i : i + CHUNK].astype(np.float32), RATE))
            await asyncio.sleep(0)
        if self.calls:
            await asyncio.wait_for(self.decided.wait(), timeout=60)
        self.listener.close()
        return self.calls


def _espeak(text: str, voice: str, speed: int, directory: Path) -> np.ndarray:
    out = directory / "said.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(out), text], check=True, capture_output=True)
    return read_wav(out, RATE).samples


def _speech_start(samples: np.ndarray) -> int:
    """The first sample of the word (espeak-ng leaves a little silence before it)."""
    loud = np.flatnonzero(np.abs(samples) > 0.02)
    return int(loud[0]) if len(loud) else 0


@pytest.mark.parametrize("language, stops, question", [
    ("en", [("stop", "en-gb+f3", 175), ("stop it", "en-us", 175), ("cancel", "en-us", 175)], "what temperature was that again"),
    # espeak-ng's Korean is mostly not Korean to Whisper base ("잠깐만" is heard as "참가만" or
    # "참깐만", "그만하세요" as "10만 하세요"); these it hears as said.
    ("ko", [("그만", "ko", 150), ("그만 그만", "ko+f3", 150)], "다음 단계는 뭐야"),
])
async def test_a_stop_word_over_the_reply_is_heard_as_a_stop_and_a_question_as_a_request(
        language, stops, question, tmp_path: Path, models_dir: Path, model_path) -> None:
    model_path("silero-vad/silero_vad.onnx")
    model_path("whisper-base/model.bin" if language == "ko" else "whisper-tiny-en/model.bin")
    ear = Ear(language, models_dir)
    reply = espeak(REPLY[language], VOICE[language], tmp_path)
    reply = (reply / np.max(np.abs(reply)) * 0.5).astype(np.float32)

    # hearth's own voice, left by the canceller: no onset over the whole reply.
    assert await ear.hear(reply, None, 0.0) == []

    for said, voice, speed in stops:
        user = _espeak(said, voice, speed, tmp_path)
        user = (user / np.max(np.abs(user)) * 0.4).astype(np.float32)
        at_s = 1.5
        calls = await ear.hear(reply, user, at_s)
        assert [c[0] for c in calls] == ["speech", "stop"], f"{said!r}: {calls}"
        onset_after_s = (calls[0][1] - (int(at_s * RATE) + _speech_start(user))) / RATE
        assert 0 < onset_after_s <= 0.3, f"{said!r}: onset {onset_after_s:.3f} s of audio after the word began"
        print(f"{language} {said!r}: heard {calls[1][1]!r}, onset {onset_after_s * 1000:.0f} ms of audio after the word began")

    user = espeak(question, USER_VOICE[language], tmp_path)
    user = (user / np.max(np.abs(user)) * 0.4).astype(np.float32)
    calls = await ear.hear(reply, user, 1.5)
    assert [c[0] for c in calls] == ["speech", "request"], calls
    print(f"{language} {question!r}: heard {calls[1][1]!r} (a request)")
