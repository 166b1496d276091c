"""Telling when a PortAudio stream has died, and calling PortAudio without hanging on a dead server.

A sound device that goes away does not make PortAudio raise.  Through PulseAudio, a removed
sink or a killed server ends the stream (``finished_callback`` fires, ``active`` turns False)
and the callbacks simply stop; a hung server stops the callbacks while the stream still looks
active, and then opening, stopping and closing a stream all block until the server answers.

So a :class:`StreamWatch` tells a stream lost when PortAudio ends it without being asked or
when its callbacks stop coming, and :func:`bounded_call` makes the PortAudio calls that may
block in a thread of their own, waiting a bounded time for them.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from audio.protocols import AudioDeviceError

log = logging.getLogger(__name__)

T = TypeVar("T")

PORTAUDIO_STREAM_CALLS = threading.RLock()
"""Held around every call :func:`bounded_call` makes and every :func:`stop_and_close` (the calls
that open, start, stop or close a PortAudio stream).  PortAudio is
one library per process and not thread-safe: the microphone opening in its thread while the
speaker opens in another aborted the process inside the host API (``Fatal Python error:
Aborted`` in ``sounddevice``'s stream constructor).  A call stuck in a hung server keeps it,
so the others wait in their own threads and time out as the stuck one did."""


@dataclass(frozen=True)
class LossSettings:
    """When a sound device counts as lost, and how long PortAudio may block before it is given up."""

    stall_s: float = 10.0
    """A running stream whose callbacks stop for this long is lost (a hung sound server); a device
    that is unplugged or a server that dies is noticed at once, when PortAudio ends the stream.
    Generous, because a sound server starved of CPU (models decoding on every core) also
    leaves gaps of a few seconds, and taking one for a loss would cut a reply off."""
    first_audio_s: float = 6.0
    """How long a newly opened stream may go without callbacks before it is judged by ``stall_s``
    (through PulseAudio a new stream can pause for ~2 s after its first few)."""
    open_timeout_s: float = 10.0
    """Opening a stream is given up after this long (PortAudio blocks while the sound server hangs)."""
    close_timeout_s: float = 2.0
    """``close()`` waits this long for PortAudio to stop the stream; a stop still stuck then is left
    to finish in a thread of its own, and ``close()`` returns."""


class StreamWatch:
    """Watches one stream at a time (one *generation*) and reports its loss once, on the loop.

    The stream's callbacks pass their generation to :meth:`fed` and :meth:`finished`, so a
    stream closed on purpose, or one given up on while it was still opening, is never taken for
    the current one.
    """

    def __init__(self, name: str, settings: LossSettings, on_lost: Callable[[AudioDeviceError], None]) -> None:
        self.name = name
        self.settings = settings
        self.on_lost = on_lost
        self.generation = 0
        """The stream watched now: callbacks of any other generation are ignored."""
        self._issued = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stream: Any = None
        self._begun_at = 0.0
        self._last_fed: float | None = None  # written by the audio thread; a float store is atomic
        self._starved_s = 0.0  # of the time since _starved_since, how much the process itself stood still
        self._starved_since: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0

    def next_generation(self) -> int:
        """A new generation for the stream about to be opened (one given up on keeps its own)."""
        self._issued += 1
        return self._issued

    def begin(self, stream: Any, generation: int) -> bool:
        """Watch ``stream`` (opened as ``generation``); False if a newer one was issued since."""
        if generation != self._issued:
            return False
        self.generation = generation
        self._loop = asyncio.get_running_loop()
        self._stream = stream
        self._begun_at = time.monotonic()
        self._last_fed = self._starved_since = None
        self._starved_s = 0.0
        self._schedule()
        return True

    def end(self) -> None:
        """Stop watching: the stream is being closed on purpose."""
        self._issued += 1
        self.generation = self._issued  # matches no stream
        self._stream = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # ---- from the audio thread

    def fed(self, generation: int) -> bool:
        """A callback of ``generation`` ran; False if that stream is not the current one."""
        if generation != self.generation:
            return False
        self._last_fed = time.monotonic()
        return True

    def finished(self, generation: int) -> None:
        """PortAudio ended the stream of ``generation`` (an error, or a stop we asked for)."""
        loop = self._loop
        if generation != self.generation or loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._lose, generation, "PortAudio ended the stream")
        except RuntimeError:  # loop closed under a stream not yet stopped
            pass

    # ---- on the loop

    @property
    def _interval(self) -> float:
        return min(0.5, self.settings.stall_s / 4)

    def _schedule(self) -> None:
        assert self._loop is not None
        self._due = time.monotonic() + self._interval
        self._timer = self._loop.call_later(self._interval, self._check)

    def _check(self) -> None:
        self._timer = None
        stream = self._stream
        if stream is None:
            return
        now = time.monotonic()
        last = self._last_fed
        if last != self._starved_since:
            self._starved_since, self._starved_s = last, 0.0
        late = now - self._due
        if late > self._interval:
            # This check itself ran late: the process was starved of CPU (or the loop blocked),
            # and its audio thread may have been too.  That time does not count against the device.
            self._starved_s += late
        s = self.settings
        if not stream.active:
            self._lose(self.generation, "the stream stopped")
        elif now - self._begun_at < s.first_audio_s:
            # A stream that has just started is not judged by its pace: through PulseAudio the
            # callbacks come in a burst, then pause for up to ~2 s, then settle.
            self._schedule()
        elif last is None:
            self._lose(self.generation, f"no audio {s.first_audio_s:.1f} s after opening")
        elif now - last - self._starved_s > s.stall_s:
            self._lose(self.generation, f"no audio for {now - last:.1f} s")
        else:
            self._schedule()

    def _lose(self, generation: int, reason: str) -> None:
        if generation != self.generation or self._stream is None:
            return
        self.end()
        self.on_lost(AudioDeviceError(f"lost {self.name}: {reason}"))


async def bounded_call(call: Callable[[], T], timeout_s: float, late: Callable[[T], None] | None = None) -> T:
    """``call()`` in a daemon thread of its own; raise TimeoutError after ``timeout_s``.

    A call given up on (timed out, or its waiter cancelled) keeps its thread until PortAudio
    returns: when the sound server answers again, or never if it is gone for good.  The thread
    is a daemon, so it does not hold up the process's exit.  What such a call returns goes to
    ``late``, in a thread (a stream to close).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    lock = threading.Lock()
    state = {"given_up": False, "handed_over": False}

    def deliver(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            with PORTAUDIO_STREAM_CALLS:
                result = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiter
            error = exc
        with lock:
            if not state["given_up"]:
                try:
                    loop.call_soon_threadsafe(deliver, result, error)
                    state["handed_over"] = True
                    return
                except RuntimeError:  # the loop is closed: nobody waits any more
                    pass
        if result is not None and late is not None:
            late(result)

    threading.Thread(target=work, name="portaudio-call", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout_s)
    except (TimeoutError, asyncio.CancelledError):
        with lock:
            state["given_up"] = True
            handed_over = state["handed_over"]
        if handed_over and late is not None:
            # It returned just as we gave up: what it made is on its way to the loop.
            future.add_done_callback(lambda f: _hand_late(f, late))
        raise


def _hand_late(future: asyncio.Future[T], late: Callable[[T], None]) -> None:
    if not future.cancelled() and future.exception() is None:
        threading.Thread(target=late, args=(future.result(),), name="portaudio-late", daemon=True).start()


def stop_and_close(stream: Any) -> None:
    """Stop and close a stream (blocking; waits for the callback to return)."""
    with PORTAUDIO_STREAM_CALLS:
        try:
            stream.stop()
        finally:
            stream.close()


async def close_stream(stream: Any, timeout_s: float, name: str) -> bool:
    """Stop and close ``stream`` in a thread, waiting at most ``timeout_s``; False if it is stuck.

    A stuck stop is left to finish in its daemon thread when the sound server answers again.
    """
    try:
        await bounded_call(lambda: stop_and_close(stream), timeout_s)
        return True
    except TimeoutError:
        log.warning("closing %s is stuck in PortAudio (the sound server does not answer); left to finish in its own thread", name)
        leave_portaudio_at_exit()
        return False
    except Exception as exc:  # noqa: BLE001 - a dead stream may fail to stop; it is gone either way
        log.debug("closing %s: %s", name, exc)
        return True


def leave_portaudio_at_exit() -> None:
    """Let the process exit without terminating PortAudio.

    sounddevice terminates PortAudio at exit, which closes every stream, a stuck one too, and
    would hang the exit just as the stop hung (through PulseAudio a stream whose server died
    can deadlock inside libpulse for good).  Once a stream is stuck, the exit leaves the
    streams to the operating system, which releases them with the process.
    """
    import sounddevice as sd

    handler = getattr(sd, "_exit_handler", None)
    if handler is not None:
        atexit.unregister(handler)
