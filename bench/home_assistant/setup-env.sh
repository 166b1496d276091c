#!/usr/bin/env bash
# Makes .ha-venv: a real Home Assistant core for the home-control tests.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/../.."
HA_VENV=${HEARTH_HA_VENV:-.ha-venv}
REQUIREMENTS=bench/home_assistant/requirements.txt
STAMP="$HA_VENV/.requirements"
if [ -x "$HA_VENV/bin/hass" ] && cmp -s "$REQUIREMENTS" "$STAMP"; then
  exit 0
fi
echo "== installing Home Assistant core for the tests into $HA_VENV"
[ -x "$HA_VENV/bin/python" ] || python3 -m venv "$HA_VENV"
"$HA_VENV/bin/python" -m pip install -q --upgrade pip
"$HA_VENV/bin/python" -m pip install -q -r "$REQUIREMENTS"
cp "$REQUIREMENTS" "$STAMP"
