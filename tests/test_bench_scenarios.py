"""The benchmark's scenario suites: they load, they speak the tool vocabulary, and the HA mapping is exact."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from bench.suites.audio import AudioSettings, cached_audio_path, suite_texts
from bench.suites.ha_intents import CREDIT, load_ha_suite
from bench.suites.scenarios import SCENARIOS_DIR, list_suites, load_suite
from bench.suites.schema import COMMAND_TOOLS, HOME_TOOLS, MODEL_TOOLS, TOOLS, Scenario, Suite, SuiteError

FILE_SUITES = sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml"))


@pytest.fixture(scope="module")
def suites() -> dict[str, Suite]:
    return {name: load_suite(name) for name in list_suites()}


def test_every_suite_is_listed() -> None:
    assert {"en-kitchen", "ko-kitchen", "en-human", "ha-en", "ha-ko"} <= set(list_suites())
    assert set(FILE_SUITES) <= set(list_suites())


@pytest.mark.parametrize("name", FILE_SUITES)
def test_suite_file_loads_and_is_named_after_its_file(name: str) -> None:
    assert load_suite(name).suite == name
    assert load_suite(SCENARIOS_DIR / f"{name}.yaml").suite == name


def test_ids_are_unique(suites: dict[str, Suite]) -> None:
    for suite in suites.values():
        repeated = [i for i, n in Counter(s.id for s in suite.scenarios).items() if n > 1]
        assert not repeated, f"{suite.suite}: {repeated}"


def _readme_tools() -> dict[str, set[str]]:
    """The tool table in the scenarios README: tool name → argument names."""
    tools: dict[str, set[str]] = {}
    for line in (SCENARIOS_DIR / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        args = set(re.findall(r"`(\w+):", cells[1]))
        for name in re.findall(r"`(\w+)`", cells[0]):
            tools[name] = args
    return tools


def test_vocabulary_matches_the_readme() -> None:
    assert {name: set(args) for name, args in TOOLS.items()} == _readme_tools()


def test_expected_calls_use_the_vocabulary(suites: dict[str, Suite]) -> None:
    for suite in suites.values():
        for scenario in suite.scenarios:
            for call in scenario.expect + [c for f in scenario.followups for c in f.expect]:
                assert call.tool in TOOLS, f"{suite.suite}/{scenario.id}: {call.tool}"
                assert set(call.args) <= set(TOOLS[call.tool]), f"{suite.suite}/{scenario.id}: {call.args}"


def test_kitchen_suites_are_large_enough_and_cover_every_kind(suites: dict[str, Suite]) -> None:
    en, ko = suites["en-kitchen"], suites["ko-kitchen"]
    assert len(en.scenarios) >= 40 and len(ko.scenarios) >= 30
    wanted = {"timer", "time", "date", "shopping", "note", "conversion", "recipe", "weather", "air",
              "chitchat", "unservable", "nevermind"}
    for suite in (en, ko):
        assert wanted <= {s.category for s in suite.scenarios}, suite.suite
        assert any(s.followups for s in suite.scenarios), suite.suite
        tools = {c.tool for s in suite.scenarios for c in s.expect}
        assert tools == MODEL_TOOLS, f"{suite.suite} never expects {MODEL_TOOLS - tools}"
        assert all(s.synthetic and s.audio is None for s in suite.scenarios)
    assert ko.language == "ko" and en.language == "en"


def test_the_basics_and_home_suites_cover_every_command_tool(suites: dict[str, Suite]) -> None:
    def tools(name: str) -> set[str]:
        scenarios = suites[name].scenarios
        turns = [*(s.expect for s in scenarios), *(f.expect for s in scenarios for f in s.followups or [])]
        return {c.tool for expect in turns for c in expect}

    for name in ("basics-en", "basics-ko"):
        assert tools(name) == set(COMMAND_TOOLS) - set(HOME_TOOLS), name
        assert not suites[name].home_assistant
    for name in ("home-en", "home-ko"):
        assert set(HOME_TOOLS) <= tools(name) and suites[name].home_assistant, name


def test_no_tool_categories_expect_no_tool(suites: dict[str, Suite]) -> None:
    for suite in suites.values():
        for scenario in suite.scenarios:
            if scenario.category in ("chitchat", "unservable", "nevermind", "speech"):
                assert scenario.expect == [], f"{suite.suite}/{scenario.id}"


def test_knowledge_suites_check_a_fact_on_every_question(suites: dict[str, Suite]) -> None:
    assert len(suites["en-knowledge"].scenarios) >= 30 and len(suites["ko-knowledge"].scenarios) >= 15
    for name in ("en-knowledge", "ko-knowledge"):
        for scenario in suites[name].scenarios:
            assert scenario.category == "knowledge" and scenario.expect == [], scenario.id
            assert scenario.answer is not None, scenario.id


# ---------------------------------------------------------------------------------------------------------------
# Home Assistant


def _by_text(suite: Suite, text: str) -> Scenario:
    found = [s for s in suite.scenarios if s.text == text]
    assert len(found) == 1, text
    return found[0]


def _calls(scenario: Scenario) -> list[tuple[str, dict[str, object]]]:
    return [(c.tool, c.args) for c in scenario.expect]


@pytest.mark.parametrize(
    ("text", "calls", "category"),
    [
        ("5 minute timer for pizza", [("timer_start", {"duration_s": 300, "label": "pizza"})], "timer"),
        ("set a timer for 1 and a half hours", [("timer_start", {"duration_s": 5400})], "timer"),
        ("start a 1 hour 15 minute and 30 second timer", [("timer_start", {"duration_s": 4530})], "timer"),
        ("take 5 minutes off pizza timer", [("timer_adjust", {"delta_s": -300, "label": "pizza"})], "timer"),
        ("add 5 minutes to 1 hour timer", [("timer_adjust", {"delta_s": 300})], "timer"),
        ("stop my timer for pizza", [("timer_cancel", {"all": False, "label": "pizza"})], "timer"),
        ("cancel kitchen timer", [("timer_cancel", {"all": False})], "timer"),
        ("cancel all kitchen timers", [("timer_cancel", {"all": True})], "timer"),
        ("pause timer for pizza", [("timer_pause", {"label": "pizza"})], "timer"),
        ("continue my timer", [("timer_resume", {})], "timer"),
        ("how long is left on the pizza timer", [("timer_status", {"label": "pizza"})], "timer"),
        ("what time is it", [("time_now", {})], "time"),
        ("what's the date today", [("date_today", {})], "date"),
        ("never mind", [], "nevermind"),
        ("put apples on the list", [("shopping_add", {"item": "apples"})], "shopping"),
        ("check apples off my list", [("shopping_complete", {"item": "apples"})], "shopping"),
    ],
)
def test_ha_english_maps_exactly(suites: dict[str, Suite], text: str, calls: list, category: str) -> None:
    scenario = _by_text(suites["ha-en"], text)
    assert _calls(scenario) == calls
    assert scenario.category == category


def test_ha_korean_and_credit(suites: dict[str, Suite]) -> None:
    ko = suites["ha-ko"]
    assert ko.language == "ko"
    assert _calls(_by_text(ko, "리스트에 사과 담아줘")) == [("shopping_add", {"item": "사과"})]
    for suite in (ko, suites["ha-en"]):
        assert CREDIT in suite.description


def test_ha_delayed_commands_are_left_out(suites: dict[str, Suite]) -> None:
    texts = {s.text for s in suites["ha-en"].scenarios}
    assert "open the garage door in 5 minutes" not in texts
    assert "conversation_command" in suites["ha-en"].description


def test_ha_slots_trimmed_and_alternatives_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "ha-intents" / "en"
    folder.mkdir(parents=True)
    (folder / "timers.yaml").write_text(
        "language: en\ntests:\n"
        "  - sentences: ['  brew timer for 4 minutes  ']\n"
        "    intent: {name: HassStartTimer, slots: {minutes: 4, name: ['tea ', 'tea', 'brew']}}\n"
        "  - sentences: ['lights on']\n"
        "    intent: {name: HassTurnOn}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HEARTH_EVALS_DIR", str(tmp_path))
    suite = load_ha_suite("en")
    assert [(s.text, _calls(s)) for s in suite.scenarios] == [
        ("brew timer for 4 minutes", [("timer_start", {"duration_s": 240, "label": ["tea", "brew"]})])
    ]
    assert "HassTurnOn" in suite.description


def test_ha_missing_data_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_EVALS_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(SuiteError) as error:
        load_suite("ha-en")
    assert "\n" not in str(error.value)
    assert "HEARTH_EVALS_DIR" in str(error.value) and "nowhere" in str(error.value)


# ---------------------------------------------------------------------------------------------------------------
# Validation messages


def _bad_suite(tmp_path: Path, body: str) -> str:
    path = tmp_path / "broken.yaml"
    path.write_text("suite: broken\nlanguage: en\ndescription: x\nscenarios:\n" + body, encoding="utf-8")
    with pytest.raises(SuiteError) as error:
        load_suite(path)
    message = str(error.value)
    assert "\n" not in message and "broken.yaml" in message
    return message


def test_validation_errors_name_file_scenario_and_field(tmp_path: Path) -> None:
    message = _bad_suite(tmp_path, "  - {id: ok-one, text: Hi, category: chitchat, expect: []}\n"
                                   "  - {id: bad-one, text: Hi, category: chitchat}\n")
    assert "scenario bad-one: expect:" in message and "required" in message.lower()
    message = _bad_suite(tmp_path, "  - {id: t, text: Hi, category: timer, expect: [{tool: timer_set}]}\n")
    assert "scenario t: expect.0:" in message and "timer_set" in message
    message = _bad_suite(tmp_path, "  - {id: t, text: Hi, category: timer, expect: [{tool: timer_start, args: {minutes: 5}}]}\n")
    assert "scenario t:" in message and "'minutes'" in message and "duration_s" in message
    message = _bad_suite(tmp_path, "  - {id: t, text: Hi, category: timer, expect: [{tool: timer_start, args: {duration_s: ten}}]}\n")
    assert "args.duration_s" in message
    message = _bad_suite(tmp_path, "  - {id: t, text: Hi, category: cooking, expect: []}\n")
    assert "scenario t: category:" in message
    message = _bad_suite(tmp_path, "  - {id: Bad_Id, text: Hi, category: chitchat, expect: []}\n")
    assert "scenario Bad_Id: id:" in message
    message = _bad_suite(tmp_path, "  - {id: a, text: Hi, category: chitchat, expect: []}\n"
                                   "  - {id: a, text: Yo, category: chitchat, expect: []}\n")
    assert "scenario a" in message and "twice" in message
    message = _bad_suite(tmp_path, "  - {id: a, text: Hi, category: speech, expect: [], synthetic: false}\n")
    assert "scenario a:" in message and "audio" in message
    message = _bad_suite(tmp_path, "  - {id: a, text: Hi, category: chitchat, expect: [], colour: red}\n")
    assert "scenario a: colour:" in message
    message = _bad_suite(tmp_path, "  - {id: a, text: Hi, category: speech, expect: [], audio: 'pypi:x/y.wav'}\n")
    assert "scenario a: audio:" in message
    message = _bad_suite(tmp_path, "  - {id: a, text: [unclosed\n")
    assert "YAML" in message


def test_unknown_suite_names_the_known_ones() -> None:
    with pytest.raises(SuiteError, match="en-kitchen"):
        load_suite("no-such-suite")


# ---------------------------------------------------------------------------------------------------------------
# Audio


def test_synthetic_audio_cache_key_is_text_and_voice(tmp_path: Path) -> None:
    settings = AudioSettings(models_dir=tmp_path, cache_dir=tmp_path / "cache")
    en = cached_audio_path("Thank you.", "en", settings)
    assert en == cached_audio_path("Thank you.", "en", settings)
    assert en.parent == tmp_path / "cache" / "bench-audio" and re.fullmatch(r"[0-9a-f]{16}\.wav", en.name)
    assert en != cached_audio_path("Thank you.", "ko", settings)
    assert en != cached_audio_path("Thank you!", "en", settings)


def test_suite_texts_cover_followups(suites: dict[str, Suite]) -> None:
    texts = suite_texts(suites["en-kitchen"])
    assert "How long is left?" in texts and "Set a timer for ten minutes." in texts
    assert suite_texts(suites["en-human"]) == []


def test_ha_written_fractions_are_left_out(suites: dict[str, Suite]) -> None:
    texts = {s.text for s in suites["ha-en"].scenarios}
    assert "set a timer for 1/2 an hour" not in texts and "set a timer for half an hour" in texts
    assert not any("/" in text for text in texts)
