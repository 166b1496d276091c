"""The appliance loop: microphone always open, a press starts a turn, the LED shows the state.

A lost microphone or speaker is opened again with backoff while the LED shows the fault
(:mod:`firmware_py.recovery`); hearth serves the next press once it is back, no restart.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from agent.assistant import Assistant
from agent.listening.barge_in import EchoLevel, PauseListener, ReplyListener
from agent.events import Event, SpeechStarted, State, StateChanged, TranscriptFinal, TurnFailed
from agent.listening.listen import Press
from audio.protocols import AudioChunk, AudioDeviceError, Microphone, TurnAware, VoiceActivityDetector, captured_at
from firmware_py.gpio import PushToTalk, StatusLight
from firmware_py.recovery import BackoffSettings, DeviceReopener, FaultLight, Reopenable, WatchedSpeaker
from firmware_py.ringing import Ringers
from firmware_py.speaking_up import Canceller, SpeakingUp

log = logging.getLogger(__name__)


class MicrophoneTap:
    """Reads the microphone all the time and hands chunks to whoever is listening now.

    Keeping the stream open avoids the device's start-up delay on every press;
    between presses the audio is dropped, except the last ``preroll_s``, which a turn started by
    the user speaking up gets first (the words that made hearth stop are part of the request).
    ``on_chunk`` sees every chunk (the barge-in listener).

    ``clean``, when set, takes each chunk and the monotonic time its first sample was captured and
    gives the chunk everyone gets instead (echo cancellation: the turns, the preroll and the
    listener all hear the room without hearth's voice).
    """

    def __init__(self, microphone: Microphone, max_chunks: int = 1000, preroll_s: float = 0.6) -> None:
        self.microphone = microphone
        self.max_chunks = max_chunks
        self.preroll_s = preroll_s
        self.on_chunk: Callable[[AudioChunk], None] = lambda _c: None
        self.clean: Callable[[AudioChunk, float], AudioChunk] | None = None
        self._queue: asyncio.Queue[AudioChunk | None] | None = None
        self._recent: collections.deque[AudioChunk] = collections.deque()

    async def pump(self) -> None:
        async for chunk in self.microphone.chunks():
            clean = self.clean
            if clean is not None:
                chunk = clean(chunk, captured_at(chunk, time.monotonic()))
            self._keep_recent(chunk)
            self.on_chunk(chunk)
            queue = self._queue
            if queue is not None and queue.qsize() < self.max_chunks:
                queue.put_nowait(chunk)
        self.stop_listening()

    def _keep_recent(self, chunk: AudioChunk) -> None:
        self._recent.append(chunk)
        while sum(c.duration for c in self._recent) - self._recent[0].duration >= self.preroll_s:
            self._recent.popleft()

    def listen(self, preroll: bool = False, first: Sequence[AudioChunk] = ()) -> AsyncIterator[AudioChunk]:
        """Start a new subscription (ending the previous one) and return its audio.

        ``preroll``: begin with the last ``preroll_s`` of audio already heard; ``first``: begin
        with these chunks (the words a listener heard before the turn started).
        """
        self.stop_listening()
        if isinstance(self.microphone, TurnAware):
            self.microphone.turn_began()  # an array's front end keeps the user's words out of its noise
        queue: asyncio.Queue[AudioChunk | None] = asyncio.Queue()
        for chunk in [*(self._recent if preroll else ()), *first]:
            queue.put_nowait(chunk)
        self._queue = queue

        async def audio() -> AsyncIterator[AudioChunk]:
            while (chunk := await queue.get()) is not None:
                yield chunk

        return audio()

    def stop_listening(self) -> None:
        if self._queue is not None:
            self._queue.put_nowait(None)
            self._queue = None
            if isinstance(self.microphone, TurnAware):
                self.microphone.turn_ended()


class DeviceLoop:
    """Push-to-talk: press to speak (hold, or tap and talk); press again to interrupt.

    Speaking up while hearth talks also interrupts it.  With a working ``echo`` canceller it is
    heard at any moment, over hearth's voice (:class:`~agent.listening.barge_in.ReplyListener`
    given the cleaned microphone), else in Cadence's pauses
    (:class:`~agent.listening.barge_in.PauseListener`); :class:`~firmware_py.speaking_up.SpeakingUp`
    chooses.  With ``barge_in = "stop"`` hearth stops and listens, as after a press (the words
    already said are the request's first); with "rush" it says the rest without pauses.  A stop
    word ("stop", "그만", ...) heard over the reply ends it and starts no turn; heard over a ringing
    timer (``ringers``), or between its rings, it silences the timer.

    A press held ``long_press_s`` or longer with nothing said is not a request: the turn it
    started is dropped unheard and ``on_long_press`` runs (the volume steps up).

    A lost microphone (one that can be started again) ends the audio of the turn listening, which
    answers what it heard; a lost ``speaker`` ends the turn speaking, which is recorded with what was
    not heard.  Either is opened again with ``backoff``, the LED showing the fault; while the
    microphone is lost a press only cuts the wait short.
    """

    def __init__(
        self,
        assistant: Assistant,
        microphone: Microphone,
        button: PushToTalk,
        light: StatusLight,
        on_long_press: Callable[[], Awaitable[None]] | None = None,
        long_press_s: float = 1.5,
        settle_s: float = 3.0,
        speaker: WatchedSpeaker | None = None,
        backoff: BackoffSettings | None = None,
        echo: Canceller | None = None,
        echo_off: str = "echo cancellation is off in the configuration",
        min_erle_db: float = 20.0,
        ringers: Ringers | None = None,
        onset_vad: VoiceActivityDetector | None = None,
    ) -> None:
        self.assistant = assistant
        self.settle_s = settle_s
        """On the way out, how long the turn under way may take to stop before it is recorded as it stands."""
        self.on_long_press = on_long_press
        self.long_press_s = long_press_s
        self._spoke_since_press = False
        self._long_presses: set[asyncio.Task[None]] = set()
        self.tap = MicrophoneTap(microphone)
        self.button = button
        self.light = FaultLight(light)
        self.speaker = speaker
        self._microphone_back = DeviceReopener("the microphone", microphone, backoff) if isinstance(microphone, Reopenable) else None
        self._speaker_back = DeviceReopener("the speaker", speaker, backoff) if speaker is not None else None
        self._press: Press | None = None
        self._state = State.IDLE
        self._spoke_over = False  # the utterance being recognized began while hearth spoke
        self.ringers = ringers
        self.speaking_up = PauseListener(assistant.deps.vad, self._on_speaking_up)
        self.echo = echo
        self.onset_vad = onset_vad
        """The reply listener's own detector, made to report an onset sooner than a turn's
        (:data:`~agent.listening.barge_in.ONSET_MIN_SPEECH_S`); None: the turns' detector."""
        over_voice = self._reply_listener(echo) if echo is not None else None
        self.ears = SpeakingUp(self.speaking_up, over_voice, echo, echo_off, min_erle_db)
        if echo is not None:
            self.tap.clean = self.ears.clean
        self.tap.on_chunk = self._hear
        assistant.on_event = self._on_event

    def _reply_listener(self, echo: Canceller) -> ReplyListener:
        deps = self.assistant.deps

        def echo_level() -> EchoLevel:
            # The worse frames' ERLE, not the typical one: a burst of residual is what gets through.
            erle = echo.erle_worst_db
            return EchoLevel(echo.far_rms, erle if erle is not None else 0.0, echo.echo_gain)

        vad = self.onset_vad if self.onset_vad is not None else deps.vad
        return ReplyListener(
            vad, deps.recognizer, self._on_voice_onset, self._on_spoken_stop, self._on_spoken_request, echo_level,
            on_noise=self._on_noise_over_voice, near_end=echo,
        )

    def _hear(self, chunk: AudioChunk) -> None:
        if self.ringers is not None and self.ears.hears_over_voice:
            self._follow()  # a timer may have started or stopped ringing
        self.ears.accept(chunk)

    def _follow(self) -> None:
        self.ears.follow(self._state, hold_open=self.ringers is not None and self.ringers.active)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StateChanged):
            self.light.show(event.state)
            self._state = event.state
            self._follow()
            if event.state not in (State.LISTENING, State.THINKING):
                # While thinking the turn still listens: a user who only paused may go on.
                self.tap.stop_listening()
        elif isinstance(event, SpeechStarted):
            self._spoke_since_press = True
        elif isinstance(event, TranscriptFinal):
            log.info("heard: %r", event.text)
        elif isinstance(event, TurnFailed):
            log.error("turn failed: %s", event.reason)

    def on_press(self, at: float) -> None:
        log.info("button pressed")
        if self._speaker_back is not None and "speaker" in self.light.faults:
            self._speaker_back.try_now()  # the reply to this press tries the speaker again
        if self._microphone_back is not None and "microphone" in self.light.faults:
            log.warning("press not served: the microphone is lost; trying it again now")
            self._microphone_back.try_now()
            return
        self._press = Press(at)
        self._spoke_since_press = False
        self.ears.close()  # what was being said over hearth is dropped: the press is the request
        self._spoke_over = False
        # Starting a turn cancels the one in progress: barge-in silences the speaker first.
        self.assistant.start_turn(self.tap.listen(), self._press)

    def _on_speaking_up(self) -> None:
        """Heard in a pause (no echo cancellation): silence the reply, or rush it, at once."""
        self.assistant.user_spoke()
        if self.assistant.barge_in == "stop":
            self._listen_to_the_user(preroll=True)

    def _listen_to_the_user(self, preroll: bool = False, first: Sequence[AudioChunk] = ()) -> None:
        log.info("stopped by the user speaking up: listening")
        now = time.monotonic()
        self._press = Press(now)
        self._press.release(now)  # a spoken start is a tap: the utterance ends at its silence
        self.assistant.start_turn(self.tap.listen(preroll=preroll, first=first), self._press)

    def _on_voice_onset(self) -> None:
        """Heard over hearth's voice: silence the reply (or rush it) now; what was said decides the rest."""
        self._spoke_over = self._state in (State.SPEAKING, State.PAUSING)
        if self._spoke_over:
            self.assistant.user_spoke()

    def _on_spoken_stop(self, text: str) -> None:
        """A stop word over hearth's voice (or a ringing timer): silence, and no request."""
        self.assistant.stop_speaking(text)
        self._asked_nothing()

    def _on_noise_over_voice(self) -> None:
        """The onset was not the user after all (a clatter, a burst of hearth's residual voice):
        nothing was asked, so no turn starts; a reply it stopped stays stopped (recorded as
        interrupted), as hearth cannot take back a silence."""
        self._asked_nothing()

    def _asked_nothing(self) -> None:
        """What was said over hearth starts no turn: hearth stays quiet."""
        self._spoke_over = False
        if self.assistant.current is None and self._state != State.IDLE:
            # The reply was cut (no turn follows it to say so): hearth is quiet now.
            self._on_event(StateChanged(State.IDLE))
        else:
            self._follow()  # the listener kept open for the decision closes if hearth is quiet now

    def _on_spoken_request(self, chunks: list[AudioChunk], text: str) -> None:
        """Speech over hearth's voice that is no stop word: under "stop" the next request, begun
        with the audio already heard; under "rush" the reply goes on (rushed at the onset)."""
        spoke_over, self._spoke_over = self._spoke_over, False  # not between a timer's rings
        if self.assistant.barge_in == "stop" and spoke_over:
            self.ears.close()  # the turn takes over the microphone (and the shared voice detector)
            self._listen_to_the_user(first=chunks)
        self._follow()

    def on_release(self, at: float) -> None:
        press = self._press
        if press is None:
            return
        press.release(at)
        if self.on_long_press is not None and at - press.pressed_at >= self.long_press_s and not self._spoke_since_press:
            log.info("long press (%.1f s, nothing said)", at - press.pressed_at)
            self._press = None
            self.tap.stop_listening()
            self.assistant.interrupt()  # the turn heard nothing: it ends unrecorded, with no "I didn't hear"
            task = asyncio.ensure_future(self._long_press())
            self._long_presses.add(task)
            task.add_done_callback(self._long_presses.discard)

    async def _long_press(self) -> None:
        assert self.on_long_press is not None
        try:
            await self.on_long_press()
        except AudioDeviceError as exc:  # the speaker is lost: the loop is reopening it
            log.warning("the long press could not be said: %s", exc)
        except Exception:  # noqa: BLE001 - a failed volume step must not stop the speaker serving presses
            log.exception("the long press failed")

    async def run(self, stop: asyncio.Event, on_ready: Callable[[], None] | None = None) -> None:
        """Serve presses until ``stop`` is set; ``on_ready`` runs once the button and microphone are open."""
        self.light.show(State.IDLE)
        self.button.open(self.on_press, self.on_release)
        pump = asyncio.create_task(self._keep_microphone(), name="microphone")
        devices = [pump, *([asyncio.create_task(self._keep_speaker(), name="speaker")] if self.speaker is not None else [])]
        self.ears.start()
        log.info("ready: press the button and speak")
        if on_ready is not None:
            on_ready()
        try:
            done, _ = await asyncio.wait([*devices, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
            for task in devices:
                if task in done and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        finally:
            self.assistant.interrupt()
            # Ctrl-C in the middle of a reply: the turn ends as interrupted and is recorded.
            await self.assistant.settle(self.settle_s)
            for task in list(self._long_presses):
                task.cancel()
            await asyncio.gather(*self._long_presses, return_exceptions=True)
            for task in devices:
                task.cancel()
            await asyncio.gather(*devices, return_exceptions=True)
            self.button.close()
            self.light.show(State.IDLE)
            self.light.close()

    async def _keep_microphone(self) -> None:
        """Read the microphone; when it is lost, open it again and read on."""
        while True:
            try:
                await self.tap.pump()
                return
            except AudioDeviceError as exc:
                if self._microphone_back is None:
                    raise
                self.tap.stop_listening()  # the turn listening now answers what it heard
                self.light.fault("microphone")
                await self._microphone_back.reopen(exc)
                self.light.clear("microphone")

    async def _keep_speaker(self) -> None:
        """Whenever the speaker is lost (mid-reply or between turns), open it again."""
        assert self.speaker is not None and self._speaker_back is not None
        while True:
            exc = await self.speaker.lost()
            self.light.fault("speaker")
            await self._speaker_back.reopen(exc)
            self.light.clear("speaker")
