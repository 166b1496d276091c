"""The Korean voice on the real Kokoro model: it loads, knows every phoneme hearth sends, and is understood."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
import soxr

from audio.korean_phonemes import phonemize
from audio.kokoro_tts import KokoroSettings, KokoroSynthesizer
from bench.voice.ko_intelligibility import cer
from bench.voice.ko_sentences import SENTENCES

pytestmark = pytest.mark.integration

# Lines Whisper base heard with a character error rate near 0.1 at the default settings; the bound
# leaves room for the model's own noise without letting a broken pipeline through.
HEARD_LINES = ("날씨 확인해 볼게요.", "마지막 단계까지 다 읽었어요. 맛있게 드세요!", "5분 타이머를 맞췄어요.")
CER_BOUND = 0.35


@pytest.fixture(scope="module")
def voice(model_path) -> KokoroSynthesizer:
    synth = KokoroSynthesizer(KokoroSettings(model_dir=model_path("kokoro-82m-ja")))
    asyncio.run(synth.load())
    asyncio.run(synth.warm())
    return synth


def test_every_phoneme_hearth_sends_is_in_the_vocabulary(model_path) -> None:
    vocab = json.loads((model_path("kokoro-82m-ja") / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    used = set().union(*(set(phonemize(text)) for _, text in SENTENCES))
    assert used <= set(vocab), used - set(vocab)


VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
SHORT = "타이머를 맞췄어요."
LONG = "파스타 타이머를 십 분에 맞췄어요. 다 되면 바로 알려 드릴게요."  # two sentences, about three times the text


def test_every_shipped_voice_speaks_the_text_in_its_own_voice(model_path) -> None:
    with np.load(model_path("kokoro-82m-ja") / "voices.npz") as shipped:
        assert sorted(shipped.files) == sorted(VOICES)
    short_by_voice = {}
    for name in VOICES:
        synth = KokoroSynthesizer(KokoroSettings(model_dir=model_path("kokoro-82m-ja"), voice=name))
        asyncio.run(synth.load())
        short, long = asyncio.run(_collect(synth, SHORT)), asyncio.run(_collect(synth, LONG))
        assert len(short) == 1 and len(long) == 2, name  # a chunk per sentence
        assert all(c.sample_rate == synth.sample_rate == 24000 for c in (*short, *long)), name
        short_audio, long_audio = short[0].samples, np.concatenate([c.samples for c in long])
        short_s, long_s = len(short_audio) / 24000, len(long_audio) / 24000
        # A short sentence is about a second of speech; three times the text takes well over twice as long.
        assert 0.5 < short_s < 4.0, (name, short_s)
        assert 2.0 * short_s < long_s < 6.0 * short_s, (name, short_s, long_s)
        for audio in (short_audio, long_audio):
            assert np.all(np.isfinite(audio)) and np.max(np.abs(audio)) <= 1.0, name
            assert float(np.sqrt(np.mean(audio**2))) > 0.02, name  # speech, not near-silence
        short_by_voice[name] = short_audio
    # Each voice is its own style: no two say the same sentence with the same samples.
    for i, a in enumerate(VOICES):
        for b in VOICES[i + 1:]:
            x, y = short_by_voice[a], short_by_voice[b]
            n = min(len(x), len(y))
            assert len(x) != len(y) or float(np.max(np.abs(x[:n] - y[:n]))) > 0.05, (a, b)


def test_whisper_base_hears_the_korean_voice(voice: KokoroSynthesizer, model_path) -> None:
    from faster_whisper import WhisperModel

    whisper = WhisperModel(str(model_path("whisper-base")), device="cpu", compute_type="int8", cpu_threads=1)
    scores = []
    for line in HEARD_LINES:
        chunks = asyncio.run(_collect(voice, line))
        audio = np.concatenate([c.samples for c in chunks])
        assert chunks and all(c.sample_rate == 24000 for c in chunks)
        assert 0.5 < len(audio) / 24000 < 8 and np.max(np.abs(audio)) > 0.1
        segments, _ = whisper.transcribe(soxr.resample(audio, 24000, 16000).astype(np.float32), language="ko",
                                         beam_size=1, condition_on_previous_text=False)
        heard = " ".join(s.text.strip() for s in segments)
        scores.append(cer(line, heard))
        print(f"{line} -> {heard} ({scores[-1]:.2f})")
    assert float(np.mean(scores)) <= CER_BOUND, scores


async def _collect(synth: KokoroSynthesizer, text: str) -> list:
    return [chunk async for chunk in synth.synthesize(text)]
