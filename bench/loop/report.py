"""``report.md``: the figures of a benchmark run as tables, ablations side by side."""

from __future__ import annotations

from typing import Any

from bench.loop.metrics import LATENCY_KEYS, QUALITY_KEYS

LABELS = {
    "endpoint_s": "end of speech → end of listening (s)",
    "dropped_words": "words of the full-window reference missing from the transcript",
    "first_audio_s": "end of speech → first audio (s)",
    "first_answer_audio_s": "end of speech → first answer audio (s)",
    "final_transcript_s": "end of speech → final transcript (s)",
    "release_first_audio_s": "held press: release → first audio (s)",
    "release_final_transcript_s": "held press: release → final transcript (s)",
    "first_token_s": "end of speech → first LLM token (s)",
    "pretool_gap_s": "tool decision → pre-tool line's first audio (s)",
    "last_audio_s": "end of speech → end of the reply (s)",
    "pause_heard_s": "silence heard between units, mean per reply (s)",
    "slow_tool_first_audio_s": "slow-tool turns: end of speech → first audio (s)",
    "pretool_coverage": "slow-tool turns whose line was heard before the tool finished",
    "transcript_error": "transcript error (WER en / CER ko)",
    "asr_rtf": "ASR real-time factor",
    "tts_rtf": "TTS real-time factor",
    "tool_accuracy": "right tool",
    "answer_accuracy": "knowledge questions answered with the fact",
    "tool_args_accuracy": "right tool and arguments",
    "tool_accuracy_tool_turns": "right tool, on turns that need one",
    "no_tool_accuracy": "no tool called, on turns that need none",
    "partial_lag_s": "end of a partial's audio → the partial (s)",
    "first_useful_audio_s": "reasoner turns: end of speech → first audio of the answer (s)",
    "reasoner_ttft_s": "reasoner turns: delegation → the reasoner's first token (s)",
    "cpu_s": "CPU time of the turn, all threads (s)",
    "prompt_tokens_after_speech": "prompt tokens evaluated after the end of speech",
    "tool_turn_first_answer_audio_s": "tool turns: end of speech → first answer audio (s)",
    "stc": "tool turns answered from an early look-up",
    "stc_speculable": "… of those whose tool may run early",
    "stc_decided": "tool turns whose right call was decided on the partials (the answer took it)",
    "sure_ends": "early ends answered after the short wait (a sure end)",
    "voice_ready": "answered turns whose first words were made into audio ahead",
}


def _num(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _pct(stats: dict[str, Any]) -> str:
    if stats.get("share") is None:
        return "–"
    return f"{100 * stats['share']:.0f} % (n={stats['n']})"


def render_report(report: dict[str, Any]) -> str:
    variants = list(report["variants"])
    lines = [
        f"# hearth bench: `{report['suite']}` ({report['language']})",
        "",
        f"- audio: **{report['audio']}**",
        f"- commit `{report['git_commit'][:12]}`, {report['machine']['platform']}",
        f"- rounds: {report['rounds']}; start-up {report['startup_s']} s; peak RSS {report['peak_rss_mb']} MB",
        "- turns: " + ", ".join(f"{v} {report['variants'][v]['turns']} ({report['variants'][v]['failures']} failed)" for v in variants),
        "",
        "## Latency and quality (median, p90 in brackets)",
        "",
        "| figure | " + " | ".join(variants) + " |",
        "| --- | " + " | ".join("---" for _ in variants) + " |",
    ]
    for key in LATENCY_KEYS + QUALITY_KEYS:
        cells = []
        for v in variants:
            stats = report["variants"][v][key]
            cell = f"{_num(stats['median'])} ({_num(stats['p90'])})"
            r = report["ratios_vs_baseline"].get(v, {}).get(key)
            if r is not None:
                cell += f" ×{r:.2f}"
            cells.append(cell)
        lines.append(f"| {LABELS[key]} | " + " | ".join(cells) + " |")
    lines += ["", "## Tool calls", "", "| figure | " + " | ".join(variants) + " |", "| --- | " + " | ".join("---" for _ in variants) + " |"]
    for key in ("tool_accuracy", "tool_args_accuracy", "tool_accuracy_tool_turns", "no_tool_accuracy", "pretool_coverage", "answer_accuracy"):
        lines.append(f"| {LABELS[key]} | " + " | ".join(_pct(report["variants"][v].get(key, {})) for v in variants) + " |")
    lines.append("| acts nobody asked for (turns) | " + " | ".join(_num(report["variants"][v].get("acting_without_request")) for v in variants) + " |")
    lines.append("| replies with the talker's free text (turns) | " + " | ".join(_num(report["variants"][v].get("talker_replies")) for v in variants) + " |")
    lines.append("| acts on arguments not asked for (turns) | " + " | ".join(_num(report["variants"][v].get("wrong_acts")) for v in variants) + " |")
    lines.append("| right acts that left out something said (turns) | "
                 + " | ".join(_num(report["variants"][v].get("incomplete_acts")) for v in variants) + " |")
    lines += ["", "## Heartbeat", "", "| figure | " + " | ".join(variants) + " |", "| --- | " + " | ".join("---" for _ in variants) + " |"]
    for key in ("stc", "stc_speculable", "stc_decided", "sure_ends", "voice_ready"):
        lines.append(f"| {LABELS[key]} | " + " | ".join(_pct(report["variants"][v].get(key) or {}) for v in variants) + " |")
    key = "tool_turn_first_answer_audio_s"
    lines.append(f"| {LABELS[key]} | " + " | ".join(_num((report["variants"][v].get(key) or {}).get("median")) for v in variants) + " |")
    for key, label in (("thinker_calls", "decisions on partials per turn, mean"), ("thinker_cancelled", "… cut short at the handoff"),
                       ("speculative_discarded", "early look-ups not used, per turn")):
        lines.append(f"| {label} | " + " | ".join(_num((report["variants"][v].get(key) or {}).get("mean")) for v in variants) + " |")
    lines.append("| acting tools run early (all turns) | " + " | ".join(_num(report["variants"][v].get("speculative_side_effects")) for v in variants) + " |")
    steps = {v: report["variants"][v]["first_audio_steps"] for v in variants if report["variants"][v].get("first_audio_steps")}
    if steps:
        from bench.loop.first_audio_steps import table

        lines += ["", "## First audio, step by step", "", "Means per step (s), which add up to the mean first audio; see `bench/loop/first_audio_steps.py`.", ""]
        lines += table(steps)
        if report.get("first_audio_picture"):
            lines += ["", f"![where the time to first audio goes]({report['first_audio_picture']})"]
    lines += ["", "## Hearing", "", "| figure | " + " | ".join(variants) + " |", "| --- | " + " | ".join("---" for _ in variants) + " |"]
    for key, label in (("dropped_tail_turns", "turns that lost a word at the end"), ("cut_off_turns", "turns cut off before the user finished"),
                       ("cut_off_turns_with_pauses", "… of them with a hesitation in the request"), ("pause_turns", "turns with a hesitation"),
                       ("resumed_turns", "turns where the user went on after an early end (heard whole)")):
        lines.append(f"| {label} | " + " | ".join(_num(report["variants"][v].get(key)) for v in variants) + " |")
    key = "slow_tool_first_audio_s"
    cells = [report["variants"][v].get(key) or {} for v in variants]
    lines.append(f"| {LABELS[key]} | " + " | ".join(f"{_num(c.get('median'))} ({_num(c.get('p90'))})" for c in cells) + " |")
    if len(variants) > 1:
        lines += [
            "",
            "Ratios (×) are variant median / baseline median, from runs interleaved scenario by scenario.",
        ]
    if report.get("kitchen"):
        from bench.kitchen.loop import render_kitchen

        lines += ["", render_kitchen(report["kitchen"]).rstrip()]
    failures = [r for r in report["scenarios"] if "error" in r]
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- `{r['scenario']}` [{r['variant']}]: {r['error']}" for r in failures]
    lines += ["", "## Turns", "", "| scenario | variant | heard | end of listening (s) | first audio (s) | tool |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in report["scenarios"]:
        if "error" in r:
            continue
        tool = "✓" if r.get("right_args") else ("tool ✓" if r.get("right_tool") else "✗")
        heard = r["transcript"].replace("|", "/")
        flags = (" (cut off)" if r.get("cut_off") else "") + (" (lost its end)" if r.get("dropped_tail") else "")
        lines.append(f"| {r['scenario']}{'#' + str(r['turn']) if r['turn'] else ''} | {r['variant']} | {heard}{flags} | "
                     f"{_num(r.get('endpoint_s'))} | {_num(r.get('first_audio_s'))} | {tool} |")
    return "\n".join(lines) + "\n"
