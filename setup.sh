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
LLAMA_CMAKE="-DLLAVA_BUILD=OFF"
if [ "$(uname -m)" = x86_64 ]; then
  # llama.cpp's default -march=native also uses AMX and AVX-512 where the CPU lists them, and
  # some virtual machines list AMX without letting a process use it: the first matrix product
  # then crashes.  AVX2 with FMA is what every x86 machine hearth runs on has.
  LLAMA_CMAKE="$LLAMA_CMAKE -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
fi
CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE}" "$VENV/bin/python" -m pip install -q -e ".[test,bench]"

echo "== installing models"
"$VENV/bin/hearth" models install
