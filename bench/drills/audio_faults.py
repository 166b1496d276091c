"""Fault drills for the sound devices: lost, noticed, and used again once they return.

    python -m bench.drills.audio_faults [--reps 5] [--outage 2.0] [--out bench/results/faults-audio-<machine>.json]

hearth's PortAudio microphone and speaker run against a PulseAudio server of the drill's own
(:mod:`bench.drills.pulse_server`: it is killed and hung here, which would break anything sharing a
server), on one null sink: the speaker plays into it, the microphone records its monitor.
The devices are opened again exactly as the appliance loop does it
(:class:`firmware_py.recovery.DeviceReopener` with its default backoff: a try at once, then
0.5 s doubling to 30 s).  The drills:

- ``source_removed``: the microphone's source is removed (``pactl unload-module``) and added again;
- ``sink_removed``: the speaker's sink is removed while a reply plays, and added again;
- ``server_killed``: the PulseAudio daemon is killed (SIGKILL) and started again (both devices);
- ``server_hung``: the daemon is stopped (SIGSTOP) and continued (both devices).

For each device in each repetition: ``detect_s``, from the fault to hearth's device raising
:class:`~audio.protocols.AudioDeviceError` (the microphone's ``chunks()``, the speaker's waiting
``write()``); then the device returns ``--outage`` seconds after the loss was noticed, and
``reopened_s`` is from its return to the stream open again, ``recover_s`` from its return to
hearth using it: the reopened microphone's first chunk, or the first sample of a chunk written
to the reopened speaker heard (its ``on_heard`` time).  ``tries`` counts the reopening tries.
The drills start with the devices in steady use (open for longer than the first seconds, in
which a new stream is not judged by its pace).  The JSON has every run, the median of each
figure, and how many streams' stop stuck in PortAudio (closed anyway, left to their threads).

Exit status: 0 with the table printed and the JSON written; 2 when PulseAudio cannot be run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from audio.protocols import AudioChunk, AudioDeviceError
from bench.drills.pulse_server import NullSink, PrivatePulseServer, PulseError
from bench.provenance import written_by
from firmware_py.recovery import BackoffSettings, DeviceReopener

log = logging.getLogger(__name__)

GUARD_S = 60.0
"""Only a guard against a hang: a drill that reaches it is reported as failed."""
SINK = "hearth_drill"


def tone(seconds: float, rate: int) -> AudioChunk:
    t = np.arange(int(seconds * rate)) / rate
    return AudioChunk((0.3 * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32), rate)


class Drill:
    """One repetition: the devices, the server, and the times noted."""

    def __init__(self, server: PrivatePulseServer, outage_s: float) -> None:
        from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings

        self.server = server
        self.outage_s = outage_s
        self.sink = NullSink(server.address, SINK)
        self.mic = SoundDeviceMicrophone(MicrophoneSettings())
        self.speaker = SoundDeviceSpeaker(SpeakerSettings())
        self._player: asyncio.Task[None] | None = None
        self._chunks: AsyncIterator[AudioChunk] | None = None

    async def open(self, mic: bool, speaker: bool) -> None:
        from audio.stream_guard import LossSettings

        self.server.resume()
        self.server.start()
        self.sink.load()
        opened = time.monotonic()
        if mic:
            await self.mic.start()
            self._chunks = self.mic.chunks()
            await asyncio.wait_for(anext(self._chunks), GUARD_S)
        if speaker:
            await self.speaker.start()
            heard: list[float] = []
            self._player = asyncio.create_task(self._play(heard))
            while not heard:  # a reply is playing, and write() waits for room
                await asyncio.sleep(0.02)
        # Devices in steady use: past the first seconds, in which a stream is not judged by its pace.
        await asyncio.sleep(max(0.0, opened + LossSettings().first_audio_s + 0.5 - time.monotonic()))

    async def _play(self, heard: list[float]) -> None:
        while True:
            await self.speaker.write(tone(0.25, self.speaker.sample_rate), heard.append)

    async def close(self) -> None:
        self.server.resume()
        if self._player is not None:
            self._player.cancel()
            await asyncio.gather(self._player, return_exceptions=True)
        await self.mic.close()
        await self.speaker.close()
        if self.server.running:
            self.sink.unload()

    # ---- noticing

    async def microphone_lost(self, fault_at: float) -> tuple[float, AudioDeviceError]:
        assert self._chunks is not None
        try:
            async for _ in self._chunks:
                pass
        except AudioDeviceError as exc:
            return time.monotonic() - fault_at, exc
        raise RuntimeError("the microphone ended without an error")

    async def speaker_lost(self, fault_at: float) -> tuple[float, AudioDeviceError]:
        assert self._player is not None
        try:
            await self._player
        except AudioDeviceError as exc:
            return time.monotonic() - fault_at, exc
        raise RuntimeError("the speaker's write ended without an error")

    # ---- recovering

    async def microphone_back(self, error: AudioDeviceError, returned: asyncio.Future[float]) -> dict[str, float]:
        tries = await DeviceReopener("the microphone", self.mic).reopen(error)
        opened = time.monotonic()
        await asyncio.wait_for(anext(self.mic.chunks()), GUARD_S)
        audio = time.monotonic()
        back = await returned
        return {"tries": tries, "reopened_s": opened - back, "recover_s": audio - back}

    async def speaker_back(self, error: AudioDeviceError, returned: asyncio.Future[float]) -> dict[str, float]:
        tries = await DeviceReopener("the speaker", self.speaker).reopen(error)
        opened = time.monotonic()
        heard: list[float] = []
        await self.speaker.write(tone(0.25, self.speaker.sample_rate), heard.append)
        await asyncio.wait_for(self.speaker.drain(), GUARD_S)
        back = await returned
        return {"tries": tries, "reopened_s": opened - back, "recover_s": heard[0] - back}


async def run_drill(
    drill: Drill,
    devices: tuple[str, ...],
    fault: Callable[[], None],
    restore: Callable[[], None],
) -> dict[str, dict[str, float]]:
    """Fault the devices, note when each notices, restore them after the outage, note the recovery."""
    await drill.open(mic="microphone" in devices, speaker="speaker" in devices)
    try:
        noticing: dict[str, Awaitable[tuple[float, AudioDeviceError]]] = {}
        fault_at = time.monotonic()
        fault()
        if "microphone" in devices:
            noticing["microphone"] = drill.microphone_lost(fault_at)
        if "speaker" in devices:
            noticing["speaker"] = drill.speaker_lost(fault_at)
        noticed = dict(zip(noticing, await asyncio.wait_for(asyncio.gather(*noticing.values()), GUARD_S)))
        returned: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        recovering = {
            name: asyncio.create_task((drill.microphone_back if name == "microphone" else drill.speaker_back)(error, returned))
            for name, (_, error) in noticed.items()
        }
        await asyncio.sleep(drill.outage_s)
        returned.set_result(time.monotonic())
        restore()
        recovered = dict(zip(recovering, await asyncio.wait_for(asyncio.gather(*recovering.values()), GUARD_S)))
        return {name: {"detect_s": noticed[name][0], **recovered[name]} for name in devices}
    finally:
        await drill.close()


DRILLS: dict[str, tuple[tuple[str, ...], Callable[[Drill], None], Callable[[Drill], None]]] = {
    "source_removed": (("microphone",), lambda d: d.sink.unload(), lambda d: d.sink.load()),
    "sink_removed": (("speaker",), lambda d: d.sink.unload(), lambda d: d.sink.load()),
    "server_killed": (
        ("microphone", "speaker"),
        lambda d: (d.server.kill(), d.sink.forget()),
        lambda d: (d.server.start(), d.sink.load()),
    ),
    "server_hung": (("microphone", "speaker"), lambda d: d.server.pause(), lambda d: d.server.resume()),
}


def medians(runs: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for device in runs[0]:
        out[device] = {
            key: round(statistics.median(run[device][key] for run in runs), 3) for key in runs[0][device]
        }
    return out


async def run(reps: int, outage_s: float) -> dict[str, Any]:
    from audio.stream_guard import LossSettings

    server = PrivatePulseServer()
    server.start()
    # This process's PortAudio talks to the drill's own server, on the drill's sink.
    os.environ["PULSE_SERVER"] = server.address
    os.environ["PULSE_SINK"] = SINK
    os.environ["PULSE_SOURCE"] = f"{SINK}.monitor"
    report: dict[str, Any] = {
        "bench": "audio_faults",
        "machine": f"{platform.machine()} {platform.system()} {platform.release()}",
        "cpus": os.cpu_count(),
        "path": "PortAudio (ALSA pulse plugin) on a private PulseAudio server, null sink",
        "outage_s": outage_s,
        "reps": reps,
        "loss_settings": asdict(LossSettings()),
        "backoff": asdict(BackoffSettings()),
        "drills": {},
        "stuck_closes": 0,
    }
    stuck = _StuckCloses()
    guard_log = logging.getLogger("audio.stream_guard")
    guard_log.setLevel(logging.WARNING)
    guard_log.addHandler(stuck)
    try:
        for name, (devices, fault, restore) in DRILLS.items():
            runs = []
            for rep in range(reps):
                drill = Drill(server, outage_s)
                result = await run_drill(drill, devices, lambda: fault(drill), lambda: restore(drill))
                runs.append({d: {k: round(v, 3) for k, v in r.items()} for d, r in result.items()})
                print(f"{name} #{rep + 1}: " + "; ".join(
                    f"{d} noticed in {r['detect_s']:.2f} s, back {r['recover_s']:.2f} s after it returned ({r['tries']:.0f} tries)"
                    for d, r in result.items()), flush=True)
            report["drills"][name] = {"runs": runs, "median": medians(runs)}
    finally:
        server.close()
        report["stuck_closes"] = stuck.count
    return report


class _StuckCloses(logging.Handler):
    """Counts streams whose stop stuck in PortAudio (left to finish in their own thread)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "is stuck in PortAudio" in record.getMessage():
            self.count += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each drill")
    parser.add_argument("--outage", type=float, default=2.0, help="seconds the device stays away after the loss is noticed")
    parser.add_argument("--out", type=Path, default=Path("bench/results") / f"faults-audio-{platform.machine()}.json")
    args = parser.parse_args(argv)
    provenance = written_by("bench.drills.audio_faults", argv)  # the code as it starts, whatever changes while it runs
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        report = {"written_by": provenance, **asyncio.run(run(args.reps, args.outage))}
    except PulseError as exc:
        print(f"audio_faults: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\n{'drill':16} {'device':11} {'detect s':>9} {'reopened s':>11} {'recover s':>10} {'tries':>6}   (medians of {args.reps})")
    for name, drill in report["drills"].items():
        for device, m in drill["median"].items():
            print(f"{name:16} {device:11} {m['detect_s']:9.2f} {m['reopened_s']:11.2f} {m['recover_s']:10.2f} {m['tries']:6.0f}")
    print(f"streams whose stop stuck in PortAudio (left to their threads): {report['stuck_closes']}")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
