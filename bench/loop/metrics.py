"""Figures of one turn, read off its timeline on the listener's side, and their aggregates."""

from __future__ import annotations

import statistics
from typing import Any

from agent.timeline import Timeline

# Per-turn figures that are aggregated (median, p90) and compared across ablations.
LATENCY_KEYS = (
    "endpoint_s",
    "first_audio_s",
    "first_answer_audio_s",
    "final_transcript_s",
    "release_first_audio_s",
    "release_final_transcript_s",
    "first_token_s",
    "pretool_gap_s",
    "last_audio_s",
    "pause_heard_s",
    "partial_lag_s",
    "prompt_tokens_after_speech",
    "cpu_s",
    "first_useful_audio_s",
    "reasoner_ttft_s",
)
QUALITY_KEYS = ("transcript_error", "dropped_words", "asr_rtf", "tts_rtf")


def first_answer_audio(tl: Timeline) -> float | None:
    """When the first audio of the actual answer was heard: not a filler, a pre-tool line or the
    talker's holding line while the reasoner works.

    Such units carry ``kind="pretool"``, ``"filler"`` or ``"holding"`` on their ``tts_start``
    mark; the answer is the first unit without such a kind.
    """
    kinds = {m.detail.get("unit"): m.detail.get("kind") for m in tl.all("tts_start")}
    for mark in tl.all("unit_audio_out"):
        if kinds.get(mark.detail.get("unit")) not in ("pretool", "filler", "holding"):
            return mark.t
    return None


def delegation_figures(tl: Timeline) -> dict[str, Any]:
    """Where a turn the reasoner answered spent its time, on the listener's side.

    ``routing_s``: final transcript → the route (the talker's decision included when it decided
    first); ``reasoner_ttft_s``: delegation → the reasoner's first token (its prompt);
    ``inference_s``: first token → its last; ``tool_s``: its tool round trips; ``handback_s``: its
    first token (or last call's end) → the first audio of the answer; ``first_useful_audio_s``:
    end of speech → the first audio that carries the answer's content. None on talker turns.
    """
    route = tl.first("route")
    if route is None:
        return {"routed": None, "routing_s": None, "reasoner_ttft_s": None, "inference_s": None, "tool_s": None,
                "handback_s": None, "first_useful_audio_s": None, "reasoner_capped": None}
    end, answer = tl.last("speech_end"), first_answer_audio(tl)
    start, first, done = tl.first("reasoner_start"), tl.first("reasoner_first_token"), tl.first("reasoner_end")
    tools = sum(e.t - s.t for s, e in zip(tl.all("tool_start"), tl.all("tool_end")) if e.t >= route.t)
    ends = [m.t for m in tl.all("tool_end") if m.t >= route.t]
    produced = first.t if first is not None else (ends[-1] if ends else None)
    return {
        "routed": route.detail.get("reason"),
        "routing_s": tl.between("final_transcript", "route"),
        "reasoner_ttft_s": round(first.t - start.t, 4) if first is not None and start is not None else None,
        "inference_s": round(done.t - first.t, 4) if done is not None and first is not None else None,
        "tool_s": round(tools, 4) if ends else None,
        "handback_s": round(answer - produced, 4) if answer is not None and produced is not None else None,
        "first_useful_audio_s": round(answer - end.t, 4) if answer is not None and end is not None else None,
        "reasoner_capped": tl.first("reasoner_capped") is not None,
    }


def pretool_figures(tl: Timeline) -> dict[str, float | bool | None]:
    """How the line before a slow tool landed: heard before the tool finished, and how soon.

    ``pretool_in_time`` is None on turns without a slow tool, and on those answered from an early
    look-up already back (no wait, no line); ``pretool_gap_s`` runs from the
    model's tool decision to the line's first audio out of the speaker.
    """
    chosen = next((m for m in tl.all("tool_chosen") if m.detail.get("slow")), None)
    if chosen is None:
        return {"slow_tool": False, "pretool_in_time": None, "pretool_gap_s": None, "tool_s": None}
    reused = tl.first("heartbeat_reused")
    if reused is not None and not reused.detail.get("waited"):
        # Answered from an early look-up already back: no wait, so rightly no line to be in time.
        return {"slow_tool": True, "pretool_in_time": None, "pretool_gap_s": None, "tool_s": None}
    start, end = tl.first("tool_start"), tl.first("tool_end")
    kinds = {m.detail.get("unit"): m.detail.get("kind") for m in tl.all("tts_start")}
    heard = next((m.t for m in tl.all("unit_audio_out") if kinds.get(m.detail.get("unit")) == "pretool"), None)
    finished = end.t if end is not None else None
    return {
        "slow_tool": True,
        "pretool_in_time": heard is not None and (finished is None or heard < finished),
        "pretool_gap_s": round(heard - chosen.t, 4) if heard is not None else None,
        "tool_s": round(end.t - start.t, 4) if start is not None and end is not None else None,
    }


def cadence_figures(tl: Timeline) -> dict[str, float | int | None]:
    """How the reply was paced, as heard: its units, and the silence between their voices.

    ``pause_heard_s`` is the mean silence between one unit's voice and the next: the gap from one
    unit's last sample to the next one's first on the speaker's clock (a pause Cadence wrote, or a
    wait for the model or a tool), plus the quiet the voice itself leaves at those edges (noted on
    the ``pause`` mark).
    """
    heard = {m.detail.get("unit"): m.t for m in tl.all("unit_audio_out")}
    lengths = {m.detail.get("unit"): m.detail.get("audio_s") or 0.0 for m in tl.all("tts_end")}
    edges = {m.detail.get("unit"): m.detail.get("voice_edges_s") or 0.0 for m in tl.all("pause")}
    units = sorted(u for u in heard if u is not None)
    gaps = [heard[b] - (heard[a] + lengths.get(a, 0.0)) + edges.get(b, 0.0) for a, b in zip(units, units[1:])]
    return {"units": len(units), "pause_heard_s": round(statistics.mean(gaps), 4) if gaps else None}


def turn_figures(tl: Timeline) -> dict[str, float | str | None]:
    """Latency and real-time-factor figures of one turn."""
    end = tl.last("speech_end")
    answer = first_answer_audio(tl)
    tts = []
    durations = {m.detail.get("unit"): (m.t, m.detail.get("audio_s") or 0.0) for m in tl.all("tts_end")}
    for start in tl.all("tts_start"):
        finished, audio_s = durations.get(start.detail.get("unit"), (None, 0.0))
        if finished is not None and audio_s > 0:
            tts.append((finished - start.t) / audio_s)
    endpoint = tl.last("endpoint")  # after a resumed utterance, the end that held
    return {
        "resumed": tl.first("listening_resumed") is not None,
        "endpoint_s": tl.between("speech_end", "endpoint"),
        "endpoint_audio_s": endpoint.detail.get("audio_s") if endpoint is not None else None,
        "ended_by": endpoint.detail.get("by") if endpoint is not None else None,
        "first_audio_s": tl.between("speech_end", "first_audio_out"),
        "first_answer_audio_s": round(answer - end.t, 4) if answer is not None and end is not None else None,
        "final_transcript_s": tl.between("speech_end", "final_transcript"),
        # A held press: its release ends the utterance exactly, and the listener counts from there.
        "release_first_audio_s": tl.between("released", "first_audio_out"),
        "release_final_transcript_s": tl.between("released", "final_transcript"),
        "first_token_s": tl.between("speech_end", "first_token"),
        "last_audio_s": tl.between("speech_end", "last_audio_out"),
        "tts_rtf": round(statistics.mean(tts), 4) if tts else None,
    }


def heartbeat_figures(tl: Timeline, acting: set[str]) -> dict[str, Any]:
    """What the Heartbeat did in one turn, and what it cost.

    ``partial_lag_s``: the median time from the end of the audio a partial transcript covers to
    the partial itself (up to the listener's constant preroll); the Thinker's share of it is the
    difference from a run without it.  ``prompt_tokens_after_speech``: prompt tokens the answer's
    decision evaluated (0 when the Thinker had decided on the final words already).
    """
    start = tl.first("speech_start")
    lags = [m.t - start.t - float(m.detail.get("audio_s") or 0.0) for m in tl.all("partial_transcript")] if start else []
    prompt = tl.last("decision_prompt")
    reused = tl.first("heartbeat_reused")
    calls = tl.all("heartbeat_fetch_start")
    if tl.first("heartbeat_decision_reused") is not None:
        after_speech: int | None = 0
    else:
        after_speech = int(prompt.detail["evaluated"]) if prompt is not None and "evaluated" in prompt.detail else None
    return {
        "thinker_calls": len(tl.all("heartbeat_think_start")),
        "thinker_cancelled": sum(1 for m in tl.all("heartbeat_think_end") if m.detail.get("cancelled")),
        "speculative_calls": len(calls),
        "speculative_reused": reused is not None,
        "speculative_waited": bool(reused is not None and reused.detail.get("waited")),
        "speculative_discarded": len(calls) - (1 if reused is not None else 0),
        "speculative_side_effects": sum(1 for m in calls if m.detail.get("tool") in acting),
        "decision_reused": tl.first("heartbeat_decision_reused") is not None,
        # The first unit heard was one made ahead while the turn waited (agent.speaking.foresight).
        "voice_ready": _first_unit_made_ahead(tl),
        "prompt_tokens_after_speech": after_speech,
        "partial_lag_s": round(statistics.median(lags), 4) if lags else None,
    }


def _first_unit_made_ahead(tl: Timeline) -> bool:
    first = tl.first("tts_start")
    ahead = {m.detail.get("text") for m in tl.all("voice_ahead")}
    return first is not None and first.detail.get("text") in ahead


def asr_rtf(tl: Timeline, decode_s: float | None) -> float | None:
    """The final decode's time over the utterance's length (from its start to its last end)."""
    start, end = tl.first("speech_start"), tl.last("speech_end")
    if not decode_s or start is None or end is None or end.t <= start.t:
        return None
    return round(decode_s / (end.t - start.t), 4)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo), 4)


def aggregate(rows: list[dict[str, Any]], key: str) -> dict[str, float | int | None]:
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return {
        "median": percentile(values, 0.5),
        "p90": percentile(values, 0.9),
        "mean": round(statistics.mean(values), 4) if values else None,
        "n": len(values),
    }


def share(rows: list[dict[str, Any]], key: str) -> dict[str, float | int | None]:
    """Share of rows where ``key`` is true, among rows where it was scored."""
    scored = [r[key] for r in rows if isinstance(r.get(key), bool)]
    return {"share": round(sum(scored) / len(scored), 4) if scored else None, "n": len(scored)}


def ratio(variant: float | None, baseline: float | None) -> float | None:
    if variant is None or baseline is None or baseline == 0:
        return None
    return round(variant / baseline, 3)
