"""Speaking a turn's units: synthesis, playback, Cadence's pauses, and what the listener heard.

:class:`UnitSpeaker` synthesizes unit *n+1* while unit *n* plays, leaves Cadence's pause before
each unit of a reply (written to the speaker as silence, so the speaker's clock times it), and
stamps the timeline where audio reaches the output.  It knows, for every unit, whether the
listener heard it to the end, partway, or not at all.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from agent.speaking.cadence import Cadence
from agent.events import Event, State, StateChanged, UnitSpoken
from agent.timeline import Timeline
from audio.levels import leading_quiet_s, trailing_quiet_s
from audio.protocols import AudioChunk, Speaker, Synthesizer

log = logging.getLogger(__name__)

_SILENCE_SLICE_S = 0.04
"""Pauses are written to the speaker in slices this long, so that a barge-in can cut one short."""


@dataclass(frozen=True)
class SpokenUnit:
    """One unit of what hearth had to say, and how much of it the listener heard."""

    text: str
    kind: str
    """"answer", "pretool" (the line before a tool) or "phrase" (a fixed line)."""
    status: str
    """"spoken" (heard to its end), "cut" (cut off partway) or "unspoken" (never heard)."""


class UnitSpeaker:
    """One turn's spoken output.  ``speak()`` plays the units whose indices arrive on a queue.

    ``paced``: leave Cadence's pauses (the reply's :class:`~agent.speaking.cadence.Cadence` is set as
    ``cadence`` by whoever cuts the reply).  ``rush()`` collapses the pauses still to come;
    ``stop()`` notes when the speaker was silenced, so that a unit cut off is told from one heard.
    ``at_once``: nothing plays (a text-only output), so a unit is told heard as soon as all of it
    is written, not when its sound would end.
    """

    def __init__(
        self,
        synthesizer: Synthesizer,
        speaker: Speaker,
        timeline: Timeline,
        emit: Callable[[Event], None],
        paced: bool = True,
        at_once: bool = False,
    ) -> None:
        self.synthesizer = synthesizer
        self.speaker = speaker
        self.timeline = timeline
        self.emit = emit
        self.paced = paced
        self.at_once = at_once
        self.cadence: Cadence | None = None
        self.audio_s = 0.0
        """Seconds of voice handed to the speaker (pauses not counted)."""
        self._units: list[str] = []
        self._kinds: dict[int, str] = {}
        self._places: dict[int, int] = {}  # unit index -> its place in the reply's Cadence
        self._heard_units: set[int] = set()
        self._telling: set[int] = set()
        self._told: set[int] = set()
        """Units told as heard (:class:`UnitSpoken`)."""
        self._unit_written: dict[int, asyncio.Event] = {}
        self._synthesized: set[int] = set()
        self._unheard_chunks: defaultdict[int, int] = defaultdict(int)  # written, first sample not heard yet
        self._unit_end: dict[int, float] = {}  # when the unit's last heard sample ends
        self._heard_until = 0.0  # when everything heard so far has been played out
        self._last_chunk: dict[int, list] = {}  # unit -> [its last chunk written, when it was heard]
        self._pause_when_heard: dict[int, float] = {}  # unit -> its trailing quiet, once its end is heard
        self._voice_ended: list[asyncio.TimerHandle] = []
        self._rushing = False
        self._pausing = False
        self._stopped_at: float | None = None

    # -- units -----------------------------------------------------------------------------
    def add(self, text: str, kind: str = "answer", place: int | None = None) -> int:
        """A unit to say; ``place``: its index among the reply's Cadence units.  Returns its index."""
        self._units.append(text)
        index = len(self._units) - 1
        self._kinds[index] = kind
        if place is not None:
            self._places[index] = place
        return index

    def written(self, index: int) -> asyncio.Event:
        """Set once the unit's last sample is with the speaker."""
        return self._unit_written.setdefault(index, asyncio.Event())

    def rush(self) -> None:
        self._rushing = True

    @property
    def rushing(self) -> bool:
        return self._rushing

    def stop(self, at: float) -> None:
        if self._stopped_at is None:
            self._stopped_at = at

    @property
    def stopped(self) -> bool:
        return self._stopped_at is not None

    def finish(self) -> list[SpokenUnit]:
        """Every unit, in order, with what the listener heard of it."""
        for handle in self._voice_ended:
            handle.cancel()
        stopped = self._stopped_at if self._stopped_at is not None else math.inf
        units: list[SpokenUnit] = []
        for i, text in enumerate(self._units):
            if i not in self._heard_units:
                status = "unspoken"
            elif i in self._synthesized and self._unheard_chunks[i] == 0 and self._unit_end.get(i, 0.0) <= stopped:
                status = "spoken"
            else:
                status = "cut"
            units.append(SpokenUnit(text.strip(), self._kinds.get(i, "answer"), status))
            if status == "spoken":
                self._tell(i)  # heard to its end just now: its timer may not have fired yet
        return units

    # -- speaking --------------------------------------------------------------------------
    async def speak(self, units: asyncio.Queue[int | None]) -> None:
        """Synthesize unit n+1 while unit n plays; stamp audio when the speaker plays it."""
        tl = self.timeline
        audio: asyncio.Queue[tuple[int, AudioChunk | None] | None] = asyncio.Queue(maxsize=64)

        async def synthesize() -> None:
            while (index := await units.get()) is not None:
                unit = self._units[index]
                tl.mark("tts_start", unit=index, text=unit.strip(), kind=self._kinds.get(index, "answer"))
                seconds = 0.0
                async for chunk in self.synthesizer.synthesize(unit.strip()):
                    seconds += chunk.duration
                    await audio.put((index, chunk))
                tl.mark("tts_end", unit=index, audio_s=round(seconds, 3))
                await audio.put((index, None))
            await audio.put(None)

        async def play() -> None:
            last_index, previous = -1, None
            while (item := await audio.get()) is not None:
                index, chunk = item
                if chunk is None:  # the unit's last sample is with the speaker
                    self._synthesized.add(index)
                    self.written(index).set()
                    self._unit_written_out(index)
                    self._tell_if_heard(index)
                    continue
                first_of_unit = index != last_index
                if first_of_unit:
                    await self._pause_before(index, chunk, previous)
                last_index, previous = index, chunk
                self.audio_s += chunk.duration
                await self._write(index, chunk, first_of_unit)
            if last_index >= 0:
                tl.mark("last_audio_out", await self.speaker.drain())

        async with asyncio.TaskGroup() as group:
            group.create_task(synthesize(), name="synthesize")
            group.create_task(play(), name="play")

    async def _write(self, index: int, chunk: AudioChunk, first_of_unit: bool) -> None:
        """Hand a chunk to the speaker; note when it is heard (the unit's first one on the timeline).

        Nothing once stopped: a stop silences the speaker at once, but the task cancelled with it
        runs on until its next real suspension, and audio already synthesized and queued here is
        taken without one (a barge-in went on being heard for a second after the speaker fell silent)."""
        if self._stopped_at is not None:
            return
        self._unheard_chunks[index] += 1
        last = self._last_chunk[index] = [chunk, None]

        def heard(at: float) -> None:
            self._unheard_chunks[index] -= 1
            end = at + chunk.duration
            # The unit's end includes this chunk before it is told heard: told earlier, a unit whose
            # last chunk is the one just playing would be told at once (or, a one-chunk unit, only
            # when the turn ends).
            self._unit_end[index] = max(self._unit_end.get(index, 0.0), end)
            self._tell_if_heard(index)
            self._heard_until = max(self._heard_until, end)
            last[1] = at
            if first_of_unit:
                self._on_unit_heard(index, at)
            if index in self._pause_when_heard and self._last_chunk.get(index) is last:
                self._voice_ends(index, end - self._pause_when_heard.pop(index))

        await self.speaker.write(chunk, heard)

    def _tell_if_heard(self, index: int) -> None:
        """Once all of a unit is synthesized and playing, tell at its end that it was heard
        (:class:`UnitSpoken`), unless hearth was stopped before then."""
        end = self._unit_end.get(index)
        if end is None or index in self._telling or index not in self._synthesized or self._unheard_chunks[index]:
            return
        self._telling.add(index)
        if self.at_once:
            if self._stopped_at is None:
                self._tell(index)
            return

        def tell() -> None:
            if self._stopped_at is None or end <= self._stopped_at:
                self._tell(index)

        loop = asyncio.get_running_loop()
        self._voice_ended.append(loop.call_at(loop.time() + max(0.0, end - time.monotonic()), tell))

    def _tell(self, index: int) -> None:
        if index not in self._told:
            self._told.add(index)
            self.emit(UnitSpoken(self._units[index].strip(), self._kinds.get(index, "answer")))

    def _unit_written_out(self, index: int) -> None:
        """The unit's audio is all with the speaker: when its voice stops, hearth is pausing."""
        more = index + 1 < len(self._units) or (self.cadence is not None and not self.cadence.pacer.complete)
        if index not in self._last_chunk or not more or not self.paced:
            return
        chunk, heard_at = self._last_chunk[index]
        quiet = trailing_quiet_s(chunk)
        if heard_at is None:
            self._pause_when_heard[index] = quiet
        else:
            self._voice_ends(index, heard_at + chunk.duration - quiet)

    def _voice_ends(self, index: int, at: float) -> None:
        """At monotonic time ``at`` the voice of unit ``index`` stops: show "still talking" then.

        Stamped from the speaker's clock, so the light and the barge-in listener follow what the
        room hears, the voice's own trailing silence included.
        """
        loop = asyncio.get_running_loop()

        def pausing() -> None:
            if not self.stopped and not self._pausing and max(self._heard_units, default=-1) == index:
                self._pausing = True
                self.emit(StateChanged(State.PAUSING))

        self._voice_ended.append(loop.call_at(loop.time() + max(0.0, at - time.monotonic()), pausing))

    async def _pause_before(self, index: int, first: AudioChunk, previous: AudioChunk | None) -> None:
        """Leave Cadence's pause before a reply's unit, counting any silence already heard.

        The pause is written as silence, so that the speaker's clock, not the event loop's,
        times it; it goes in short slices so that a barge-in collapses the rest of it.  What the
        listener hears between two voices also holds the silence the voice leaves at the end of
        one unit and the start of the next, and any wait for the model: all count toward it.
        """
        place, cadence = self._places.get(index), self.cadence
        if place is None or place == 0 or cadence is None or not self.paced:
            return
        began = time.monotonic()
        waited = max(0.0, began - self._heard_until) if sum(self._unheard_chunks.values()) == 0 else 0.0
        edges = leading_quiet_s(first) + (trailing_quiet_s(previous) if previous is not None else 0.0)
        idle = waited + edges
        rate = self.speaker.sample_rate
        step, written, target = round(_SILENCE_SLICE_S * rate), 0, 0.0
        # Asked again before every slice: the later the pause is decided, the more of the reply
        # is known, and the closer it is to the pause of the whole text.
        while not self._rushing:
            target = cadence.pause_before(place)
            left = round((target - idle) * rate) - written
            if left <= 0:
                break
            if self._stopped_at is not None:
                break
            silence = AudioChunk(np.zeros(min(step, left), np.float32), rate)
            await self.speaker.write(silence)
            written += len(silence.samples)
        cadence.paused(place, min(idle, target) + written / rate)
        self.timeline.mark(
            "pause",
            began,
            unit=index,
            pause_s=round(target, 3),
            silence_s=round(written / rate, 3),
            already_s=round(waited, 3),
            voice_edges_s=round(edges, 3),
        )

    def _on_unit_heard(self, index: int, at: float) -> None:
        self._heard_units.add(index)
        self.timeline.mark("unit_audio_out", at, unit=index)
        first = self.timeline.mark_once("first_audio_out", at) is not None
        if first or self._pausing:
            self._pausing = False
            self.emit(StateChanged(State.SPEAKING))
