"""Build hearth's real components from the configuration and the installed models."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from collections.abc import Awaitable, Callable, Sequence

from agent.assistant import Assistant
from agent.deciding.reasoner import Reasoner, ReasonerSettings
from agent.deciding.reference import KitchenReference
from agent.deciding.banks import example_bank
from agent.speaking.cadence import Cadence, CadenceRules, PaceSettings
from agent.speaking.filters import default_chain
from agent.speaking.foresight import lines_said_often, units_of
from agent.record import ConversationRecord
from agent.model.llm import LlamaChatModel, LlamaSettings
from agent.speaking.phrases import system_prompt
from agent.listening.speech_context import KITCHEN_WORDS, SpeechContext
from agent.deciding.thinker import ThinkerSettings
from agent.deciding.tool_calls import JsonChatModel
from agent.deciding.tool_use import ToolUse
from tools.executor import ToolExecutor
from agent.listening.hearing import HearingSettings
from agent.listening.turn_end import TurnEndSettings
from agent.deps import TurnDeps
from agent.listening.listen import ListenSettings
from audio.chime import chime
from audio.echo import EchoFilter
from audio.protocols import Recognizer, Speaker, Synthesizer
from audio.ready_voice import ReadyVoice
from audio.volume import VolumeSpeaker
from audio.whisper_rescore import Lexicon
from firmware_py.config import ConfigError, HearthConfig
from firmware_py.platform import PlatformProfile, memory_bytes, profile_for
from firmware_py.platform import current as current_platform
from firmware_py.ringing import RingSettings, Ringers, ring_until_heard
from firmware_py.gpio import ConsoleLight, GpioButton, KeyboardButton, NoButton, NoLight, PushToTalk, RgbStatusLight, StatusLight
from models.store import ModelError, ModelStore, default_models_dir
from tools.timers import Timer, TimerWatcher, done_message

if TYPE_CHECKING:
    from audio.array import ArrayGeometry
    from audio.array_microphone import BeamformedMicrophone
    from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SpeakerSettings

log = logging.getLogger(__name__)

STREAMING_MODELS = frozenset({"zipformer-en-streaming"})
MOONSHINE_MODELS = frozenset({"moonshine-base-en"})


class StartupError(RuntimeError):
    """hearth cannot start; the message is one line saying what to do."""


def model_store(config: HearthConfig) -> ModelStore:
    return ModelStore(config.models_dir.expanduser() if config.models_dir else default_models_dir())


def asr_model(config: HearthConfig) -> str:
    return config.asr.model_ko if config.language == "ko" else config.asr.model_en


def platform_profile(config: HearthConfig) -> PlatformProfile:
    """The platform profile: detected, or the one the configuration names (with this machine's
    memory and CPUs)."""
    if config.platform.profile == "auto":
        return current_platform()
    return profile_for(config.platform.profile, memory_bytes(), os.cpu_count() or 1)


def reasoner_choice(config: HearthConfig, profile: PlatformProfile | None = None) -> tuple[str, str | None]:
    """Where the reasoner runs ("local", "remote" or "off") and, when local, its model."""
    r = config.reasoner
    if r.where == "off" or not config.tools.enabled:
        return "off", None
    if r.where == "remote":
        if not r.url:
            raise StartupError("reasoner.where = 'remote' needs reasoner.url (the server's address, e.g. http://192.168.1.20:8080)")
        return "remote", None
    model = r.model
    if model == "auto":
        model = (profile or platform_profile(config)).reasoner_model
    if model == "none":
        if r.where == "local":
            raise StartupError("reasoner.where = 'local' but this platform's profile has no reasoner; set reasoner.model")
        return "off", None
    return "local", model


def describe_choice(config: HearthConfig, profile: PlatformProfile) -> str:
    """The start-up line: the platform, and what runs where."""
    where, model = reasoner_choice(config, profile)
    reasoner = {"off": "no reasoner", "remote": f"reasoner on {config.reasoner.url}"}.get(where) or (
        f"reasoner {model} ({config.reasoner.n_threads or profile.reasoner_threads} threads"
        f"{', on the GPU' if (config.reasoner.gpu_layers if config.reasoner.gpu_layers is not None else profile.reasoner_gpu_layers) else ''})"
    )
    return (
        f"platform {profile.name} ({profile.reason}); talker {config.llm.model} "
        f"({config.llm.n_threads or profile.talker_threads} threads), {reasoner}; "
        f"speech recognition on {profile.asr_device} ({config.asr.n_threads or profile.asr_threads} threads)"
    )


def required_models(config: HearthConfig) -> list[str]:
    """Every model the configuration names, its voice's included."""
    return _thinking_and_hearing(config) + voice_models(config)


def _thinking_and_hearing(config: HearthConfig) -> list[str]:
    names = [config.llm.model, asr_model(config), "silero-vad", *([ear] if (ear := second_ear(config)) else [])]
    where, reasoner = reasoner_choice(config)
    if where == "local" and reasoner is not None:
        names.append(reasoner)
    if config.listen.end_of_turn_model != "none":
        names.append(config.listen.end_of_turn_model)
    return names


def voice_models(config: HearthConfig, store: ModelStore | None = None) -> list[str]:
    """The models the configured language's voice reads.

    With ``store``, a Korean Kokoro voice that is not installed falls back to espeak-ng (which
    needs no model) with a warning, so a speaker without the 95 MB model still answers."""
    if config.language == "en":
        return [config.tts.voice_en, "espeak-ng"]
    name = config.tts.voice_ko
    if name == "espeak-ng":
        return []
    if store is not None and (problems := store.check([name])):
        log.warning(
            "tts.voice_ko: %s; speaking Korean with espeak-ng instead (%s installs the clearer voice)",
            problems[0].describe(), store.fix_command([name]),
        )
        return []
    return [name]


def check_roles(config: HearthConfig, store: ModelStore) -> None:
    """Each configured model is of the kind its key needs; else one line naming the key."""
    keys = {
        "llm.model": (config.llm.model, "llm"),
        "asr.model_en" if config.language == "en" else "asr.model_ko": (asr_model(config), "asr"),
        **({"asr.second_ear_en": (ear, "asr")} if (ear := second_ear(config)) else {}),
        **({"tts.voice_en": (config.tts.voice_en, "tts")} if config.language == "en" else {}),
        **({"tts.voice_ko": (config.tts.voice_ko, "tts")} if config.language == "ko" and config.tts.voice_ko != "espeak-ng" else {}),
        "listen.end_of_turn_model": (config.listen.end_of_turn_model, "turn"),
    }
    where, reasoner = reasoner_choice(config)
    if where == "local" and reasoner is not None:
        keys["reasoner.model"] = (reasoner, "llm")
    for key, (name, role) in keys.items():
        if name == "none" and key == "listen.end_of_turn_model":
            continue
        try:
            entry = store.manifest.get(name)
        except ModelError:  # the manifest's own message names the model, not the key
            raise StartupError(f"{key} = {name!r} is not a model hearth knows; `hearth models list` shows them") from None
        if entry.role != role:
            raise StartupError(f"{key} = {name!r} is a {entry.role} model, not a {role} model; `hearth models list` shows them")


def _turn_model(config: HearthConfig, store: ModelStore) -> Any:
    """The end-of-turn model, or None when the configuration has none."""
    name = config.listen.end_of_turn_model
    if name == "none":
        return None
    from audio.end_of_turn import SmartTurnModel, SmartTurnSettings

    files = sorted(store.path(name).glob("*.onnx"))
    if len(files) != 1:
        raise StartupError(f"listen.end_of_turn_model: {name!r} has no single ONNX file in {store.path(name)}")
    return SmartTurnModel(SmartTurnSettings(model_path=files[0]))


def make_recognizer(config: HearthConfig, store: ModelStore, profile: PlatformProfile | None = None) -> Any:
    """The configured recognizer for the configured language (not loaded yet): with
    ``asr.second_ear_en`` in English, two ears (:class:`audio.two_ears.TwoEars`)."""
    first = _one_ear(config, store, asr_model(config), profile)
    second = second_ear(config)
    if second is None:
        return first
    from audio.two_ears import TwoEars

    return TwoEars(first, _one_ear(config, store, second, profile))


def second_ear(config: HearthConfig) -> str | None:
    """The second ear's model, when one listens: English only (no second Korean ear installs)."""
    name = config.asr.second_ear_en
    if config.language != "en" or name is None:
        return None
    if name == asr_model(config):
        raise StartupError(f"asr.second_ear_en = {name!r} is the first ear too; name the other English recognizer")
    return name


def _one_ear(config: HearthConfig, store: ModelStore, name: str, profile: PlatformProfile | None) -> Any:
    profile = profile or platform_profile(config)
    threads = config.asr.n_threads or profile.asr_threads
    if name in STREAMING_MODELS:
        from audio.streaming_asr import SherpaStreamingRecognizer, StreamingSettings

        return SherpaStreamingRecognizer(StreamingSettings(model_dir=store.path(name), num_threads=threads))
    if name in MOONSHINE_MODELS:
        if config.language != "en":
            raise StartupError(f"asr: {name!r} hears English only; asr.model_ko names the Korean recognizer")
        from audio.moonshine_asr import MoonshineRecognizer, MoonshineSettings

        return MoonshineRecognizer(
            MoonshineSettings(
                model_dir=store.path(name), cpu_threads=threads, partial_interval_s=config.asr.moonshine_partial_interval_s,
                hypotheses=config.asr.hypotheses_en if config.asr.bias else 1,
            ),
            lexicon=kitchen_lexicon("en"),
        )
    from audio.whisper_asr import WhisperRecognizer, WhisperSettings

    korean = config.language == "ko"
    return WhisperRecognizer(
        WhisperSettings(
            model_dir=store.path(name),
            language=config.language,
            cpu_threads=threads,
            device=profile.asr_device,
            compute_type=profile.asr_compute_type,
            partial_interval_s=config.asr.partial_interval_s,
            partial_window=config.asr.partial_window_ko if korean else config.asr.partial_window_en,
            final_window=config.asr.final_window,
            hypotheses=config.asr.hypotheses_ko if korean else config.asr.hypotheses_en,
            score_words=not korean,  # only English hearing uses them (HearingSettings.use_logprob)
        ),
        lexicon=kitchen_lexicon(config.language),
    )


def kitchen_lexicon(language: str) -> Lexicon:
    """The words the recognizer's hypotheses are weighed by: the requests hearth serves and the units."""
    return Lexicon.of([entry[0] for entry in example_bank().get(language, [])] + [KITCHEN_WORDS.get(language, "")])


def make_synthesizer(config: HearthConfig, store: ModelStore, voice: list[str] | None = None) -> Any:
    """The configured language's voice (not loaded yet); ``voice`` is :func:`voice_models`' answer when known."""
    if config.language == "ko":
        voice = voice_models(config, store) if voice is None else voice
        if voice:
            from audio.kokoro_tts import KokoroSettings, KokoroSynthesizer

            return KokoroSynthesizer(
                KokoroSettings(
                    model_dir=store.path(voice[0]),
                    voice=config.tts.kokoro_voice_ko,
                    speed=config.tts.speed,
                    num_threads=config.tts.n_threads_ko,
                )
            )
        from audio.espeak_tts import EspeakSynthesizer, EspeakSettings

        return EspeakSynthesizer(EspeakSettings(voice=config.tts.espeak_voice_ko, language="ko"))
    from audio.piper_tts import PiperSettings, PiperSynthesizer

    return PiperSynthesizer(
        PiperSettings(
            voice_dir=store.path(config.tts.voice_en),
            espeak_bridge=store.path("espeak-ng") / "espeakbridge.so",
            num_threads=config.tts.n_threads,
            speed=config.tts.speed,
        )
    )


def cadence_settings(config: HearthConfig, language: str | None = None) -> tuple[CadenceRules, PaceSettings]:
    """The configured Cadence rules and pacing (for ``language``, or the configured one)."""
    c = config.cadence
    rules = CadenceRules(
        enabled=c.enabled, weak_open_chars=c.weak_open_chars, max_units=c.max_units, language=language or config.language
    )
    pace = PaceSettings(
        chars_per_s=c.chars_per_s,
        closeness=c.closeness,
        busy=c.busy,
        mood=c.mood,
        budget_s=c.budget_s,
        speech_ratio=c.speech_ratio,
        min_pause_s=c.min_pause_s,
        max_pause_s=c.max_pause_s,
    )
    return rules, pace


async def build_turn_deps(config: HearthConfig, speaker: Speaker) -> TurnDeps:
    """Check the models, load them (in worker threads, side by side) and warm them up."""
    store = model_store(config)
    check_roles(config, store)
    voice = voice_models(config, store)
    try:
        store.require(_thinking_and_hearing(config) + voice)
    except ModelError as exc:
        raise StartupError(str(exc)) from None

    profile = platform_profile(config)
    t0 = time.monotonic()
    vad = make_vad(config, store)
    recognizer: Recognizer = make_recognizer(config, store, profile)
    reasoner_chat = reasoner_model(config, store, profile)
    chat = LlamaChatModel(
        LlamaSettings(
            model_path=store.path(config.llm.model) / "model.gguf",
            n_ctx=config.llm.n_ctx,
            n_threads=config.llm.n_threads or profile.talker_threads,
            max_tokens=config.llm.max_tokens,
            temperature=config.llm.temperature,
            kept_heads=config.llm.kept_heads,
            jump_forward=config.llm.jump_forward,
        )
    )
    synthesizer: Synthesizer = make_synthesizer(config, store, voice)
    turn_model = _turn_model(config, store)
    _where, reasoner_name = reasoner_choice(config, profile)
    await _loading(store, [
        (["silero-vad"], asyncio.to_thread(vad.load)),
        ([asr_model(config)], asyncio.to_thread(recognizer.load)),  # type: ignore[attr-defined]
        ([config.llm.model], asyncio.to_thread(chat.load)),
        *([([str(reasoner_name)], asyncio.to_thread(reasoner_chat.load))] if isinstance(reasoner_chat, LlamaChatModel) else []),
        (voice, synthesizer.load()),  # type: ignore[attr-defined]
        *([([config.listen.end_of_turn_model], asyncio.to_thread(turn_model.warm))] if turn_model is not None else []),
    ])
    await _loading(store, [([asr_model(config)], asyncio.to_thread(recognizer.warm))])  # type: ignore[attr-defined]
    await _loading(store, [(voice, synthesizer.warm())])  # type: ignore[attr-defined]
    log.info("models loaded and warm in %.1f s", time.monotonic() - t0)
    rules, pace = cadence_settings(config)
    # Everything hearth plays goes through the volume, so the reply to "louder" is heard louder.
    speaker = VolumeSpeaker(speaker, config.audio.volume)
    tools = await tool_use(config, chat, speaker) if config.tools.enabled else None
    reasoner = None
    if reasoner_chat is not None and tools is not None:
        r = config.reasoner
        reasoner = Reasoner(
            reasoner_chat, tools.registry.for_model(), config.language,
            ReasonerSettings(max_tokens=r.max_tokens, max_calls=r.max_calls, max_s=r.max_s, history_turns=config.history_turns),
            where="local" if isinstance(reasoner_chat, LlamaChatModel) else str(r.url),
            reference=KitchenReference() if r.reference else None,
        )
    # The turn's voice keeps the audio of a reply's first words made ahead (agent.speaking.foresight),
    # and the fixed lines said right after a wait made for good.
    voice_ahead = ReadyVoice(synthesizer)
    await voice_ahead.keep_always(
        unit for line in lines_said_often(config.language) for unit in units_of(line, default_chain(), Cadence(rules, pace))
    )
    return TurnDeps(
        tools=tools,
        reasoner=reasoner,
        vad=vad,
        recognizer=recognizer,
        chat=chat,
        synthesizer=voice_ahead,
        voice_ahead=voice_ahead.prepare,
        speaker=speaker,
        language=config.language,
        system_prompt=config.system_prompt or system_prompt(config.language),
        listen=listen_settings(config),
        max_reply_tokens=config.llm.max_tokens,
        cadence=rules,
        pace=pace,
        turn_model=turn_model,
        speech_context=_speech_context(config, tools) if config.asr.bias else None,
    )


def make_vad(config: HearthConfig, store: ModelStore, min_speech_s: float | None = None) -> Any:
    """The voice detector (Silero), not loaded yet; ``min_speech_s`` overrides the configuration's
    (the reply listener's own detector reports an onset sooner)."""
    from audio.vad import SileroVad, VadSettings

    return SileroVad(
        VadSettings(
            model_path=store.path("silero-vad") / "silero_vad.onnx",
            threshold=config.vad.threshold,
            min_silence_duration_s=config.vad.min_silence_s,
            min_speech_duration_s=config.vad.min_speech_s if min_speech_s is None else min_speech_s,
        )
    )


def listen_settings(config: HearthConfig) -> ListenSettings:
    """How a turn hears the end of an utterance; no silence shorter than the voice detector's own."""
    return ListenSettings(
        tap_silence_s=max(config.listen.tap_silence_s, config.vad.min_silence_s),
        hold_silence_s=config.listen.hold_silence_s,
        no_speech_timeout_s=config.listen.no_speech_timeout_s,
        max_utterance_s=config.listen.max_utterance_s,
        speculative_silence_s=config.listen.speculative_silence_s,
        turn_end=TurnEndSettings(
            finished_threshold=config.listen.finished_threshold,
            end_silence_s=max(config.listen.end_silence_s, config.vad.min_silence_s),
            sure_end_silence_s=min(max(config.listen.sure_end_silence_s, config.vad.min_silence_s), config.listen.end_silence_s),
        ),
        hearing=HearingSettings(
            doubtful_below=config.listen.doubtful_below, unheard_below=config.listen.unheard_below,
            word_sure=config.listen.unsure_word_below,
            use_logprob=config.language == "en",  # measured for tiny.en only (docs/hearing.md)
        ),
    )


async def _loading(store: ModelStore, loads: Sequence[tuple[Sequence[str], Awaitable[Any]]]) -> None:
    """Run the loads side by side; one that fails stops start-up with a line naming its model."""

    async def load(names: Sequence[str], work: Awaitable[Any]) -> None:
        try:
            await work
        except Exception as exc:  # noqa: BLE001 - each runtime raises its own kind (onnxruntime's is its own class)
            raise StartupError(await asyncio.to_thread(load_failure, store, names, exc)) from None

    await asyncio.gather(*(load(names, work) for names, work in loads))


def load_failure(store: ModelStore, names: Sequence[str], exc: BaseException) -> str:
    """One line for a model that failed to load: the damaged file and the command that puts it right
    (its files are hashed now, which takes a second or two), or, when they are intact, what failed."""
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if not names:
        return f"a model failed to load: {detail}"
    problems = store.verify(names)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"{problems[0].model} failed to load: {problems[0].describe()}{more}: run `{store.fix_command([problems[0].model])}`"
    return (f"{' or '.join(names)} failed to load though its files are intact ({detail}); "
            f"run `{store.fix_command(list(names))} --force`, or check the installed runtime")


def verify_models(config: HearthConfig) -> None:
    """Hash every model the configuration uses against the manifest (a second or two per gigabyte);
    raise :class:`StartupError` naming the first damaged one.  A file damaged inside, not cut short,
    loads and then gives garbage or aborts the process in the middle of a turn."""
    try:
        model_store(config).require(required_models(config), full=True)
    except ModelError as exc:
        raise StartupError(str(exc)) from None


def reasoner_model(config: HearthConfig, store: ModelStore, profile: PlatformProfile) -> Any:
    """The reasoner's model, not loaded yet (local) or not reached yet (remote); None when off."""
    where, model = reasoner_choice(config, profile)
    r = config.reasoner
    if where == "remote":
        from agent.model.remote import RemoteChatModel, RemoteSettings

        try:
            settings = RemoteSettings(
                base_url=str(r.url), model=r.remote_model, api_key=r.api_key, id_slot=r.id_slot,
                schema_style=r.schema_style, max_tokens=r.max_tokens,
            )
        except ValueError as exc:
            raise StartupError(f"reasoner.url: {exc}") from None
        return RemoteChatModel(settings)
    if where == "local" and model is not None:
        return LlamaChatModel(
            LlamaSettings(
                model_path=store.path(model) / "model.gguf",
                n_ctx=r.n_ctx,
                n_threads=r.n_threads or profile.reasoner_threads,
                n_gpu_layers=r.gpu_layers if r.gpu_layers is not None else profile.reasoner_gpu_layers,
                max_tokens=r.max_tokens,
                # Its two fixed heads and the two of the conversation as it stands (each prewarm
                # touches all four); older conversation heads are never used again (~20 MB each).
                kept_heads=4,
            )
        )
    return None


def _speech_context(config: HearthConfig, tools: ToolUse | None) -> SpeechContext:
    """The recognizer's context: the kitchen's words, and the household's names when the tools are on."""
    from firmware_py.home_tools import HomeTools

    home = tools.home if tools is not None else None
    names = home.vocabulary if isinstance(home, HomeTools) else (lambda: ())
    return SpeechContext(config.language, names)


async def tool_use(config: HearthConfig, chat: JsonChatModel, speaker: VolumeSpeaker) -> ToolUse:
    """The household's tools opened, and the planner that decides calls to them with ``chat``."""
    from agent.deciding.arguments import content_in, grounded
    from agent.deciding.tool_examples import default_planner
    from firmware_py.home_tools import open_home_tools

    try:
        home = await open_home_tools(config, apply_volume=lambda level: setattr(speaker, "level", level))
    except (OSError, sqlite3.Error) as exc:
        raise StartupError(f"the tools' data could not be opened: {exc}; check tools.data_dir") from None
    except ConfigError as exc:
        raise StartupError(str(exc)) from None
    hb = config.heartbeat
    lane = None
    if hb.enabled:
        # Early look-ups get their own worker, so one never queues ahead of the user's own call.
        lane = ToolExecutor(home.registry)
        lane.start()
    return ToolUse(
        planner=default_planner(chat, home.registry.for_model(), config.language, tool_first=config.tools.tool_first,
                                places=home.forecast_places),
        executor=home.executor,
        lane=lane,
        thinker=ThinkerSettings(
            interval_s=hb.interval_s, max_in_flight=hb.max_in_flight, min_words=hb.min_words, stop_at_end=hb.stop_at_end,
            finish_newest=hb.finish_newest,
        ),
        registry=home.registry,
        pretool_threshold_s=config.tools.pretool_threshold_s,
        grounded=grounded,
        holds_values=content_in,
        answer=config.tools.answer,
        home=home,
        home_devices=home.home_devices(),
    )


async def close_turn_deps(deps: TurnDeps) -> None:
    """Release what the components hold open beyond the models (the tools' stores and worker)."""
    if deps.tools is not None:
        await deps.tools.close()


@dataclass
class DeviceParts:
    """What runs the assistant: its sound devices, button and light, or none of them (``hearth
    serve --no-device``: ``microphone``, ``button`` and ``light`` None, the speaker a silent one)."""

    assistant: Assistant
    microphone: Any
    speaker: Any
    button: PushToTalk | None
    light: StatusLight | None
    watcher: TimerWatcher | None = None
    ringers: Ringers | None = None
    long_press: Callable[[], Awaitable[None]] | None = None
    """What a long press without speech does: the volume up a step, said at the new level."""
    keeping_heads: asyncio.Task[None] | None = None
    """The decision prompt heads being kept after start-up, giving way to any press."""
    echo: EchoFilter | None = None
    """The microphone's echo filter (hearth's voice taken out of it); None without one."""
    echo_off: str = "echo cancellation is off in the configuration"
    """Why there is no echo filter, when there is none."""
    onset_vad: Any = None
    """The reply listener's own voice detector (quick to report an onset); None without an echo filter."""

    async def close(self) -> None:
        if self.keeping_heads is not None:
            self.keeping_heads.cancel()
            await asyncio.gather(self.keeping_heads, return_exceptions=True)
        if self.watcher is not None:
            await self.watcher.stop()
        if self.ringers is not None:
            await self.ringers.stop()
        await close_turn_deps(self.assistant.deps)
        # Last of what writes: the turn under way has settled (DeviceLoop.run) and is recorded.
        self.assistant.close()
        if self.microphone is not None:
            await self.microphone.close()
        await self.speaker.close()


def make_echo_filter(config: HearthConfig) -> tuple[EchoFilter | None, str]:
    """The echo filter the configuration asks for, its canceller tried on one frame; or None and
    why there is none (said in the log when the device loop starts)."""
    from audio.echo import EchoFilter, EchoSettings, FarEndReference, make_canceller

    if not config.echo.enabled:
        return None, "echo cancellation is off in the configuration ([echo] enabled = false)"
    kind = config.echo.canceller
    try:
        canceller = make_canceller(kind)
        silence = np.zeros(canceller.frame, np.float32)
        canceller.process(silence, silence)  # loads the native library now rather than mid-reply
        canceller.reset()
    except Exception as exc:  # noqa: BLE001 - any failure of the library means pause-only listening
        return None, f"the {kind!r} echo canceller does not work here ({type(exc).__name__}: {exc})"
    return EchoFilter(canceller, FarEndReference(), EchoSettings(min_erle_db=config.echo.min_erle_db)), ""


def sound_settings(config: HearthConfig) -> tuple[MicrophoneSettings, SpeakerSettings]:
    """How the microphone and the speaker are opened (and checked before, :mod:`firmware_py.preflight`)."""
    from audio.portaudio import MicrophoneSettings, SpeakerSettings

    channels = array_geometry(config).capture_channels if config.audio.array else 1
    return (MicrophoneSettings(device=config.audio.input_device, channels=channels),
            SpeakerSettings(device=config.audio.output_device, sample_rate=config.audio.output_rate))


def array_geometry(config: HearthConfig) -> ArrayGeometry:
    """The configured microphone array's geometry; :class:`StartupError` naming what is wrong."""
    from audio.array import load_geometry

    assert config.audio.array is not None
    try:
        return load_geometry(config.audio.array)
    except ValueError as exc:
        raise StartupError(f"audio.array: {exc}") from None


def make_microphone(
    config: HearthConfig, settings: MicrophoneSettings, keep_channels: bool = False,
) -> SoundDeviceMicrophone | BeamformedMicrophone:
    """The input as hearth hears it: one microphone, or the configured array through its front end
    (with ``keep_channels``, over a :class:`~audio.array_microphone.RecordingArray` that keeps every
    channel's audio, for ``hearth mic-check``)."""
    from audio.portaudio import SoundDeviceMicrophone

    capture = SoundDeviceMicrophone(settings)
    if not config.audio.array:
        return capture
    from audio.array_microphone import BeamformedMicrophone, RecordingArray
    from audio.beamformer import make_front_end

    geometry = array_geometry(config)
    source: Any = RecordingArray(capture) if keep_channels else capture
    log.info("microphone array %s: %d microphones of %d channels, front end %s", geometry.name, geometry.count,
             geometry.capture_channels, config.audio.array_front_end)
    return BeamformedMicrophone(source, geometry, make_front_end(config.audio.array_front_end, geometry.count))


async def build_device(config: HearthConfig, loop: asyncio.AbstractEventLoop) -> DeviceParts:
    """The appliance: PortAudio microphone and speaker, GPIO button and LED, warm models."""
    from audio.portaudio import SoundDeviceSpeaker

    echo, echo_off = make_echo_filter(config)
    microphone_settings, speaker_settings = sound_settings(config)
    speaker = SoundDeviceSpeaker(speaker_settings, reference=echo.reference if echo is not None else None)
    microphone = make_microphone(config, microphone_settings)
    # Hashed while the models load (the same pages, read once): a model damaged inside loads fine.
    verifying = asyncio.ensure_future(asyncio.to_thread(verify_models, config))
    try:
        deps = await build_turn_deps(config, speaker)
    finally:
        await asyncio.gather(verifying, return_exceptions=True)
    verifying.result()
    try:
        await speaker.start()
        await microphone.start()
    except Exception as exc:  # noqa: BLE001 - the device error already names the device
        raise StartupError(_and_no_button(str(exc), config, loop)) from None
    assistant = await warm_assistant(config, deps)
    ringing = timer_announcements(config, deps, assistant)
    watcher, ringers = ringing if ringing is not None else (None, None)
    light: StatusLight = (
        RgbStatusLight(config.button.led_pins) if config.button.led == "rgb"
        else ConsoleLight() if config.button.kind == "keyboard" else NoLight()
    )
    button: PushToTalk = (
        KeyboardButton(loop) if config.button.kind == "keyboard" else GpioButton(config.button.pin, config.button.bounce_s, loop)
    )
    onset_vad = None
    if echo is not None:
        from agent.listening.barge_in import ONSET_MIN_SPEECH_S

        onset_vad = make_vad(config, model_store(config), min_speech_s=ONSET_MIN_SPEECH_S)
        await asyncio.to_thread(onset_vad.load)
    # Ready now; the heads of the decision prompt are kept meanwhile (a press goes first).
    keeping = asyncio.create_task(assistant.keep_heads(), name="keep-heads")
    return DeviceParts(
        assistant, microphone, speaker, button, light, watcher, ringers, _volume_step(deps, assistant), keeping, echo, echo_off,
        onset_vad,
    )


def _and_no_button(problem: str, config: HearthConfig, loop: asyncio.AbstractEventLoop) -> str:
    """``problem`` (a sound device that will not open), and the way to run without GPIO when the
    button cannot be opened either: the button is opened after the sound devices, so a machine
    with neither would hear of ``--keyboard`` only once it had a sound card."""
    if config.button.kind != "gpio":
        return problem
    button = GpioButton(config.button.pin, config.button.bounce_s, loop)
    try:
        button.open(lambda _at: None, lambda _at: None)
    except NoButton as exc:
        return f"{problem}; and {exc}"
    button.close()
    return problem


async def warm_assistant(config: HearthConfig, deps: TurnDeps) -> Assistant:
    """The assistant over ``deps``, writing to the household's conversation record, its prompt warm."""
    from firmware_py.home_tools import data_dir

    try:
        record = ConversationRecord.open(data_dir(config) / "conversation.sqlite3")
    except (OSError, sqlite3.Error) as exc:
        raise StartupError(f"cannot open the conversation record in {data_dir(config)}: {exc}") from None
    assistant = Assistant(deps, config.history_turns, barge_in=config.cadence.barge_in, record=record)
    await assistant.warm()
    return assistant


def _volume_step(deps: TurnDeps, assistant: Assistant) -> Callable[[], Awaitable[None]] | None:
    """The long press: one step louder, from the loudest back to the quietest, said at the new level."""
    tools = deps.tools
    if tools is None or "volume_set" not in tools.registry:
        return None

    async def step() -> None:
        result = await tools.executor.call("volume_set", {"step": 1, "wrap": True}, origin="user")
        if result.ok and result.output is not None:
            await assistant.announce(result.output.text)
        else:
            log.error("volume step failed: %s", result.error)

    return step


def timer_announcements(config: HearthConfig, deps: TurnDeps, assistant: Assistant) -> tuple[TimerWatcher, Ringers] | None:
    """Ring finished timers aloud, between turns, until someone answers (timers survive a restart)."""
    from firmware_py.home_tools import HomeTools

    home = deps.tools.home if deps.tools is not None else None
    if not isinstance(home, HomeTools):
        return None
    sound = chime(config.audio.output_rate)
    ringers = Ringers()

    settings = RingSettings(times=config.tools.ring_times, interval_s=config.tools.ring_interval_s)

    async def ring(timer: Timer) -> None:
        text = done_message(timer, home.timers.clock(), config.language)
        ringers.start(ring_until_heard(assistant, text, sound, settings))

    watcher = TimerWatcher(home.timers, ring)
    watcher.start()
    return watcher, ringers
