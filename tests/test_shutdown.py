"""``hearth run`` stopped in the middle of a reply (SIGTERM from systemd, Ctrl-C on a terminal).

A real subprocess of the appliance: PortAudio microphone and speaker on PulseAudio null sinks,
the real models, keyboard push-to-talk on its stdin.  A person's request is played into the
microphone's sink; once hearth is speaking its answer, the signal is sent.  hearth must exit
with 0, print no traceback, and leave the turn in the record as interrupted, with what was
heard of the reply.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.record import ConversationRecord
from firmware_py.demo import bundled_request
from tests.test_appliance import _load_sink

pytestmark = [pytest.mark.integration, pytest.mark.audio]

ROOT = Path(__file__).resolve().parent.parent
READY = "press Enter to talk"
STARTUP_S = 240.0
"""Loading and warming the models on a small, busy machine."""


async def _line_with(stream: asyncio.StreamReader, text: str, seen: list[str], timeout_s: float) -> None:
    async with asyncio.timeout(timeout_s):
        while True:
            raw = await stream.readline()
            if not raw:
                raise AssertionError(f"hearth ended before printing {text!r}; it printed {seen}")
            seen.append(raw.decode(errors="replace").rstrip())
            if text in seen[-1]:
                return


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_mid_reply_ends_cleanly_with_the_turn_recorded(pulse_null_sink, models_dir, tmp_path: Path, sig):
    pid = os.getpid()
    mic, spk = f"hearth_mic_{pid}_{sig.name}", f"hearth_spk_{pid}_{sig.name}"
    modules = [_load_sink(mic), _load_sink(spk)]
    config = tmp_path / "hearth.toml"
    config.write_text(
        f'models_dir = "{models_dir}"\n[tools]\ndata_dir = "{tmp_path / "data"}"\n', encoding="utf-8"
    )
    env = {**os.environ, "PULSE_SINK": spk, "PULSE_SOURCE": f"{mic}.monitor", "PYTHONUNBUFFERED": "1"}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "firmware_py.cli", "run", "--keyboard", "--config", str(config), "-v",
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    stderr = asyncio.ensure_future(child.stderr.read())
    seen: list[str] = []
    try:
        await _line_with(child.stdout, READY, seen, STARTUP_S)
        child.stdin.write(b"\n")  # press, and talk
        await child.stdin.drain()
        player = await asyncio.create_subprocess_exec("paplay", f"--device={mic}", str(bundled_request("en")))
        await player.wait()
        child.stdin.write(b"\n")  # release
        await child.stdin.drain()
        await _line_with(child.stdout, "[speaking]", seen, 120.0)
        await asyncio.sleep(0.3)  # a moment into the reply
        signalled = time.monotonic()
        child.send_signal(sig)
        rest = await asyncio.wait_for(child.stdout.read(), 30.0)
        rc = await asyncio.wait_for(child.wait(), 30.0)
        stopped_s = time.monotonic() - signalled
        err = (await stderr).decode(errors="replace")
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        for module in modules:
            subprocess.run(["pactl", "unload-module", module], check=False, timeout=10)

    out = "\n".join(seen) + rest.decode(errors="replace")
    assert rc == 0, f"exit code {rc}\n{err[-3000:]}"
    assert "Traceback" not in err and "Error" not in err, err[-3000:]
    record = ConversationRecord.open(tmp_path / "data" / "conversation.sqlite3")
    try:
        entries = record.entries()
    finally:
        record.close()
    rows = [(e.turn, e.role, e.status) for e in entries]
    assert (1, "user", "heard") in rows, rows
    assert rows[-1] == (1, "turn", "interrupted"), (rows, out, err[-2000:])
    # What the listener heard, then what was cut or never heard: every unit of the reply is there.
    units = [e for e in entries if e.role == "assistant"]
    assert units and {u.status for u in units} <= {"spoken", "cut", "unspoken"}
    assert any(u.status in ("cut", "unspoken") for u in units), rows
    # Bounded: hearth does not hang on the way out.
    assert stopped_s < 20.0, stopped_s
    with sqlite3.connect(tmp_path / "data" / "conversation.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
