"""A scratch Home Assistant core to try hearth's home control with, no household's needed.

    make try-ha        # or, after `make setup-ha`: .venv/bin/python -m bench.home_assistant.scratch

Starts the core the home-control tests use (:mod:`bench.home_assistant.core`: template lights and
switches, a thermostat, a lock and a garage door, on loopback, onboarded, the entities placed in
areas and exposed to Assist), writes its owner's long-lived token to a file only this user reads
and a hearth.toml naming it, prints the address, the token file and the ``[home_assistant]``
lines, and runs until Ctrl-C; then the core stops and its folder, token included, is removed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType

from bench.home_assistant.core import EXPOSED, HomeAssistantCore, ha_venv, remove_core, start_core

AREA = "Kitchen"
"""The area the scratch core's kitchen lights, hood fan and oven are in: where hearth stands."""

OWNER = ("owner", "kitchen-test-only")
"""The owner :func:`~bench.home_assistant.core.start_core` onboards: to look at the core in a browser."""


def hearth_settings(url: str, token_file: Path, area: str = AREA) -> str:
    """The ``[home_assistant]`` table of a hearth.toml that connects hearth to the core at ``url``."""
    # json.dumps writes a TOML basic string: the same quotes and escapes.
    return (f"[home_assistant]\nurl = {json.dumps(url)}\ntoken_file = {json.dumps(str(token_file))}\n"
            f"area = {json.dumps(area)}\n")


def write_files(core: HomeAssistantCore, folder: Path) -> tuple[Path, Path]:
    """The token file (readable by this user only, as hearth asks of a token file) and a
    hearth.toml holding :func:`hearth_settings`, in ``folder``."""
    token_file = folder / "ha-token"
    descriptor = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(core.token + "\n")
    config = folder / "hearth.toml"
    config.write_text(hearth_settings(core.url, token_file), encoding="utf-8")
    return token_file, config


def _show_log_tail(folder: Path, lines: int = 10) -> None:
    """The end of the core's log, on stderr: the folder it is in is removed on the way out."""
    log = folder / "ha-config" / "run.log"
    if log.exists():
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
        print("\n".join(f"  {line}" for line in tail), file=sys.stderr)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # every stop ends it as Ctrl-C does: the core stopped, the folder removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.home_assistant.scratch", description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    if not (ha_venv() / "bin" / "hass").exists():
        print(f"hearth: no Home Assistant core in {ha_venv()}: run `make setup-ha` first (about 1.5 minutes)", file=sys.stderr)
        return 2
    # SIGINT too: a shell that starts this in the background ignores it there, and kill -INT should still stop it.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop)
    with tempfile.TemporaryDirectory(prefix="hearth-ha-") as scratch:
        folder = Path(scratch)
        print(f"starting a scratch Home Assistant core in {folder} …", flush=True)
        try:
            core = start_core(folder)
        except KeyboardInterrupt:
            return 130  # stopped while starting: start_core stopped the core it began
        except (RuntimeError, OSError) as exc:
            print(f"hearth: the scratch Home Assistant core did not start: {exc}", file=sys.stderr)
            _show_log_tail(folder)
            return 1
        try:
            token_file, config = write_files(core, folder)
            lines = [
                f"Home Assistant: {core.url}  (in a browser: log in as {OWNER[0]} / {OWNER[1]})",
                f"token file:     {token_file}",
                f"hearth.toml:    {config}, which holds:",
                *(f"    {line}" for line in hearth_settings(core.url, token_file).splitlines()),
                f"exposed:        {', '.join(EXPOSED)}",
                f"try it:         hearth run --keyboard --config {config}   then: \"turn on the kitchen lights\", \"is the oven on?\"",
                "Ctrl-C stops the core and removes its folder, the token with it.",
            ]
            print("\n".join(lines), flush=True)
            code = core.process.wait() if core.process is not None else 0
            print(f"hearth: Home Assistant exited by itself ({code})", file=sys.stderr)
            _show_log_tail(folder)
            return 1
        except KeyboardInterrupt:
            print("stopping the core and removing its folder …", flush=True)
            return 0
        finally:
            # A second Ctrl-C while the core shuts down (some seconds) would leave it running.
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, signal.SIG_IGN)
            remove_core(core)


if __name__ == "__main__":
    raise SystemExit(main())
