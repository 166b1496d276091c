"""Sound card input and output through PortAudio (the ``sounddevice`` package).

The speaker knows when its audio is heard.  PortAudio tells the output
callback the stream time at which the block it is filling will reach the DAC
(``outputBufferDacTime``); the speaker maps stream time to ``time.monotonic()``
and stamps each chunk's first sample with it.  Stamping at write time would
measure the buffer instead: PulseAudio alone can add half a second.

The same DAC time goes with each block played to an optional ``reference`` (the echo canceller's
far end, :class:`~audio.protocols.PlaybackListener`), and the microphone stamps each chunk with the
time its first sample reached the ADC (``inputBufferAdcTime``), so the two can be lined up.

Barge-in has to silence speech within 150 ms, so the output stream is opened
with a small latency (50 ms by default: through PulseAudio on a two-core
machine that stopped a tone 60-70 ms after ``interrupt()``) and ``interrupt()``
empties the queue under the callback's lock, so the very next block is silence.

A device that goes away raises :class:`AudioDeviceError` from ``chunks()``, ``write()`` and
``drain()`` instead of leaving them waiting (see :mod:`audio.stream_guard`); ``close()`` and
then ``start()`` again open it anew.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import soxr

from audio.protocols import ArrayChunk, AudioChunk, AudioDeviceError, CapturedChunk, HeardCallback, PlaybackListener
from audio.stream_guard import LossSettings, StreamWatch, bounded_call, close_stream, leave_portaudio_at_exit, stop_and_close

log = logging.getLogger(__name__)

Device = int | str | None


def _device_name(kind: str, device: Device) -> str:
    return f"the default {kind} device" if device is None else f"{kind} device {device!r}"


def _open_error(kind: str, device: Device, exc: Exception) -> AudioDeviceError:
    import sounddevice as sd

    detail = " ".join(str(exc).split())
    try:
        if len(sd.query_devices()) == 0:
            detail += " (PortAudio sees no devices at all: no sound card, or no PulseAudio server)"
    except sd.PortAudioError:
        pass
    return AudioDeviceError(f"cannot open {_device_name(kind, device)}: {detail}")


def _given_up(kind: str, device: Device, timeout_s: float) -> AudioDeviceError:
    """Opening blocked past ``timeout_s``: the error to raise.  The open left running may never
    return, so the process's exit no longer waits on PortAudio (see :func:`leave_portaudio_at_exit`)."""
    leave_portaudio_at_exit()
    return AudioDeviceError(
        f"cannot open {_device_name(kind, device)}: PortAudio did not answer within {timeout_s:.0f} s (is the sound server hung?)"
    )


def check_devices(microphone: MicrophoneSettings, speaker: SpeakerSettings) -> None:
    """Raise :class:`AudioDeviceError`, worded as ``start()`` would word it, unless PortAudio has
    the speaker's and the microphone's devices at their rates.  Opens no stream: it is asked
    before anything slow starts (the models load for seconds), so a missing sound card is said
    at once.  Blocking (PortAudio scans the devices): call it in a thread, bounded."""
    try:
        import sounddevice as sd
    except OSError as exc:  # the PortAudio library itself is missing
        raise AudioDeviceError(f"cannot use any sound device: {exc} (install libportaudio2)") from None
    checks = (
        ("output", sd.check_output_settings, speaker.device, speaker.sample_rate),
        ("input", sd.check_input_settings, microphone.device, microphone.sample_rate),
    )
    for kind, check, device, rate in checks:
        try:
            check(device=device, samplerate=rate, channels=1, dtype="float32")
        except (sd.PortAudioError, ValueError) as exc:
            raise _open_error(kind, device, exc) from None


# --------------------------------------------------------------------------- microphone


@dataclass(frozen=True)
class MicrophoneSettings:
    """How the microphone stream is opened."""

    device: Device = None
    """PortAudio input device name (or part of it) or index; None is the system default."""
    sample_rate: int = 16000
    """Samples per second delivered (the VAD and recognizer want 16 kHz)."""
    block_s: float = 0.032
    """Length of each chunk; 32 ms is one VAD window at 16 kHz."""
    channels: int = 1
    """Channels opened.  Above one the stream is an array's capture: its chunks are
    :class:`~audio.protocols.ArrayChunk` blocks of every channel, for an array's front end
    (:class:`~audio.array_microphone.BeamformedMicrophone`) to make one signal of."""
    latency: float | str = "low"
    """PortAudio input latency in seconds, or "low"/"high"."""
    max_queued_s: float = 2.0
    """Audio kept while nobody reads; beyond it the oldest chunks are dropped."""
    loss: LossSettings = LossSettings()
    """When the microphone counts as lost, and how long opening and closing may block."""


class SoundDeviceMicrophone:
    """A live microphone behind the :class:`~audio.protocols.Microphone` contract.

    ``await start()`` opens the stream; ``chunks()`` then yields 16 kHz mono
    float32 chunks until ``close()``, each a :class:`~audio.protocols.CapturedChunk` stamped with
    the monotonic time its first sample reached the ADC (``inputBufferAdcTime``).  If the consumer falls behind by more
    than ``max_queued_s``, the oldest audio is dropped (with a warning), so
    what is read is always recent.  If the device is lost, ``chunks()``
    raises :class:`AudioDeviceError`; ``start()`` then opens it anew.
    """

    def __init__(self, settings: MicrophoneSettings | None = None) -> None:
        self.settings = settings or MicrophoneSettings()
        self.sample_rate = self.settings.sample_rate
        self.channels = self.settings.channels
        self.dropped_chunks = 0
        """Chunks dropped because the queue was full."""
        self._stream: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._closed = False
        self._last_drop_log = 0.0
        self._lost: AudioDeviceError | None = None
        self._watch = StreamWatch(_device_name("input", self.settings.device), self.settings.loss, self._on_lost)

    async def start(self) -> None:
        """Open and start the input stream (idempotent; after a loss, opens it anew)."""
        if self._stream is not None and self._lost is None:
            return
        if self._stream is not None:
            await self.close()
        # Imported here: importing sounddevice initializes PortAudio, which
        # scans every device, and nothing should touch hardware before start().
        import sounddevice as sd

        s = self.settings
        self._loop = asyncio.get_running_loop()
        blocksize = max(1, round(s.block_s * s.sample_rate))
        generation = self._watch.next_generation()

        def open_stream() -> Any:
            stream = sd.InputStream(
                device=s.device,
                samplerate=s.sample_rate,
                channels=s.channels,
                dtype="float32",
                blocksize=blocksize,
                latency=s.latency,
                callback=functools.partial(self._callback, generation),
                finished_callback=functools.partial(self._watch.finished, generation),
            )
            try:
                stream.start()
            except BaseException:
                stream.close()
                raise
            return stream

        try:
            stream = await bounded_call(open_stream, s.loss.open_timeout_s, late=stop_and_close)
        except (sd.PortAudioError, ValueError) as exc:
            raise _open_error("input", s.device, exc) from None
        except TimeoutError:
            raise _given_up("input", s.device, s.loss.open_timeout_s) from None
        self._queue = asyncio.Queue(maxsize=max(1, int(s.max_queued_s / s.block_s)))
        self._closed = False
        self._lost = None
        self._stream = stream
        self._watch.begin(stream, generation)
        log.info(
            "microphone open: %s at %d Hz, latency %.0f ms",
            _device_name("input", s.device),
            s.sample_rate,
            stream.latency * 1000,
        )

    def _callback(self, generation: int, indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        if not self._watch.fed(generation):
            return  # a stream closed, or given up on while it opened
        now = time.monotonic()
        adc = getattr(time_info, "inputBufferAdcTime", 0.0)
        current = getattr(time_info, "currentTime", 0.0)
        if adc > 0 and current > 0:
            # Stream time mapped to monotonic through the callback's own "now": no clock to sync.
            at = now - (current - adc)
        else:  # a host API without timing: the block ended about now
            at = now - frames / self.sample_rate
        chunk: AudioChunk | ArrayChunk = (CapturedChunk(indata[:, 0].copy(), self.sample_rate, at) if self.channels == 1
                                          else ArrayChunk(indata.copy(), self.sample_rate, at))
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._put, chunk)
        except RuntimeError:  # loop closed under a stream not yet stopped
            pass

    def _on_lost(self, error: AudioDeviceError) -> None:
        self._lost = error
        queue = self._queue
        if queue is not None and not self._closed:
            if queue.full():
                queue.get_nowait()  # the reader must hear of the loss, whatever audio it misses
            queue.put_nowait(error)

    def _put(self, chunk: AudioChunk | ArrayChunk) -> None:
        queue = self._queue
        if queue is None or self._closed or self._lost is not None:
            return
        if queue.full():
            queue.get_nowait()
            self.dropped_chunks += 1
            now = time.monotonic()
            if now - self._last_drop_log > 5.0:
                self._last_drop_log = now
                log.warning("microphone reader is behind: dropped %d chunks so far", self.dropped_chunks)
        queue.put_nowait(chunk)

    async def chunks(self) -> AsyncIterator[Any]:
        """Yield audio as it arrives until ``close()``; raise :class:`AudioDeviceError` if the device is lost.

        :class:`~audio.protocols.AudioChunk` with one channel, :class:`~audio.protocols.ArrayChunk` with more."""
        if self._queue is None:
            raise RuntimeError("SoundDeviceMicrophone.start() has not been called")
        if self._lost is not None:
            raise AudioDeviceError(str(self._lost))
        queue = self._queue
        while (item := await queue.get()) is not None:
            if isinstance(item, AudioDeviceError):
                raise AudioDeviceError(str(item))
            yield item

    @property
    def lost(self) -> AudioDeviceError | None:
        """Why the device was lost, until it is opened again; None while it works."""
        return self._lost

    async def close(self) -> None:
        """Stop and close the stream (at most ``loss.close_timeout_s``, however dead the device is)."""
        if self._closed:
            return
        self._closed = True
        self._watch.end()
        stream, self._stream = self._stream, None
        if stream is not None:
            # Stopping waits for the callback to return; not on the loop thread.
            await close_stream(stream, self.settings.loss.close_timeout_s, self._watch.name)
        if self._queue is not None:
            while not self._queue.empty():
                self._queue.get_nowait()
            self._queue.put_nowait(None)


# --------------------------------------------------------------------------- speaker


@dataclass(frozen=True)
class SpeakerSettings:
    """How the speaker stream is opened."""

    device: Device = None
    """PortAudio output device name (or part of it) or index; None is the system default."""
    sample_rate: int = 22050
    """Rate the stream is opened at; chunks at other rates are resampled."""
    latency: float | str = 0.05
    """PortAudio output latency in seconds: the audio still heard after ``interrupt()``."""
    blocksize: int = 0
    """Frames per callback; 0 lets PortAudio choose (about 10 ms through PulseAudio)."""
    max_queued_s: float = 0.3
    """``write()`` waits while more than this much audio is queued ahead of the device."""
    settle_timeout_s: float = 5.0
    """How long ``start()`` waits for the stream to run at a steady pace."""
    clock_resync_s: float = 5.0
    """How often the stream-time to monotonic offset is measured again."""
    loss: LossSettings = LossSettings()
    """When the speaker counts as lost, and how long opening and closing may block."""


@dataclass
class _Piece:
    samples: np.ndarray
    on_heard: HeardCallback | None
    pos: int = 0


class SoundDeviceSpeaker:
    """A sound card behind the :class:`~audio.protocols.Speaker` contract.

    ``await start()`` opens the stream and waits until it runs steadily (the
    ALSA PulseAudio plugin stalls for up to ~2 s after a stream starts, and
    a chunk written then would be heard late).  The stream then runs until
    ``close()``, playing silence when there is nothing to say, so its latency
    stays put.  Because it always runs, a lost device is noticed even between
    replies (:meth:`lost`); ``write()`` and ``drain()`` then raise
    :class:`AudioDeviceError`, and ``start()`` opens it anew.
    """

    def __init__(self, settings: SpeakerSettings | None = None, reference: PlaybackListener | None = None) -> None:
        self.settings = settings or SpeakerSettings()
        self.reference = reference
        """Told each block played with its DAC time (the echo canceller's far-end reference)."""
        self._reference_failed = False
        self.sample_rate = self.settings.sample_rate
        self.underflows = 0
        """Callbacks PortAudio flagged as output underflow."""
        self._stream: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._pieces: collections.deque[_Piece] = collections.deque()
        self._queued = 0  # samples in _pieces not yet handed to the device
        self._busy = False  # audio queued and the idle transition not yet reported
        self._want_space = False
        self._epoch = 0  # bumped by interrupt(): writes begun before it are dropped
        self._seq = 0  # bumped by every queued write, so a stale "went idle" is ignored
        self._latency = 0.0
        self._offset = 0.0  # stream time minus monotonic time
        self._synced_at = 0.0
        self._callbacks: collections.deque[tuple[float, int]] = collections.deque(maxlen=16)
        self._space = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._heard_end: float | None = None
        self._lost: AudioDeviceError | None = None
        self._lost_event = asyncio.Event()
        self._watch = StreamWatch(_device_name("output", self.settings.device), self.settings.loss, self._on_lost)

    # ---- lifecycle

    async def start(self) -> None:
        """Open and start the output stream, and wait until it runs at a steady pace.

        Idempotent; after a loss, opens the device anew.
        """
        if self._stream is not None and self._lost is None:
            return
        if self._stream is not None:
            await self.close()
        import sounddevice as sd

        s = self.settings
        self._loop = asyncio.get_running_loop()
        generation = self._watch.next_generation()

        def open_stream() -> Any:
            return sd.OutputStream(
                device=s.device,
                samplerate=s.sample_rate,
                channels=1,
                dtype="float32",
                blocksize=s.blocksize,
                latency=s.latency,
                callback=functools.partial(self._callback, generation),
                finished_callback=functools.partial(self._watch.finished, generation),
            )

        try:
            stream = await bounded_call(open_stream, s.loss.open_timeout_s, late=stop_and_close)
        except (sd.PortAudioError, ValueError) as exc:
            raise _open_error("output", s.device, exc) from None
        except TimeoutError:
            raise _given_up("output", s.device, s.loss.open_timeout_s) from None
        self._stream = stream
        self._sync_clock()
        try:
            await bounded_call(stream.start, s.loss.open_timeout_s)
        except (sd.PortAudioError, TimeoutError) as exc:
            self._stream = None
            await close_stream(stream, s.loss.close_timeout_s, self._watch.name)
            if isinstance(exc, TimeoutError):
                raise _given_up("output", s.device, s.loss.open_timeout_s) from None
            raise _open_error("output", s.device, exc) from None
        self._lost = None
        self._lost_event.clear()
        self._callbacks.clear()  # the pace of a stream closed before says nothing of this one
        self._watch.begin(stream, generation)
        self._latency = float(stream.latency)
        await self._settle()
        lost = self._lost
        if lost is not None:
            await self.close()
            raise AudioDeviceError(f"cannot open {_device_name('output', s.device)}: {str(lost).split(': ', 1)[-1]}")
        self._sync_clock()
        log.info(
            "speaker open: %s at %d Hz, latency %.0f ms",
            _device_name("output", s.device),
            s.sample_rate,
            stream.latency * 1000,
        )

    async def _settle(self) -> None:
        """Wait until callbacks come paced by the device rather than in a start-up burst."""
        deadline = time.monotonic() + self.settings.settle_timeout_s
        while time.monotonic() < deadline and self._lost is None:
            await asyncio.sleep(0.02)
            recent = list(self._callbacks)[-8:]
            if len(recent) < 8:
                continue
            wall = recent[-1][0] - recent[0][0]
            audio = sum(frames for _, frames in recent[1:]) / self.sample_rate
            if audio > 0 and wall >= 0.5 * audio and time.monotonic() - recent[-1][0] < 4 * audio / 7:
                return
        if self._lost is not None:
            return
        log.warning(
            "speaker stream did not settle within %.1f s; first audio may start late", self.settings.settle_timeout_s
        )

    def _sync_clock(self) -> None:
        """Measure stream time minus monotonic time, keeping the tightest of a few readings."""
        stream = self._stream
        if stream is None:
            return
        best: tuple[float, float] | None = None
        for _ in range(5):
            before = time.monotonic()
            stream_time = stream.time
            after = time.monotonic()
            if best is None or after - before < best[0]:
                best = (after - before, stream_time - (before + after) / 2)
        if best is not None:
            self._offset = best[1]
            self._synced_at = time.monotonic()

    async def close(self) -> None:
        """Stop and close the stream (at most ``loss.close_timeout_s``, however dead the device is).

        After a loss, ``write()`` keeps raising :class:`AudioDeviceError` until ``start()`` succeeds.
        """
        self._watch.end()
        stream, self._stream = self._stream, None
        with self._lock:
            self._pieces.clear()
            self._queued = 0
            self._busy = False
        self._space.set()
        self._idle.set()
        if stream is not None:
            await close_stream(stream, self.settings.loss.close_timeout_s, self._watch.name)

    async def lost(self) -> AudioDeviceError:
        """Wait until the device is lost (PortAudio ended the stream, or its callbacks stopped); the error."""
        await self._lost_event.wait()
        assert self._lost is not None
        return self._lost

    def _on_lost(self, error: AudioDeviceError) -> None:
        self._lost = error
        with self._lock:
            # Nothing queued will be heard now: its on_heard callbacks never fire.
            self._pieces.clear()
            self._queued = 0
            self._busy = False
            self._want_space = False
        self._space.set()  # writers waiting for room raise
        self._idle.set()  # and so does drain()
        self._lost_event.set()

    def _raise_if_lost(self) -> None:
        if self._lost is not None:
            raise AudioDeviceError(str(self._lost))

    # ---- the audio thread

    def _callback(self, generation: int, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        if not self._watch.fed(generation):
            outdata.fill(0.0)  # a stream closed, or given up on while it opened
            return
        now = time.monotonic()
        if status.output_underflow:
            self.underflows += 1
        out = outdata[:, 0]
        if time_info.outputBufferDacTime > 0:
            dac = time_info.outputBufferDacTime - self._offset
        else:  # a host API without timing: assume the nominal latency
            dac = now + self._latency
        heard: list[tuple[HeardCallback, float]] = []
        filled = 0
        with self._lock:
            pieces = self._pieces
            while filled < frames and pieces:
                piece = pieces[0]
                if piece.pos == 0 and piece.on_heard is not None:
                    heard.append((piece.on_heard, dac + filled / self.sample_rate))
                n = min(frames - filled, len(piece.samples) - piece.pos)
                out[filled : filled + n] = piece.samples[piece.pos : piece.pos + n]
                piece.pos += n
                filled += n
                self._queued -= n
                if piece.pos >= len(piece.samples):
                    pieces.popleft()
            went_idle = self._busy and not pieces
            if went_idle:
                self._busy = False
            seq = self._seq
            space = self._want_space and self._queued <= self.settings.max_queued_s * self.sample_rate
            if space:
                self._want_space = False
        if filled < frames:
            out[filled:] = 0.0
        reference = self.reference
        if reference is not None:
            # Every block, silence included: the reference is then one unbroken run on the DAC's
            # own sample clock, so the echo path it is lined up with stays put between replies
            # (a run restarted at each reply's stamp moved it by the stamps' jitter, milliseconds).
            try:
                reference.played(out.copy(), self.sample_rate, dac)
            except Exception:  # noqa: BLE001 - a broken reference must not stop playback
                if not self._reference_failed:  # once: this runs a hundred times a second
                    self._reference_failed = True
                    log.exception("the far-end reference failed; echo cancellation hears no reference")
        self._callbacks.append((now, frames))
        if heard or went_idle or space:
            end = dac + filled / self.sample_rate if went_idle else None
            loop = self._loop
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(self._on_callback_events, heard, end, seq, space)
                except RuntimeError:  # loop closed under a stream not yet stopped
                    pass

    def _on_callback_events(
        self, heard: list[tuple[HeardCallback, float]], end: float | None, seq: int, space: bool
    ) -> None:
        for callback, at in heard:
            try:
                callback(at)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop playback
                log.exception("on_heard callback failed")
        if end is not None and seq == self._seq:
            self._heard_end = end
            self._idle.set()
        if space:
            self._space.set()

    # ---- the Speaker contract

    async def write(self, chunk: AudioChunk, on_heard: HeardCallback | None = None) -> None:
        """Queue ``chunk``; first wait while more than ``max_queued_s`` is queued.

        A write still waiting when ``interrupt()`` is called is dropped.
        ``on_heard`` fires on the loop with the monotonic time the chunk's first
        sample reaches the DAC; it never fires for audio dropped before that.
        Raises :class:`AudioDeviceError` once the device is lost.
        """
        self._raise_if_lost()
        if self._stream is None:
            raise RuntimeError("SoundDeviceSpeaker.start() has not been called")
        epoch = self._epoch
        samples = chunk.samples.astype(np.float32, copy=False)
        if chunk.sample_rate != self.sample_rate:
            samples = soxr.resample(samples, chunk.sample_rate, self.sample_rate).astype(np.float32)
        if len(samples) == 0:
            return
        if time.monotonic() - self._synced_at > self.settings.clock_resync_s:
            self._sync_clock()
        limit = self.settings.max_queued_s * self.sample_rate
        while True:
            with self._lock:
                if self._epoch != epoch or self._stream is None:
                    return
                if self._queued <= limit:
                    self._pieces.append(_Piece(np.ascontiguousarray(samples), on_heard))
                    self._queued += len(samples)
                    self._seq += 1
                    self._busy = True
                    self._idle.clear()
                    return
                self._want_space = True
                self._space.clear()
            await self._space.wait()
            self._raise_if_lost()

    async def drain(self) -> float:
        """Wait until everything written has been heard; return the monotonic time of the last sample.

        Raises :class:`AudioDeviceError` if the device is lost before then.
        """
        self._raise_if_lost()
        await self._idle.wait()
        self._raise_if_lost()
        end = self._heard_end if self._heard_end is not None else time.monotonic()
        delay = end - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        return end

    def interrupt(self) -> None:
        """Drop all queued audio now; the next callback plays silence."""
        with self._lock:
            self._epoch += 1
            self._pieces.clear()
            self._queued = 0
            # _busy stays set: the callback reports when silence starts.
            self._want_space = False
        # Writers waiting for room return (their audio is dropped) instead of queuing it.
        self._space.set()

    @property
    def queued_s(self) -> float:
        """Seconds of audio written but not yet handed to the device."""
        return self._queued / self.sample_rate


__all__: list[str] = [
    "AudioDeviceError",
    "MicrophoneSettings",
    "SoundDeviceMicrophone",
    "SpeakerSettings",
    "SoundDeviceSpeaker",
]
