"""``hearth cadence``: how the speaker would cut and pace a reply, without any model.

    echo "우산은 젖은 채로 ..." | hearth cadence --language ko --closeness 0.8

Reads a reply from standard input (UTF-8) and prints one JSON object,
``{"units": [...], "pauses_s": [...]}``: the units exactly as cut (trailing spaces kept) and
the silence before each one.  It exists so that the rules and the pause weights can be tried
on real text from a shell, and so that what it shows is what the speaker does: it builds the
settings with :func:`firmware_py.wiring.cadence_settings` from the same configuration file and
runs the same :class:`agent.speaking.cadence.Cadence` object the speaker path runs.  Anything else
(a private re-implementation of the calls) could drift from what is heard.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger(__name__)

WEIGHTS = ("closeness", "busy", "mood")
"""The pace weights the command takes as flags; each is the config key ``cadence.<name>``."""


class InputError(ValueError):
    """Standard input cannot be read as a reply; the message is one line."""


def add_command(sub: Any) -> None:
    """Register ``hearth cadence`` on the ``hearth`` subparsers."""
    cadence = sub.add_parser("cadence", help="cut a reply from standard input into spoken units and print them with their pauses (JSON)")
    cadence.add_argument("--config", type=Path, help="TOML configuration file (default: /etc/hearth/hearth.toml or ~/.config/hearth/hearth.toml)")
    cadence.add_argument("--language", "--lang", dest="language", choices=["en", "ko"],
                         help="the reply's language (default: the configured language)")
    for name in WEIGHTS:
        cadence.add_argument(f"--{name}", type=float, metavar="X", help=f"pace weight cadence.{name} (default: the configured one)")
    # -v, as for every command, is added by the program (firmware_py.cli).


def read_text(stream: TextIO) -> str:
    """All of ``stream`` as UTF-8 text, strictly: a reply with broken bytes is refused, not guessed at."""
    raw = getattr(stream, "buffer", None)
    if raw is None:
        # Already text (a StringIO in a test, say): nothing left to decode.
        return stream.read()
    data = raw.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"standard input is not valid UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The flags given, as dotted config overrides (so the config's own range checks apply)."""
    return {f"cadence.{name}": getattr(args, name) for name in WEIGHTS if getattr(args, name, None) is not None}


def cut(text: str, config: Any, language: str | None = None) -> dict[str, list[Any]]:
    """``text`` cut and paced exactly as the speaker does it, as the command prints it."""
    from agent.speaking.cadence import Cadence
    from firmware_py.wiring import cadence_settings

    rules, pace = cadence_settings(config, language)
    cadence = Cadence(rules, pace)
    # One feed of the whole text: the stream gives the same units however the text is cut into
    # pieces (tests/test_cadence.py holds it to that), so this is also what a streamed reply gives.
    units = cadence.feed(text) + cadence.flush()
    cadence.end()
    pauses = [round(cadence.pause_before(i), 3) for i in range(len(units))]
    return {"units": units, "pauses_s": pauses}


def _write(stdout: TextIO, line: str) -> None:
    """Print ``line`` as UTF-8 whatever the locale says: the JSON is not ASCII-escaped."""
    encoding = (getattr(stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    raw = getattr(stdout, "buffer", None)
    if encoding != "utf8" and raw is not None:
        stdout.flush()
        raw.write((line + "\n").encode("utf-8"))
        raw.flush()
    else:
        stdout.write(line + "\n")
        stdout.flush()


def run(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """``hearth cadence``: 0 with the JSON on stdout; 2 with one line on stderr for bad input or settings."""
    from firmware_py.config import ConfigError, load_config

    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    try:
        config = load_config(args.config, overrides(args))
        text = read_text(stdin)
    except (ConfigError, InputError) as exc:
        print(f"hearth cadence: {exc}", file=stderr)
        return 2
    result = cut(text, config, args.language)
    log.debug("cut %d characters into %d units", len(text), len(result["units"]))
    _write(stdout, json.dumps(result, ensure_ascii=False))
    return 0
