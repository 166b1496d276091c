"""A tool is offered only when the request asks for it in words."""

from __future__ import annotations

import json

import pytest

from agent.deciding.banks import NONE, example_bank
from agent.deciding.intents import asks_to_know, cued_tools, is_follow_up, offered
from agent.deciding.tool_calls import decision_text
from agent.deciding.tool_examples import ExamplePicker
from tools.registry import NO_TOOL

ACTING = ("timer_start", "timer_cancel", "timer_adjust", "timer_pause", "timer_resume", "shopping_add", "shopping_complete", "note_add")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_example_asks_for_its_tool_in_words(language: str) -> None:
    # The bank is how hearth is taught each tool; a phrasing it teaches must never be filtered out.
    missing = [
        (tool, request) for request, _say, tool, _args in example_bank()[language]
        if tool != NONE and tool not in cued_tools(request, language) and not is_follow_up(request, language)
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Turn the radio down a little.", "en"),
        ("Tell me a joke.", "en"),
        ("Try again.", "en"),
        ("Fail better.", "en"),
        ("Reserve us a table for six at the bistro.", "en"),
        ("What's the capital of France?", "en"),
        ("Put on something cheerful, maybe some jazz.", "en"),
        ("고마워", "ko"),
        ("노래 틀어줘", "ko"),
        ("안녕하세요", "ko"),
    ],
)
def test_requests_that_ask_for_no_act_are_offered_no_acting_tool(text: str, language: str) -> None:
    assert not set(offered(text, language, ACTING))


@pytest.mark.parametrize(
    ("text", "language", "tool"),
    [
        ("Cancel the pasta timer.", "en", "timer_cancel"),
        ("Stop the rice timer.", "en", "timer_cancel"),
        ("Put oat milk on the shopping list.", "en", "shopping_add"),
        ("I bought the eggs.", "en", "shopping_complete"),
        ("Okay, unpause it.", "en", "timer_resume"),
        ("Remember that the blue jar is salt.", "en", "note_add"),
        ("파스타 타이머 취소해 줘", "ko", "timer_cancel"),
        ("우유 장보기 목록에 넣어 줘", "ko", "shopping_add"),
        ("메모해 줘, 내일 택배 와", "ko", "note_add"),
    ],
)
def test_a_request_in_so_many_words_is_offered_its_tool(text: str, language: str, tool: str) -> None:
    assert tool in offered(text, language, ACTING)


def test_english_cues_match_at_word_starts_only() -> None:
    assert "timer_cancel" in cued_tools("cancelled the pasta timer", "en")
    assert "timer_cancel" not in cued_tools("the weekend", "en")  # "end" inside a word is not an end


def test_a_follow_up_leans_on_the_turn_before() -> None:
    assert is_follow_up("And one more for the rolls, twelve minutes.", "en")
    assert is_follow_up("What about the day after tomorrow?", "en")
    assert is_follow_up("내일은?", "ko")
    assert not is_follow_up("Tell me a joke.", "en")
    assert offered("what about the day after tomorrow", "en", ["weather", "timer_cancel"]) == ["weather", "timer_cancel"]


def test_the_picker_shows_and_allows_only_offered_tools() -> None:
    picker = ExamplePicker("en")
    names, allow_none = picker.choices("Turn the volume up.", n=1, none_within=3)
    assert names == [] and allow_none
    assert all(tool == NONE for _request, _say, tool, _args in picker.pick("Turn the volume up."))
    names, _ = picker.choices("Cancel the pasta timer.", n=1, none_within=3)
    assert names == ["timer_cancel"]
    # Without cues the nearest example's tool is on offer whatever the words.
    assert ExamplePicker("en", cues=False).choices("Turn the volume up.", n=1, none_within=3)[0] != []
    # The no-tool examples shown are written as the model is taught to write a reply without a
    # tool: the registry's NO_TOOL, which the grammar allows and the planner reads as no call.
    for _request, say, tool, args in picker.pick("Turn the volume up."):
        for tool_first in (True, False):
            shown = json.loads(decision_text({"say": say, "tool": tool, "args": args}, tool_first=tool_first))
            assert shown["tool"] == NO_TOOL, shown


def test_an_act_is_grounded_only_when_asked_for_in_words() -> None:
    from agent.deciding.arguments import grounded

    assert not grounded("timer_cancel", {}, "Turn the volume up.")
    assert grounded("timer_cancel", {"label": "pasta"}, "Cancel the pasta timer.")
    assert not grounded("timer_resume", {}, "Try again.")
    assert grounded("timer_resume", {}, "Resume the timer.")
    assert not grounded("note_add", {"text": "노래"}, "노래 틀어줘")
    assert grounded("timer_cancel", {}, "타이머 취소해 줘")
    # A follow-up leans on the turn before: "and that one too" may cancel again.
    assert grounded("timer_cancel", {}, "And the rice one too.")
    assert grounded("shopping_complete", {"item": "flour"}, "And the flour too.")


@pytest.mark.parametrize(("tool", "args", "text"), [
    # Over a running tap, "Add flour and butter to my shopping list" was heard so: it asks to add.
    ("shopping_complete", {"item": "flour"}, "And flour, butter from the shopping list."),
    ("shopping_add", {"item": "butter"}, "And the butter, I got it, tick it off."),
    ("timer_cancel", {"label": "rice"}, "And set one for the rice."),
    ("shopping_complete", {"item": "두부"}, "그리고 두부 목록에 추가해 줘"),
])
def test_a_follow_up_that_asks_for_one_act_never_stands_for_its_opposite(tool: str, args: dict, text: str) -> None:
    from agent.deciding.arguments import grounded
    from agent.deciding.intents import is_follow_up

    assert is_follow_up(text, "ko" if any("가" <= c <= "힣" for c in text) else "en")
    assert not grounded(tool, args, text)

    # "Pop it on the list": what "it" is was never said.
    assert not grounded("shopping_add", {"item": "it"}, "Pop it on the list.")
    assert not grounded("shopping_add", {"item": "그거"}, "그거 목록에 넣어 줘")
    assert grounded("shopping_add", {"item": "oat milk"}, "Put oat milk on the list.")
    # A count the recognizer wrote as another word ("two limes" as "to limes"): a lost count, no item.
    assert not grounded("shopping_add", {"item": "to limes"}, "Add to limes.")
    assert not grounded("shopping_add", {"item": "for pears"}, "Add for pears to my list.")
    assert grounded("shopping_add", {"item": "lemons", "quantity": 2}, "Add two lemons.")
    assert grounded("shopping_add", {"item": "tofu"}, "Add tofu.")


def test_a_timer_is_changed_only_when_a_timer_is_spoken_of() -> None:
    from agent.deciding.arguments import grounded, repair_arguments

    assert not grounded("timer_cancel", {}, "Stop chattering for a moment.")
    assert not grounded("timer_cancel", {}, "Our friends had to cancel the picnic.")
    assert grounded("timer_cancel", {}, "Stop the timer.")
    assert grounded("timer_cancel", {"label": "pasta"}, "Cancel the pasta.")
    assert grounded("timer_cancel", {}, "Cancel it.")
    assert grounded("timer_pause", {}, "타이머 잠깐 멈춰 줘")
    # "it" that refers to an item the user named is that item; "it on the list" alone names nothing.
    args = repair_arguments("shopping_add", {"item": "coffee"}, "We need more coffee, add it to the list.")
    assert args["item"] == "coffee" and grounded("shopping_add", args, "We need more coffee, add it to the list.")
    assert not grounded("shopping_add", {"item": "it on the list"}, "Pop it on the list.")


@pytest.mark.parametrize(("text", "own"), [
    ("I'll chop the onions myself in a bit.", True), ("Okay, I'm going to cancel dinner.", True), ("let me think", True),
    ("We're gonna eat out tonight.", True), ("I'm about to put the kettle on.", True),
    ("후추는 내가 이따 뿌릴게", True), ("제가 살게요", True), ("불은 내가 끌게", True), ("설거지는 제가 직접 할게요", True),
    ("Add salt to the list.", False), ("I'll need eggs tomorrow.", False), ("I'll take a ten minute timer.", False),
    ("우유 추가해 줘", False),
])
def test_the_user_telling_their_own_plan_is_no_request(text: str, own: bool) -> None:
    from agent.deciding.intents import tells_own_plan

    assert tells_own_plan(text, "ko" if any("가" <= c <= "힣" for c in text) else "en") is own


@pytest.mark.parametrize(("text", "language", "knowing"), [
    ("What could we use if the cornflour has run out?", "en", True),
    ("How come my bread never rises properly?", "en", True),
    ("Is there a substitute for eggs in a cake?", "en", True),
    ("마늘은 왜 나중에 넣어?", "ko", True),
    ("우유 대신 뭘 써?", "ko", True),
    ("알람 앱은 뭐가 좋아?", "ko", True),
    ("Which timer app is best?", "en", True),
    ("What's a good note-taking app?", "en", True),
    ("Add oat milk instead of milk to the list.", "en", False),
    ("We're out of baking powder.", "en", False),
    ("우유 대신 두유 넣어 줘", "ko", False),
    ("Set a timer for ten minutes.", "en", False),
])
def test_a_why_or_instead_question_asks_to_know_not_to_act(text: str, language: str, knowing: bool) -> None:
    assert asks_to_know(text, language) is knowing


def test_a_knowledge_question_is_offered_no_acting_tool() -> None:
    from agent.deciding.tool_examples import ExamplePicker

    for text in ("What could we use if the cornflour has run out?", "마늘은 왜 나중에 넣어?"):
        assert "shopping_add" not in ExamplePicker("en").tools_for(text, 20)
    assert "shopping_add" in ExamplePicker("en").tools_for("We're out of baking powder, add it to the list.", 20)


@pytest.mark.parametrize(("text", "kind"), [
    ("고마워.", "thanks"), ("감사합니다", "thanks"), ("Thanks!", "thanks"), ("Thank you so much.", "thanks"),
    ("안녕, 좋은 아침!", "greeting"), ("Good morning", "greeting"),
    ("아니야, 됐어.", "never_mind"), ("아, 됐어요. 신경 쓰지 마세요.", "never_mind"), ("타이머 좀... 아, 아니다. 신경 쓰지 마.", "never_mind"),
    ("Never mind.", "never_mind"),
    # Requests are not small talk, even when they start like it.
    ("고마워, 타이머 하나 더 맞춰 줘", None), ("됐어 타이머 맞춰", None), ("Thanks, and add milk", None),
    ("불 좀 꺼줘.", None), ("재밌는 농담 하나 해줘.", None), ("Hello, set a timer", None),
])
def test_small_talk_is_only_a_whole_utterance_of_it(text: str, kind: str | None) -> None:
    from agent.deciding.intents import small_talk

    assert small_talk(text, "ko" if any("가" <= c <= "힣" for c in text) else "en") == kind


@pytest.mark.parametrize(("text", "language", "tools"), [
    ("오늘 비와.", "ko", {"weather"}),                  # the day of the weather, not a date question
    ("오늘 공기 좀 어때?", "ko", {"air_quality"}),
    ("What's the weather like today?", "en", {"weather"}),
    ("오늘 며칠이야?", "ko", {"date_today"}),            # a date word of its own
    ("Which day of the month is it today?", "en", {"date_today"}),
    ("오늘은?", "ko", {"date_today"}),                   # nothing else asked
])
def test_today_asks_for_the_date_only_when_nothing_else_is_asked(text: str, language: str, tools: set[str]) -> None:
    assert cued_tools(text, language) == tools


@pytest.mark.parametrize("text", [
    "Can you add frozen spinach, maybe two bags, to our grocery list?", "Would you stick some rice on the list?",
    "Could you add oat milk to the shopping list for me?",
])
def test_a_polite_request_whose_words_hold_the_whole_addition_is_the_addition(text: str, tmp_path) -> None:
    from tests.test_several_things import kitchen_picker

    assert kitchen_picker(tmp_path, "en").ranked(text)[0].entry[2] == "shopping_add"


@pytest.mark.parametrize("text", ["Did I put eggs on the list?", "Is milk on the list?", "Have we added rice already?",
                                  "Are the timers still running?"])
def test_a_question_of_how_things_are_is_offered_no_act(text: str, tmp_path) -> None:
    from tests.test_several_things import kitchen_picker

    assert not {s.entry[2] for s in kitchen_picker(tmp_path, "en").ranked(text)} & set(ACTING)


@pytest.mark.parametrize(("text", "language"), [
    ("How are you doing, hearth?", "en"), ("Hey, how's it going?", "en"), ("So how was your day, hearth?", "en"),
    ("오늘 하루 어땠어?", "ko"), ("잘 지냈어?", "ko"), ("요즘 잘 지내?", "ko"),
])
def test_a_question_about_hearth_itself_is_small_talk_and_offered_no_tool(text: str, language: str, tmp_path) -> None:
    from agent.deciding.intents import small_talk
    from tests.test_several_things import kitchen_picker

    assert small_talk(text, language) == "greeting"
    assert {s.entry[2] for s in kitchen_picker(tmp_path, language).ranked(text)} == {NONE}


@pytest.mark.parametrize(("text", "language"), [
    ("How are you, can you set a timer for five minutes?", "en"), ("What day is it today?", "en"), ("오늘 며칠이야?", "ko"),
])
def test_a_request_beside_a_greeting_is_no_small_talk(text: str, language: str) -> None:
    from agent.deciding.intents import small_talk

    assert small_talk(text, language) is None


@pytest.mark.parametrize(("text", "tool"), [
    ("Sorry, I wasn't listening.", "shopping_list"), ("Let the dough settle for a bit.", "timer_start"),
    ("She's a real timekeeper.", "time_now"),
])
def test_a_word_that_only_begins_like_a_cue_cues_nothing(text: str, tool: str) -> None:
    assert tool not in cued_tools(text, "en")


@pytest.mark.parametrize(("text", "tool"), [
    ("Cancel both timers.", "timer_cancel"), ("Will it be sunny later?", "weather"), ("What's on my shopping lists?", "shopping_list"),
    ("Can you read the listed items?", "shopping_list"),
])
def test_a_cue_with_an_ending_still_cues(text: str, tool: str) -> None:
    assert tool in cued_tools(text, "en")
