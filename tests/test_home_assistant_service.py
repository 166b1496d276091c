"""``hearth run`` as the service runs it, with a Home Assistant configured (the real core on
loopback), under strace: the only internet address it ever connects to is Home Assistant's."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from bench.drills.ready_time import DEFAULT_CONFIG, NotifySocket, start_appliance, stop_appliance
from bench.home_assistant.core import HomeAssistantCore

pytestmark = [pytest.mark.integration, pytest.mark.audio, pytest.mark.home_assistant]

START_TIMEOUT_S = 600.0  # a guard against a hang, not a speed requirement


def test_the_only_address_it_reaches_is_home_assistants(pulse_null_sink, models_dir, home_assistant_core: HomeAssistantCore,
                                                         tmp_path: Path):
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace not found: it records the addresses hearth connects to (apt-get install strace)", pytrace=False)
    token_file = tmp_path / "ha-token"
    token_file.write_text(home_assistant_core.token)
    token_file.chmod(0o600)
    config = tmp_path / "hearth.toml"
    # The shipped configuration, its [home_assistant] keys set.
    settings = f'[home_assistant]\nurl = "{home_assistant_core.url}"\ntoken_file = "{token_file}"\narea = "Kitchen"\n'
    shipped = DEFAULT_CONFIG.read_text()
    assert shipped.count("[home_assistant]\n") == 1
    config.write_text(shipped.replace("[home_assistant]\n", settings))
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "NOTIFY_SOCKET", "HEARTH_HA_TOKEN")}
    env.update(HEARTH_MODELS_DIR=str(models_dir), HEARTH_DATA_DIR=str(tmp_path / "data"))
    trace_file, log_path = tmp_path / "strace.txt", tmp_path / "hearth.log"
    with NotifySocket(tmp_path / "notify") as notify, open(log_path, "w") as log_file:
        run = start_appliance(notify, env, log_file, config=config,
                              prefix=(strace, "-f", "-qq", "-e", "trace=connect", "-o", str(trace_file)))
        try:
            ready = run.wait_for("READY", START_TIMEOUT_S)
            deadline = time.monotonic() + 30
            while "connected to Home Assistant" not in log_path.read_text(errors="replace") and time.monotonic() < deadline:
                time.sleep(0.2)
            code = stop_appliance(run, int(ready["MAINPID"]))
            run.drain()
        except BaseException:
            stop_appliance(run)
            print(log_path.read_text(errors="replace")[-3000:])
            raise
    log = log_path.read_text(errors="replace")
    assert code == 0 and "connected to Home Assistant" in log, log[-2000:]
    assert home_assistant_core.token not in log  # never logged, not even at -v
    trace = trace_file.read_text(errors="replace")
    assert "AF_UNIX" in trace, "the trace recorded nothing: strace did not follow hearth"
    reached = set(re.findall(r"sin6?_port=htons\((\d+)\), (?:sin_addr=inet_addr\(\"([\d.]+)\"\)|inet_pton\(AF_INET6, \"([^\"]+)\")", trace))
    addresses = {(addr or addr6, int(port)) for port, addr, addr6 in reached}
    assert addresses == {("127.0.0.1", home_assistant_core.port)}, addresses
