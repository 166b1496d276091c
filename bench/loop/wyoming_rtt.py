"""The Wyoming round trip as Home Assistant makes it, beside hearth's own loop, for the same requests.

For each request of a suite (its first turn), in one process with one assistant and the real models:

* **Wyoming:** the request's text goes to hearth's ``handle`` program as a ``transcript`` (Home
  Assistant has already recognized it); the first ``handled-chunk`` that comes back opens a
  streamed ``synthesize-start`` on the ``tts`` program, every chunk is passed on as a
  ``synthesize-chunk`` as it comes and ``synthesize-stop`` follows the handled answer.  Measured:
  transcript sent → first ``audio-chunk`` received (``wyoming_first_audio_s``), with its parts
  (→ first handled chunk, → handled answer complete).  Both connections are made inside the
  measured time, as a client connecting per request does.
* **The loop:** the request's synthetic recording is played in real time into the same assistant
  (WAV microphone, clocked WAV speaker, as ``hearth bench``).  Measured from the turn's own
  timeline: end of the user's speech → first audio heard (``loop_first_audio_s``, hearth's headline
  figure) and final transcript → first audio heard (``loop_transcript_first_audio_s``, the part
  of the loop the Wyoming round trip stands for).

The two alternate which goes first from one request to the next; before each, the conversation
is forgotten and the household emptied (timers cancelled, list and notes cleared), so both answer
the same request in the same kitchen and neither from the other's doing.  Timers and lists go to
a scratch folder.

    python -m bench.loop.wyoming_rtt --suite en-kitchen --limit 30

takes 30 requests spread evenly through the suite (``--first``: its first ones instead).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from wyoming.asr import Transcript
from wyoming.audio import AudioChunk as WyAudioChunk
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.handle import Handled, HandledChunk, HandledStop, NotHandled
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped, SynthesizeVoice

from agent.assistant import Assistant
from agent.text_turns import TextTurns
from audio.ready_voice import own_voice
from audio.wav import WavFileSpeaker, read_wav
from bench.loop.metrics import aggregate
from bench.provenance import git_commit, written_by
from firmware_py.config import HearthConfig, load_config
from firmware_py.demo import play_request
from firmware_py.home_tools import HomeTools
from firmware_py.wiring import build_turn_deps, close_turn_deps
from firmware_py.wyoming import WyomingServer
from firmware_py.wyoming.offer import offer_from

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
REQUEST_TIMEOUT_S = 120.0
"""A request not answered by then is recorded as failed and the run goes on."""


async def wyoming_round_trip(host: str, port: int, text: str, language: str) -> dict[str, Any]:
    """One request through ``handle`` then streamed ``tts``; seconds from the transcript sent."""
    began = time.monotonic()
    row: dict[str, Any] = {}
    handle = AsyncTcpClient(host, port)
    tts: AsyncTcpClient | None = None
    listening: asyncio.Task[None] | None = None
    chunks: list[str] = []

    async def hear_audio(client: AsyncTcpClient) -> None:
        while (event := await client.read_event()) is not None:
            if WyAudioChunk.is_type(event.type):
                row.setdefault("wyoming_first_audio_s", round(time.monotonic() - began, 4))
            elif SynthesizeStopped.is_type(event.type):
                row["wyoming_last_audio_s"] = round(time.monotonic() - began, 4)
                return
            elif Error.is_type(event.type):
                raise RuntimeError(f"tts error: {Error.from_event(event).text}")

    await handle.connect()
    try:
        await handle.write_event(Transcript(text=text, language=language).event())
        while (event := await handle.read_event()) is not None:
            if HandledChunk.is_type(event.type):
                piece = HandledChunk.from_event(event).text or ""
                if tts is None:
                    row["wyoming_first_chunk_s"] = round(time.monotonic() - began, 4)
                    tts = AsyncTcpClient(host, port)
                    await tts.connect()
                    await tts.write_event(SynthesizeStart(voice=SynthesizeVoice(language=language)).event())
                    listening = asyncio.create_task(hear_audio(tts), name="bench-tts-audio")
                await tts.write_event(SynthesizeChunk(text=(" " if chunks else "") + piece).event())
                chunks.append(piece)
            elif Handled.is_type(event.type):
                row["handled"] = Handled.from_event(event).text or ""
                row["wyoming_handled_s"] = round(time.monotonic() - began, 4)
            elif HandledStop.is_type(event.type):
                break
            elif NotHandled.is_type(event.type):
                row["not_handled"] = NotHandled.from_event(event).text or ""
                break
            elif Error.is_type(event.type):
                raise RuntimeError(f"handle error: {Error.from_event(event).text}")
        if tts is not None and listening is not None:
            await tts.write_event(SynthesizeStop().event())
            await listening
    finally:
        if listening is not None and not listening.done():
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)
        if tts is not None:
            await tts.disconnect()
        await handle.disconnect()
    row["chunks"] = chunks
    return row


def empty_household(deps: Any) -> None:
    home = deps.tools.home if deps.tools is not None else None
    if not isinstance(home, HomeTools):
        return
    home.end_timers()
    for entry in home.lists.items():
        home.lists.complete(entry.item)
    for note in home.lists.notes():
        home.lists.remove_note(note.id)


def loop_figures(result: Any) -> dict[str, Any]:
    tl = result.timeline
    return {
        "loop_first_audio_s": tl.between("speech_end", "first_audio_out"),
        "loop_transcript_first_audio_s": tl.between("final_transcript", "first_audio_out"),
        "loop_final_transcript_s": tl.between("speech_end", "final_transcript"),
        "loop_transcript": result.transcript,
        "loop_spoken": result.spoken,
        "loop_outcome": result.outcome.value,
    }


def pick(scenarios: list[Any], limit: int, spread: bool) -> list[Any]:
    """The first ``limit`` requests, or (``spread``) ``limit`` taken evenly through the suite, so that
    every kind of request (timers, the list, recipes, weather, small talk) is among them."""
    if not spread or limit >= len(scenarios):
        return scenarios[:limit]
    return [scenarios[(i * len(scenarios)) // limit] for i in range(limit)]


async def measure(config: HearthConfig, suite_name: str, limit: int, spread: bool = True) -> dict[str, Any]:
    from bench.suites.audio import scenario_audio
    from bench.suites.scenarios import load_suite, resolve_audio

    suite = load_suite(suite_name)
    scenarios = pick([sc for sc in suite.scenarios if sc.kitchen is None], limit, spread)
    language = suite.language
    audio = {sc.id: resolve_audio(sc) if sc.audio else scenario_audio(sc.text, language) for sc in scenarios}
    scratch = Path(tempfile.mkdtemp(prefix="hearth-wyoming-rtt-"))
    tools = config.tools.model_copy(update={"data_dir": scratch / "tool-data"})
    config = config.model_copy(update={"language": language, "tools": tools})
    speaker = WavFileSpeaker(config.audio.output_rate)
    deps = await build_turn_deps(config, speaker)
    assistant = Assistant(deps, history_turns=config.history_turns)
    await assistant.warm()
    await assistant.keep_heads()
    offer = offer_from(answers=TextTurns(assistant), synthesizers={language: own_voice(deps.synthesizer)}, answer_languages=(language,), programs=("tts", "handle"))
    server = WyomingServer(offer)
    uri = await server.start("tcp://127.0.0.1:0")
    host, port = uri.removeprefix("tcp://").rsplit(":", 1)
    rows: list[dict[str, Any]] = []
    try:
        for index, scenario in enumerate(scenarios):
            row: dict[str, Any] = {"scenario": scenario.id, "category": scenario.category, "text": scenario.text}
            ways = ["loop", "wyoming"] if index % 2 == 0 else ["wyoming", "loop"]
            for way in ways:
                empty_household(deps)
                assistant.forget()
                await assistant.warm()
                if assistant.deps.reasoner is not None:
                    assistant.deps.reasoner.forget(cache_only=True)
                try:
                    if way == "loop":
                        result = await asyncio.wait_for(play_request(assistant, read_wav(audio[scenario.id], 16000)), REQUEST_TIMEOUT_S)
                        row |= loop_figures(result)
                    else:
                        row |= await asyncio.wait_for(wyoming_round_trip(host, int(port), scenario.text, language), REQUEST_TIMEOUT_S)
                        await asyncio.sleep(0)  # the text turn's end is recorded
                        text_turn = assistant.results[-1].timeline
                        # The assistant's own part: the words given → its first unit cut and told.
                        row["text_turn_first_unit_s"] = text_turn.between("final_transcript", "first_audio_out")
                        row["text_turn_marks"] = [(m.name, m.t) for m in text_turn.marks][:40]
                except Exception as exc:  # noqa: BLE001 - one request's failure is recorded, the run goes on
                    log.exception("%s (%s) failed", scenario.id, way)
                    row[f"{way}_error"] = f"{type(exc).__name__}: {exc}"
            row["first"] = ways[0]
            rows.append(row)
            print(
                f"{index + 1}/{len(scenarios)} {scenario.id}: wyoming {row.get('wyoming_first_audio_s')} s, "
                f"loop {row.get('loop_first_audio_s')} s (from transcript {row.get('loop_transcript_first_audio_s')} s)",
                flush=True,
            )
    finally:
        await server.stop()
        await close_turn_deps(deps)
        assistant.close()
    keys = (
        "wyoming_first_audio_s", "wyoming_first_chunk_s", "wyoming_handled_s", "text_turn_first_unit_s",
        "loop_first_audio_s", "loop_transcript_first_audio_s", "loop_final_transcript_s",
    )
    return {
        "suite": suite.suite,
        "requests": len(rows),
        "picked": "spread through the suite" if spread else "the first ones",
        "figures": {key: aggregate(rows, key) for key in keys},
        "rows": rows,
        "machine": {"platform": platform.platform(), "processor": platform.machine()},
        "git_commit": git_commit(),
        "talker": config.llm.model,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.loop.wyoming_rtt", description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="en-kitchen", help="a suite of bench/suites (default en-kitchen)")
    parser.add_argument("--limit", type=int, default=30, help="how many requests (default 30)")
    parser.add_argument("--first", action="store_true", help="the first N requests of the suite, not N spread through it")
    parser.add_argument("--config", type=Path, help="hearth's configuration (default: as `hearth run` finds it)")
    parser.add_argument("--models-dir", type=Path, help="default: $HEARTH_MODELS_DIR or ~/.local/share/hearth/models")
    parser.add_argument("--out", type=Path, help="the JSON report (default bench/results/wyoming-rtt-<date>.json)")
    args = parser.parse_args(argv)
    provenance = written_by("bench.loop.wyoming_rtt", argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    overrides = {"models_dir": str(args.models_dir)} if args.models_dir else {}
    config = load_config(args.config, overrides)
    report = {"written_by": provenance, **asyncio.run(measure(config, args.suite, args.limit, spread=not args.first))}
    out = args.out or ROOT / "bench" / "results" / f"wyoming-rtt-{datetime.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    figures = report["figures"]
    for key, value in figures.items():
        print(f"{key}: median {value['median']} s, p90 {value['p90']} s (n={value['n']})")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
