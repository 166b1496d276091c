"""The hearing bench: a suite heard in the kitchen offline, much faster than real time, per front end.

Each turn's request is made into a take under every condition (:mod:`bench.kitchen.mix`), passed
through each front end (:mod:`bench.kitchen.front_ends`), and heard the way the loop hears it:

- the **voice detector** (Silero, the loop's settings) over the whole take: where it finds speech
  start and end against the clean request's real start and end, and, for noise alone, whether it
  finds speech at all (a turn would start);
- the **final decode** of the utterance the loop would hand the recognizer (from the detector's
  first start, less the preroll, to its last end plus the tail; the whole take when the detector
  never lets go): the loop's own recognizer (``firmware_py.wiring.make_recognizer``: the full
  window, the kitchen's words as prompt as a fresh household's first turn builds it, the n best
  chosen by the kitchen's words) through its final-decode path, scored against the words said;
- the **end-of-turn model** at the real end of speech (after the detector's hangover of silence):
  does it hear the end as an end.

CPU seconds per second of audio are reported per front end.

    python -m bench.kitchen.hear --suite en-kitchen --conditions clean room fan@10 tap@5 \\
        --front-end none highpass --out out/kitchen-hear.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from agent.listening.hearing import weigh
from audio.levels import speech_snr_db
from audio.array import ArrayGeometry, load_geometry
from bench.kitchen.front_ends import ArrayHearing, FrontEnd, array_front_end, resolve_front_end, split
from bench.kitchen.mix import BEFORE_PRESS_S, Condition, ConditionError, kitchen_audio, parse_conditions
from bench.kitchen.rooms import DEFAULT_ROOM, RoomPreset, room_preset
from bench.provenance import written_by

log = logging.getLogger(__name__)

RATE = 16000


class Ears:
    """The loop's voice detector, recognizer and end-of-turn model, loaded once."""

    def __init__(self, config: Any, context: str) -> None:
        from audio.end_of_turn import SmartTurnModel, SmartTurnSettings
        from firmware_py.wiring import listen_settings, make_recognizer, make_vad, model_store

        store = model_store(config)
        self.config = config
        self.context = context
        self.listen = listen_settings(config)
        self.vad = make_vad(config, store)
        self.vad.load()
        self.recognizer = make_recognizer(config, store)
        self.recognizer.load()
        self.recognizer.warm()
        files = sorted(store.path(config.listen.end_of_turn_model).glob("*.onnx"))
        self.turn_model = SmartTurnModel(SmartTurnSettings(model_path=files[0])) if files else None
        if self.turn_model is not None:
            self.turn_model.warm()

    def speech(self, samples: np.ndarray) -> tuple[float | None, float | None]:
        """The detector's first start and last end of speech (s), None when it finds none."""
        self.vad.reset()
        events = self.vad.accept(samples) + self.vad.flush()
        starts = [e.sample for e in events if e.speech]
        ends = [e.sample for e in events if not e.speech]
        if not starts:
            return None, None
        return starts[0] / RATE, (ends[-1] if ends else len(samples)) / RATE

    def hear(self, samples: np.ndarray, real_start: float | None, real_end: float | None,
             detect: np.ndarray | None = None) -> dict[str, Any]:
        """One take, after its front end: what the detector, the recognizer and the turn model make of
        it.  ``detect``, when given, is what the detector and the turn model hear instead (a split
        front end); the recognizer hears ``samples`` over the detector's span."""
        detect = samples if detect is None else detect
        start, end = self.speech(detect)
        row: dict[str, Any] = {"speech_found": start is not None, "vad_start_s": start, "vad_end_s": end}
        if real_start is not None and start is not None and end is not None and real_end is not None:
            row["start_error_s"] = round(start - real_start, 3)
            row["end_error_s"] = round(end - real_end, 3)
        transcript = ""
        if start is not None and end is not None:
            first = max(0, int((start - self.listen.preroll_s) * RATE))
            last = min(len(samples), int((end + self.listen.tail_s) * RATE))
            began = time.perf_counter()
            final = self.recognizer.final(samples[first:last], self.context)
            row["decode_s"] = round(time.perf_counter() - began, 3)
            transcript = final.text
            row["word_probs"] = [list(w) for w in final.word_probs]
            # The loop's hearing of the turn (no partial to agree with: offline there is one decode).
            heard_until = min(len(samples), int((end + 1.0) * RATE))
            snr = speech_snr_db(samples[:heard_until], RATE, (int(start * RATE), int(end * RATE)))
            row |= {"hearing_" + k: v for k, v in weigh(final, snr, None, self.listen.hearing).marks().items()}
        row["transcript"] = transcript
        if self.turn_model is not None and real_end is not None:
            # Asked as the loop asks it: once the detector's hangover of silence follows the speech.
            first = max(0, int(((start if start is not None else 0.0) - self.listen.preroll_s) * RATE))
            until = int((real_end + self.config.vad.min_silence_s) * RATE)
            if until > first:
                p = self.turn_model.probability(detect[first:until])
                row["turn_end_p"] = round(p, 3)
                row["turn_end_heard"] = p >= self.listen.turn_end.finished_threshold
        return row


async def kitchen_context(config: Any) -> str:
    """The recognizer's prompt as a fresh household's first turn builds it (scratch data)."""
    from agent.listening.speech_context import SpeechContext
    from firmware_py.home_tools import open_home_tools

    with tempfile.TemporaryDirectory(prefix="hearth-hear-") as scratch:
        config = config.model_copy(update={"tools": config.tools.model_copy(update={"data_dir": Path(scratch)})})
        home = await open_home_tools(config)
        try:
            return SpeechContext(config.language, home.vocabulary)()
        finally:
            await home.close()


def suite_turns(suite_name: str, limit: int | None) -> tuple[Any, list[tuple[str, str, Path]]]:
    """The suite and its turns: (key, words said, clean recording)."""
    from bench.suites.audio import turn_audio
    from bench.suites.scenarios import load_suite

    suite = load_suite(suite_name)
    turns = []
    for scenario in suite.scenarios[:limit] if limit else suite.scenarios:
        texts = [scenario.said, *(f.said for f in scenario.followups)]
        for n, (text, path) in enumerate(zip(texts, turn_audio(suite, scenario))):
            turns.append((scenario.id + (f"#{n}" if n else ""), text, path))
    return suite, turns


def run(
    suite_name: str, conditions: tuple[Condition, ...], front_ends: dict[str, FrontEnd], room: RoomPreset, seed: int,
    limit: int | None = None, config: Any = None, progress: bool = True, each: Callable[[dict[str, Any]], None] | None = None,
    array: ArrayGeometry | None = None, array_front_ends: dict[str, ArrayHearing] | None = None,
) -> dict[str, Any]:
    """Every turn under every condition through every front end; ``each`` is given the result so far
    after each condition (a long sweep stopped keeps what it finished).  With ``array`` the takes
    are the array's, heard through ``array_front_ends`` instead, the kitchen heard first for
    :data:`~bench.kitchen.mix.BEFORE_PRESS_S`."""
    if array is not None:
        front_ends = dict(array_front_ends or {})
    from tqdm import tqdm

    from audio.wav import read_wav
    from bench.suites.audio import default_cache_dir
    from bench.suites.scoring import transcript_error
    from firmware_py.config import load_config

    suite, turns = suite_turns(suite_name, limit)
    config = (config or load_config()).model_copy(update={"language": suite.language})
    ears = Ears(config, asyncio.run(kitchen_context(config)))
    rows: list[dict[str, Any]] = []
    cpu = {name: 0.0 for name in front_ends}
    audio_s = 0.0
    requests = {key: read_wav(path, RATE).samples for key, _, path in turns}
    bar = tqdm(total=len(turns) * len(conditions), unit="take", disable=not progress, file=sys.stderr)
    done: list[Condition] = []
    for condition in conditions:
        for key, text, _ in turns:
            before_s = BEFORE_PRESS_S if array is not None else 0.0
            take = kitchen_audio(requests[key], condition, room, seed, cache_dir=default_cache_dir(),
                                 mics=array.mics if array is not None else None, before_s=before_s)
            before = int(round(before_s * RATE))
            audio_s += (len(take.samples) - before) / RATE
            start, end = (None if t is None else t - before_s for t in (take.speech_start_s, take.speech_end_s))
            for name, function in front_ends.items():
                began = time.process_time()
                heard = function(take.samples, before) if array is not None else function(take.samples)
                recognize, detect = split(heard)
                cpu[name] += time.process_time() - began
                row = {"turn": key, "condition": condition.name, "front_end": name, "text": text if condition.speech else ""}
                row |= ears.hear(recognize, start, end, None if detect is recognize else detect)
                if condition.speech:
                    row["transcript_error"] = round(transcript_error(text, row["transcript"], suite.language), 4)
                rows.append(row)
            bar.update(1)
        done.append(condition)
        if each is not None:
            each(_result(suite, room, seed, len(turns), tuple(done), front_ends, cpu, audio_s, rows, array))
    bar.close()
    return _result(suite, room, seed, len(turns), conditions, front_ends, cpu, audio_s, rows, array)


def _result(
    suite: Any, room: RoomPreset, seed: int, turns: int, conditions: tuple[Condition, ...], front_ends: dict[str, FrontEnd],
    cpu: dict[str, float], audio_s: float, rows: list[dict[str, Any]], array: ArrayGeometry | None = None,
) -> dict[str, Any]:
    from bench.provenance import git_commit

    return {
        "suite": suite.suite,
        "language": suite.language,
        "room": room.name,
        "room_what": room.what,
        "seed": seed,
        **({"array": asdict(array)} if array is not None else {}),
        "git_commit": git_commit(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "python": platform.python_version()},
        "turns": turns,
        "front_ends": {name: {"cpu_s_per_audio_s": round(cpu[name] / audio_s, 5) if audio_s else None} for name in front_ends},
        "conditions": {c.name: {name: summarize([r for r in rows if r["condition"] == c.name and r["front_end"] == name], c)
                                for name in front_ends} for c in conditions},
        "condition_meta": {c.name: {"noise": c.noise, "snr_db": c.snr_db, "room": c.room, "speech": c.speech} for c in conditions},
        "rows": rows,
    }


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return round(statistics.median(values), 3) if values else None


def _mean(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float))]
    return round(statistics.mean(values), 4) if values else None


def summarize(rows: list[dict[str, Any]], condition: Condition) -> dict[str, Any]:
    """One condition under one front end."""
    found = sum(1 for r in rows if r["speech_found"])
    if not condition.speech:
        return {"takes": len(rows), "false_starts": found, "phantom_words": sum(1 for r in rows if r["transcript"].strip())}
    return {
        "takes": len(rows),
        "transcript_error": _mean(rows, "transcript_error"),
        "speech_found": round(found / len(rows), 4) if rows else None,
        "start_error_s": _median(rows, "start_error_s"),
        "end_error_s": _median(rows, "end_error_s"),
        # The detector held on to "speech" half a second past the real end: the loop waits for it.
        "late_end_takes": sum(1 for r in rows if (r.get("end_error_s") or 0) > 0.5),
        "turn_end_p": _mean(rows, "turn_end_p"),
        "turn_end_heard": _mean(rows, "turn_end_heard"),
        "decode_s": _median(rows, "decode_s"),
    }


def render(result: dict[str, Any]) -> str:
    """The figures as a Markdown table: a row per condition and front end."""
    lines = [f"`{result['suite']}` ({result['turns']} turns) in `{result['room']}`, seed {result['seed']}, commit "
             f"`{result['git_commit'][:7]}`", "",
             "| condition | front end | WER | speech found | start error (s) | end error (s) | ends late | turn end heard | "
             "noise alone: false starts / phantom words |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for condition, by_front in result["conditions"].items():
        for name, s in by_front.items():
            if "false_starts" in s:
                lines.append(f"| {condition} | {name} | | | | | | | {s['false_starts']} / {s['phantom_words']} of {s['takes']} |")
                continue
            pct = (lambda v: "–" if v is None else f"{100 * v:.1f} %")
            lines.append(f"| {condition} | {name} | {pct(s['transcript_error'])} | {pct(s['speech_found'])} | {s['start_error_s']} | "
                         f"{s['end_error_s']} | {s['late_end_takes']} | {pct(s['turn_end_heard'])} | |")
    lines += ["", "| front end | CPU s per audio s |", "| --- | --- |"]
    lines += [f"| {name} | {f['cpu_s_per_audio_s']} |" for name, f in result["front_ends"].items()]
    return "\n".join(lines) + "\n"


def draw(result: dict[str, Any], path: Path) -> bool:
    """WER against SNR per kind of sound, a panel per front end."""
    from bench.kitchen.loop import snr_series
    from bench.kitchen.picture import draw_against_snr

    panels = []
    for name in result["front_ends"]:
        per_condition = {c: result["condition_meta"][c] | by_front[name] for c, by_front in result["conditions"].items()}
        panels.append((f"WER, front end {name} (%)", *snr_series(per_condition, "transcript_error")))
    return draw_against_snr(panels, path, f"{result['suite']} heard offline in {result['room']}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="en-kitchen", help="suite name or YAML file")
    parser.add_argument("--conditions", nargs="+", required=True, metavar="COND", help="clean, room, fan@10, noise-only:fan@10, …")
    parser.add_argument("--front-end", nargs="+", default=["none"], metavar="NAME", help="registered name or module:function")
    parser.add_argument("--room", default=DEFAULT_ROOM, help="room preset")
    parser.add_argument("--seed", type=int, default=0, help="seeds the kitchen's sounds")
    parser.add_argument("--limit", type=int, help="only the first N scenarios")
    parser.add_argument("--out", type=Path, help="write the result JSON here (and a PNG beside it)")
    parser.add_argument("--ear", help="the recognizer model (asr.model_en or asr.model_ko), instead of the configured one")
    parser.add_argument("--array", help="hear the takes through this microphone array (a board's name or a .toml "
                        "geometry); --front-end then names array front ends (first, mvdr)")
    arguments = None if argv is None else list(argv)
    args = parser.parse_args(arguments)
    provenance = written_by("bench.kitchen.hear", arguments)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)
    try:
        conditions = parse_conditions(args.conditions)
        room = room_preset(args.room)
        array = load_geometry(args.array) if args.array else None
        front_ends = {name: resolve_front_end(name) for name in args.front_end} if array is None else {}
        array_ends = {name: array_front_end(name, array.count) for name in args.front_end} if array is not None else None
    except (ConditionError, ValueError) as exc:
        print(f"bench.kitchen.hear: {exc}", file=sys.stderr)
        return 2
    def write(result: dict[str, Any]) -> None:
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({"written_by": provenance, **result}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

    from firmware_py.config import load_config

    config = load_config()
    if args.ear:
        config = config.model_copy(update={"asr": config.asr.model_copy(update={"model_en": args.ear, "model_ko": args.ear})})
    result = run(args.suite, conditions, front_ends, room, args.seed, args.limit, config=config, each=write,
                 array=array, array_front_ends=array_ends)
    print(render(result))
    if args.out is not None:
        write(result)
        draw(result, args.out.with_suffix(".png"))
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
