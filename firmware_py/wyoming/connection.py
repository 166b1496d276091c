"""One client's Wyoming connection: requests in, answers out, bad input answered with ``error``.

Requests on a connection are answered one after another.  The request being answered runs as
a task in the connection's task group, beside the loop reading events (audio and text arrive
while the answer is already being made), so one cancel stops everything the connection started.
When the client goes away (the end of its stream) that happens: a client keeps its side open
until it has read its answer, as the wyoming library's own client and Home Assistant do.

Bad input gets an ``error`` event and the connection stays usable: an unknown event, audio in
a format that makes no sense, a request for a language or voice not offered, an event over the
size limits, a field of the wrong kind (named in the client's terms, :mod:`.fields`).  Only a stream
that is not Wyoming at all (a line that is no JSON event, JSON nested more than 32 deep) ends the
connection, after its one-line error.

A client that stops sending, partway through an event or between requests, is disconnected
after ``WyomingLimits.client_idle_s`` (it may stay silent while hearth is still answering it), and
so is one that stops reading what is written to it.  Text a client sends to be kept or spoken
has control characters taken out where it comes in (:func:`firmware_py.safe_text.clean`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from firmware_py.safe_text import clean, printable
from firmware_py.wyoming.asr import Refused, Utterance, check_format, transcribe
from firmware_py.wyoming.fields import check_fields
from firmware_py.wyoming.handle import answer
from firmware_py.wyoming.offer import Voice, WyomingOffer
from firmware_py.wyoming.tts import TextStream, synthesize_stream, synthesize_whole
from firmware_py.wyoming.wire import PIECE_BYTES, Garbled, Oversize, read_event

logger = logging.getLogger(__name__)

CLOSE_S = 5.0
"""How long a closing connection may take to hand over what is still written to it before it is
dropped (a client that reads nothing would otherwise hold it for ever)."""


def pick_language(requested: str | None, offered: list[str], what: str) -> str:
    """The offered language a request asks for ("en-US" is "en"); the first offered when it names none."""
    if not requested:
        return offered[0]
    base = requested.replace("_", "-").split("-")[0].lower()
    if base not in offered:
        raise Refused(f"{what}: language {requested!r} is not offered (offered: {', '.join(offered)})", "unsupported-language")
    return base


def pick_voice(voices: tuple[Voice, ...] | list[Voice], wanted: SynthesizeVoice | None) -> Voice:
    """The voice a request names, or the first of the language it names, or the first voice."""
    if wanted is None or (wanted.name is None and wanted.language is None):
        return voices[0]
    if wanted.name is not None:
        for voice in voices:
            if voice.name == wanted.name:
                return voice
        names = ", ".join(v.name for v in voices)
        raise Refused(f"synthesize: no voice {wanted.name!r} (voices: {names})", "unknown-voice")
    language = pick_language(wanted.language, sorted({v.language for v in voices}), "synthesize")
    return next(v for v in voices if v.language == language)


class Connection(AsyncEventHandler):
    """Serves one client; ``run()`` returns when the client is gone and everything it started has stopped."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        offer: WyomingOffer,
        info: Event,
        voice_locks: Mapping[str, asyncio.Lock],
        recognizer_slots: Mapping[str, asyncio.Semaphore],
        live: set[asyncio.Task[None]] | None = None,
        admitted: set[Connection] | None = None,
    ) -> None:
        super().__init__(reader, writer)
        self.offer = offer
        self.info = info
        self.voice_locks = voice_locks
        self.recognizer_slots = recognizer_slots
        self.live = live if live is not None else set()
        """The server's set of connection tasks being served; this one is in it while it runs."""
        self.admitted = admitted if admitted is not None else set()
        """The server's connections let in and not yet ended; this one leaves it when it ends."""
        self._jobs: asyncio.TaskGroup | None = None
        self._job: asyncio.Task[None] | None = None
        self._transcribe: Transcribe | None = None
        self._transcribe_refused = False
        self._utterance: Utterance | None = None
        self._refusing_audio = False  # audio of a refused stream is dropped quietly until its audio-stop
        self._text: TextStream | None = None
        self._quiet: asyncio.Timeout | None = None
        """The deadline of the read under way: when the client has sent nothing for too long."""

    # -- the connection's life --------------------------------------------------------------

    async def run(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.live.add(task)
        try:
            async with asyncio.TaskGroup() as jobs:
                self._jobs = jobs
                await self._read_events()
                if self._job is not None:
                    self._job.cancel()
        except* (ConnectionError, asyncio.IncompleteReadError):
            logger.debug("Wyoming client went away while being answered")
        except* Exception:
            logger.exception("Wyoming connection failed")
        finally:
            self.admitted.discard(self)  # closing: its place may be taken
            await close_writer(self.writer)
            if task is not None:
                self.live.discard(task)

    async def _read_events(self) -> None:
        limits = self.offer.limits
        while True:
            self._quiet = asyncio.timeout_at(self._deadline())
            try:
                async with self._quiet:
                    event = await read_event(self.reader, limits.max_data_bytes, limits.max_payload_bytes, self._heard)
            except TimeoutError:
                # What is timed is a whole part of an event, not any byte: a client trickling one
                # byte at a time into a header it never finishes is idle too, and must not be
                # told it sent nothing.
                await self._error(f"no whole event arrived in {limits.client_idle_s:g} s (an event, or each "
                                  f"{PIECE_BYTES // 1024} KiB of a larger one, must arrive within that time); "
                                  "closing the connection", "idle")
                return
            except Oversize as exc:
                await self._error(str(exc), "too-large")
                if exc.event_type == "audio-chunk" and self._utterance is not None:
                    self._refuse_audio()
                continue
            except Garbled as exc:
                await self._error(f"{exc}; closing the connection", "garbled")
                return
            finally:
                self._quiet = None
            if event is None:
                return
            await self.handle_event(event)

    def _owed(self) -> bool:
        """hearth is answering a request whose every part the client has sent: it may be silent."""
        answering = self._job is not None and not self._job.done()
        return answering and self._utterance is None and self._text is None

    def _deadline(self) -> float | None:
        """When the read under way gives up on a client that has sent nothing since now."""
        idle_s = self.offer.limits.client_idle_s
        if idle_s is None or self._owed():
            return None
        return asyncio.get_running_loop().time() + idle_s

    def _heard(self) -> None:
        """Part of an event arrived, or an answer was finished: the client has its idle time again."""
        if self._quiet is not None and not self._quiet.expired():
            self._quiet.reschedule(self._deadline())

    async def handle_event(self, event: Event) -> bool:
        try:
            check_fields(event.type, event.data)
            await self._dispatch(event)
        except Refused as exc:
            await self._error(str(exc), exc.code)
        except (KeyError, TypeError, ValueError) as exc:
            # A field check_fields does not know of: the client is told what, in its terms; the
            # Python exception is for whoever debugs hearth.
            logger.debug("Wyoming %s event not read: %r", event.type, exc)
            await self._error(f"{event.type}: its data is not what a {event.type} event holds", "bad-event")
        return True

    async def write_event(self, event: Event) -> None:
        idle_s = self.offer.limits.client_idle_s
        try:
            async with asyncio.timeout(idle_s):
                await async_write_event(event, self.writer)
        except TimeoutError:
            logger.info("a Wyoming client read nothing for %g s; disconnecting it", idle_s)
            raise ConnectionResetError(f"the client read nothing for {idle_s:g} s") from None

    async def _error(self, text: str, code: str) -> None:
        # Refusals repeat what the client sent (an event's type); it must not drive a terminal.
        text = printable(text)
        logger.info("Wyoming request refused: %s", text)
        await self.write_event(Error(text=text, code=code).event())

    # -- events ------------------------------------------------------------------------------

    async def _dispatch(self, event: Event) -> None:
        kind = event.type
        if Describe.is_type(kind):
            await self.write_event(self.info)
        elif Ping.is_type(kind):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        elif self._utterance is not None or self._refusing_audio:
            await self._during_audio(event)
        elif self._text is not None:
            self._during_text(event)
        elif Transcribe.is_type(kind):
            self._transcribe = None
            self._transcribe_refused = True  # until it is known to be good
            self._program("asr", kind)
            request = Transcribe.from_event(event)
            pick_language(request.language, list(self.offer.recognizers), "transcribe")
            self._transcribe, self._transcribe_refused = request, False
        elif AudioStart.is_type(kind):
            await self._start_audio(event)
        elif AudioChunk.is_type(kind) or AudioStop.is_type(kind):
            raise Refused(f"{kind} without audio-start", "out-of-order")
        elif Synthesize.is_type(kind):
            await self._synthesize(Synthesize.from_event(event))
        elif SynthesizeStart.is_type(kind):
            await self._start_text(SynthesizeStart.from_event(event))
        elif SynthesizeChunk.is_type(kind) or SynthesizeStop.is_type(kind):
            raise Refused(f"{kind} without synthesize-start", "out-of-order")
        elif Transcript.is_type(kind):
            await self._answer(Transcript.from_event(event))
        else:
            raise Refused(f"unknown or unsupported event {kind!r}", "unknown-event")

    def _program(self, program: str, kind: str) -> None:
        if not self.offer.offers(program):
            raise Refused(f"{kind}: hearth does not offer {program} here", "not-offered")

    async def _previous_answered(self) -> None:
        if self._job is not None and not self._job.done():
            await asyncio.wait([self._job])

    async def _start(self, work: Callable[[], Coroutine[Any, Any, None]], what: str) -> None:
        """Answer a request once the previous one is answered."""
        await self._previous_answered()
        assert self._jobs is not None
        self._job = self._jobs.create_task(self._guarded(work, what), name=f"wyoming {what}")
        self._job.add_done_callback(lambda _job: self._heard())

    async def _guarded(self, work: Callable[[], Coroutine[Any, Any, None]], what: str) -> None:
        # The coroutine is made here, so a job cancelled before it began leaves none unawaited.
        try:
            await work()
        except Refused as exc:
            await self._error(str(exc), exc.code)
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as exc:  # noqa: BLE001 - one failed request must not end the connection
            logger.exception("Wyoming %s failed", what)
            await self._error(f"{what} failed: {exc.__class__.__name__}: {exc}", "failed")

    # -- asr ---------------------------------------------------------------------------------

    async def _start_audio(self, event: Event) -> None:
        request, self._transcribe = self._transcribe, None
        if self._transcribe_refused:
            # The client was told already; its audio must not be heard in a language it did not ask for.
            self._transcribe_refused = False
            self._refusing_audio = True
            return
        try:
            self._program("asr", event.type)
            source = check_format(event.data, self.offer.limits, "audio-start")
            language = pick_language(request.language if request else None, list(self.offer.recognizers), "transcribe")
        except Refused:
            self._refusing_audio = True
            raise
        recognizer = self.offer.recognizers[language]
        context_source = self.offer.speech_context.get(language)
        context = context_source() if context_source is not None else ""
        extra = [*(request.transcript_names or []), *(request.transcript_terms or [])] if request else []
        if extra:
            context = " ".join([context, ", ".join(clean(str(x)) for x in extra)]).strip()
        await self._previous_answered()
        self._utterance = Utterance(source, recognizer, self.offer.limits)
        utterance, slot = self._utterance, self.recognizer_slots[language]
        await self._start(lambda: transcribe(recognizer, utterance, context, language, slot, self.write_event), "transcribe")

    async def _during_audio(self, event: Event) -> None:
        kind = event.type
        if AudioStop.is_type(kind):
            if self._utterance is not None:
                self._utterance.end()
            self._utterance = None
            self._refusing_audio = False
        elif self._utterance is None and not AudioChunk.is_type(kind):
            # A new request after a refused stream whose audio-stop never came: the refusal is over.
            self._refusing_audio = False
            await self._dispatch(event)
        elif AudioChunk.is_type(kind):
            if self._utterance is None:
                return  # the rest of a refused stream
            try:
                chunk_format = check_format(event.data, self.offer.limits, "audio-chunk")
                self._utterance.add(event.payload or b"", chunk_format)
            except Refused:
                self._refuse_audio()
                raise
        else:
            raise Refused(f"{kind} while audio is streaming; send audio-stop first", "out-of-order")

    def _refuse_audio(self) -> None:
        """Drop the utterance being received; its audio is ignored until its audio-stop."""
        if self._job is not None:
            self._job.cancel()
        self._utterance = None
        self._refusing_audio = True

    # -- tts ---------------------------------------------------------------------------------

    def _voice(self, wanted: SynthesizeVoice | None, kind: str) -> Voice:
        self._program("tts", kind)
        return pick_voice(list(self.offer.voices), wanted)

    async def _synthesize(self, request: Synthesize) -> None:
        voice = self._voice(request.voice, "synthesize")
        limit = self.offer.limits.max_text_chars
        if len(request.text) > limit:
            raise Refused(f"synthesize: text of {len(request.text)} characters is over the limit of {limit}", "text-too-long")
        rules = self.offer.rules_for(voice.language)
        lock, text = self.voice_locks[voice.name], clean(request.text)
        await self._start(lambda: synthesize_whole(voice, text, rules, lock, self.write_event), "synthesize")

    async def _start_text(self, request: SynthesizeStart) -> None:
        voice = self._voice(request.voice, "synthesize-start")
        await self._previous_answered()
        self._text = TextStream()
        rules = self.offer.rules_for(voice.language)
        text, lock = self._text, self.voice_locks[voice.name]
        idle_s = self.offer.limits.stream_idle_s
        await self._start(lambda: synthesize_stream(voice, text, rules, lock, self.write_event, idle_s), "synthesize")

    def _during_text(self, event: Event) -> None:
        kind = event.type
        assert self._text is not None
        if SynthesizeChunk.is_type(kind):
            text = clean(SynthesizeChunk.from_event(event).text)
            limit = self.offer.limits.max_text_chars
            if self._text.chars + len(text) > limit:
                self._text.end()
                self._text = None
                raise Refused(f"synthesize-chunk: text over the limit of {limit} characters; the rest is dropped", "text-too-long")
            self._text.add(text)
        elif Synthesize.is_type(kind):
            pass  # the whole text again, which streaming clients send for older servers
        elif SynthesizeStop.is_type(kind):
            self._text.end()
            self._text = None
        else:
            raise Refused(f"{kind} while text is streaming; send synthesize-stop first", "out-of-order")

    # -- handle ------------------------------------------------------------------------------

    async def _answer(self, request: Transcript) -> None:
        self._program("handle", "transcript")
        pick_language(request.language, list(self.offer.answer_languages), "transcript")
        limit = self.offer.limits.max_text_chars
        if len(request.text) > limit:
            raise Refused(f"transcript: text of {len(request.text)} characters is over the limit of {limit}", "text-too-long")
        assert self.offer.answers is not None
        # The words are kept in the conversation record and printed by `hearth history`.
        answers, text = self.offer.answers, clean(request.text)
        await self._start(lambda: answer(answers, text, request.context, self.write_event), "handle")


class Busy(AsyncEventHandler):
    """A connection over ``WyomingLimits.max_connections``: told so in one ``error`` event, then closed."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int) -> None:
        super().__init__(reader, writer)
        self.limit = limit

    async def handle_event(self, event: Event) -> bool:
        return False

    async def run(self) -> None:
        logger.info("Wyoming: %d connections open already; one more refused", self.limit)
        text = f"hearth serves {self.limit} Wyoming connections at once and all are in use; try again later"
        try:
            async with asyncio.timeout(CLOSE_S):
                await async_write_event(Error(text=text, code="busy").event(), self.writer)
                self.writer.write_eof()
                # Closed with what the client sent still unread, the socket would be reset and the
                # error lost on the way: what it sends is read past until it closes its side.
                while await self.reader.read(64 * 1024):
                    pass
        except (TimeoutError, ConnectionError, OSError):
            pass
        finally:
            await close_writer(self.writer)


async def close_writer(writer: asyncio.StreamWriter) -> None:
    """Close the connection, handing over what is written for at most :data:`CLOSE_S`, then drop it."""
    writer.close()
    try:
        async with asyncio.timeout(CLOSE_S):
            await writer.wait_closed()
    except TimeoutError:
        writer.transport.abort()
    except (ConnectionError, OSError):
        pass
