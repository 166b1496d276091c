"""Time from process start to READY: ``hearth run`` as systemd starts it, with the real models.

Each run starts ``hearth run`` as a new process with ``$NOTIFY_SOCKET`` pointing at a datagram
socket this script binds (what systemd does for ``Type=notify``), and clocks the time from
starting the process to its ``READY=1``: the models loaded and warm, microphone and speaker open.
Audio goes to a PulseAudio null sink on a server of this script's own.  The button is the keyboard
(no GPIO here).  The first run may read the models from disk, the later ones from the page cache;
both are reported.  It also records the process's internet sockets at READY (there should be none).

    python -m bench.drills.ready_time --runs 5 --out bench/results/ready-x86.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from bench.provenance import git_commit, written_by

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = ROOT / "firmware_py" / "assets" / "hearth.toml"


class NotifySocket:
    """systemd's end of sd_notify: a datagram socket bound at ``path``, read with a timeout."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._sock: socket.socket | None = None

    def __enter__(self) -> NotifySocket:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(str(self.path))
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._sock is not None:
            self._sock.close()
        self.path.unlink(missing_ok=True)

    def receive(self, timeout_s: float) -> dict[str, str] | None:
        """The next message as its ``KEY=value`` fields, or None if none came in ``timeout_s``."""
        assert self._sock is not None, "use it as a context manager"
        self._sock.settimeout(timeout_s)
        try:
            data = self._sock.recv(4096)
        except TimeoutError:
            return None
        return dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)


@dataclass
class ApplianceRun:
    """``hearth run --keyboard`` started as a service would be, and what it told systemd."""

    process: subprocess.Popen[bytes]
    notify: NotifySocket
    started_at: float
    messages: list[tuple[float, dict[str, str]]] = field(default_factory=list)
    """(seconds since start, fields) of every message received so far."""

    def wait_for(self, key: str, timeout_s: float) -> dict[str, str]:
        """Read messages until one carries ``key``; fail with the reason if the process ends first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = self.notify.receive(0.5)
            if message is not None:
                self.messages.append((time.monotonic() - self.started_at, message))
                if key in message:
                    return message
            elif self.process.poll() is not None:
                raise RuntimeError(f"hearth run exited with {self.process.returncode} before {key}")
        raise RuntimeError(f"no {key} within {timeout_s:.0f} s")

    def drain(self) -> None:
        """Read what is still queued (after the process ended: its last words, STOPPING)."""
        while (message := self.notify.receive(0.2)) is not None:
            self.messages.append((time.monotonic() - self.started_at, message))

    def first(self, key: str) -> float | None:
        """Seconds from the process start to the first message with ``key``."""
        return next((t for t, m in self.messages if key in m), None)


def start_appliance(notify: NotifySocket, env: Mapping[str, str], log_file: TextIO,
                    config: Path = DEFAULT_CONFIG, prefix: tuple[str, ...] = ()) -> ApplianceRun:
    """Start ``hearth run --keyboard -v`` from this checkout; ``prefix`` runs it under a tracer."""
    command = [*prefix, sys.executable, "-m", "firmware_py.cli", "run", "--keyboard", "-v", "--config", str(config)]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env={**env, "NOTIFY_SOCKET": str(notify.path)},
                               stdin=subprocess.PIPE, stdout=log_file, stderr=subprocess.STDOUT)
    return ApplianceRun(process, notify, started)


def stop_appliance(run: ApplianceRun, pid: int | None = None, timeout_s: float = 60.0) -> int:
    """SIGTERM, as ``systemctl stop`` sends it (to ``pid``, the traced process under a tracer)."""
    if run.process.poll() is None:
        os.kill(pid or run.process.pid, signal.SIGTERM)
    try:
        return run.process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        run.process.kill()
        run.process.wait()
        raise


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _address(hex_address: str) -> str:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return f"{socket.inet_ntop(socket.AF_INET, raw[::-1])}:{int(port, 16)}"
    # /proc prints an IPv6 address as four native-endian 32-bit words.
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)) if sys.byteorder == "little" else raw
    return f"[{socket.inet_ntop(socket.AF_INET6, words)}]:{int(port, 16)}"


_TCP_LISTEN = "0A"
_UDP_UNCONNECTED = "07"


def internet_sockets(pid: int) -> list[dict[str, Any]]:
    """The TCP, UDP and raw IP sockets process ``pid`` holds, each with whether it listens.

    ``/proc/<pid>/net/*`` lists every socket of the process's network namespace, so the entries
    are matched to the process's own file descriptors by inode.  A TCP socket listens in state
    LISTEN; an unconnected UDP or raw socket receives from anyone, so it counts as listening too.
    """
    mine = _socket_inodes(pid)
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6"):
        try:
            lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
        except FileNotFoundError:  # no IPv6 in this kernel
            continue
        for line in lines:
            fields = line.split()
            if int(fields[9]) not in mine:
                continue
            state = fields[3]
            listens = state == _TCP_LISTEN if proto.startswith("tcp") else state == _UDP_UNCONNECTED
            found.append({"proto": proto, "local": _address(fields[1]), "remote": _address(fields[2]), "listens": listens})
    return found


class PrivatePulse:
    """A PulseAudio server of this script's own (its own socket) with one null sink, so a run
    neither needs a sound card nor disturbs a server someone else is using."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.server = f"unix:{folder / 'native'}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    def __enter__(self) -> PrivatePulse:
        if shutil.which("pulseaudio") is None:
            raise SystemExit("pulseaudio not found: apt-get install pulseaudio pulseaudio-utils")
        self._log = open(self.folder / "pulseaudio.log", "wb")
        self._process = subprocess.Popen(
            ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
             f"--load=module-native-protocol-unix socket={self.folder / 'native'} auth-anonymous=1",
             "--load=module-null-sink sink_name=hearth_ready rate=16000", "--log-target=stderr"],
            stdout=subprocess.DEVNULL, stderr=self._log,
            env={**os.environ, "PULSE_RUNTIME_PATH": str(self.folder)}, start_new_session=True,
        )
        for _ in range(100):
            if subprocess.run(["pactl", "--server", self.server, "info"], capture_output=True).returncode == 0:
                return self
            time.sleep(0.1)
        raise SystemExit(f"PulseAudio did not start: see {self.folder / 'pulseaudio.log'}")

    def __exit__(self, *_exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
        if self._log is not None:
            self._log.close()


def measure(runs: int, models_dir: Path | None, config: Path, timeout_s: float) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="hearth-ready-"))
    results = []
    try:
        with PrivatePulse(folder) as pulse:
            env = {**os.environ, "PULSE_SERVER": pulse.server, "HEARTH_DATA_DIR": str(folder / "data")}
            env.pop("PULSE_SINK", None)
            env.pop("PULSE_SOURCE", None)
            if models_dir is not None:
                env["HEARTH_MODELS_DIR"] = str(models_dir)
            for i in range(runs):
                log_path = folder / f"run-{i}.log"
                load = os.getloadavg()[0]
                with NotifySocket(folder / "notify") as notify, open(log_path, "w") as log_file:
                    run = start_appliance(notify, env, log_file, config)
                    try:
                        ready = run.wait_for("READY", timeout_s)
                        sockets = internet_sockets(run.process.pid)
                    finally:
                        code = stop_appliance(run)
                text = log_path.read_text(errors="replace")
                warm = re.search(r"models loaded and warm in ([\d.]+) s", text)
                results.append({
                    "ready_s": round(run.first("READY") or 0.0, 3),
                    "models_loaded_and_warm_s": float(warm.group(1)) if warm else None,
                    "status_at_ready": ready.get("STATUS"),
                    "internet_sockets_at_ready": sockets,
                    "exit_code": code,
                    "load_average_1min_at_start": round(load, 2),
                })
                print(f"run {i + 1}: READY after {results[-1]['ready_s']} s", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    times = [r["ready_s"] for r in results]
    return {
        "what": "seconds from starting `hearth run` to its READY=1 (systemd Type=notify), real models",
        "command": f"python -m bench.drills.ready_time --runs {runs}",
        "commit": git_commit(),
        "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count(),
                    "processor": _cpu_model()},
        "config": str(config.relative_to(ROOT) if config.is_relative_to(ROOT) else config),
        "runs": results,
        "ready_s": {"median": round(statistics.median(times), 3), "min": min(times), "max": max(times),
                    "first_run": times[0], "median_after_first": round(statistics.median(times[1:]), 3) if len(times) > 1 else None},
        "internet_sockets_at_ready": sum(len(r["internet_sockets_at_ready"]) for r in results),
    }


def _cpu_model() -> str:
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/cpuinfo").read_text().splitlines() if ":" in line)
    except OSError:
        info = {}
    info = {key.strip().lower(): value.strip() for key, value in info.items()}
    # x86 names the CPU "model name"; a Pi names the board "Model" and the SoC "Hardware".
    return next((info[key] for key in ("model name", "model", "hardware") if info.get(key)), platform.processor() or "unknown")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.drills.ready_time", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="how many starts (default 5)")
    parser.add_argument("--models-dir", type=Path, help="default: $HEARTH_MODELS_DIR or ~/.local/share/hearth/models")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="default: the shipped default configuration")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up on a start after this many seconds")
    parser.add_argument("--out", type=Path, required=True, help="the JSON report")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be 1 or more")
    provenance = written_by("bench.drills.ready_time", argv)
    report = {"written_by": provenance, **measure(args.runs, args.models_dir, args.config.resolve(), args.timeout)}
    report["command"] = "python -m bench.drills.ready_time " + " ".join(provenance["arguments"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"READY after {report['ready_s']['median']} s (median of {args.runs}); written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
