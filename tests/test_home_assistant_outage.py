"""A Home Assistant outage is said in the log once, however many requests meet it, until it is back."""

from __future__ import annotations

import logging

import pytest

from fakes import FakeHomeAssistant
from tests.test_home_assistant_tools import household, run
from tools.home_assistant.client import HomeAssistantUnavailable
from tools.home_assistant.control import home_assistant_tools
from tools.home_assistant.home import HomeAssistantHome


class DownAtTheCall(FakeHomeAssistant):
    """Lists its entities, then goes down as a service is called: the outage begins mid-request."""

    async def call_service(self, *args, **kwargs):
        self.down = True
        return await super().call_service(*args, **kwargs)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("tools.home_assistant") and r.levelno >= logging.WARNING]


@pytest.mark.parametrize("fake_kind", [FakeHomeAssistant, DownAtTheCall])
async def test_an_outage_is_logged_once_and_its_end_once(fake_kind, caplog: pytest.LogCaptureFixture) -> None:
    fake = fake_kind(household())
    home = HomeAssistantHome(fake, own_area="Kitchen")
    tools = {spec.name: spec for spec in home_assistant_tools(home, "en")}
    fake.down = fake_kind is FakeHomeAssistant
    with caplog.at_level(logging.INFO):
        for _ in range(2):
            out = await run(tools, "home_control", action="on", target="the kitchen lights")
            assert out.data == {"error": "unreachable"}
        assert (await run(tools, "home_state", target="the oven")).data == {"error": "unreachable"}
        with pytest.raises(HomeAssistantUnavailable):
            await home.entities(fresh=True)  # the minute's re-read, as watch() makes it
        assert len(_warnings(caplog)) == 1, _warnings(caplog)
        assert "apology" in _warnings(caplog)[0] or "reach" in _warnings(caplog)[0]

        fake.down = False
        fake.__class__ = FakeHomeAssistant  # back for good
        assert (await run(tools, "home_state", target="the oven")).text == "The Oven is on."
        back = [r.getMessage() for r in caplog.records if "reachable again" in r.getMessage()]
        assert len(back) == 1

        fake.down = True  # a second outage is news again
        await run(tools, "home_control", action="off", target="the kitchen lights")
        assert len(_warnings(caplog)) == 2, _warnings(caplog)
