"""``hearth run`` started as systemd starts a Type=notify service: a real process, real models,
PortAudio on a PulseAudio null sink, the keyboard for the button, and the shipped default
configuration.  It runs under strace, which records every socket it opens.

One start is shared by the tests below: what it said to systemd, and in what order; the sockets
it held once ready; the sockets it ever opened; how it stopped on SIGTERM.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass

import pytest

from bench.drills.ready_time import ApplianceRun, NotifySocket, internet_sockets, start_appliance, stop_appliance

pytestmark = [pytest.mark.integration, pytest.mark.audio]

WATCHDOG_USEC = 1_000_000  # pings every 0.5 s, so a few arrive quickly
START_TIMEOUT_S = 600.0  # a guard against a hang, not a speed requirement


@dataclass
class Started:
    run: ApplianceRun
    ready: dict[str, str]
    pings_after_ready: int
    sockets_at_ready: list[dict]
    exit_code: int
    trace: str
    log: str


@pytest.fixture(scope="module")
def started(pulse_null_sink, models_dir, tmp_path_factory) -> Started:
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace not found: it records the sockets hearth opens (apt-get install strace)", pytrace=False)
    folder = tmp_path_factory.mktemp("service")
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "NOTIFY_SOCKET")}
    env.update(HEARTH_MODELS_DIR=str(models_dir), HEARTH_DATA_DIR=str(folder / "data"), WATCHDOG_USEC=str(WATCHDOG_USEC))
    trace_file = folder / "strace.txt"
    log_path = folder / "hearth.log"
    with NotifySocket(folder / "notify") as notify, open(log_path, "w") as log_file:
        run = start_appliance(notify, env, log_file, prefix=(strace, "-f", "-qq", "-e", "trace=socket", "-o", str(trace_file)))
        try:
            ready = run.wait_for("READY", START_TIMEOUT_S)
            pid = int(ready["MAINPID"])  # hearth itself, not strace
            sockets = internet_sockets(pid)
            before = len(run.messages)
            for _ in range(3):
                run.wait_for("WATCHDOG", 30.0)
            pings = sum("WATCHDOG" in m for _, m in run.messages[before:])
            code = stop_appliance(run, pid)
            run.drain()
        except BaseException:
            stop_appliance(run)
            print(log_path.read_text(errors="replace")[-3000:])
            raise
    return Started(run, ready, pings, sockets, code, trace_file.read_text(errors="replace"), log_path.read_text(errors="replace"))


def test_it_says_what_it_is_doing_then_ready_once_warm(started):
    keys = [next(iter(m)) for _, m in started.run.messages]
    assert keys[0] == "STATUS" and started.run.messages[0][1]["STATUS"] == "loading and warming the models"
    assert started.ready["STATUS"] == "ready: press the button and speak"
    # READY comes after the models are warm and the microphone and speaker are open.
    log = started.log
    assert "models loaded and warm" in log and "microphone open" in log and "speaker open" in log


def test_the_watchdog_is_pinged_while_it_runs(started):
    assert started.pings_after_ready >= 3


def test_sigterm_says_stopping_and_ends_cleanly(started):
    assert started.exit_code == 0
    assert any("STOPPING" in m for _, m in started.run.messages)


def test_no_network_listener_and_no_internet_socket_at_all(started):
    assert [s for s in started.sockets_at_ready if s["listens"]] == []
    assert started.sockets_at_ready == []


def test_from_start_to_stop_it_never_opens_an_internet_socket(started):
    families = re.findall(r"socket\((AF_\w+)", started.trace)
    assert "AF_UNIX" in families, "the trace recorded nothing: strace did not follow hearth"
    assert sorted(set(families) - {"AF_UNIX"}) == []


def test_the_socket_check_sees_a_listener_when_there_is_one():
    """internet_sockets is not blind: a TCP listener and a bound UDP socket of this process are found."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as tcp, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        found = internet_sockets(os.getpid())
        tcp_port, udp_port = tcp.getsockname()[1], udp.getsockname()[1]
        assert {"proto": "tcp", "local": f"127.0.0.1:{tcp_port}", "remote": "0.0.0.0:0", "listens": True} in found
        assert {"proto": "udp", "local": f"127.0.0.1:{udp_port}", "remote": "0.0.0.0:0", "listens": True} in found
    assert not [s for s in internet_sockets(os.getpid()) if s["local"].endswith((f":{tcp_port}", f":{udp_port}"))]

