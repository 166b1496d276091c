#!/usr/bin/env bash
# Sets up hearth on a fresh Debian / Raspberry Pi OS machine: system packages, a virtual
# environment with hearth in it, and the default models. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}

APT_PACKAGES=(python3-venv python3-dev build-essential cmake git
              libportaudio2 espeak-ng pulseaudio pulseaudio-utils libasound2-plugins
              fonts-nanum)  # Korean text in the benchmark pictures
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "== installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

venv_args=()
# On a Raspberry Pi, gpiozero needs Debian's lgpio bindings from the system site-packages.
if grep -qi raspberry /proc/device-tree/model 2>/dev/null; then
  venv_args+=(--system-site-packages)
  dpkg -s python3-lgpio >/dev/null 2>&1 || sudo apt-get install -y -qq python3-lgpio
fi
[ -x "$VENV/bin/python" ] || python3 -m venv "${venv_args[@]}" "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
echo "== installing hearth (llama-cpp-python compiles from source the first time: several minutes)"
# LLAVA is not needed and halves the build; the built wheel is cached by pip for next time.
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" "$VENV/bin/python" -m pip install -q -e ".[test,bench]"

echo "== installing models"
"$VENV/bin/hearth" models install
