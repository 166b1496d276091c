"""Generate the bundled spoken requests reproducibly (synthetic speech, labelled as such).

English requests are spoken by hearth's own piper voice, Korean ones by Kokoro's jm_kumo
(the clearest Korean voice that installs offline, and not the one hearth answers in);
both are resampled to 16 kHz mono with a little silence in front, like a microphone
picks up after a button press.  Run: ``python -m bench.loop.make_requests [--language ko]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from audio.wav import write_wav
from bench.suites.audio import VOICES, make_synthesizer, speak
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


REQUESTS = {"en": REQUESTS_EN, "ko": REQUESTS_KO}
DEMO = {"en": "dinner-idea", "ko": "what-time"}
"""Which request the demo bundles, per language."""


async def main(models_dir: Path, languages: list[str]) -> None:
    catalogue_path = HERE / "requests" / "requests.json"
    # Languages not remade keep their entries (and their audio) as they are.
    catalogue = [e for e in json.loads(catalogue_path.read_text(encoding="utf-8")) if e["language"] not in languages]
    for language in languages:
        synth = make_synthesizer(language, models_dir)
        await synth.load()
        folder = HERE / "requests" / language
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in REQUESTS[language].items():
            write_wav(folder / f"{name}.wav", await speak(synth, text))
            catalogue.append({"id": f"{language}/{name}", "language": language, "text": text,
                              "wav": f"{language}/{name}.wav", "synthetic": True, "voice": VOICES[language]})
        (ASSETS / f"request_{language}.wav").write_bytes((folder / f"{DEMO[language]}.wav").read_bytes())
    catalogue.sort(key=lambda e: list(REQUESTS).index(e["language"]))
    catalogue_path.write_text(json.dumps(catalogue, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models-dir", type=Path, default=default_models_dir())
    parser.add_argument("--language", action="append", choices=sorted(REQUESTS), help="remake only this language's requests (repeatable)")
    args = parser.parse_args()
    asyncio.run(main(args.models_dir, args.language or list(REQUESTS)))
