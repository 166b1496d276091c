"""The appliance loop on gpiozero's mock pins: press, speak, release; the LED follows."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import numpy as np
import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from agent.assistant import Assistant
from agent.events import State
from agent.model.llm import stream_from_thread
from agent.results import Outcome
from audio.protocols import AudioChunk
from firmware_py.device import DeviceLoop
from firmware_py.gpio import STATE_COLOURS, GpioButton, KeyboardButton, RgbStatusLight
from tests.fakes import ScriptedChatModel, ToneSynthesizer
from tests.test_turn import make_deps


class LiveMicrophone:
    """Silence, except while ``talking`` is set: then a loud tone, like a voice."""

    sample_rate = 16000

    def __init__(self) -> None:
        self.talking = False
        self._closed = False

    async def chunks(self):
        n = 512
        t = np.arange(n) / self.sample_rate
        tone = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
        while not self._closed:
            await asyncio.sleep(n / self.sample_rate)
            yield AudioChunk(tone if self.talking else np.zeros(n, np.float32), self.sample_rate)

    async def close(self) -> None:
        self._closed = True


@pytest.fixture
def mock_pins():
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    yield Device.pin_factory
    Device.pin_factory.reset()
    Device.pin_factory = None


async def wait_for(predicate, timeout=10.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


async def test_press_speak_release_answers_and_the_led_shows_each_state(mock_pins):
    loop = asyncio.get_running_loop()
    deps = make_deps(chat=ScriptedChatModel("Ten minutes, starting now."), synthesizer=ToneSynthesizer(seconds_per_char=0.01))
    assistant = Assistant(deps)
    mic = LiveMicrophone()
    light = RgbStatusLight((22, 23, 24))
    seen: list[tuple] = []
    original_show = light.show

    def show(state):
        original_show(state)
        seen.append(light.colour)

    light.show = show  # type: ignore[method-assign]
    device = DeviceLoop(assistant, mic, GpioButton(17, 0.0, loop), light)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    await asyncio.sleep(0.1)
    pin = mock_pins.pin(17)

    pin.drive_low()  # press (the button pulls the pin to ground)
    await asyncio.sleep(0.2)
    mic.talking = True
    await asyncio.sleep(0.8)
    mic.talking = False
    await asyncio.sleep(0.1)
    pin.drive_high()  # release: hold-to-talk ends the utterance

    await wait_for(lambda: assistant.results)
    result = assistant.results[0]
    assert result.outcome == Outcome.ANSWERED
    assert result.spoken == ["Ten minutes, starting now."]
    for state in (State.LISTENING, State.THINKING, State.SPEAKING):
        assert STATE_COLOURS[state] in seen
    await wait_for(lambda: light.colour == STATE_COLOURS[State.IDLE])
    stop.set()
    await runner


async def start_and_ask(mock_pins, assistant: Assistant, **settings: Any):
    """Run the device loop and ask one question: press, talk for 0.6 s, release."""
    mic = LiveMicrophone()
    device = DeviceLoop(assistant, mic, GpioButton(17, 0.0, asyncio.get_running_loop()), RgbStatusLight((22, 23, 24)), **settings)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    await asyncio.sleep(0.1)
    pin = mock_pins.pin(17)
    pin.drive_low()
    mic.talking = True
    await asyncio.sleep(0.6)
    mic.talking = False
    pin.drive_high()
    return device, mic, pin, stop, runner


async def test_pressing_while_it_speaks_interrupts_and_listens_again(mock_pins):
    long_reply = "One two three four five. Six seven eight nine ten. Eleven twelve thirteen."
    deps = make_deps(chat=ScriptedChatModel(long_reply), synthesizer=ToneSynthesizer(seconds_per_char=0.05))
    assistant = Assistant(deps)
    device, mic, pin, stop, runner = await start_and_ask(mock_pins, assistant)
    await wait_for(lambda: assistant.current is not None and assistant.current.timeline.first("first_audio_out") is not None)
    first_turn = assistant.current

    pin.drive_low()  # barge-in
    await wait_for(lambda: assistant.results)
    assert assistant.results[0].outcome == Outcome.INTERRUPTED
    assert assistant.results[0].unspoken, "the rest of the reply was cut"
    assert assistant.current is not None and assistant.current is not first_turn
    assert deps.speaker.interruptions, "the speaker was silenced"

    mic.talking = True
    await asyncio.sleep(0.5)
    mic.talking = False
    pin.drive_high()
    await wait_for(lambda: len(assistant.results) == 2, timeout=20)
    assert assistant.results[1].outcome == Outcome.ANSWERED
    stop.set()
    await runner


async def _ask_and_speak_up_in_the_first_pause(mock_pins, barge_in: str):
    """Ask for a long reply, then talk when hearth draws its first breath."""
    long_reply = "One two three four five six seven. Eight nine ten eleven twelve. Thirteen fourteen fifteen."
    deps = make_deps(chat=ScriptedChatModel(long_reply), synthesizer=ToneSynthesizer(seconds_per_char=0.02))
    assistant = Assistant(deps, barge_in=barge_in)
    device, mic, pin, stop, runner = await start_and_ask(mock_pins, assistant)
    await wait_for(lambda: device.speaking_up.is_open)  # the first pause: the microphone hears the room
    first_turn = assistant.current
    mic.talking = True
    return assistant, mic, stop, runner, first_turn


async def test_speaking_up_in_a_pause_stops_the_reply_and_listens(mock_pins):
    assistant, mic, stop, runner, first_turn = await _ask_and_speak_up_in_the_first_pause(mock_pins, "stop")
    await wait_for(lambda: assistant.results)
    first = assistant.results[0]
    assert first.outcome == Outcome.INTERRUPTED
    assert first.timeline.first("barge_in").detail["mode"] == "stop"
    assert first.unspoken, "the rest of the reply is kept as unspoken"
    assert assistant.current is not None and assistant.current is not first_turn  # listening to the user
    await asyncio.sleep(0.4)
    mic.talking = False
    await wait_for(lambda: len(assistant.results) == 2, timeout=20)
    assert assistant.results[1].outcome == Outcome.ANSWERED
    stop.set()
    await runner


async def test_in_rush_mode_speaking_up_says_the_rest_without_pauses(mock_pins):
    assistant, mic, stop, runner, first_turn = await _ask_and_speak_up_in_the_first_pause(mock_pins, "rush")
    await wait_for(lambda: assistant.results, timeout=20)
    mic.talking = False
    first = assistant.results[0]
    assert first.outcome == Outcome.ANSWERED
    rushed = first.timeline.first("barge_in")
    assert rushed.detail["mode"] == "rush"
    assert [u.status for u in first.units] == ["spoken"] * 3
    assert all(m.detail["silence_s"] == 0 for m in first.timeline.all("pause") if m.t > rushed.t)
    assert len(assistant.results) == 1 and assistant.current is None  # no new turn: the reply went on
    stop.set()
    await runner


async def test_keyboard_push_to_talk_toggles_on_enter():
    import os

    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    stream = os.fdopen(read_fd, "r")
    edges: list[str] = []
    button = KeyboardButton(loop, stream)
    button.open(lambda at: edges.append("press"), lambda at: edges.append("release"))
    for _ in range(3):
        os.write(write_fd, b"\n")
        await wait_for(lambda n=len(edges): len(edges) > n)
    assert edges == ["press", "release", "press"]
    button.close()
    os.close(write_fd)
    stream.close()


async def test_stopping_in_the_middle_of_a_reply_records_the_turn(mock_pins, tmp_path):
    from agent.record import ConversationRecord

    long_reply = "One two three four five. Six seven eight nine ten. Eleven twelve thirteen."
    deps = make_deps(chat=ScriptedChatModel(long_reply), synthesizer=ToneSynthesizer(seconds_per_char=0.05))
    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    assistant = Assistant(deps, record=record)
    device, mic, pin, stop, runner = await start_and_ask(mock_pins, assistant)
    await wait_for(lambda: assistant.current is not None and assistant.current.timeline.first("first_audio_out") is not None)
    stop.set()  # Ctrl-C
    await runner
    assert [r.outcome for r in assistant.results] == [Outcome.INTERRUPTED]
    assert [e.role for e in record.entries()][:2] == ["user", "assistant"]
    record.close()


class SlowToStopChat:
    """Writes its reply from a worker thread, then stays in a slice that does not look at the
    cancel flag for ``slice_s`` (a long prompt evaluation): closing the stream waits for it."""

    def __init__(self, reply: str, slice_s: float) -> None:
        self.reply = reply
        self.slice_s = slice_s

    async def warm(self, system_prompt: str) -> None:
        pass

    def stream(self, messages, max_tokens=None):
        def work(emit) -> None:
            for word in self.reply.split(" "):
                emit(word + " ")
                time.sleep(0.01)
            time.sleep(self.slice_s)

        return stream_from_thread(work, lambda: None)


async def test_a_turn_slow_to_stop_is_recorded_as_interrupted_before_the_record_closes(mock_pins, tmp_path, caplog):
    from agent.record import ConversationRecord

    reply = "One two three four five. Six seven eight nine ten. Eleven twelve thirteen."
    deps = make_deps(chat=SlowToStopChat(reply, slice_s=1.0), synthesizer=ToneSynthesizer(seconds_per_char=0.05))
    path = tmp_path / "conversation.sqlite3"
    assistant = Assistant(deps, record=ConversationRecord.open(path))
    device, mic, pin, stop, runner = await start_and_ask(mock_pins, assistant, settle_s=0.1)
    await wait_for(lambda: assistant.current is not None and assistant.current.timeline.first("first_audio_out") is not None)
    turn = assistant.current
    stop.set()  # SIGTERM
    await runner  # gave the turn its 0.1 s; the model's slice goes on
    assert not turn._task.done()
    assistant.close()  # what shutdown does next
    await turn.wait()  # the slice ends; the turn with it, after the record closed

    assert [r.levelname for r in caplog.records if r.levelno >= logging.ERROR] == []
    record = ConversationRecord.open(path)
    try:
        rows = [(e.role, e.status) for e in record.entries()]
    finally:
        record.close()
    assert rows[0] == ("user", "heard")
    assert rows[-1] == ("turn", "interrupted")
    assert [status for role, status in rows if role == "assistant"] == ["cut"]  # heard from its start, then stopped


async def _hold(mock_pins, hold_s: float, talk: bool):
    """Press for ``hold_s``, speaking through it or not; returns (results, long presses, spoken phrases)."""
    loop = asyncio.get_running_loop()
    synthesizer = ToneSynthesizer(seconds_per_char=0.002)
    deps = make_deps(chat=ScriptedChatModel("Sure."), synthesizer=synthesizer)
    assistant = Assistant(deps)
    mic = LiveMicrophone()
    long_presses: list[float] = []

    async def step_volume() -> None:
        long_presses.append(loop.time())
        await assistant.announce("Volume 8.")

    device = DeviceLoop(assistant, mic, GpioButton(17, 0.0, loop), RgbStatusLight((22, 23, 24)),
                        on_long_press=step_volume, long_press_s=1.0)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    await asyncio.sleep(0.1)
    pin = mock_pins.pin(17)
    pin.drive_low()
    mic.talking = talk
    await asyncio.sleep(hold_s)
    mic.talking = False
    await asyncio.sleep(0.05)
    pin.drive_high()
    await wait_for(lambda: long_presses or assistant.results)
    await asyncio.sleep(0.3)
    stop.set()
    await runner
    return assistant.results, long_presses, synthesizer.texts


async def test_a_long_press_with_nothing_said_steps_the_volume_and_is_no_request(mock_pins):
    results, long_presses, said = await _hold(mock_pins, 1.3, talk=False)
    assert len(long_presses) == 1
    assert said == ["Volume 8."]  # no "I didn't hear anything" before it
    assert all(r.transcript == "" for r in results)


async def test_a_long_press_with_speech_is_a_request(mock_pins):
    results, long_presses, said = await _hold(mock_pins, 1.3, talk=True)
    assert long_presses == []
    assert results and results[0].spoken == ["Sure."]
