"""``hearth bench --kitchen``: the whole loop hearing a suite in a kitchen, condition beside condition.

The runner (:mod:`bench.loop.runner`) plays each scenario under every condition back to back, the
order alternating from one scenario to the next as it does for ablations.  This module makes the
takes before any timing starts, plays one (the take holds the kitchen's sound after the request,
so the microphone gets noise, not zeros, for the trailing seconds), reads the turn's latency from
the clean request's real end of speech rather than from where the voice detector found it in the
noise, and gathers the figures per condition for ``report.md`` and the picture.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent.assistant import Assistant
from agent.results import TurnResult
from agent.timeline import Mark, Timeline
from audio.array import ArrayGeometry
from audio.array_microphone import BeamformedMicrophone, WavFileArray
from audio.beamformer import make_front_end
from audio.wav import WavFileMicrophone, read_wav, read_wav_channels
from bench.kitchen.mix import Condition, KitchenTake, kitchen_take
from bench.kitchen.rooms import RoomPreset
from bench.loop.hearing import HeardReference
from bench.loop.metrics import delegation_figures, turn_figures
from firmware_py.demo import press_and_play

log = logging.getLogger(__name__)

RATE = 16000


def prepare_takes(
    audio: dict[str, Path | Exception], conditions: tuple[Condition, ...], room: RoomPreset, seed: int, cache_dir: Path,
    array: ArrayGeometry | None = None,
) -> dict[tuple[str, str], KitchenTake | Exception]:
    """Every turn's take under every condition (made and cached now, before any timing); with
    ``array``, the array's capture."""
    takes: dict[tuple[str, str], KitchenTake | Exception] = {}
    for key, path in audio.items():
        for condition in conditions:
            if isinstance(path, Exception):
                takes[key, condition.name] = path
                continue
            try:
                takes[key, condition.name] = kitchen_take(path, condition, room, seed, cache_dir, array=array)
            except Exception as exc:  # noqa: BLE001 - recorded against the turn when it runs
                log.error("no %s take of %s: %s", condition.name, key, exc)
                takes[key, condition.name] = exc
    return takes


async def play_take(
    assistant: Assistant, take: KitchenTake, hold: bool = False, array: ArrayGeometry | None = None, front_end: str | None = None,
) -> tuple[TurnResult, float | None, float | None]:
    """Play a take into ``assistant``, tapped, or with ``hold`` the button held until its words end
    (the take's end, for noise alone); the result, the real end of speech on the turn's timeline
    (None for noise alone), and the CPU seconds the array's front end took (None without one).

    An array's take is heard as the device hears it: the front end hears the kitchen before the
    press (the take's first ``before_s``, as fast as it can), is told of the press, then the rest
    plays in real time."""
    front_cpu_s = None
    if array is not None and front_end is not None:
        samples, _ = read_wav_channels(take.path)
        before = int(round(take.before_s * RATE))
        source = WavFileArray(samples[before:], RATE)
        mic: Any = BeamformedMicrophone(source, array, make_front_end(front_end, array.count))
        mic.listen_before(samples[:before])
        mic.turn_began()
        duration = (len(samples) - before) / RATE
    else:
        audio = read_wav(take.path, RATE)
        mic = WavFileMicrophone(audio)  # the take carries its own trailing sound
        duration = audio.duration
    released = None
    if hold:
        released = take.speech_end_s if take.speech_end_s is not None else duration
    result = await press_and_play(assistant, mic, released)
    if isinstance(mic, BeamformedMicrophone):
        front_cpu_s = mic.front_end_s
    if take.speech_end_s is None or mic.started_at is None:
        return result, None, front_cpu_s
    return result, mic.started_at + take.speech_end_s - result.timeline.origin, front_cpu_s


def moved_reference(reference: HeardReference | None, take: KitchenTake) -> HeardReference | None:
    """The clean recording's reference, its end of speech where it falls in the take."""
    if reference is None or not take.condition.speech:
        return None
    return replace(reference, speech_end_s=round(reference.speech_end_s + take.delay_s, 3))


def from_real_end(tl: Timeline, true_end_t: float) -> dict[str, Any]:
    """A turn's latency counted from the real end of speech (``true_end_t`` on its timeline).

    ``endpoint_s`` may be negative (listening ended before the user finished);
    ``vad_end_offset_s`` is where the voice detector put the last end of speech, against the real one.
    """
    real = Timeline(origin=tl.origin)
    real.marks = sorted([m for m in tl.marks if m.name != "speech_end"] + [Mark("speech_end", round(true_end_t, 4))],
                        key=lambda m: m.t)
    figures = {key: value for key, value in turn_figures(real).items()
               if key in ("first_audio_s", "first_answer_audio_s", "final_transcript_s", "first_token_s", "last_audio_s")}
    figures["first_useful_audio_s"] = delegation_figures(real)["first_useful_audio_s"]
    endpoint, detected = tl.last("endpoint"), tl.last("speech_end")
    figures["endpoint_s"] = round(endpoint.t - true_end_t, 4) if endpoint is not None else None
    figures["vad_end_offset_s"] = round(detected.t - true_end_t, 4) if detected is not None else None
    return figures


# -- per condition ------------------------------------------------------------------------------------

def condition_figures(stats: dict[str, Any], condition: Condition, front_end: str | None = None) -> dict[str, Any]:
    """The figures a condition is judged by, from its arm's aggregate (``front_end``: the array's)."""
    def med(key: str) -> Any:
        return (stats.get(key) or {}).get("median")

    figures = {
        "condition": condition.name,
        "front_end": front_end,
        "front_end_cpu_s": med("front_end_cpu_s"),
        "noise": condition.noise,
        "snr_db": condition.snr_db,
        "room": condition.room,
        "speech": condition.speech,
        "turns": stats.get("turns"),
        "turns_started": stats.get("turns_started"),
        "acts": stats.get("acting_turns"),
        "acting_without_request": stats.get("acting_without_request"),
        "wrong_acts": stats.get("wrong_acts"),
        "incomplete_acts": stats.get("incomplete_acts"),
        "ears_disagree_turns": stats.get("ears_disagree_turns"),
        "ears_asked_needlessly": stats.get("ears_asked_needlessly"),
    }
    if condition.speech:
        figures |= {
            "transcript_error": (stats.get("transcript_error") or {}).get("mean"),
            "tool_accuracy": (stats.get("tool_accuracy") or {}).get("share"),
            "tool_args_accuracy": (stats.get("tool_args_accuracy") or {}).get("share"),
            "first_audio_s": med("first_audio_s"),
            "first_audio_s_p90": (stats.get("first_audio_s") or {}).get("p90"),
            "endpoint_s": med("endpoint_s"),
            "vad_end_offset_s": med("vad_end_offset_s"),
            "dropped_tail_turns": stats.get("dropped_tail_turns"),
            "cut_off_turns": stats.get("cut_off_turns"),
        }
    else:
        figures["heard_words"] = stats.get("heard_words")
    return figures


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(value: Any, unit: str = "") -> str:
    if value is None:
        return "–"
    return f"{value:.2f}{unit}" if isinstance(value, float) else f"{value}{unit}"


ROWS = (
    ("transcript error (WER en / CER ko), mean", "transcript_error", _pct),
    ("right tool", "tool_accuracy", _pct),
    ("right tool and arguments", "tool_args_accuracy", _pct),
    ("acts nobody asked for (turns)", "acting_without_request", _num),
    ("acts on arguments not asked for (`wrong_acts`, turns)", "wrong_acts", _num),
    ("right acts that left out something said (`incomplete_acts`, turns)", "incomplete_acts", _num),
    ("real end of speech → first audio, median (s)", "first_audio_s", _num),
    ("… p90 (s)", "first_audio_s_p90", _num),
    ("real end of speech → end of listening, median (s)", "endpoint_s", _num),
    ("the detector's end of speech − the real one, median (s)", "vad_end_offset_s", _num),
    ("turns that lost a word at the end", "dropped_tail_turns", _num),
    ("turns cut off before the user finished", "cut_off_turns", _num),
    ("the array's front end, CPU s per turn, median", "front_end_cpu_s", _num),
    ("acts asked back because the two ears differed (turns)", "ears_disagree_turns", _num),
    ("… of them the very act asked for (needlessly)", "ears_asked_needlessly", _num),
)
NOISE_ONLY_ROWS = (
    ("presses", "turns", _num),
    ("turns started (the loop heard speech)", "turns_started", _num),
    ("turns with words heard", "heard_words", _num),
    ("turns that acted", "acts", _num),
)


def render_kitchen(kitchen: dict[str, Any]) -> str:
    """``report.md``'s kitchen section: a table per condition, clean beside it, and the picture."""
    conditions = kitchen["conditions"]
    lines = ["## The kitchen", "", f"Room `{kitchen['room']}` ({kitchen['room_what']}), seed {kitchen['seed']}; "
             "latency counts from the clean request's real end of speech.", ""]
    if kitchen.get("array"):
        array = kitchen["array"]
        lines += [f"Heard by the array `{array['name']}` ({array['what'] or str(len(array['mics'])) + ' microphones'}); "
                  "each condition's column names the front end.", ""]
    if kitchen.get("picture"):
        lines += [f"![accuracy against SNR]({kitchen['picture']})", ""]
    cleans = [name for name, f in conditions.items() if f["condition"] == "clean"]
    for name, figures in conditions.items():
        if figures["condition"] == "clean" and len(conditions) > len(cleans):
            continue
        clean = conditions.get(" ".join(["clean", *([figures["front_end"]] if figures.get("front_end") else [])]))
        rows = ROWS if figures["speech"] else NOISE_ONLY_ROWS
        beside = clean is not None and name != "clean" and figures["speech"]  # noise alone has no request to compare
        lines += [f"### `{name}`", "", "| figure | " + ("`clean` | " if beside else "") + f"`{name}` |",
                  "| --- | " + ("--- | " if beside else "") + "--- |"]
        for label, key, show in rows:
            cells = ([show(clean.get(key))] if beside and clean is not None else []) + [show(figures.get(key))]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def snr_series(conditions: dict[str, dict[str, Any]], key: str) -> tuple[dict[str, list[tuple[float, float]]], dict[str, float]]:
    """``key`` against SNR per kind of sound, and the rooms without sound (``clean``, ``room``) as references."""
    series: dict[str, list[tuple[float, float]]] = {}
    refs: dict[str, float] = {}
    for name, figures in conditions.items():
        value = figures.get(key)
        if value is None or not figures.get("speech", True):
            continue
        front = f" ({figures['front_end']})" if figures.get("front_end") else ""
        if figures.get("noise") is None:
            refs[name] = 100 * value
        else:
            series.setdefault(figures["noise"] + front, []).append((figures["snr_db"], 100 * value))
    return {kind: sorted(points) for kind, points in series.items()}, refs


def draw_accuracy(conditions: dict[str, dict[str, Any]], path: Path, title: str) -> bool:
    """The picture: right tool and arguments, and the transcript error, against SNR per kind of sound."""
    from bench.kitchen.picture import draw_against_snr

    panels = [("right tool and arguments (%)", *snr_series(conditions, "tool_args_accuracy")),
              ("transcript error, mean (%)", *snr_series(conditions, "transcript_error"))]
    return draw_against_snr(panels, path, title)
