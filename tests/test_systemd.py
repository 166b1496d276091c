"""The units and the install path, checked by systemd's own tools on the files as installed.

``systemd/install.sh`` runs with ``DESTDIR`` into a scratch root (no root rights needed); the units
it laid out are then verified there with ``systemd-analyze verify --root``, which also checks that
each program a unit runs exists: the virtualenv is not built here, so stand-ins are put at those
paths.  Running the service under systemd itself is not possible here (no systemd as PID 1).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNITS = ("hearth.service", "hearth-forecast-sync.service", "hearth-forecast-sync.timer")
SERVICES = ("hearth.service", "hearth-forecast-sync.service")
INSTALL = ROOT / "systemd" / "install.sh"


def _systemd_analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None:
        pytest.fail("systemd-analyze not found: the unit checks need it (apt-get install systemd)", pytrace=False)
    return path


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_systemd_analyze(), *args], capture_output=True, text=True, timeout=120)


def install(destdir: Path | None, *, user: tuple[str, ...] = (), script: Path = INSTALL) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    if destdir is not None:
        env["DESTDIR"] = str(destdir)
    return subprocess.run([*user, str(script)], capture_output=True, text=True, timeout=120, env=env)


def exec_paths(unit: Path) -> list[str]:
    """The programs a unit runs (Exec*= lines, without systemd's prefixes such as '-' or '!')."""
    paths = []
    for line in unit.read_text().splitlines():
        match = re.match(r"Exec\w*=([-@:+!|]*)(\S+)", line)
        if match:
            paths.append(match.group(2))
    return paths


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """install.sh run into a scratch root, made verifiable: systemd's own units (the targets the
    hearth units name) and a stand-in for each program the units run."""
    root = tmp_path_factory.mktemp("root")
    done = install(root)
    assert done.returncode == 0, done.stderr
    shutil.copytree("/usr/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    for unit in SERVICES:
        for program in exec_paths(root / "etc/systemd/system" / unit):
            stand_in = root / program.lstrip("/")
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.write_text("#!/bin/sh\n")
            stand_in.chmod(0o755)
    return root, done


def test_install_lays_out_the_units_the_configuration_and_the_code(staged):
    root, _ = staged
    for unit in UNITS:
        assert (root / "etc/systemd/system" / unit).read_text() == (ROOT / "systemd" / unit).read_text()
    assert (root / "etc/hearth/hearth.toml").read_text() == (ROOT / "firmware_py/assets/hearth.toml").read_text()
    assert (root / "opt/hearth/firmware_py/cli.py").is_file()
    assert (root / "opt/hearth/setup.sh").is_file()
    assert not (root / "opt/hearth/.git").exists()
    assert not any((root / "opt/hearth").rglob("__pycache__"))
    assert (root / "var/lib/hearth/models").is_dir() and (root / "var/lib/hearth/data").is_dir()


def test_install_prints_the_steps_that_need_root(staged):
    _, done = staged
    steps = [line.removeprefix("would run: ") for line in done.stdout.splitlines() if line.startswith("would run: ")]
    user = [s for s in steps if s.startswith(("useradd ", "usermod "))]
    assert len(user) == 1 and "--groups audio,gpio" in user[0] and user[0].endswith(" hearth"), steps
    if user[0].startswith("useradd "):
        assert "--system" in user[0] and "--home-dir /var/lib/hearth" in user[0]
    assert "env VENV=/opt/hearth/.venv HEARTH_MODELS_DIR=/var/lib/hearth/models /opt/hearth/setup.sh" in steps
    assert "chown -R hearth:hearth /var/lib/hearth" in steps
    assert steps[-3:] == ["systemctl daemon-reload", "systemctl enable hearth.service hearth-forecast-sync.timer",
                          "systemctl restart hearth.service"]


def test_install_never_replaces_the_users_configuration(tmp_path):
    mine = tmp_path / "etc/hearth/hearth.toml"
    mine.parent.mkdir(parents=True)
    mine.write_text('language = "ko"\n')
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert mine.read_text() == 'language = "ko"\n'
    assert f"kept {mine}" in done.stdout


def test_install_without_root_and_without_destdir_refuses_in_one_line():
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("setpriv (util-linux) not found: needed to run the installer as an ordinary user", pytrace=False)
    # Run from a copy an ordinary user can read: the checkout may sit in a folder only its owner can.
    readable = Path(tempfile.mkdtemp(prefix="hearth-install-"))
    try:
        copy = readable / "systemd" / "install.sh"
        copy.parent.mkdir()
        shutil.copy2(INSTALL, copy)
        for folder in (readable, copy.parent):
            folder.chmod(0o755)
        copy.chmod(0o755)
        done = install(None, user=(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"), script=copy)
    finally:
        shutil.rmtree(readable, ignore_errors=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "install.sh: run as root (sudo ./systemd/install.sh), or set DESTDIR to lay the files out elsewhere"
    ]


@pytest.mark.parametrize("unit", UNITS)
def test_the_installed_units_verify_without_a_word(staged, unit):
    root, _ = staged
    done = analyze("verify", "--man=no", f"--root={root}", unit)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


@pytest.mark.parametrize("name", ["remote-reasoner", "home-assistant"])
def test_the_drop_ins_that_allow_one_address_verify_too(staged, name):
    root, _ = staged
    drop_in = root / f"etc/systemd/system/hearth.service.d/{name}.conf"
    drop_in.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / f"systemd/hearth-{name}.conf", drop_in)
    try:
        done = analyze("verify", "--man=no", f"--root={root}", "hearth.service")
        assert (done.returncode, done.stdout + done.stderr) == (0, "")
        assert exposure(root, "hearth.service") <= 3.0
        # One address let out, and no port bound.
        text = drop_in.read_text()
        assert len(re.findall(r"^IPAddressAllow=\S+$", text, re.M)) == 1 and "SocketBind" not in text
    finally:
        drop_in.unlink()


def test_the_serve_drop_in_verifies_and_lets_in_only_its_ports(staged):
    root, _ = staged
    drop_in = root / "etc/systemd/system/hearth.service.d/serve.conf"
    drop_in.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "systemd/hearth-serve.conf", drop_in)
    try:
        done = analyze("verify", "--man=no", f"--root={root}", "hearth.service")
        assert (done.returncode, done.stdout + done.stderr) == (0, "")
        assert exposure(root, "hearth.service") <= 3.0
        text = drop_in.read_text()
        assert "hearth serve" in text and "SocketBindDeny=any" in text
        assert re.findall(r"^SocketBindAllow=tcp:(\d+)$", text, re.M) == ["10700", "8750"]
    finally:
        drop_in.unlink()


def test_verify_as_used_here_does_report_a_misplaced_key(staged, tmp_path):
    """The check above can fail: the key the old unit had in the wrong section is reported
    (while systemd-analyze still exits 0, which is why the output is compared, not the status)."""
    root, _ = staged
    broken = root / "etc/systemd/system/hearth-broken.service"
    broken.write_text((ROOT / "systemd/hearth.service").read_text().replace("[Service]\n", "[Service]\nStartLimitIntervalSec=60\n", 1))
    try:
        done = analyze("verify", "--man=no", f"--root={root}", "hearth-broken.service")
    finally:
        broken.unlink()
    assert "Unknown key 'StartLimitIntervalSec' in section [Service]" in done.stdout + done.stderr


def exposure(root: Path | None, unit: str) -> float:
    args = ["security", "--offline=true", *([f"--root={root}", unit] if root else [str(ROOT / "systemd" / unit)])]
    done = analyze(*args)
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", done.stdout)
    assert match, f"no exposure level in the output of systemd-analyze security: {done.stdout[-500:]} {done.stderr}"
    return float(match.group(1))


@pytest.mark.parametrize("unit", SERVICES)
def test_systemd_rates_each_service_3_or_safer(unit):
    assert exposure(None, unit) <= 3.0


def unit_settings(path: Path) -> dict[str, list[str]]:
    """``Section.Key`` to every value it is given (systemd allows a key more than once)."""
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and not line.startswith(("#", ";")) and "=" in line:
            key, value = line.split("=", 1)
            settings.setdefault(f"{section}.{key}", []).append(value)
    return settings


def test_hearth_service_is_a_watched_notify_service_with_its_own_user_and_folders():
    s = unit_settings(ROOT / "systemd/hearth.service")
    assert s["Service.Type"] == ["notify"] and s["Service.NotifyAccess"] == ["main"]
    assert s["Service.WatchdogSec"] and s["Service.Restart"] == ["on-failure"]
    assert s["Unit.StartLimitIntervalSec"] and s["Unit.StartLimitBurst"]
    assert s["Service.User"] == ["hearth"] and s["Service.SupplementaryGroups"] == ["audio gpio"]
    assert s["Service.StateDirectory"] == ["hearth"] and s["Service.ConfigurationDirectory"] == ["hearth"]
    assert s["Service.ProtectSystem"] == ["strict"] and "Service.ReadWritePaths" not in s
    assert s["Service.RestrictAddressFamilies"] == ["AF_UNIX"] and s["Service.PrivateNetwork"] == ["yes"]
    assert sorted(s["Service.DeviceAllow"]) == ["char-alsa rw", "char-gpiochip rw"]
    assert s["Service.Environment"].count("ORT_DISABLE_TELEMETRY=1") == 1
    assert "--config /etc/hearth/hearth.toml" in s["Service.ExecStart"][0]


def test_the_forecast_job_writes_where_hearth_reads(tmp_path, monkeypatch):
    """Both units set HEARTH_DATA_DIR; with no `out` the sync job writes hearth's default forecast file."""
    from firmware_py.config import HearthConfig
    from firmware_py.home_tools import data_dir
    from tests.test_tools_weather import CannedServer
    from tools.forecast_sync import main

    for unit in SERVICES:
        assert "HEARTH_DATA_DIR=/var/lib/hearth/data" in unit_settings(ROOT / "systemd" / unit)["Service.Environment"]
    monkeypatch.setenv("HEARTH_DATA_DIR", str(tmp_path / "data"))
    server = CannedServer()
    try:
        assert main(["--place", "Ilsan=37.68,126.77", "--forecast-url", f"{server.base}/v1/forecast",
                     "--air-url", f"{server.base}/v1/air-quality"]) == 0
    finally:
        server.close()
    assert (data_dir(HearthConfig()) / "forecast.json").is_file()
