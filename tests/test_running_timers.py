"""A call about a timer read against the timers that are running: the label is one of them, or the
one the words name; more time asked for after a timer rang is a new timer; a running timer named
with one act on a timer is that act."""

from __future__ import annotations

import pytest

from agent.deciding.running_timers import among_running, more_time_after_it_rang, one_named, timer_act_cued
from agent.deciding.tool_calls import ToolPlan


def running(*labels: str) -> list[dict]:
    return [{"id": i, "label": label, "state": "running", "duration_s": 600, "remaining_s": 300} for i, label in enumerate(labels)]


@pytest.mark.parametrize("tool, said, text, meant", [
    ("timer_cancel", "its", "The fish is flaking already, you can kill its timer.", "fish"),
    ("timer_resume", "bread can keep going", "Tray's turned round, the bread can keep going.", "bread"),
    ("timer_status", "Couscous, left", "And the couscous, how much is left on that?", "couscous"),
    ("timer_pause", "멈춰", "잠깐만 라면 멈춰 봐", "라면"),
])
def test_a_label_no_timer_has_becomes_the_running_one_the_words_name(tool, said, text, meant):
    timers = running("fish", "couscous", "bread", "라면")
    assert among_running(ToolPlan("", tool, {"label": said}), text, timers).args["label"] == meant


@pytest.mark.parametrize("plan, text", [
    (ToolPlan("", "timer_cancel", {"label": "bread"}), "Cancel the bread."),  # running: kept
    (ToolPlan("", "timer_cancel", {"label": "pasta"}), "Cancel the pasta."),  # none named: the tool says so
    (ToolPlan("", "timer_cancel", {"all": True}), "Cancel all of them, the bread too."),
    (ToolPlan("", "timer_start", {"duration_s": 60, "label": "egg"}), "One minute for the egg and the bread."),
])
def test_a_label_of_a_running_timer_or_none_named_is_left_as_it_is(plan, text):
    assert among_running(plan, text, running("bread", "fish")) == plan


def test_a_word_that_names_no_timer_is_no_label():
    plan = among_running(ToolPlan("", "timer_pause", {"label": "멈춰"}), "잠깐만 멈춰 봐", running("고등어", "밥"))
    assert "label" not in plan.args


@pytest.mark.parametrize("label, delta", [("pasta", 300), ("pulled pork", 9000), ("the rice", 120)])
def test_more_time_for_a_timer_that_rang_is_a_new_timer(label, delta):
    plan = more_time_after_it_rang(ToolPlan("", "timer_adjust", {"label": label, "delta_s": delta}), [], f"The {label} needs more, {delta} seconds.")
    assert plan == ToolPlan("", "timer_start", {"duration_s": delta, "label": label})


@pytest.mark.parametrize("args, timers", [
    ({"label": "pasta", "delta_s": 300}, running("rice")),  # a timer runs: perhaps the one meant
    ({"label": "pasta", "delta_s": -120}, []),  # time taken off nothing
    ({"delta_s": 300}, []),  # no name: which dish is not said
])
def test_other_changes_of_time_stay_changes(args, timers):
    plan = ToolPlan("", "timer_adjust", args)
    assert more_time_after_it_rang(plan, timers) == plan


@pytest.mark.parametrize("text, language, act", [
    ("라면 건 이제 꺼도 돼, 다 익었어.", "ko", "timer_cancel"),
    ("The salmon's done, kill its timer.", "en", "timer_cancel"),
    ("Pause the bread one, I need to turn the tray.", "en", "timer_pause"),
    ("Unpause the stew timer, it was only the neighbour.", "en", "timer_resume"),
])
def test_one_act_on_a_timer_is_cued(text, language, act):
    assert timer_act_cued(text, language) == act


@pytest.mark.parametrize("text, language", [
    ("Did you cancel the rice timer?", "en"),
    ("I forgot to cancel the rice timer yesterday.", "en"),
    ("라면 타이머 꺼도 돼?", "ko"),
    ("Set a timer for ten minutes.", "en"),
])
def test_a_question_a_story_or_another_act_cues_none(text, language):
    assert timer_act_cued(text, language) is None


def test_the_running_timer_named_is_found_only_when_it_is_one():
    timers = running("rice", "fish")
    assert one_named("The rice is done, cancel it.", timers) == "rice"
    assert one_named("The rice and the fish are done.", timers) is None
    assert one_named("Cancel the pasta.", timers) is None


@pytest.mark.parametrize("label, text", [
    ("cookie", "Throw another three minutes onto the cookie timer."),
    ("떡", "떡 타이머에 삼 분만 더 넣어 줘, 아직 딱딱하네."),
    ("rice", "Add two minutes to the rice timer."),
])
def test_more_time_on_a_timer_named_as_such_is_never_a_new_one(label, text):
    plan = ToolPlan("", "timer_adjust", {"label": label, "delta_s": 180})
    assert more_time_after_it_rang(plan, [], text) == plan
