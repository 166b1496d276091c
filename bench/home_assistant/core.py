"""A real Home Assistant core on loopback for the home-control tests.

Runs ``hass`` from .ha-venv (bench/home_assistant/setup-env.sh; ``HEARTH_HA_VENV`` elsewhere) on
a scratch copy of bench/home_assistant/configuration.yaml, on a free port.  Then, as a household
would in its settings: onboarding makes the owner (and the default areas), a long-lived access
token is made, entities are placed in areas and given aliases, and exposed to Assist (or not).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HA_FILES = Path(__file__).resolve().parent
START_TIMEOUT_S = 90.0

AREAS = {
    "light.kitchen_lights": "kitchen", "switch.hood_fan": "kitchen", "switch.oven": "kitchen",
    "light.living_room_light": "living_room", "climate.living_room_thermostat": "living_room",
    "sensor.living_room_temperature": "living_room",
}
ALIASES = {"switch.hood_fan": ["후드", "환풍기"], "switch.oven": ["오븐"], "cover.garage_door": ["차고 문"],
           "lock.front_door": ["현관문"]}
EXPOSED = ["light.kitchen_lights", "light.living_room_light", "switch.hood_fan", "switch.oven",
           "climate.living_room_thermostat", "sensor.living_room_temperature", "lock.front_door", "cover.garage_door"]
NOT_EXPOSED = ["switch.boiler"]
"""Left unexposed: hearth must never touch it."""
BASELINE = {
    "light.kitchen_lights": "off", "light.living_room_light": "off", "switch.hood_fan": "off", "switch.oven": "off",
    "switch.boiler": "off", "climate.living_room_thermostat": "off", "lock.front_door": "locked", "cover.garage_door": "closed",
}
"""The home before each scenario of a home suite: everything off, locked and closed."""


def _shown_state(state: dict[str, Any]) -> str:
    if state["entity_id"].startswith("climate.") and state["state"] != "off":
        target = (state.get("attributes") or {}).get("temperature")
        if isinstance(target, (int, float)):
            return f"{state['state']}@{target:g}"
    return str(state["state"])


def ha_venv() -> Path:
    return Path(os.environ.get("HEARTH_HA_VENV") or ROOT / ".ha-venv")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class HomeAssistantCore:
    """One running core: its address, an owner's token, and the process."""

    url: str
    token: str
    config_dir: Path
    process: subprocess.Popen | None
    port: int

    def states(self) -> dict[str, str]:
        """Every entity's state, as Home Assistant reports it (REST); a thermostat that is on as
        "heat@21" (its mode and target)."""
        request = urllib.request.Request(self.url + "/api/states", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return {s["entity_id"]: _shown_state(s) for s in json.load(answer)}

    def home(self) -> dict[str, str]:
        """The states of the home's devices (:data:`BASELINE`'s entities)."""
        states = self.states()
        return {entity_id: states.get(entity_id, "missing") for entity_id in BASELINE}

    def reset(self, before: dict[str, str] | None = None) -> None:
        """The home as :data:`BASELINE` says, then ``before`` over it."""
        wanted = {**BASELINE, **(before or {})}
        now = self.home()
        for entity_id, state in wanted.items():
            if now.get(entity_id) != state:
                self.set(entity_id, state)
        if (left := {e: s for e, s in self.home().items() if s != wanted[e]}):
            raise RuntimeError(f"the home could not be reset: {left}")

    def set(self, entity_id: str, state: str) -> None:
        """Puts an entity in ``state`` through its services, as hearth would."""
        domain = entity_id.split(".", 1)[0]
        if domain == "climate":
            mode, _, target = state.partition("@")
            self.call("climate", "set_temperature", entity_id=entity_id, temperature=float(target or 20))
            self.call("climate", "set_hvac_mode", entity_id=entity_id, hvac_mode=mode)
        elif domain == "lock":
            self.call("lock", "lock" if state == "locked" else "unlock", entity_id=entity_id)
        elif domain == "cover":
            self.call("cover", "open_cover" if state == "open" else "close_cover", entity_id=entity_id)
        else:
            self.call(domain, "turn_on" if state == "on" else "turn_off", entity_id=entity_id)

    def state(self, entity_id: str) -> str:
        return self.states()[entity_id]

    def call(self, domain: str, service: str, **data: Any) -> None:
        body = json.dumps(data).encode()
        request = urllib.request.Request(f"{self.url}/api/services/{domain}/{service}", body,
                                         {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).read()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def start(self) -> None:
        """(Re)starts the core on the same directory and port; returns once it answers."""
        assert self.process is None
        self.process = _launch(self.config_dir)
        _wait_up(self.url, self.process, self.config_dir)


def _launch(config_dir: Path) -> subprocess.Popen:
    hass = ha_venv() / "bin" / "hass"
    log = open(config_dir / "run.log", "ab")
    return subprocess.Popen([str(hass), "-c", str(config_dir), "--skip-pip", "--log-no-color"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_up(url: str, process: subprocess.Popen, config_dir: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Home Assistant exited ({process.returncode}); see {config_dir / 'run.log'}")
        try:
            with urllib.request.urlopen(url + "/api/onboarding", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"Home Assistant did not answer within {START_TIMEOUT_S:.0f} s; see {config_dir / 'run.log'}")


def _post(url: str, data: dict[str, Any], form: bool = False) -> Any:
    body = urllib.parse.urlencode(data).encode() if form else json.dumps(data).encode()
    kind = "application/x-www-form-urlencoded" if form else "application/json"
    with urllib.request.urlopen(urllib.request.Request(url, body, {"Content-Type": kind}), timeout=10) as answer:
        return json.load(answer)


async def _ws(url: str, token: str, messages: list[dict[str, Any]]) -> list[Any]:
    from websockets.asyncio.client import connect

    results = []
    async with connect(url.replace("http", "ws", 1) + "/api/websocket", proxy=None) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "auth", "access_token": token}))
        assert json.loads(await ws.recv())["type"] == "auth_ok"
        for n, message in enumerate(messages, 1):
            await ws.send(json.dumps({**message, "id": n}))
            while True:
                answer = json.loads(await ws.recv())
                if answer.get("id") == n:
                    break
            if not answer.get("success"):
                raise RuntimeError(f"{message['type']}: {answer.get('error')}")
            results.append(answer.get("result"))
    return results


def start_core(scratch: Path) -> HomeAssistantCore:
    """A fresh core in ``scratch``, onboarded and furnished; the caller stops it."""
    if not (ha_venv() / "bin" / "hass").exists():
        raise RuntimeError(f"no Home Assistant core in {ha_venv()}: run bench/home_assistant/setup-env.sh")
    config_dir = scratch / "ha-config"
    config_dir.mkdir(parents=True)
    port = free_port()
    text = (HA_FILES / "configuration.yaml").read_text().replace("server_port: PORT", f"server_port: {port}")
    (config_dir / "configuration.yaml").write_text(text)
    url = f"http://127.0.0.1:{port}"
    process = _launch(config_dir)
    core = HomeAssistantCore(url, "", config_dir, process, port)
    try:
        _wait_up(url, process, config_dir)
        client = url + "/"
        code = _post(url + "/api/onboarding/users", {"client_id": client, "name": "Owner", "username": "owner",
                                                      "password": "kitchen-test-only", "language": "en"})["auth_code"]
        access = _post(url + "/auth/token", {"grant_type": "authorization_code", "code": code, "client_id": client}, form=True)
        _add_shopping_list(url, access["access_token"])
        core.token = asyncio.run(_furnish(url, access["access_token"]))
    except BaseException:
        core.stop()
        raise
    return core


def _add_shopping_list(url: str, access: str) -> None:
    """The Shopping List integration (its to-do entity, todo.shopping_list), added as in the UI."""
    headers = {"Authorization": f"Bearer {access}", "Content-Type": "application/json"}

    def post(path: str, data: dict[str, Any]) -> Any:
        request = urllib.request.Request(url + path, json.dumps(data).encode(), headers)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    step = post("/api/config/config_entries/flow", {"handler": "shopping_list", "show_advanced_options": False})
    if step.get("type") == "form":
        step = post(f"/api/config/config_entries/flow/{step['flow_id']}", {})
    if step.get("type") != "create_entry":
        raise RuntimeError(f"the shopping list could not be added: {step}")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # its entity appears once the entry is set up
        request = urllib.request.Request(url + "/api/states/todo.shopping_list", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5):
                return
        except urllib.error.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("todo.shopping_list did not appear")


async def _furnish(url: str, access: str) -> str:
    messages: list[dict[str, Any]] = [{"type": "auth/long_lived_access_token", "client_name": "hearth", "lifespan": 30}]
    for entity_id, area in AREAS.items():
        messages.append({"type": "config/entity_registry/update", "entity_id": entity_id, "area_id": area})
    for entity_id, aliases in ALIASES.items():
        messages.append({"type": "config/entity_registry/update", "entity_id": entity_id, "aliases": aliases})
    messages.append({"type": "homeassistant/expose_entity", "assistants": ["conversation"], "entity_ids": EXPOSED, "should_expose": True})
    messages.append({"type": "homeassistant/expose_entity", "assistants": ["conversation"], "entity_ids": NOT_EXPOSED, "should_expose": False})
    results = await _ws(url, access, messages)
    return results[0]


def remove_core(core: HomeAssistantCore) -> None:
    core.stop()
    shutil.rmtree(core.config_dir, ignore_errors=True)
