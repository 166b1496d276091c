"""``hearth serve --no-device`` as a real process: real models, the Wyoming server and the page on
loopback (port 0), the household's data in a scratch folder.  One start is shared by the tests:
Home Assistant's side (the wyoming library's client) and the page's side (HTTP) change and read
the same list, and the process stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled
from wyoming.info import Describe, Info

from bench.drills.ready_time import ApplianceRun, NotifySocket, stop_appliance
from tests.wyoming_kit import read_until

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 600.0  # a guard against a hang, not a speed requirement
CONFIG = """\
[reasoner]
where = "off"

[serve]
languages = ["ko"]
"""


@dataclass
class Served:
    run: ApplianceRun
    log: Path
    wyoming: tuple[str, int]
    page: str


@pytest.fixture(scope="module")
def served(models_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    config = folder / "hearth.toml"
    config.write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    env.update(HEARTH_MODELS_DIR=str(models_dir), HEARTH_DATA_DIR=str(folder / "data"), PYTHONPATH=str(ROOT))
    log = folder / "hearth.log"
    command = [sys.executable, "-m", "firmware_py.cli", "serve", "--no-device", "--wyoming", "tcp://127.0.0.1:0",
               "--web", "127.0.0.1:0", "-v", "--config", str(config)]
    with NotifySocket(folder / "notify") as notify, open(log, "w") as log_file:
        process = subprocess.Popen(command, cwd=ROOT, env={**env, "NOTIFY_SOCKET": str(notify.path)},
                                   stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
        run = ApplianceRun(process, notify, time.monotonic())
        try:
            try:
                run.wait_for("READY", START_TIMEOUT_S)
            except BaseException:
                pytest.fail(f"hearth serve did not get ready:\n{log.read_text()[-3000:]}", pytrace=False)
            text = log.read_text()
            wyoming = re.search(r"^hearth: Wyoming on tcp://127\.0\.0\.1:(\d+) \(asr, tts, handle; en, ko\)$", text, re.M)
            page = re.search(r"^hearth: the companion page on (http://127\.0\.0\.1:\d+/)$", text, re.M)
            assert wyoming and page, text[-3000:]
            yield Served(run, log, ("127.0.0.1", int(wyoming.group(1))), page.group(1))
        finally:
            stop_appliance(run)


async def ask(served: Served, words: str) -> str:
    client = AsyncTcpClient(*served.wyoming)
    await client.connect()
    try:
        await client.write_event(Transcript(text=words).event())
        events = await read_until(client, "handled-stop", "not-handled", "error")
    finally:
        await client.disconnect()
    handled = [Handled.from_event(e) for e in events if Handled.is_type(e.type)]
    assert len(handled) == 1, [e.type for e in events]
    return handled[0].text or ""


def page_list(served: Served) -> list[str]:
    state = httpx.get(served.page + "api/state", timeout=30).json()
    return [entry["item"] for entry in state["kept"]["list"]]


async def test_home_assistant_is_told_what_hearth_offers_in_english_and_korean(served):
    client = AsyncTcpClient(*served.wyoming)
    await client.connect()
    try:
        await client.write_event(Describe().event())
        info = Info.from_event((await read_until(client, "info"))[-1])
    finally:
        await client.disconnect()
    assert sorted(lang for program in info.asr for model in program.models for lang in model.languages) == ["en", "ko"]
    assert sorted((v.name, tuple(v.languages)) for program in info.tts for v in program.voices) == [
        ("kokoro-jf_nezumi", ("ko",)), ("piper-en-joe", ("en",))]
    assert [lang for program in info.handle for model in program.models for lang in model.languages] == ["en"]


async def test_what_home_assistant_adds_is_on_the_page_and_what_the_page_adds_is_said(served):
    said = await ask(served, "Add milk to my shopping list.")
    assert "milk" in said.lower()
    assert "milk" in page_list(served)

    index = httpx.get(served.page, timeout=30)
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', index.text).group(1)
    origin = served.page.rstrip("/")
    added = httpx.post(served.page + "api/list/add", json={"item": "saffron"}, timeout=30,
                       headers={"X-CSRF-Token": csrf, "Origin": origin, "Sec-Fetch-Site": "same-origin"})
    assert added.status_code == 200, added.text
    assert "saffron" in page_list(served)

    listed = await ask(served, "What's on my shopping list?")
    assert "saffron" in listed.lower() and "milk" in listed.lower()


async def test_a_change_from_another_site_is_refused_and_changes_nothing(served):
    before = page_list(served)
    refused = httpx.post(served.page + "api/list/add", json={"item": "poison"}, timeout=30,
                         headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert refused.status_code == 403
    assert page_list(served) == before


def test_it_stops_cleanly_on_sigterm(served):
    # Last in the file: the shared process ends here (the fixture's own stop then does nothing).
    code = stop_appliance(served.run)
    text = served.log.read_text()
    assert code == 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
