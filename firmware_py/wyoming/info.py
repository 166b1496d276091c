"""The ``info`` answer to ``describe``: which programs, models, voices and languages hearth offers."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
)

from firmware_py.wyoming.offer import WyomingOffer

HEARTH = Attribution(name="hearth", url="")
WHISPER = Attribution(name="OpenAI Whisper, run by faster-whisper", url="https://github.com/SYSTRAN/faster-whisper")
SHERPA = Attribution(name="k2-fsa sherpa-onnx", url="https://github.com/k2-fsa/sherpa-onnx")
PIPER = Attribution(name="Piper voices", url="https://github.com/rhasspy/piper")
ESPEAK = Attribution(name="eSpeak NG", url="https://github.com/espeak-ng/espeak-ng")
KOKORO = Attribution(name="Kokoro-82M", url="https://huggingface.co/hexgrad/Kokoro-82M")


def hearth_version() -> str:
    """hearth's version from its installed package metadata."""
    try:
        return importlib.metadata.version("hearth")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _model_name(recognizer: Any, language: str) -> str:
    settings = getattr(recognizer, "settings", None)
    model_dir = getattr(settings, "model_dir", None)
    if model_dir is not None:
        return Path(model_dir).name
    return f"{type(recognizer).__name__.lower()}-{language}"


def _model_attribution(recognizer: Any) -> Attribution:
    kind = type(recognizer).__name__
    if kind.startswith("Whisper"):
        return WHISPER
    if kind.startswith("Sherpa"):
        return SHERPA
    return HEARTH


def _voice_attribution(synthesizer: Any) -> Attribution:
    kind = type(synthesizer).__name__
    if kind.startswith("Piper"):
        return PIPER
    if kind.startswith("Espeak"):
        return ESPEAK
    if kind.startswith("Kokoro"):
        return KOKORO
    return HEARTH


def build_info(offer: WyomingOffer) -> Info:
    """What ``describe`` is answered with; a program switched off or with nothing to offer is left out."""
    version = offer.version or hearth_version()
    info = Info()
    if offer.offers("asr"):
        models = [
            AsrModel(
                name=_model_name(recognizer, language),
                attribution=_model_attribution(recognizer),
                installed=True,
                description=f"{_model_name(recognizer, language)} ({language})",
                version=None,
                languages=[language],
            )
            for language, recognizer in offer.recognizers.items()
        ]
        info.asr.append(
            AsrProgram(
                name="hearth",
                attribution=HEARTH,
                installed=True,
                description="hearth speech recognition, with partial transcripts while audio arrives",
                version=version,
                models=models,
                supports_transcript_streaming=True,
                # Whisper needs the utterance's end from the client's voice activity detection.
                requires_external_vad=True,
            )
        )
    if offer.offers("tts"):
        voices = [
            TtsVoice(
                name=voice.name,
                attribution=_voice_attribution(voice.synthesizer),
                installed=True,
                description=voice.description or voice.name,
                version=None,
                languages=[voice.language],
            )
            for voice in offer.voices
        ]
        info.tts.append(
            TtsProgram(
                name="hearth",
                attribution=HEARTH,
                installed=True,
                description="hearth voices, spoken unit by unit as Cadence cuts the text",
                version=version,
                voices=voices,
                supports_synthesize_streaming=True,
            )
        )
    if offer.offers("handle"):
        info.handle.append(
            HandleProgram(
                name="hearth",
                attribution=HEARTH,
                installed=True,
                description="hearth's kitchen assistant: timers, lists, notes, recipes, weather",
                version=version,
                models=[
                    HandleModel(
                        name="hearth-assistant",
                        attribution=HEARTH,
                        installed=True,
                        description="hearth's kitchen assistant",
                        version=version,
                        languages=list(offer.answer_languages),
                    )
                ],
                supports_handled_streaming=True,
                supports_home_control=False,
            )
        )
    return info
