"""``hearth run`` and ``hearth serve``: the appliance, and hearth's parts offered to the home.

One process, one assistant, one set of stores: the push-to-talk loop (unless ``--no-device``),
the Wyoming server Home Assistant's voice pipeline talks to, and the companion page.  A timer set
through Home Assistant rings in the kitchen and counts down on the page; an item added on the page
is in the list the speaker reads.  Servers stop first on the way out, so no request is taken that
cannot be answered, then the turn under way settles and the record closes.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.assistant import Assistant
from agent.events import Event
from agent.live_view import LiveView
from agent.text_turns import TextTurns
from audio.ready_voice import own_voice
from audio.silent import SilentSpeaker
from firmware_py import preflight
from firmware_py.config import HearthConfig, ReasonerConfig
from firmware_py.safe_text import printable
from firmware_py.serve_choice import ServeChoice
from firmware_py.service import ServiceNotifier
from firmware_py.wiring import DeviceParts

if TYPE_CHECKING:
    from agent.deps import TurnDeps
    from tools.timers import TimerWatcher

log = logging.getLogger(__name__)


def also_tell(assistant: Assistant, listener: Callable[[Event], None]) -> None:
    """Give ``listener`` every event the assistant tells, after whoever listens already."""
    before = assistant.on_event

    def both(event: Event) -> None:
        before(event)
        listener(event)

    assistant.on_event = both


async def build_headless(config: HearthConfig) -> DeviceParts:
    """The assistant, its models warm, speaking into a :class:`SilentSpeaker` (no sound card)."""
    from firmware_py.wiring import build_turn_deps, verify_models, warm_assistant

    verifying = asyncio.ensure_future(asyncio.to_thread(verify_models, config))
    try:
        deps = await build_turn_deps(config, SilentSpeaker(config.audio.output_rate))
    finally:
        await asyncio.gather(verifying, return_exceptions=True)
    verifying.result()
    assistant = await warm_assistant(config, deps)
    watcher = timers_unannounced(config, deps)
    keeping = asyncio.create_task(assistant.keep_heads(), name="keep-heads")
    return DeviceParts(assistant, None, deps.speaker, None, None, watcher, None, keeping_heads=keeping)


def timers_unannounced(config: HearthConfig, deps: TurnDeps) -> TimerWatcher | None:
    """Finished timers marked done as they end (the page and the next answers show it), each
    logged as not announced: with no speaker nothing can ring it, and a log saying it rang would
    tell whoever reads it that someone was told."""
    from firmware_py.home_tools import HomeTools
    from tools.timers import Timer, TimerWatcher, done_message

    home = deps.tools.home if deps.tools is not None else None
    if not isinstance(home, HomeTools):
        return None

    async def unannounced(timer: Timer) -> None:
        text = done_message(timer, home.timers.clock(), config.language)
        log.info("timer done, not announced aloud: no speaker (--no-device): %r", text)

    watcher = TimerWatcher(home.timers, unannounced)
    watcher.start()
    return watcher


@dataclass
class OtherLanguages:
    """The recognizers and voices of the languages the Wyoming server offers besides the configured one."""

    recognizers: dict[str, Any] = field(default_factory=dict)
    synthesizers: dict[str, Any] = field(default_factory=dict)


async def other_languages(config: HearthConfig) -> OtherLanguages:
    """Load (side by side, in threads) the recognizer and voice of each of ``serve.languages``."""
    from firmware_py.wiring import StartupError, _loading, asr_model, make_recognizer, make_synthesizer, model_store, voice_models
    from models.store import ModelError

    found = OtherLanguages()
    store = model_store(config)
    loads = []
    for language in config.serve.languages:
        if language == config.language or language in found.recognizers:
            continue
        other = config.model_copy(update={"language": language, "reasoner": ReasonerConfig(where="off")})
        voice = voice_models(other, store)
        try:
            store.require([asr_model(other), *voice])
        except ModelError as exc:
            raise StartupError(f"serve.languages: {exc}") from None
        recognizer, synthesizer = make_recognizer(other, store), make_synthesizer(other, store, voice)
        found.recognizers[language], found.synthesizers[language] = recognizer, synthesizer
        loads += [([asr_model(other)], asyncio.to_thread(recognizer.load)), (voice, synthesizer.load())]
    await _loading(store, loads)
    await _loading(store, [([], asyncio.to_thread(r.warm)) for r in found.recognizers.values()])
    return found


async def start(config: HearthConfig, choice: ServeChoice) -> int:
    """``hearth run`` / ``hearth serve``: what is missing (the data folder, a port, a sound device,
    the button) said in one line before any model loads (:mod:`firmware_py.preflight`), then the
    line of what runs where, then :func:`run`."""
    from firmware_py.wiring import describe_choice, platform_profile

    await preflight.preflight(config, choice)
    # Names from the configuration file, shown before anything checks them against the models.
    print(f"hearth: {printable(describe_choice(config, platform_profile(config)))}", file=sys.stderr)
    return await run(config, choice)


async def run(config: HearthConfig, choice: ServeChoice) -> int:
    """Run until SIGINT/SIGTERM: the device loop (``choice.device``) and the servers chosen."""
    from firmware_py.device import DeviceLoop
    from firmware_py.wiring import StartupError, build_device

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    # Under systemd (Type=notify): READY once the models are warm and the button is open; the
    # watchdog pinged from this loop (the models load in threads meanwhile), so a stalled loop is
    # restarted.  Outside systemd these do nothing.
    systemd = ServiceNotifier.from_environment()
    watchdog = systemd.start_watchdog()

    def request_stop() -> None:
        systemd.stopping()
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, request_stop)
    systemd.status("loading and warming the models")
    try:
        parts = await build_device(config, loop) if choice.device else await build_headless(config)
    except StartupError as exc:
        systemd.status(f"failed to start: {exc}")
        raise
    assistant: Assistant = parts.assistant
    device = None
    if parts.button is not None and parts.light is not None:
        device = DeviceLoop(assistant, parts.microphone, parts.button, parts.light,
                            on_long_press=parts.long_press, long_press_s=config.button.long_press_s, speaker=parts.speaker,
                            echo=parts.echo, echo_off=parts.echo_off, min_erle_db=config.echo.min_erle_db, onset_vad=parts.onset_vad,
                            ringers=parts.ringers)
    servers: list[Any] = []
    try:
        if choice.wyoming or choice.web:
            servers = await _start_servers(config, choice, assistant)
        ready = "ready: press the button and speak" if device is not None else "ready: serving"
        if device is not None:
            await device.run(stop, on_ready=lambda: systemd.ready(ready))
        else:
            systemd.ready(ready)
            log.info(ready)
            await stop.wait()
    finally:
        systemd.stopping()
        for server in reversed(servers):
            await server.stop()
        if device is None:
            assistant.interrupt()
            await assistant.settle()
        await parts.close()
        if watchdog is not None:
            watchdog.cancel()
    return 0


async def _start_servers(config: HearthConfig, choice: ServeChoice, assistant: Assistant) -> list[Any]:
    """The Wyoming server and the page, started; each told on stderr with the address it took."""
    servers: list[Any] = []
    try:
        if choice.wyoming is not None:
            server, address, offered = await start_wyoming(config, choice.wyoming, assistant, await other_languages(config))
            servers.append(server)
            print(printable(f"hearth: Wyoming on {address} ({offered})"), file=sys.stderr)
        if choice.web is not None:
            live = LiveView()
            also_tell(assistant, live)
            page, (host, port) = await start_page(config, choice.web, assistant, live)
            servers.append(page)
            print(printable(f"hearth: the companion page on http://{_url_host(host)}:{port}/"), file=sys.stderr)
    except BaseException:
        for server in reversed(servers):
            await server.stop()
        raise
    return servers


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def start_wyoming(config: HearthConfig, uri: str, assistant: Assistant, others: OtherLanguages) -> tuple[Any, str, str]:
    """The Wyoming server on ``uri``: the assistant's own recognizer, voice and answers in the
    configured language, and the recognizers and voices of ``others``.  Returns the server, the
    address it took (a port 0 is told as the port taken) and what it offers, in words."""
    from firmware_py.wiring import StartupError, cadence_settings
    from firmware_py.wyoming import WyomingLimits, WyomingServer, offer_from

    deps = assistant.deps
    recognizers = {config.language: deps.recognizer, **others.recognizers}
    synthesizers = {config.language: own_voice(deps.synthesizer), **others.synthesizers}
    programs = config.serve.wyoming_programs
    offer = offer_from(
        recognizers=recognizers,
        synthesizers=synthesizers,
        cadence={language: cadence_settings(config, language)[0] for language in synthesizers},
        answers=TextTurns(assistant) if "handle" in programs else None,
        answer_languages=(config.language,),
        speech_context={config.language: deps.speech_context} if deps.speech_context is not None else {},
        programs=programs,
        limits=WyomingLimits(client_idle_s=config.serve.wyoming_idle_s, max_connections=config.serve.wyoming_max_connections),
    )
    server = WyomingServer(offer)
    try:
        address = await server.start(uri)
    except OSError as exc:
        raise StartupError(f"the Wyoming server cannot listen on {uri}: {exc.strerror or exc}") from None
    offered = f"{', '.join(programs)}; {', '.join(sorted(set(recognizers) | set(synthesizers)))}"
    return server, address, offered


async def start_page(config: HearthConfig, at: tuple[str, int], assistant: Assistant, live: LiveView) -> tuple[Any, tuple[str, int]]:
    """The companion page on ``at``, over the assistant's own stores, record and live view."""
    from firmware_py.home_tools import HomeTools
    from firmware_py.web.app import PageSources, WebSettings, create_app
    from firmware_py.web.server import WebServer
    from firmware_py.wiring import StartupError

    tools = assistant.deps.tools
    home = tools.home if tools is not None else None
    if not isinstance(home, HomeTools):
        raise StartupError("the companion page shows the household's timers, list and notes: it needs tools.enabled = true")
    host, port = at
    settings = WebSettings(host=host, port=port, token=config.serve.web_token, language=config.language)
    server = WebServer(create_app(PageSources(live, home, assistant.record, assistant), settings), host, port, config.serve.web_token)
    try:
        return server, await server.start()
    except OSError as exc:
        raise StartupError(f"the companion page cannot listen on {host}:{port}: {exc.strerror or exc}") from None
