"""A PulseAudio null sink to play into and record from, on machines without a sound card.

The ``pulse_null_sink`` fixture makes sure a PulseAudio server runs (starting
one, and stopping it afterwards, only if none was running), loads a null sink
of its own, and routes this process's streams to it: the sink for playback,
its monitor for recording.  Whatever a test plays through the default output
device can then be recorded from the default input device.

If PulseAudio cannot be started the test fails, naming why: an audio test that
silently skips would hide a broken audio path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SINK_PREFIX = "hearth_test"
SINK_RATE = 16000
_START_TIMEOUT_S = 10.0


def _pactl(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["pactl", *args], capture_output=True, text=True, timeout=10, check=check)


def _server_running() -> bool:
    try:
        return _pactl("info", check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _start_server(log_path: Path) -> subprocess.Popen[bytes] | None:
    """Start a PulseAudio daemon as a child process we own and wait for it to answer.

    Returns None if another server came up meanwhile (ours then exits at once).
    """
    with open(log_path, "wb") as log:
        # --daemonize=no keeps the server our own child, so it can be stopped by
        # its pid; -n skips default.pa (it would look for sound cards).
        proc = subprocess.Popen(
            [
                "pulseaudio",
                "--daemonize=no",
                "--exit-idle-time=-1",
                "-n",
                "--load=module-native-protocol-unix",
                "--log-target=stderr",
            ],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if _server_running():
            return proc if proc.poll() is None else None
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=5)
    tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
    pytest.fail(
        "PulseAudio did not start (needed to play and record without a sound card; "
        "apt-get install pulseaudio pulseaudio-utils libasound2-plugins): " + " | ".join(tail),
        pytrace=False,
    )


def _rescan_portaudio() -> None:
    """Make PortAudio see the PulseAudio devices if it was initialized before the server ran."""
    import sys

    sd = sys.modules.get("sounddevice")
    if sd is not None:
        sd._terminate()
        sd._initialize()


@pytest.fixture(scope="session")
def pulse_null_sink() -> Iterator[str]:
    """Yield the name of a null sink that this process plays into and records (via its monitor) from."""
    for tool in ("pulseaudio", "pactl"):
        if shutil.which(tool) is None:
            pytest.fail(
                f"{tool} not found: audio tests need PulseAudio "
                "(apt-get install pulseaudio pulseaudio-utils libasound2-plugins)",
                pytrace=False,
            )
    started: subprocess.Popen[bytes] | None = None
    log_dir = tempfile.mkdtemp(prefix="hearth-pulse-")
    if not _server_running():
        started = _start_server(Path(log_dir) / "pulseaudio.log")

    # A sink of our own, so that tests running at the same time on a shared
    # server do not hear each other.
    sink = f"{SINK_PREFIX}_{os.getpid()}"
    loaded = _pactl("load-module", "module-null-sink", f"sink_name={sink}", f"rate={SINK_RATE}", check=False)
    if loaded.returncode != 0:
        if started is not None:
            started.terminate()
            started.wait(timeout=5)
        pytest.fail(f"could not load a PulseAudio null sink: {loaded.stderr.strip()}", pytrace=False)
    module = loaded.stdout.strip()
    if started is not None:
        # Our own server: make the sink the default for any client, as a
        # person would after plugging in a sound card.
        _pactl("set-default-sink", sink, check=False)
        _pactl("set-default-source", f"{sink}.monitor", check=False)
    # libpulse (behind PortAudio's ALSA "pulse"/"default" device) takes these as
    # this process's defaults, whatever the server's defaults are.
    saved = {key: os.environ.get(key) for key in ("PULSE_SINK", "PULSE_SOURCE")}
    os.environ["PULSE_SINK"] = sink
    os.environ["PULSE_SOURCE"] = f"{sink}.monitor"
    _rescan_portaudio()
    try:
        yield sink
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _pactl("unload-module", module, check=False)
        if started is not None:
            started.terminate()
            try:
                started.wait(timeout=5)
            except subprocess.TimeoutExpired:
                started.kill()
                started.wait(timeout=5)
        shutil.rmtree(log_dir, ignore_errors=True)
