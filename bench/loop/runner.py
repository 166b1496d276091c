"""``hearth bench``: play a scenario suite through the whole loop and measure what a listener gets.

Every scenario is played in real time into the real models (a WAV microphone,
a clocked WAV speaker) and scored.  With ``--ablate FEATURE`` each scenario is
also run with that feature off, right after (and, every other scenario, right
before) the baseline, so that with/without figures come from the same
minutes of the same machine; the report gives their ratios.

With ``--kitchen COND …`` each scenario is played under every kitchen condition
(:mod:`bench.kitchen`) back to back in the same way, and the report gives a table per condition.

Writes ``DIR/metrics.json``, ``DIR/timelines/<scenario>.{json,png,html}`` and
``DIR/report.md``.  A scenario that fails is recorded and the run goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import platform
import resource
import shutil
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent.assistant import Assistant
from agent.features import Features
from agent.results import TurnResult
from agent.speaking.reply import SOURCES
from audio.wav import WavFileSpeaker, read_wav
from bench.loop.hearing import HeardReference, ReferenceDecoder, hearing_figures
from bench.loop.household import HouseholdState
from bench.loop.first_audio_steps import draw as draw_steps
from bench.loop.first_audio_steps import first_audio_steps, turn_kind
from bench.loop.first_audio_steps import summarize as summarize_steps
from bench.loop.metrics import (
    LATENCY_KEYS, QUALITY_KEYS, aggregate, asr_rtf, cadence_figures, delegation_figures, heartbeat_figures, pretool_figures, ratio, share, turn_figures,
)
from bench.provenance import written_by
from bench.suites.answers import answer_right
from firmware_py.config import HearthConfig
from firmware_py.demo import play_request
from firmware_py.home_tools import HomeTools
from firmware_py.wiring import asr_model, build_turn_deps, close_turn_deps, model_store

log = logging.getLogger(__name__)

BASELINE = "baseline"


@dataclass(frozen=True)
class BenchSettings:
    """What to run and where to write it."""

    suite: str
    """A suite name (``bench/suites/<name>.yaml``, or ``ha-en`` / ``ha-ko``) or a YAML path."""
    out: Path
    """Output directory."""
    ablate: tuple[str, ...] = ()
    """Features to switch off, one variant each (names as in ``agent.features.FEATURES``)."""
    limit: int | None = None
    """Run only the first N scenarios."""
    categories: tuple[str, ...] = ()
    """Run only scenarios of these categories (``recipe``, ``weather``, …); empty runs all."""
    rounds: int = 1
    """How many times to play each scenario."""
    pictures: bool = True
    """Render each timeline as PNG and HTML (after all runs, so drawing never competes with them)."""
    progress: bool = True
    """Show a progress bar on stderr."""
    kitchen: tuple[Any, ...] = ()
    """Kitchen conditions (:class:`bench.kitchen.mix.Condition`, see :func:`parse_kitchen`) to play
    every scenario under; empty plays the requests as they are."""
    room: str = "kitchen-a"
    """The kitchen's room preset (:data:`bench.kitchen.rooms.PRESETS`)."""
    seed: int = 0
    """Seeds the kitchen's sounds."""
    array: str | None = None
    """A microphone array (a board's name or a ``.toml`` geometry, :mod:`audio.array`): each kitchen
    take is rendered as its N-channel capture, the kitchen heard for a while before the press."""
    array_front_ends: tuple[str, ...] = ("mvdr",)
    """With ``array``, the front ends (:data:`audio.beamformer.FRONT_ENDS`) each take is heard
    through, an arm each, interleaved: ``first`` is the array's first microphone alone."""
    presses: tuple[str, ...] = ("tap",)
    """How the button is pressed, an arm each, interleaved: ``tap`` (pressed and let go before the
    words; the voice detector ends the utterance) or ``hold`` (held through the words and released
    as they end, where the recording's voice detector ends its last speech)."""
    text: bool = False
    """Give each request as its words (a text turn, as Home Assistant's ``handle`` does) instead of
    playing it: what the decision and the tools make of the words, the ear left out."""
    module: str = "bench.loop.runner"
    """What ran the suite, for the report's ``written_by`` (``hearth bench`` is ``firmware_py.cli``)."""
    arguments: tuple[str, ...] | None = None
    """Its arguments, for the report's ``written_by`` (default: this process's)."""


def parse_kitchen(names: list[str], room: str) -> tuple[Any, ...]:
    """``--kitchen``'s conditions, checked with ``--room``'s preset; ValueError with a one-line
    message for a bad name."""
    from bench.kitchen.mix import parse_conditions
    from bench.kitchen.rooms import room_preset

    room_preset(room)
    return parse_conditions(names)


@dataclass(frozen=True)
class Arm:
    """One way each scenario is played: a variant of the features, under a kitchen condition or none."""

    name: str
    """The row's ``variant`` and the report's column."""
    features: str
    """The variant of the features (a key of ``SuiteRun.variants``)."""
    condition: Any = field(default=None)
    """The kitchen condition (:class:`bench.kitchen.mix.Condition`), or None."""
    press: str = "tap"
    """``tap`` or ``hold`` (:attr:`BenchSettings.presses`)."""
    front_end: str | None = None
    """With an array, its front end (:attr:`BenchSettings.array_front_ends`)."""


def _transcript_error(language: str, reference: str, hypothesis: str) -> float:
    from bench.suites.scoring import char_error_rate, word_error_rate

    return round((char_error_rate if language == "ko" else word_error_rate)(reference, hypothesis), 4)


def _expected_tool(expected: Any) -> str:
    return str(expected["tool"] if isinstance(expected, dict) else expected.tool)


def _score_turn(
    result: TurnResult, expected: list[Any], reference: str, language: str, asr_decode_s: float | None,
    heard: HeardReference | None = None, acting: set[str] | None = None,
) -> dict[str, Any]:
    from bench.suites.scoring import ToolCall, incomplete_acts, score_calls, wrong_acts

    tl = result.timeline
    # What happened: a call asked back ("Cancel the pasta timer?") was not made.
    score = score_calls(expected, [ToolCall(c.name, dict(c.args)) for c in result.tool_calls if c.ran])
    acted = [ToolCall(c.name, dict(c.args)) for c in result.tool_calls if c.acted]
    wrong = wrong_acts(expected, acted)
    incomplete = incomplete_acts(expected, acted)
    timing = turn_figures(tl)
    return {
        "outcome": result.outcome.value,
        "transcript": result.transcript,
        "reply": result.reply,
        # Who wrote each piece of the reply: a template, a tool's result, the reasoner, a repeat, or
        # the talker's free text, which a turn on tools never speaks.
        "reply_sources": sorted({source for source, _text in result.reply_sources}),
        "talker_text": " ".join(text for source, text in result.reply_sources if source == "talker").strip() or None,
        "tool_calls": [{"name": c.name, "args": c.args, "ran": c.ran, "acted": c.acted} for c in result.tool_calls],
        # An act (a timer, the list, a note) the user did not ask for: the worst thing a speaker can do.
        "acted_unasked": any(c.acted and c.name not in {_expected_tool(e) for e in expected} for c in result.tool_calls),
        # An act on what the user did not say: a misheard argument, or a tool nobody asked for.
        "wrong_act": bool(wrong),
        "wrong_act_detail": "; ".join(wrong) or None,
        # The right act that left out something said (a timer without its label): not wrong, not whole.
        "incomplete_act": bool(incomplete),
        "incomplete_act_detail": "; ".join(incomplete) or None,
        "acted": any(c.acted for c in result.tool_calls),
        # Asked back because the two ears heard the act's values differently: rightly (the act asked
        # back was not the one asked for) or needlessly (it was).
        "ears_disagree": tl.first("ears_disagree") is not None,
        "ears_asked_needlessly": tl.first("ears_disagree") is not None and bool(expected) and score_calls(
            expected, [ToolCall(c.name, dict(c.args)) for c in result.tool_calls if not c.ran]).right_args,
        "heard_speech": tl.first("speech_start") is not None,
        "right_tool": score.right_tool,
        "right_args": score.right_args,
        "tool_detail": score.detail,
        "uses_tool": bool(expected),
        "transcript_error": _transcript_error(language, reference, result.transcript),
        "asr_rtf": asr_rtf(tl, asr_decode_s),
        **timing,
        **hearing_figures(result.transcript, heard, timing["endpoint_audio_s"], timing["ended_by"], language),
        **pretool_figures(tl),
        **cadence_figures(tl),
        **heartbeat_figures(tl, acting or set()),
        **delegation_figures(tl),
        # A reference call answered from what was fetched while the user spoke (Heartbeat).
        "early_answer": bool(expected) and score.right_args and tl.first("heartbeat_reused") is not None,
        # A reference call the Thinker had decided on the partials, taken by the answer as it was.
        "early_decision": bool(expected) and score.right_args and tl.first("heartbeat_decision_reused") is not None,
        "sure_end": _sure_end(tl),
        "turn_kind": turn_kind([_expected_tool(e) for e in expected], acting or set()),
        "first_audio_steps": first_audio_steps(tl),
    }


async def _text_request(assistant: Assistant, text: str) -> TurnResult:
    """One request given as its words, answered by the same assistant as a text turn."""
    from agent.text_turns import TextTurns

    turn = assistant.start_text_turn(text, lambda _event: None, TextTurns(assistant).deps())
    assert turn.task is not None
    result = await turn.task
    await asyncio.sleep(0)  # the turn's callback records it and frees the assistant
    return result


def _score_home(core: Any, before: dict[str, str], expected: dict[str, str]) -> dict[str, Any]:
    """A home turn scored by Home Assistant's states: right when the expected entities are as
    expected and nothing else changed; unasked when anything changed that was not expected."""
    after = core.home()
    changed = {e: s for e, s in after.items() if s != before.get(e)}
    return {
        "home_expected": expected,
        "home_changed": changed,
        "home_right": after == {**before, **expected},
        "home_unasked": any(e not in expected for e in changed),
    }


def _sure_end(tl: Any) -> bool | None:
    """Whether the answer came after the short wait of a sure end (None: the turn did not end early)."""
    mark = tl.last("answer_after")
    return bool(mark.detail.get("sure")) if mark is not None else None


class SuiteRun:
    """One run of a suite: the assistant, the variants, the rows of figures."""

    def __init__(self, config: HearthConfig, settings: BenchSettings, build: Any = build_turn_deps) -> None:
        self.config = config
        self.settings = settings
        self.build = build  # (config, speaker) -> TurnDeps; tests pass fakes
        self.rows: list[dict[str, Any]] = []
        self.references: dict[str, HeardReference] = {}
        self.timelines: list[tuple[Path, dict[str, Any]]] = []
        self.variants: dict[str, Features] = {BASELINE: Features()}
        for name in settings.ablate:
            self.variants[f"no-{name}"] = Features().without(name)
        self.arms = self._arms()
        self.takes: dict[tuple[str, str], Any] = {}
        self.home: Any = None  # the scratch Home Assistant core of a home suite
        self.provenance = written_by(settings.module, settings.arguments)  # the code as the run starts
        self.array = None
        if settings.array:
            from audio.array import load_geometry

            self.array = load_geometry(settings.array)

    def _arms(self) -> list[Arm]:
        """Every variant, under every kitchen condition when there are any, with every press; a
        press is named only when the run has more than the tap."""
        conditions = self.settings.kitchen
        presses = self.settings.presses
        named = presses != ("tap",)
        fronts: tuple[str | None, ...] = self.settings.array_front_ends if self.settings.array and conditions else (None,)
        arms: list[Arm] = []
        for condition in conditions or (None,):
            for front in fronts:
                for name in self.variants:
                    for press in presses:
                        words = [condition.name] if condition is not None else []
                        if front is not None:
                            words.append(front)
                        if name != BASELINE or not words and not named:
                            words.append(name)
                        if named:
                            words.append(press)
                        arms.append(Arm(" ".join(words), name, condition, press, front))
        return arms

    async def run(self) -> dict[str, Any]:
        from bench.suites.scenarios import load_suite
        from bench.suites.schema import SuiteError

        s = self.settings
        suite = load_suite(s.suite)
        # Timers and lists the scenarios make go to a scratch folder, never the user's own.
        shutil.rmtree(s.out / "tool-data", ignore_errors=True)
        tools = self.config.tools.model_copy(update={"data_dir": s.out / "tool-data"})
        config = self.config.model_copy(update={"language": suite.language, "tools": tools})
        scenarios = [sc for sc in suite.scenarios if not s.categories or sc.category in s.categories]
        if any(sc.kitchen is not None for sc in scenarios):
            raise SuiteError(f"suite {suite.suite} plants data in the kitchen, which only python -m bench.suites.tool_accuracy does")
        scenarios = scenarios[: s.limit] if s.limit else scenarios
        (s.out / "timelines").mkdir(parents=True, exist_ok=True)
        # Audio and references first: the reference model is let go before the loop's models load.
        audio = self._prepare_audio(scenarios, suite.language)
        self.references = self._prepare_references(audio, config)
        if s.kitchen:
            from bench.kitchen.loop import prepare_takes
            from bench.kitchen.rooms import room_preset
            from bench.suites.audio import default_cache_dir

            self.takes = prepare_takes(audio, s.kitchen, room_preset(s.room), s.seed, default_cache_dir(), self.array)
        if suite.home_assistant:
            config = await self._start_home(config)
        try:
            return await self._run_scenarios(suite, config, scenarios, audio)
        finally:
            if self.home is not None:
                from bench.home_assistant.core import remove_core

                remove_core(self.home)
                self.home = None

    async def _start_home(self, config: HearthConfig) -> HearthConfig:
        """A scratch Home Assistant core for a home suite, and hearth's settings pointed at it."""
        from bench.home_assistant.core import start_core

        folder = self.settings.out / "home-assistant"
        shutil.rmtree(folder, ignore_errors=True)
        self.home = await asyncio.to_thread(start_core, folder)  # it runs its own event loop to set up
        token_file = folder / "token"
        token_file.write_text(self.home.token)
        token_file.chmod(0o600)
        ha = config.home_assistant.model_copy(update={"url": self.home.url, "token_file": token_file, "area": "Kitchen"})
        return config.model_copy(update={"home_assistant": ha})

    async def _run_scenarios(self, suite: Any, config: HearthConfig, scenarios: list[Any], audio: dict[str, Path | Exception]) -> dict[str, Any]:
        s = self.settings
        speaker = WavFileSpeaker(config.audio.output_rate)
        started = time.monotonic()
        deps = await self.build(config, speaker)
        assistant = Assistant(deps, history_turns=config.history_turns)
        await assistant.warm()
        startup_s = time.monotonic() - started
        # Every decision prompt head kept before the first scenario, so that no variant keeps one
        # for the others by running first.
        await assistant.keep_heads()

        total = len(scenarios) * len(self.arms) * s.rounds
        bar = _progress(total, s.progress)
        for round_index in range(s.rounds):
            for index, scenario in enumerate(scenarios):
                arms = list(self.arms)
                if index % 2:  # alternate the order so a drifting machine favours no variant or condition
                    arms.reverse()
                home = deps.tools.home if deps.tools is not None else None
                household = HouseholdState.take(home.lists, home.executor) if isinstance(home, HomeTools) and len(arms) > 1 else None
                for arm in arms:
                    if household is not None:
                        household.restore()  # every arm finds what the first found
                    deps.features = self.variants[arm.features]
                    bar.set_postfix_str(f"{scenario.id} [{arm.name}]", refresh=False)
                    await self._run_scenario(assistant, scenario, audio, suite.language, arm, round_index)
                    bar.update(1)
                if household is not None:
                    household.close()
        bar.close()
        await close_turn_deps(deps)
        report = self._summarize(suite, config, startup_s)
        self._write(report)
        return report

    def _prepare_audio(self, scenarios: list[Any], language: str) -> dict[str, Path | Exception]:
        """Resolve (synthesize or fetch) every turn's audio before any timing starts."""
        from bench.suites.audio import scenario_audio
        from bench.suites.scenarios import resolve_audio

        paths: dict[str, Path | Exception] = {}
        for scenario in scenarios:
            try:
                paths[scenario.id] = resolve_audio(scenario) if scenario.audio else scenario_audio(scenario.text, language)
                for n, followup in enumerate(scenario.followups or []):
                    paths[f"{scenario.id}#{n + 1}"] = scenario_audio(followup.text, language)
            except Exception as exc:  # noqa: BLE001 - recorded against the scenario when it runs
                log.error("no audio for %s: %s", scenario.id, exc)
                paths[scenario.id] = exc
        return paths

    def _prepare_references(self, audio: dict[str, Path | Exception], config: HearthConfig) -> dict[str, HeardReference]:
        """Each recording's full-window transcript and end of speech (cached), before any timing."""
        from bench.suites.audio import default_cache_dir

        store = model_store(config)
        model_dir, vad_model = store.path(asr_model(config)), store.path("silero-vad") / "silero_vad.onnx"
        if not ((model_dir / "model.bin").is_file() or (model_dir / "decoder.onnx").is_file()) or not vad_model.is_file():
            log.warning("no recognizer model at %s or no voice detector: dropped words and cut-offs are not scored", model_dir)
            return {}
        decoder = ReferenceDecoder(model_dir, config.language, default_cache_dir(), vad_model)
        try:
            return {key: decoder.reference(path) for key, path in audio.items() if isinstance(path, Path)}
        finally:
            decoder.close()

    async def _run_scenario(
        self, assistant: Assistant, scenario: Any, audio: dict[str, Path | Exception], language: str, arm: Arm, round_index: int
    ) -> None:
        assistant.forget()
        # A scenario is a session of its own, hours after the one before: that one's timers have
        # rung. Left running, twenty of them made every "add a minute to it" ambiguous, as no
        # kitchen is; the list and the notes are kept, as a household's are.
        home = assistant.deps.tools.home if assistant.deps.tools is not None else None
        if isinstance(home, HomeTools):
            home.end_timers()
        # Every variant starts from the same model state (the warm prompt head), so the one that
        # happens to run first does not pay alone for evaluating the scenario's prompt; and no
        # variant finds the same question in the reasoner's cache from the variant before it.
        await assistant.warm()
        if assistant.deps.reasoner is not None:
            assistant.deps.reasoner.forget(cache_only=True)
        turns = [(scenario.id, scenario.said, scenario.expect)]
        turns += [(f"{scenario.id}#{n + 1}", f.said, f.expect) for n, f in enumerate(scenario.followups or [])]
        homes = [scenario.home, *(f.home for f in scenario.followups or [])]
        if self.home is not None:
            await asyncio.to_thread(self.home.reset, scenario.home_before)
        for turn_index, (key, text, expected) in enumerate(turns):
            home_before = await asyncio.to_thread(self.home.home) if self.home is not None else None
            row: dict[str, Any] = {
                "scenario": scenario.id,
                "turn": turn_index,
                "variant": arm.name,
                **({"features": arm.features, "condition": arm.condition.name} if arm.condition is not None else {}),
                "round": round_index,
                "category": scenario.category,
                "synthetic": scenario.synthetic,
                "pause": scenario.has_pause,
                "text": text,
            }
            try:
                path = audio[key]
                if isinstance(path, Exception):
                    raise path
                reasoner = assistant.deps.reasoner
                if reasoner is not None and not assistant.deps.features.prewarm:
                    reasoner.forget()  # cold: no head kept, nothing in its cache
                cpu_before = time.process_time()  # all of hearth's threads, the models' included
                if self.settings.text:
                    result = await _text_request(assistant, text)
                elif arm.condition is None:
                    reference = self.references.get(key)
                    release_s = reference.speech_end_s if reference is not None else None
                    result = await play_request(assistant, read_wav(path, 16000), hold=arm.press == "hold", release_s=release_s)
                else:
                    result = await self._play_kitchen(assistant, key, arm, row, list(expected), text, language)
                row["cpu_s"] = round(time.process_time() - cpu_before, 3)
                if arm.condition is None:
                    decode_s = getattr(assistant.deps.recognizer, "last_decode_s", None)
                    row |= _score_turn(result, list(expected), text, language, decode_s, self.references.get(key), self._tools_that(assistant))
                if scenario.answer is not None and turn_index == 0:
                    # The fact checked in what the listener heard of the answer.
                    row["answer_right"] = answer_right(" ".join(result.spoken), scenario.answer)
                if home_before is not None:
                    row |= await asyncio.to_thread(_score_home, self.home, home_before, homes[turn_index] or {})
                early = self._tools_that(assistant, speculable=True)
                row["speculable_turn"] = bool(expected) and all(_expected_tool(e) in early for e in expected)
                self._keep_timeline(row, result)
            except Exception as exc:  # noqa: BLE001 - one scenario's failure must not end the run
                log.exception("scenario %s failed", key)
                row["error"] = f"{type(exc).__name__}: {exc}"
            self.rows.append(row)
            if "error" in row:
                break

    async def _play_kitchen(
        self, assistant: Assistant, key: str, arm: Arm, row: dict[str, Any], expected: list[Any], text: str, language: str,
    ) -> TurnResult:
        """Play the turn's take under the arm's condition and score it, latency from the real end of speech."""
        from bench.kitchen.loop import from_real_end, moved_reference, play_take

        take = self.takes[key, arm.condition.name]
        if isinstance(take, Exception):
            raise take
        result, true_end, front_cpu_s = await play_take(assistant, take, hold=arm.press == "hold", array=self.array, front_end=arm.front_end)
        decode_s = getattr(assistant.deps.recognizer, "last_decode_s", None)
        speech = arm.condition.speech
        # Noise alone asks for nothing: any tool is wrong, and there are no words to get wrong.
        row |= _score_turn(result, expected if speech else [], text if speech else "", language, decode_s,
                           moved_reference(self.references.get(key), take), self._tools_that(assistant))
        row["speech_end_s"] = take.speech_end_s
        row["clipped"] = take.clipped
        if front_cpu_s is not None:
            row["front_end_cpu_s"] = round(front_cpu_s, 4)
        if true_end is not None:
            row |= from_real_end(result.timeline, true_end)
        if not speech:
            row["transcript_error"] = None
            row["heard_words"] = bool(result.transcript.strip())
        return result

    @staticmethod
    def _tools_that(assistant: Assistant, speculable: bool = False) -> set[str]:
        """The acting tools (or, with ``speculable``, those that may run early) of the loop's registry."""
        tools = assistant.deps.tools
        if tools is None:
            return set()
        return {spec.name for spec in tools.registry.specs if (spec.speculable if speculable else spec.side_effects == "act")}

    def _keep_timeline(self, row: dict[str, Any], result: TurnResult) -> None:
        name = row["scenario"] + (f"-t{row['turn']}" if row["turn"] else "")
        if row["variant"] != BASELINE:
            name += "--" + "".join(ch if ch.isalnum() or ch in "@.-" else "-" for ch in row["variant"])
        if row["round"]:
            name += f"-r{row['round']}"
        data = result.timeline.to_dict() | {
            "transcript": result.transcript,
            "reply": result.reply,
            "outcome": result.outcome.value,
            "variant": row["variant"],
        }
        self.timelines.append((self.settings.out / "timelines" / name, data))

    def _summarize(self, suite: Any, config: HearthConfig, startup_s: float) -> dict[str, Any]:
        by_variant: dict[str, dict[str, Any]] = {}
        for variant in (arm.name for arm in self.arms):
            rows = [r for r in self.rows if r["variant"] == variant and "error" not in r]
            tool_rows = [r for r in rows if r.get("uses_tool")]
            by_variant[variant] = {
                **{key: aggregate(rows, key) for key in LATENCY_KEYS + QUALITY_KEYS},
                "tool_accuracy": share(rows, "right_tool"),
                "tool_args_accuracy": share(rows, "right_args"),
                "answer_accuracy": share(rows, "answer_right"),
                "tool_accuracy_tool_turns": share(tool_rows, "right_tool"),
                "no_tool_accuracy": share([r for r in rows if not r.get("uses_tool")], "right_tool"),
                "pretool_coverage": share([r for r in rows if r.get("slow_tool")], "pretool_in_time"),
                "slow_tool_turns": sum(1 for r in rows if r.get("slow_tool")),
                # With and without the line, what a listener waits through before hearing anything.
                "slow_tool_first_audio_s": aggregate([r for r in rows if r.get("slow_tool")], "first_audio_s"),
                "units": aggregate(rows, "units"),
                "dropped_tail_turns": sum(1 for r in rows if r.get("dropped_tail")),
                "cut_off_turns": sum(1 for r in rows if r.get("cut_off")),
                "acting_without_request": sum(1 for r in rows if r.get("acted_unasked")),
                "talker_replies": sum(1 for r in rows if r.get("talker_text")),
                "reply_sources": {source: sum(1 for r in rows if source in (r.get("reply_sources") or ())) for source in SOURCES},
                # Home suites: the states Home Assistant reports after each turn.
                "home_right": share(rows, "home_right"),
                "home_changed_unasked": sum(1 for r in rows if r.get("home_unasked")),
                "wrong_acts": sum(1 for r in rows if r.get("wrong_act")),
                "incomplete_acts": sum(1 for r in rows if r.get("incomplete_act")),
                "acting_turns": sum(1 for r in rows if r.get("acted")),
                "turns_started": sum(1 for r in rows if r.get("heard_speech")),
                "heard_words": sum(1 for r in rows if r.get("heard_words")),
                "vad_end_offset_s": aggregate(rows, "vad_end_offset_s"),
                "front_end_cpu_s": aggregate(rows, "front_end_cpu_s"),
                "ears_disagree_turns": sum(1 for r in rows if r.get("ears_disagree")),
                "ears_asked_needlessly": sum(1 for r in rows if r.get("ears_asked_needlessly")),
                "resumed_turns": sum(1 for r in rows if r.get("resumed")),
                "cut_off_turns_with_pauses": sum(1 for r in rows if r.get("cut_off") and r.get("pause")),
                "pause_turns": sum(1 for r in rows if r.get("pause")),
                # Heartbeat: reference calls answered from an early result, over all tool turns and
                # over those whose tool may run early at all.
                "stc": share(tool_rows, "early_answer"),
                "stc_speculable": share([r for r in tool_rows if r.get("speculable_turn")], "early_answer"),
                "stc_decided": share(tool_rows, "early_decision"),
                "voice_ready": share([r for r in rows if r.get("first_audio_s") is not None], "voice_ready"),
                "first_audio_steps": summarize_steps(rows),
                "sure_ends": share(rows, "sure_end"),
                "tool_turn_first_answer_audio_s": aggregate(tool_rows, "first_answer_audio_s"),
                "speculative_side_effects": sum(r.get("speculative_side_effects") or 0 for r in rows),
                "thinker_calls": aggregate(rows, "thinker_calls"),
                "thinker_cancelled": aggregate(rows, "thinker_cancelled"),
                "speculative_discarded": aggregate(rows, "speculative_discarded"),
                # Talker and reasoner: the share each answered, and the reasoner's turns' figures.
                "routing": {reason: sum(1 for r in rows if (r.get("routed") or "talker") == reason) for reason in
                            ("talker", "knowledge", "several_acts", "talker_unsure")},
                "reasoner_turns": sum(1 for r in rows if r.get("routed")),
                "reasoner_capped": sum(1 for r in rows if r.get("reasoner_capped")),
                "reasoner_answer_accuracy": share([r for r in rows if r.get("routed")], "answer_right"),
                "reasoner_tool_args_accuracy": share([r for r in rows if r.get("routed") and r.get("uses_tool")], "right_args"),
                **{key: aggregate([r for r in rows if r.get("routed")], key) for key in ("routing_s", "inference_s", "tool_s", "handback_s")},
                "turns": len(rows),
                "failures": sum(1 for r in self.rows if r["variant"] == variant and "error" in r),
            }
        for variant, stats in by_variant.items():
            stats.update(_conversation_cost([r for r in self.rows if r["variant"] == variant and "error" not in r]))
        first = self.arms[0].name  # the baseline, or the first kitchen condition
        base = by_variant[first]
        ratios = {
            variant: {key: ratio(stats[key]["median"], base[key]["median"]) for key in LATENCY_KEYS}
            for variant, stats in by_variant.items()
            if variant != first
        }
        synthetic = sorted({bool(r["synthetic"]) for r in self.rows})
        return {
            "written_by": self.provenance,
            "suite": suite.suite,
            "language": suite.language,
            "audio": "synthetic speech" if synthetic == [True] else ("human recordings" if synthetic == [False] else "mixed"),
            "git_commit": self.provenance["commit"],
            "machine": {"platform": platform.platform(), "processor": platform.machine(), "python": platform.python_version()},
            "config": config.model_dump(mode="json"),
            "ablate": list(self.settings.ablate),
            "rounds": self.settings.rounds,
            "startup_s": round(startup_s, 3),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "variants": by_variant,
            "ratios_vs_baseline": ratios,
            **({"kitchen": self._kitchen_summary(by_variant)} if self.settings.kitchen else {}),
            "scenarios": self.rows,
        }

    def _kitchen_summary(self, by_variant: dict[str, dict[str, Any]]) -> dict[str, Any]:
        from bench.kitchen.loop import condition_figures
        from bench.kitchen.rooms import room_preset

        room = room_preset(self.settings.room)
        return {
            "room": room.name,
            "room_what": room.what,
            "seed": self.settings.seed,
            **({"array": asdict(self.array)} if self.array is not None else {}),
            "conditions": {arm.name: condition_figures(by_variant[arm.name], arm.condition, arm.front_end) for arm in self.arms},
            "picture": None,
        }

    def _write(self, report: dict[str, Any]) -> None:
        out = self.settings.out
        kitchen = report.get("kitchen")
        if kitchen is not None:
            from bench.kitchen.loop import draw_accuracy

            try:
                if draw_accuracy(kitchen["conditions"], out / "kitchen-snr.png", f"{report['suite']} in {kitchen['room']}"):
                    kitchen["picture"] = "kitchen-snr.png"
            except Exception:  # noqa: BLE001 - a picture that fails to draw must not lose the figures
                log.exception("could not draw the kitchen's picture")
        steps = {v: f["first_audio_steps"] for v, f in report["variants"].items() if f.get("first_audio_steps")}
        report["first_audio_picture"] = None
        if steps and self.settings.pictures:
            try:
                if draw_steps(steps, out / "first-audio-steps.png", f"{report['suite']}: where the time to first audio goes"):
                    report["first_audio_picture"] = "first-audio-steps.png"
            except Exception:  # noqa: BLE001 - a picture that fails to draw must not lose the figures
                log.exception("could not draw the first audio's steps")
        (out / "metrics.json").write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        for base, data in self.timelines:
            kept = {"written_by": self.provenance, **data}
            base.with_suffix(".json").write_text(json.dumps(kept, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        if self.settings.pictures:
            self._draw()
        from bench.loop.report import render_report

        (out / "report.md").write_text(render_report(report), encoding="utf-8")

    def _draw(self) -> None:
        from firmware_py.web.timeline_view import render_html, render_png

        for base, data in self.timelines:
            title = f"{base.name}: {data.get('transcript', '')!r}"
            try:
                render_png(data, base.with_suffix(".png"), title)
                render_html(data, base.with_suffix(".html"), title)
            except Exception:  # noqa: BLE001 - a picture that fails to draw must not lose the figures
                log.exception("could not draw %s", base.name)


def _conversation_cost(rows: list[dict[str, Any]], long: int = 30, n: int = 5) -> dict[str, Any]:
    """In conversations of at least ``long`` turns: the median time from the end of speech to the
    first token over the first ``n`` turns and over turns ``long - n + 1`` to ``long`` (the same
    kinds of request), and their ratio; empty when the suite has no such conversation."""
    turns: dict[str, int] = {}
    for row in rows:
        turns[row["scenario"]] = max(turns.get(row["scenario"], 0), row["turn"] + 1)
    chosen = [r for r in rows if turns[r["scenario"]] >= long and r.get("first_token_s") is not None]
    early = [r["first_token_s"] for r in chosen if r["turn"] < n]
    late = [r["first_token_s"] for r in chosen if long - n <= r["turn"] < long]
    if not early or not late:
        return {}
    first, last = statistics.median(early), statistics.median(late)
    return {"ttft_turn1_s": round(first, 4), "ttft_turn30_s": round(last, 4), "ttft_turn30_ratio": ratio(last, first)}


def _progress(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="turn", disable=not enabled, dynamic_ncols=True)

