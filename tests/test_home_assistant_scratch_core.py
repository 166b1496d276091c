"""``make try-ha`` against a real Home Assistant core: the address and the token it prints work,
and Ctrl-C stops the core and removes its folder, the token with it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from firmware_py.config import load_config

pytestmark = pytest.mark.home_assistant

ROOT = Path(__file__).resolve().parent.parent


def test_the_scratch_core_answers_with_the_token_it_printed_and_goes_with_ctrl_c() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "bench.home_assistant.scratch"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines: list[str] = []
        for line in proc.stdout:  # ends with the line saying how to stop it
            lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl-C"):
                break
        shown = "\n".join(lines)
        url = re.search(r"^Home Assistant: (http://127\.0\.0\.1:\d+)", shown, re.M)
        token_file = re.search(r"^token file: +(\S+)", shown, re.M)
        config_file = re.search(r"^hearth\.toml: +(\S+),", shown, re.M)
        assert url and token_file and config_file, shown + proc.stderr.read()
        config = load_config(Path(config_file[1]))
        assert config.home_assistant.url == url[1] and str(config.home_assistant.token_file) == token_file[1]
        token = Path(token_file[1]).read_text().strip()
        request = urllib.request.Request(url[1] + "/api/states/light.kitchen_lights", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.load(answer)["attributes"]["friendly_name"] == "Kitchen Lights"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert not Path(token_file[1]).exists() and not Path(config_file[1]).parent.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
