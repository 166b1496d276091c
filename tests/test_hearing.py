"""How sure a hearing is, and what a turn does with a doubtful or lost one."""

from __future__ import annotations

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.listening.hearing import SURE, HearingSettings, agreement, weigh
from agent.results import Outcome
from audio.levels import speech_snr_db
from audio.protocols import Transcript
from tests.fakes import say
from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps

RATE = 16000


def _final(text: str, logprob: float | None = -0.1, no_speech: float | None = 0.01) -> Transcript:
    return Transcript(text, True, len(text), 2.0, text, avg_logprob=logprob, no_speech_prob=no_speech)


def test_a_clear_decode_in_a_quiet_room_is_sure() -> None:
    hearing = weigh(_final("Set a timer for seven minutes."), snr_db=30.0)
    assert hearing.verdict == "sure" and hearing.confidence == 1.0


@pytest.mark.parametrize(
    ("final", "snr", "verdict", "weakest"),
    [
        (_final("Set a timer for thirty minutes.", logprob=-0.75), 30.0, "doubtful", "logprob"),
        (_final("Set a timer for thirty minutes."), 4.0, "doubtful", "snr"),
        (_final("Set a timer for thirty minutes.", no_speech=0.9), 30.0, "unheard", "no_speech"),
        (_final("Set a timer for thirty minutes.", logprob=-1.4), 30.0, "unheard", "logprob"),
        (_final("Set a timer for thirty minutes."), -3.0, "unheard", "snr"),
        (_final("Thank you.", logprob=-0.3), 12.0, "unheard", "phantom"),
        (_final(" ... "), 30.0, "unheard", "empty"),
    ],
)
def test_the_weakest_sign_sets_the_verdict(final: Transcript, snr: float, verdict: str, weakest: str) -> None:
    hearing = weigh(final, snr)
    assert (hearing.verdict, hearing.weakest) == (verdict, weakest)


def test_a_phantom_text_clearly_said_is_taken() -> None:
    # "Thank you" said plainly in a quiet kitchen is the user's, not Whisper's invention.
    assert weigh(_final("Thank you.", logprob=-0.05, no_speech=0.0), 35.0).verdict == "sure"


def test_unknown_signs_leave_the_hearing_sure() -> None:
    # A recognizer that gives no scores, with no room heard apart from the voice.
    assert weigh(Transcript("add milk", True), None).verdict == "sure"
    assert SURE.verdict == "sure"


def test_a_final_that_drops_the_partials_words_is_doubted() -> None:
    partial = Transcript("add soup to the list", False, 0, 1.8, "add soup to the list")
    final = _final("at the sink this morning")
    hearing = weigh(final, 30.0, partial)
    assert hearing.agreement is not None and hearing.agreement < 0.3
    assert hearing.verdict == "unheard" and hearing.weakest == "agreement"
    # A partial of too little of the audio is not compared.
    short = Transcript("add", False, 0, 0.5, "add")
    assert weigh(final, 30.0, short).agreement is None


def test_agreement_counts_words_kept() -> None:
    assert agreement("set a timer", "Set a timer for ten minutes.") == 1.0
    assert agreement("set a timer for seven", "Set a timer for 30 minutes.") == pytest.approx(0.8)
    assert agreement("", "anything") == 1.0


def test_korean_agreement_counts_syllables_kept_in_order_without_the_cut_last_word() -> None:
    # Spacing and particles vary between Whisper's decodes; the partial's window ended inside 몇.
    assert agreement("다시 해 주세요", "다시 해주세요.") == 1.0
    assert agreement("지금요, 스위트.", "지금 몇 시야?") == pytest.approx(2 / 3)
    assert agreement("장보기 목록에 우유", "타이머 십 분 맞춰 줘") == 0.0
    assert agreement("우유 목록", "목록에 우유") == 1.0  # one word left: it is compared
    assert agreement("목록 우유 추가", "우유 목록") == pytest.approx(0.5)  # in order: 우유 after 목록 is not kept


def test_thresholds_are_settings() -> None:
    lenient = HearingSettings(doubtful_below=0.1, unheard_below=0.05)
    assert weigh(_final("Set a timer.", logprob=-0.75), 30.0, settings=lenient).verdict == "sure"


def _voice_over_noise(snr_db: float, seed: int = 0) -> tuple[np.ndarray, tuple[int, int]]:
    rng = np.random.default_rng(seed)
    t = np.arange(RATE) / RATE
    # A voiced sound: harmonics of 150 Hz, loudness rising and falling like syllables.
    voice = sum(np.sin(2 * np.pi * 150 * k * t) / k for k in range(1, 12)) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t))
    noise = rng.standard_normal(3 * RATE)
    # Scale the noise so the voice's band power over the voice's frames is snr_db above it.
    from audio.levels import band_power

    v = float(np.mean(band_power(voice, RATE, 320, 150, 4000)))
    n = float(np.mean(band_power(noise, RATE, 320, 150, 4000)))
    noise *= np.sqrt(v / n / 10 ** (snr_db / 10))
    take = noise.copy()
    take[RATE : 2 * RATE] += voice
    return (0.05 * take).astype(np.float32), (RATE, 2 * RATE)


@pytest.mark.parametrize("snr", [0.0, 5.0, 10.0, 20.0])
def test_the_turns_snr_is_measured_over_the_rooms_noise(snr: float) -> None:
    samples, speech = _voice_over_noise(snr)
    measured = speech_snr_db(samples, RATE, speech)
    assert measured is not None
    # The louder half of the voice's frames reads a little above its mean.
    assert snr - 1.0 <= measured <= snr + 3.0, measured


def test_noise_alone_reads_no_voice_above_the_room() -> None:
    rng = np.random.default_rng(1)
    samples = (0.05 * rng.standard_normal(3 * RATE)).astype(np.float32)
    measured = speech_snr_db(samples, RATE, (RATE, 2 * RATE))
    assert measured is not None and measured < 0.0


def test_no_room_heard_apart_from_the_voice_gives_no_snr() -> None:
    samples, _ = _voice_over_noise(10.0)
    assert speech_snr_db(samples, RATE, (0, len(samples))) is None
    assert speech_snr_db(samples[:800], RATE, (0, 400)) is None


# -- in a turn ---------------------------------------------------------------------------------
async def _turns(chat, said: str, logprob: float, *follow: tuple[str, float]):
    kitchen = Kitchen()
    deps, sink, executor = tool_deps(chat, kitchen, text=said)
    executor.start()
    try:
        assistant = Assistant(deps)
        results = [await say(assistant, said, avg_logprob=logprob)]
        for text, score in follow:
            results.append(await say(assistant, text, avg_logprob=score))
    finally:
        await executor.close()
    return kitchen, sink, results


async def test_an_act_heard_doubtfully_is_asked_back_and_made_on_yes() -> None:
    chat = TimedJson(decision("", "timer_start", {"duration_s": 1800}))
    kitchen, sink, (first, second) = await _turns(chat, "Set a timer for 30 minutes.", -0.75, ("Yes.", -0.1))
    assert first.spoken == ["Start a timer for 30 minutes?"]
    assert [(c.name, c.ran) for c in first.tool_calls] == [("timer_start", False)]
    assert first.timeline.first("final_transcript").detail["verdict"] == "doubtful"
    assert kitchen.timers == [(1800, None)]  # made once, on the yes
    assert second.tool_calls[0].ran


async def test_an_act_heard_surely_is_made_at_once() -> None:
    chat = TimedJson(decision("", "timer_start", {"duration_s": 1800}))
    kitchen, _, (result,) = await _turns(chat, "Set a timer for 30 minutes.", -0.1)
    assert kitchen.timers == [(1800, None)]
    assert result.tool_calls[0].ran


async def test_a_lost_hearing_is_said_and_nothing_is_done() -> None:
    chat = TimedJson(decision("", "shopping_add", {"item": "soup"}))
    kitchen, _, (result,) = await _turns(chat, "Add soup to the list.", -1.5)
    assert result.outcome == Outcome.NOT_UNDERSTOOD
    assert result.spoken == ["Sorry, I didn't catch that. Could you say it again?"]
    assert kitchen.shopping == [] and result.tool_calls == [] and chat.calls == []


async def test_a_question_asked_back_stays_open_over_a_lost_hearing() -> None:
    chat = TimedJson(decision("", "timer_start", {"duration_s": 1800}))
    kitchen, _, results = await _turns(chat, "Set a timer for 30 minutes.", -0.75, ("Yes.", -1.6), ("Yes.", -0.1))
    assert [r.spoken[-1] for r in results[:2]] == ["Start a timer for 30 minutes?", "Sorry, I didn't catch that. Could you say it again?"]
    assert kitchen.timers == [(1800, None)]


async def test_a_reading_tool_heard_doubtfully_goes_ahead() -> None:
    chat = TimedJson(decision("", "air_quality", {"location": "Ilsan"}))
    kitchen, sink, (result,) = await _turns(chat, "How is the air in Ilsan?", -0.75)
    assert [c.name for c in result.tool_calls] == ["air_quality"] and result.tool_calls[0].ran
    assert "moderate" in sink.text()


async def test_switched_off_every_hearing_is_acted_on() -> None:
    from agent.features import Features

    chat = TimedJson(decision("", "timer_start", {"duration_s": 1800}))
    kitchen = Kitchen()
    deps, _, executor = tool_deps(chat, kitchen, text="x", features=Features().without("hearing-confidence"))
    executor.start()
    try:
        await say(Assistant(deps), "Set a timer for 30 minutes.", avg_logprob=-0.75)
    finally:
        await executor.close()
    assert kitchen.timers == [(1800, None)]


def test_rivals_are_the_close_hearings_with_other_words() -> None:
    final = Transcript(
        "Time the eggs for 30 minutes.", True, 0, 2.0, "", (
            ("Time the eggs for 30 minutes.", -0.30), ("Time the eggs for 30 minutes", -0.31),
            ("Time the eggs for seven minutes.", -0.34), ("Tie me the legs for thirty minutes.", -0.9),
        ), avg_logprob=-0.30, no_speech_prob=0.01,
    )
    assert weigh(final, 30.0).rivals == ("Time the eggs for seven minutes.",)
    assert weigh(final, 30.0, settings=HearingSettings(rival_margin=0.02)).rivals == ()


async def test_an_act_a_close_rival_hearing_does_not_support_is_asked_back() -> None:
    from agent.deciding.arguments import grounded

    chat = TimedJson(decision("", "timer_start", {"duration_s": 1800, "label": "eggs"}))
    kitchen = Kitchen()
    deps, _, executor = tool_deps(chat, kitchen, text="x", grounded=grounded)
    said = "Time the eggs for 30 minutes."
    close = ((said, -0.20), ("Time the eggs for seven minutes.", -0.25))
    far = ((said, -0.20), ("Time the eggs for seven minutes.", -0.9))
    executor.start()
    try:
        assistant = Assistant(deps)
        asked = await say(assistant, said, avg_logprob=-0.2, alternatives=close)
        made = await say(assistant, said, avg_logprob=-0.2, alternatives=far)
    finally:
        await executor.close()
    assert asked.spoken == ["Start a timer for 30 minutes?"]
    assert asked.timeline.first("rival_hearing").detail["rival"] == "Time the eggs for seven minutes."
    assert kitchen.timers == [(1800, "eggs")]  # only the second, whose rival was far behind
    assert made.tool_calls[0].ran


def _scored(text: str, **unsure: float) -> tuple[tuple[str, float], ...]:
    return tuple((w, unsure.get(w.strip(".,?").lower(), 0.97)) for w in text.split())


def test_the_words_the_decoder_was_unsure_of_are_left_out_of_the_sure_text() -> None:
    text = "Five seconds on the timer."
    final = Transcript(text, True, 0, 2.0, text, avg_logprob=-0.2, no_speech_prob=0.01, word_probs=_scored(text, five=0.31))
    hearing = weigh(final, 30.0)
    assert hearing.verdict == "sure" and hearing.unsure_words == ("Five",)
    assert hearing.sure_text == "seconds on the timer."
    assert weigh(final, 30.0, settings=HearingSettings(word_sure=0.3)).unsure_words == ()
    # Without scored words, or scores of other words, nothing is known against any word.
    assert weigh(_final(text), 30.0).sure_text is None
    other = Transcript(text, True, 0, 2.0, text, avg_logprob=-0.2, word_probs=_scored("Nine seconds on the timer."))
    assert weigh(other, 30.0).sure_text is None
    assert weigh(final, 30.0, settings=HearingSettings(use_logprob=False)).sure_text is None


async def test_an_act_that_needs_an_unsure_word_is_asked_back() -> None:
    from agent.deciding.arguments import content_in, grounded

    chat = TimedJson(decision("", "timer_start", {"duration_s": 5}))
    kitchen = Kitchen()
    deps, _, executor = tool_deps(chat, kitchen, text="x", grounded=grounded, holds_values=content_in)
    said = "Five seconds on the timer."
    executor.start()
    try:
        assistant = Assistant(deps)
        asked = await say(assistant, said, avg_logprob=-0.2, word_probs=_scored(said, five=0.2))
        # Unsure of words the act's values do not stand on (the verb among them): made at once.
        made = await say(assistant, said, avg_logprob=-0.2, word_probs=_scored(said, on=0.2, timer=0.1))
    finally:
        await executor.close()
    assert asked.spoken == ["Start a timer for 5 seconds?"]
    assert asked.timeline.first("unsure_words").detail["words"] == ["Five"]
    assert kitchen.timers == [(5, None)]  # only the second
    assert made.tool_calls[0].ran


def test_the_thresholds_come_from_the_configuration() -> None:
    from firmware_py.config import load_config
    from firmware_py.wiring import listen_settings

    config = load_config(overrides={"listen.doubtful_below": 0.3, "listen.unheard_below": 0.1, "listen.unsure_word_below": 0.2})
    hearing = listen_settings(config).hearing
    assert (hearing.doubtful_below, hearing.unheard_below, hearing.word_sure) == (0.3, 0.1, 0.2)
    with pytest.raises(Exception, match="unheard_below"):
        load_config(overrides={"listen.doubtful_below": 0.2, "listen.unheard_below": 0.4})


def test_korean_goes_by_the_other_signs() -> None:
    from firmware_py.config import load_config
    from firmware_py.wiring import listen_settings

    korean = listen_settings(load_config(overrides={"language": "ko"})).hearing
    english = listen_settings(load_config(overrides={"language": "en"})).hearing
    low = _final("타이머 십 분 맞춰 줘.", logprob=-1.3)
    assert weigh(low, 30.0, settings=korean).verdict == "sure"
    assert weigh(low, 30.0, settings=english).verdict == "unheard"
    assert weigh(low, -2.0, settings=korean).verdict == "unheard"
