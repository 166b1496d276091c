"""The long-answer benchmark: its suite and its configuration load, with no model."""

from __future__ import annotations

from pathlib import Path

from bench.suites.scenarios import SCENARIOS_DIR, load_suite
from firmware_py.config import load_config


def test_long_suite_loads_and_expects_no_tool() -> None:
    suite = load_suite("en-long")
    assert suite.suite == "en-long" and suite.language == "en"
    assert load_suite(SCENARIOS_DIR / "en-long.yaml") == suite
    assert len(suite.scenarios) >= 8
    for scenario in suite.scenarios:
        assert scenario.category == "long", scenario.id
        assert scenario.expect == [], scenario.id
        assert not scenario.followups and scenario.synthetic and scenario.audio is None, scenario.id


def test_long_answers_config_turns_tools_off_and_allows_a_long_reply() -> None:
    config = load_config(Path(SCENARIOS_DIR / "long-answers.toml"))
    assert config.tools.enabled is False
    assert config.llm.max_tokens >= 120
    assert config.system_prompt is not None and "sentences" in config.system_prompt
