"""systemd notifications (firmware_py.service) against a real AF_UNIX datagram socket bound here."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time

import pytest

from firmware_py.service import ServiceNotifier, notify_address, watchdog_interval_s
from tests.test_device import LiveMicrophone


class Receiver:
    """systemd's side: a bound datagram socket, read without blocking."""

    def __init__(self, address: str | bytes) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.setblocking(False)
        self._pending: list[dict[str, str]] = []

    def drain(self) -> list[dict[str, str]]:
        """Every message waiting now, as KEY=value fields."""
        messages = []
        while True:
            try:
                data = self.sock.recv(4096)
            except BlockingIOError:
                return messages
            messages.append(dict(line.split("=", 1) for line in data.decode().splitlines()))

    async def next(self, timeout_s: float = 10.0) -> dict[str, str]:
        """The next message, waiting for it on the loop (so a pinger on the loop can send it)."""
        deadline = time.monotonic() + timeout_s
        while not self._pending and time.monotonic() < deadline:
            self._pending += self.drain()
            await asyncio.sleep(0.005)
        assert self._pending, "no message"
        return self._pending.pop(0)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def receiver(tmp_path):
    r = Receiver(str(tmp_path / "notify"))
    yield r
    r.close()


def test_the_address_is_a_path_an_abstract_name_or_nothing():
    assert notify_address({"NOTIFY_SOCKET": "/run/systemd/notify"}) == "/run/systemd/notify"
    assert notify_address({"NOTIFY_SOCKET": "@hearth/notify"}) == b"\0hearth/notify"
    assert notify_address({}) is None
    assert notify_address({"NOTIFY_SOCKET": ""}) is None
    assert notify_address({"NOTIFY_SOCKET": "vsock:2:1234"}) is None


def test_the_watchdog_interval_is_half_the_timeout_and_only_for_this_process():
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000"}, pid=7) == 15.0
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "7"}, pid=7) == 15.0
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "8"}, pid=7) is None
    assert watchdog_interval_s({"WATCHDOG_USEC": "0"}, pid=7) is None
    assert watchdog_interval_s({"WATCHDOG_USEC": "soon"}, pid=7) is None
    assert watchdog_interval_s({}, pid=7) is None


async def test_without_notify_socket_nothing_is_sent_and_no_watchdog_runs():
    notifier = ServiceNotifier.from_environment({"WATCHDOG_USEC": "1000000"})
    assert not notifier.active
    assert notifier.send("READY=1") is False
    assert notifier.start_watchdog() is None


async def test_ready_status_and_stopping_arrive_as_systemd_reads_them(receiver, tmp_path):
    notifier = ServiceNotifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "notify")})
    notifier.status("loading and warming\nthe models")
    notifier.ready("ready: press the button")
    notifier.stopping()
    notifier.stopping()  # a second signal: said once
    notifier.ready()  # too late: never READY after STOPPING
    assert receiver.drain() == [
        {"STATUS": "loading and warming the models"},
        {"READY": "1", "STATUS": "ready: press the button", "MAINPID": str(os.getpid())},
        {"STOPPING": "1", "STATUS": "stopping"},
    ]


async def test_an_abstract_socket_address_is_reached():
    name = f"hearth-test-notify-{os.getpid()}"
    r = Receiver(b"\0" + name.encode())
    try:
        notifier = ServiceNotifier.from_environment({"NOTIFY_SOCKET": "@" + name})
        assert notifier.send("READY=1")
        assert r.drain() == [{"READY": "1"}]
    finally:
        r.close()


async def test_watchdog_pings_come_from_the_loop_and_stop_while_it_is_blocked(receiver, tmp_path):
    notifier = ServiceNotifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "20000"})
    assert notifier.watchdog_s == 0.01
    task = notifier.start_watchdog()
    assert task is not None
    try:
        for _ in range(3):
            assert await receiver.next() == {"WATCHDOG": "1"}
        receiver.drain()
        # The loop is blocked (as by a call that never returns): no ping can be sent meanwhile,
        # however long it lasts, because the pinger is a task on this very loop.
        time.sleep(0.2)
        assert receiver.drain() == []
        # Unblocked, the pings resume.
        assert await receiver.next() == {"WATCHDOG": "1"}
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    receiver.drain()
    await asyncio.sleep(0.05)
    assert receiver.drain() == [], "pings went on after the task was cancelled"


async def test_a_reader_that_stopped_reading_never_blocks_the_loop(receiver, tmp_path, caplog):
    notifier = ServiceNotifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "notify")})
    caplog.set_level(logging.WARNING, logger="firmware_py.service")
    # Nobody reads: the socket's queue fills, and then each message is dropped, not waited on.
    sent = [notifier.send("WATCHDOG=1") for _ in range(2000)]
    assert sent[0] is True and sent[-1] is False
    assert len([r for r in caplog.records if "could not notify systemd" in r.getMessage()]) == 1
    receiver.drain()
    assert notifier.send("WATCHDOG=1") is True


async def test_no_socket_at_the_address_is_logged_once_and_not_raised(tmp_path, caplog):
    notifier = ServiceNotifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "nobody")})
    caplog.set_level(logging.WARNING, logger="firmware_py.service")
    assert notifier.send("READY=1") is False
    assert notifier.send("WATCHDOG=1") is False
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("could not notify systemd (READY)")


class RecordingButton:
    def __init__(self) -> None:
        self.opened = False

    def open(self, on_press, on_release) -> None:
        self.opened = True

    def close(self) -> None:
        self.opened = False


async def test_the_device_loop_says_ready_once_the_button_is_open(receiver, tmp_path):
    from agent.assistant import Assistant
    from firmware_py.device import DeviceLoop
    from firmware_py.gpio import NoLight
    from tests.fakes import ScriptedChatModel, ToneSynthesizer
    from tests.test_turn import make_deps

    notifier = ServiceNotifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "notify")})
    deps = make_deps(chat=ScriptedChatModel("Hi."), synthesizer=ToneSynthesizer())
    button = RecordingButton()
    device = DeviceLoop(Assistant(deps), LiveMicrophone(), button, NoLight())
    open_at_ready: list[bool] = []

    def ready() -> None:
        open_at_ready.append(button.opened)
        notifier.ready()

    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop, on_ready=ready))
    try:
        assert (await receiver.next())["READY"] == "1"
        assert open_at_ready == [True]
    finally:
        stop.set()
        await runner
    assert not button.opened
