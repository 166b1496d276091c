"""``hearth serve``: what it chooses to run from the flags and the configuration, and its pieces."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import numpy as np
import pytest

from agent.events import SpeechStarted, TranscriptPartial
from audio.protocols import AudioChunk
from audio.silent import SilentSpeaker
from firmware_py.cli import main
from firmware_py.config import parse_config
from firmware_py.serve import also_tell
from firmware_py.serve_choice import DEFAULT_WEB, DEFAULT_WYOMING, ServeChoice, serve_choice
from firmware_py.web.security import is_loopback

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "a-secret-of-sixteen-or-more"


def config(**serve):
    return parse_config({"serve": serve} if serve else {})


def test_a_flag_with_no_address_takes_the_configured_one_else_the_default():
    assert serve_choice(config(), "", None) == ServeChoice(wyoming=DEFAULT_WYOMING)
    assert serve_choice(config(), None, "") == ServeChoice(web=("127.0.0.1", 8750))
    configured = config(wyoming="tcp://0.0.0.0:10701", web="127.0.0.1:9000")
    assert serve_choice(configured, "", "") == ServeChoice(wyoming="tcp://0.0.0.0:10701", web=("127.0.0.1", 9000))


def test_no_flag_serves_what_the_configuration_names_and_a_flag_address_wins():
    configured = config(wyoming="tcp://0.0.0.0:10701")
    assert serve_choice(configured, None, None, device=False) == ServeChoice(device=False, wyoming="tcp://0.0.0.0:10701")
    assert serve_choice(configured, "tcp://127.0.0.1:0", None).wyoming == "tcp://127.0.0.1:0"


def test_nothing_to_serve_is_one_line():
    with pytest.raises(ValueError, match="^nothing to serve: give --wyoming and/or --web"):
        serve_choice(config(), None, None)


@pytest.mark.parametrize("address", ["0.0.0.0:8750", "192.168.1.5:8750", "[::]:8750", "kitchen.local:8750"])
def test_a_page_others_could_open_needs_a_token(address):
    with pytest.raises(ValueError, match="set serve.web_token"):
        serve_choice(config(), None, address)
    assert serve_choice(config(web_token=TOKEN), None, address).web is not None


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("localhost", True),
                                            ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("hearth.local", False)])
def test_loopback(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("bad", ["udp://127.0.0.1:10700", "tcp://127.0.0.1", "tcp://:10700", "tcp://h:70000", "10700"])
def test_a_bad_wyoming_flag_is_refused(bad):
    with pytest.raises(ValueError, match="tcp://HOST:PORT"):
        serve_choice(config(), bad, None)


def test_the_serve_drop_in_lets_in_the_default_ports():
    text = (ROOT / "systemd" / "hearth-serve.conf").read_text()
    ports = re.findall(r"^SocketBindAllow=tcp:(\d+)$", text, re.M)
    assert ports == [DEFAULT_WYOMING.rsplit(":", 1)[1], DEFAULT_WEB.rsplit(":", 1)[1]]


@pytest.mark.parametrize("argv, message", [
    (["serve"], "hearth: nothing to serve: give --wyoming and/or --web"),
    (["serve", "--web", "0.0.0.0:8750"], "hearth: the companion page on 0.0.0.0:8750 could be opened from other machines"),
    (["serve", "--wyoming", "http://x:1"], "hearth: a Wyoming address is tcp://HOST:PORT, not 'http://x:1'"),
])
def test_the_command_refuses_in_one_line_before_loading_anything(argv, message, tmp_path, capsys):
    empty = tmp_path / "hearth.toml"
    empty.write_text("")
    assert main([*argv, "--config", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message)


def test_a_bad_serve_key_in_the_file_is_named(tmp_path, capsys):
    path = tmp_path / "hearth.toml"
    path.write_text('[serve]\nweb_token = "short"\n')
    assert main(["serve", "--web", "--config", str(path)]) == 2
    assert "serve.web_token: too short to guard the page (5 characters; at least 16 needed)" in capsys.readouterr().err


async def test_the_wyoming_idle_time_and_connection_cap_come_from_the_configuration():
    from agent.assistant import Assistant
    from firmware_py.serve import OtherLanguages, start_wyoming
    from tests.test_turn import make_deps

    configured = config(wyoming_idle_s=2.5, wyoming_max_connections=4)
    server, _, _ = await start_wyoming(configured, "tcp://127.0.0.1:0", Assistant(make_deps()), OtherLanguages())
    try:
        assert (server.offer.limits.client_idle_s, server.offer.limits.max_connections) == (2.5, 4)
    finally:
        await server.stop()
    with pytest.raises(ValueError, match="serve.wyoming_max_connections: Input should be greater than or equal to 1"):
        config(wyoming_max_connections=0)


class _Told:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.on_event = lambda event: self.events.append(("device", event))


def test_also_tell_gives_every_event_to_both_in_order():
    assistant = _Told()
    also_tell(assistant, lambda event: assistant.events.append(("page", event)))  # type: ignore[arg-type]
    started, partial = SpeechStarted(), TranscriptPartial("set a")
    assistant.on_event(started)
    assistant.on_event(partial)
    assert assistant.events == [("device", started), ("page", started), ("device", partial), ("page", partial)]


async def test_the_silent_speaker_keeps_time_like_a_real_output():
    speaker = SilentSpeaker(16000, max_buffer_s=0.05)
    heard: list[tuple[int, float]] = []
    chunk = AudioChunk(np.zeros(1600, np.float32), 16000)  # 0.1 s
    for n in range(3):
        await speaker.write(chunk, lambda at, n=n: heard.append((n, at)))
    end = await speaker.drain()
    assert [n for n, _ in heard] == [0, 1, 2]
    starts = [at for _, at in heard]
    # Back to back on the speaker's own clock: each chunk starts where the one before ended.
    assert starts[1] - starts[0] == pytest.approx(0.1, abs=1e-6) and starts[2] - starts[1] == pytest.approx(0.1, abs=1e-6)
    assert end == pytest.approx(starts[2] + 0.1, abs=1e-6)


async def test_the_silent_speaker_drops_what_was_not_reached_when_interrupted():
    speaker = SilentSpeaker(16000, max_buffer_s=10.0)
    heard: list[int] = []
    for n in range(3):
        await speaker.write(AudioChunk(np.zeros(16000, np.float32), 16000), lambda _at, n=n: heard.append(n))
    await asyncio.sleep(0)  # the first chunk's start is now
    await asyncio.sleep(0.01)
    speaker.interrupt()
    await asyncio.sleep(0.05)
    assert heard == [0]
    await speaker.close()


async def test_with_no_device_a_finished_timer_is_marked_done_and_logged_as_not_announced(tmp_path, monkeypatch, caplog):
    import firmware_py.wiring as wiring
    from agent.assistant import Assistant
    from agent.deciding.tool_use import ToolUse
    from firmware_py.home_tools import open_home_tools
    from firmware_py.serve import build_headless
    from tests.fakes import ToneSynthesizer
    from tests.test_heartbeat import ScriptedPlanner
    from tests.test_turn import make_deps

    configured = parse_config({"tools": {"data_dir": str(tmp_path), "ring_times": 2, "ring_interval_s": 1.0}})
    home = await open_home_tools(configured)

    async def deps_over(config, speaker):
        deps = make_deps(speaker=speaker, synthesizer=ToneSynthesizer(seconds_per_char=0.001))
        deps.tools = ToolUse(ScriptedPlanner([]), home.executor, home.registry, home=home)
        return deps

    async def assistant_over(config, deps):
        return Assistant(deps)

    monkeypatch.setattr(wiring, "build_turn_deps", deps_over)
    monkeypatch.setattr(wiring, "verify_models", lambda config: None)
    monkeypatch.setattr(wiring, "warm_assistant", assistant_over)
    caplog.set_level("INFO")
    parts = await build_headless(configured)
    try:
        home.timers.start(1, "pasta")

        def told() -> list[str]:
            return [r.getMessage() for r in caplog.records if "pasta" in r.getMessage().lower() and r.name != "tools.timers"]

        for _ in range(1000):  # waits for the line, however late; 10 s at most
            if told():
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        assert home.timers.active() == []  # it ended and is marked done, as the page shows
    finally:
        await parts.close()
    lines = told()
    assert lines and all("not announced aloud: no speaker" in line for line in lines), lines
    assert not any(r.getMessage().startswith(("announced", "rang")) for r in caplog.records)
