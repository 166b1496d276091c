"""A PulseAudio server of one's own, and null sinks on it that come and go, for the fault drills.

The drills kill the sound server and remove its devices; on a server other programs share,
that would break them.  So :class:`PrivatePulseServer` runs a server with its own runtime
directory and socket (``-n``: no sound cards, no default modules), and a process is pointed
at it with ``PULSE_SERVER``; :class:`NullSink` is a sink (with its monitor as the source) that
can be unloaded and loaded again under the same name, as a USB speaker is unplugged and
plugged back in.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

_START_TIMEOUT_S = 10.0


class PulseError(RuntimeError):
    """The private PulseAudio server could not be started or asked something; the message says why."""


def pactl(server: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["pactl", "-s", server, *args], capture_output=True, text=True, timeout=10)
    if check and done.returncode != 0:
        raise PulseError(f"pactl {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done


class PrivatePulseServer:
    """A PulseAudio daemon that this process starts, kills, pauses and restarts as it likes."""

    def __init__(self, runtime_dir: Path | None = None) -> None:
        self.runtime_dir = runtime_dir or Path(tempfile.mkdtemp(prefix="hearth-pulse-own-"))
        self.socket = self.runtime_dir / "native"
        self.address = f"unix:{self.socket}"
        """What ``PULSE_SERVER`` is set to for a process that should use this server."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._paused = False

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the daemon and wait until it answers."""
        if shutil.which("pulseaudio") is None or shutil.which("pactl") is None:
            raise PulseError("pulseaudio and pactl are needed (apt-get install pulseaudio pulseaudio-utils libasound2-plugins)")
        if self.running:
            return
        env = {**os.environ, "PULSE_RUNTIME_PATH": str(self.runtime_dir), "PULSE_STATE_PATH": str(self.runtime_dir / "state")}
        log_path = self.runtime_dir / "pulseaudio.log"
        with open(log_path, "ab") as log:
            self._proc = subprocess.Popen(
                [
                    "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
                    "--log-target=stderr", f"--load=module-native-protocol-unix socket={self.socket} auth-anonymous=1",
                ],
                stdout=log, stderr=log, env=env, start_new_session=True,
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if pactl(self.address, "info", check=False).returncode == 0:
                return
            time.sleep(0.05)
        self.stop()
        tail = " | ".join(log_path.read_text(errors="replace").strip().splitlines()[-3:])
        raise PulseError(f"the private PulseAudio server did not start: {tail}")

    def kill(self) -> None:
        """SIGKILL the daemon, as a crash would."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            if self._paused:
                self.resume()
            proc.kill()
            proc.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP the daemon: it hangs, its clients' calls block."""
        if self.running:
            assert self._proc is not None
            self._proc.send_signal(signal.SIGSTOP)
            self._paused = True

    def resume(self) -> None:
        if self._proc is not None and self._paused:
            self._proc.send_signal(signal.SIGCONT)
            self._paused = False

    def stop(self) -> None:
        """Stop the daemon (gently, then not)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        if self._paused:
            proc.send_signal(signal.SIGCONT)
            self._paused = False
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.runtime_dir, ignore_errors=True)


class NullSink:
    """A null sink on ``server`` under a fixed name: played into as a speaker, recorded from
    (its monitor) as a microphone, removed and added again at will."""

    def __init__(self, server: str, name: str, rate: int = 16000) -> None:
        self.server = server
        self.name = name
        self.rate = rate
        self.source = f"{name}.monitor"
        self._module: str | None = None

    @property
    def loaded(self) -> bool:
        return self._module is not None

    def load(self) -> None:
        if self._module is None:
            done = pactl(self.server, "load-module", "module-null-sink", f"sink_name={self.name}", f"rate={self.rate}")
            self._module = done.stdout.strip()

    def unload(self) -> None:
        """Remove the sink and its monitor (only the module this object loaded)."""
        module, self._module = self._module, None
        if module is not None:
            pactl(self.server, "unload-module", module, check=False)

    def forget(self) -> None:
        """The server died and took the sink with it: nothing to unload."""
        self._module = None
