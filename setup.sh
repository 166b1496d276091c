#!/usr/bin/env bash
# Sets up hearth on a fresh Debian / Raspberry Pi OS machine: system packages, a virtual
# environment with hearth in it, and the default models. Safe to run again.
# --no-models: everything but the models (what the fast test lane needs).
set -euo pipefail
WITH_MODELS=1
for arg in "$@"; do
  case "$arg" in
    --no-models) WITH_MODELS=0 ;;
    *) echo "usage: $0 [--no-models]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")"
VENV=${VENV:-.venv}

APT_PACKAGES=(python3-venv python3-dev build-essential cmake git
              libportaudio2 espeak-ng pulseaudio pulseaudio-utils libasound2-plugins
              fonts-nanum   # Korean text in the benchmark pictures
              strace        # the tests watch what hearth opens (no network socket, no listener)
              libspeexdsp1  # the echo canceller where the pyaec wheel has no build (aarch64)
              chromium chromium-driver)  # the companion page's tests watch it in a real headless browser
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
# The platform profile (firmware_py/platform.py, standard library only) says how llama-cpp-python
# is built here: the AVX2 set on x86, CUDA on a Jetson Orin, the compiler's native CPU elsewhere.
PLATFORM=$(python3 firmware_py/platform.py name)
LLAMA_CMAKE=$(python3 firmware_py/platform.py cmake-args)
echo "== platform: $PLATFORM"
if [ "$PLATFORM" = jetson-orin ] && [ -d /usr/local/cuda/bin ]; then
  # JetPack installs nvcc here without putting it on the PATH; the CUDA build needs it.
  export PATH="/usr/local/cuda/bin:$PATH"
fi
echo "== installing hearth (llama-cpp-python compiles from source the first time: several minutes)"
# An existing CMAKE_ARGS wins; the built wheel is cached by pip for next time.
CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE}" "$VENV/bin/python" -m pip install -q -e ".[test,bench]"

if [ "$PLATFORM" = jetson-orin ]; then
  # faster-whisper's CTranslate2 wheels on PyPI have CUDA only for x86_64: on a Jetson, Whisper
  # runs on the CPU unless CTranslate2 is built from source (the optional step below).
  echo "== note: CTranslate2 from PyPI has no CUDA on aarch64, so Whisper runs on the CPU;"
  echo "   HEARTH_CT2_CUDA=1 ./setup.sh builds it with CUDA from source (a long build)"
fi

# ---- Optional, Jetson only: CTranslate2 with CUDA, built from source (HEARTH_CT2_CUDA=1) ----------
# Not tested by the project's own checks (they run on x86 without a Jetson); kept short and opt-in.
# The default tag is the version pip chose for faster-whisper, so the two agree.  Since v4.5.0
# CTranslate2 needs cuDNN 9 (JetPack 6.1 and later); on JetPack 6.0 set HEARTH_CT2_TAG=v4.4.0.
if [ "$PLATFORM" = jetson-orin ] && [ "${HEARTH_CT2_CUDA:-0}" = 1 ]; then
  if "$VENV/bin/python" -c 'import ctranslate2, sys; sys.exit(ctranslate2.get_cuda_device_count() == 0)' 2>/dev/null; then
    echo "== CTranslate2 already sees the GPU"
  else
    CT2_TAG=${HEARTH_CT2_TAG:-v$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("ctranslate2"))')}
    CT2_SRC=${HEARTH_BUILD_DIR:-$HOME/.cache/hearth}/CTranslate2-$CT2_TAG
    echo "== building CTranslate2 $CT2_TAG with CUDA in $CT2_SRC"
    if [ ! -d "$CT2_SRC" ]; then
      # Cloned aside and moved, so an interrupted clone is not taken for a finished one next time.
      rm -rf "$CT2_SRC.part"
      git clone -q --depth 1 --branch "$CT2_TAG" --recurse-submodules --shallow-submodules \
        https://github.com/OpenNMT/CTranslate2.git "$CT2_SRC.part"
      mv "$CT2_SRC.part" "$CT2_SRC"
    fi
    # No MKL or Intel OpenMP on ARM: GNU OpenMP, and Ruy for int8 on the CPU.  Orin is sm_87.
    cmake -S "$CT2_SRC" -B "$CT2_SRC/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_CLI=OFF \
      -DWITH_CUDA=ON -DWITH_CUDNN=ON -DCUDA_ARCH_LIST=8.7 -DWITH_MKL=OFF -DWITH_RUY=ON -DOPENMP_RUNTIME=COMP
    make -C "$CT2_SRC/build" -j"$(nproc)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO make -C "$CT2_SRC/build" install
    $SUDO ldconfig
    # The Python wrapper links against the library just installed under /usr/local.
    CTRANSLATE2_ROOT=/usr/local "$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "$CT2_SRC/python"
  fi
fi

if [ "$WITH_MODELS" = 1 ]; then
  echo "== installing models"
  "$VENV/bin/hearth" models install
fi
