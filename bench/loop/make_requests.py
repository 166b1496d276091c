"""Generate the bundled spoken requests reproducibly (synthetic speech, labelled as such).

English requests are spoken by hearth's own piper voice, Korean ones by espeak-ng;
both are resampled to 16 kHz mono with a little silence in front, like a microphone
picks up after a button press.  Run: ``python -m bench.loop.make_requests``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from audio.espeak_tts import EspeakSettings, EspeakSynthesizer
from audio.piper_tts import PiperSettings, PiperSynthesizer
from audio.wav import write_wav
from bench.suites.audio import speak
from models.store import default_models_dir

HERE = Path(__file__).parent
ASSETS = HERE.parent.parent / "firmware_py" / "assets"

REQUESTS_EN = {
    "dinner-idea": "What is a quick idea for dinner tonight?",
    "boil-egg": "How long should I boil an egg?",
    "crispy-potatoes": "Give me a tip for crispy roast potatoes.",
    "butter-substitute": "What can I use instead of butter in a cake?",
    "pasta-done": "How do I know when pasta is done?",
    "rest-steak": "How long should a steak rest after cooking?",
    "bread-oven": "What temperature should I bake bread at?",
    "cheese-fact": "Tell me a fun fact about cheese.",
}
REQUESTS_KO = {
    "what-time": "지금 몇 시야?",
    "dinner-idea": "오늘 저녁 뭐 먹을까?",
}


async def main(models_dir: Path) -> None:
    piper = PiperSynthesizer(
        PiperSettings(voice_dir=models_dir / "piper-en-joe", espeak_bridge=models_dir / "espeak-ng" / "espeakbridge.so")
    )
    espeak = EspeakSynthesizer(EspeakSettings(voice="ko", language="ko"))
    await piper.load()
    await espeak.load()
    catalogue = []
    for language, synth, requests in (("en", piper, REQUESTS_EN), ("ko", espeak, REQUESTS_KO)):
        folder = HERE / "requests" / language
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in requests.items():
            audio = await speak(synth, text)
            write_wav(folder / f"{name}.wav", audio)
            catalogue.append({"id": f"{language}/{name}", "language": language, "text": text,
                              "wav": f"{language}/{name}.wav", "synthetic": True,
                              "voice": "piper en_US-joe-medium" if language == "en" else "espeak-ng ko"})
    (HERE / "requests" / "requests.json").write_text(json.dumps(catalogue, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    # The demo's bundled requests are two of these.
    for language, name in (("en", "dinner-idea"), ("ko", "what-time")):
        (ASSETS / f"request_{language}.wav").write_bytes((HERE / "requests" / language / f"{name}.wav").read_bytes())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models-dir", type=Path, default=default_models_dir())
    asyncio.run(main(parser.parse_args().models_dir))
