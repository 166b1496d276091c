"""Which machine hearth runs on, and what that machine should run: the platform profile.

Standard library only, and no imports of other hearth modules: ``setup.sh`` runs this file with
the system ``python3`` before the virtual environment exists, to choose how llama-cpp-python is
built::

    python3 firmware_py/platform.py cmake-args   # the CMAKE_ARGS for llama-cpp-python
    python3 firmware_py/platform.py show         # the whole profile, one "key = value" a line
    python3 firmware_py/platform.py name         # pi5, jetson-orin, x86 or generic

It must also run on older system Pythons than hearth itself needs (Ubuntu 22.04 on JetPack 6 has
3.10), so nothing newer than 3.8 syntax is used here.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path

log = logging.getLogger(__name__)

PLATFORMS = ("pi5", "jetson-orin", "x86", "generic")

REASONER_LARGE = "qwen2.5-coder-1.5b"
REASONER_SMALL = "qwen2.5-coder-0.5b"
NO_REASONER = "none"

# Decimal gigabytes on purpose: MemTotal is the installed memory less what the kernel and firmware
# keep, so a "4 GB" board reports about 3.9 GiB but still over 4e9 bytes, and a threshold of N GB
# then sorts a board sold as N GB into the N GB tier.
GB = 10**9

COMMON_CMAKE_ARGS = ("-DLLAVA_BUILD=OFF",)  # LLAVA is not needed and halves the build
# llama.cpp's default -march=native also uses AMX and AVX-512 where the CPU lists them, and some
# virtual machines list AMX without letting a process use it: the first matrix product then
# crashes.  AVX2 with FMA is what every x86 machine hearth runs on has.
X86_CMAKE_ARGS = ("-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON")
# Orin's GPU is compute capability 8.7; naming it spares the build every other architecture and
# does not depend on the GPU being visible while compiling.
JETSON_CMAKE_ARGS = ("-DGGML_CUDA=on", "-DCMAKE_CUDA_ARCHITECTURES=87")


@dataclass(frozen=True)
class PlatformProfile:
    """What hearth runs, and how, on one kind of machine."""

    name: str
    """The platform: "pi5", "jetson-orin", "x86" or "generic"."""
    reasoner_model: str
    """The reasoner's name in the model manifest, or "none" where memory is too small for one."""
    talker_threads: int
    """CPU threads for the talker LLM (SmolLM2-135M)."""
    reasoner_threads: int
    """CPU threads for the reasoner LLM (few where its layers run on the GPU); unused with no reasoner."""
    asr_threads: int
    """CPU threads for faster-whisper."""
    reasoner_gpu_layers: int
    """Reasoner layers offloaded to the GPU: -1 all, 0 none (CPU only)."""
    asr_device: str
    """faster-whisper's device: "cpu" or "cuda"."""
    asr_compute_type: str
    """faster-whisper's compute type: "int8" on the CPU, "float16" on CUDA."""
    llama_cmake_args: tuple[str, ...]
    """The CMAKE_ARGS llama-cpp-python is built with on this platform."""
    reason: str
    """One line saying why, e.g. "Raspberry Pi 5, 8 GB: the 0.5B reasoner on 4 cores"."""


def _read(path: Path) -> str:
    """A small text file's contents with device-tree NULs as spaces, or "" when unreadable."""
    try:
        return path.read_bytes().replace(b"\x00", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def detect(root: Path = Path("/"), machine: str | None = None) -> str:
    """The platform name, from the files under ``root`` and the machine architecture.

    ``machine`` defaults to ``os.uname().machine`` (what ``platform.machine()`` returns on Linux);
    the standard ``platform`` module is not imported because, run as a script, this file's own
    directory comes first on ``sys.path`` and ``import platform`` would find this file.
    """
    model = _read(root / "proc/device-tree/model")
    compatible = _read(root / "proc/device-tree/compatible")
    if "Raspberry Pi 5" in model or "brcm,bcm2712" in compatible:
        return "pi5"
    if (
        (root / "etc/nv_tegra_release").exists()
        or "NVIDIA Jetson" in model
        or "Orin" in model
        or "nvidia,tegra234" in compatible
    ):
        return "jetson-orin"
    if machine is None:
        machine = os.uname().machine
    if machine.lower() in ("x86_64", "amd64"):
        return "x86"
    return "generic"


def memory_bytes(root: Path = Path("/")) -> int | None:
    """Total memory from ``proc/meminfo`` under ``root``, or None when it cannot be read."""
    try:
        with open(root / "proc/meminfo", encoding="ascii", errors="replace") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    value, *unit = line.split()[1:]
                    scale = 1024 if unit and unit[0].lower() == "kb" else 1
                    return int(value) * scale
    except (OSError, ValueError, IndexError) as error:
        log.debug("no MemTotal under %s: %s", root, error)
    return None


def _clamp(value: int, low: int, high: int, cpus: int) -> int:
    """``value`` within [low, high], never more than ``cpus`` and never less than 1."""
    return max(1, min(max(value, low), high, cpus))


def _reasoner(memory: int | None, large_from: float | None, small_from: float) -> tuple[str, str]:
    """The reasoner for a memory tier, with the words the profile's reason uses for it."""
    if memory is None:
        # Unreadable /proc/meminfo: the smaller reasoner rather than risk swapping the larger.
        return REASONER_SMALL, "the 0.5B reasoner (memory unknown)"
    if large_from is not None and memory >= large_from * GB:
        return REASONER_LARGE, "the 1.5B reasoner"
    if memory >= small_from * GB:
        return REASONER_SMALL, "the 0.5B reasoner"
    return NO_REASONER, f"no reasoner (under {small_from:g} GB)"


def _memory_words(memory: int | None) -> str:
    # Whole GiB read as the size the machine is sold with: an "8 GB" Pi 5 reports 7.9 GiB.
    return "memory unknown" if memory is None else f"{round(memory / 2**30)} GB"


def profile_for(name: str, memory: int | None, cpus: int) -> PlatformProfile:
    """The profile for platform ``name`` with ``memory`` bytes (None: unknown) and ``cpus`` CPUs."""
    cpus = max(1, cpus)
    half = cpus // 2
    if name in ("pi5", "generic"):
        # The talker and the reasoner mostly run at different moments, but when they overlap they
        # must not fight over cores: together they take at most all of them (from 2 CPUs up).
        talker = _clamp(half, 1, 4, cpus)
        reasoner_threads = _clamp(cpus - talker, 1, 8, cpus)
        asr = _clamp(half, 1, 8, cpus)
        model, words = _reasoner(memory, None, 3)
        title = "Raspberry Pi 5" if name == "pi5" else "Generic machine"
        return PlatformProfile(
            name=name,
            reasoner_model=model,
            talker_threads=talker,
            reasoner_threads=reasoner_threads,
            asr_threads=asr,
            reasoner_gpu_layers=0,
            asr_device="cpu",
            asr_compute_type="int8",
            llama_cmake_args=COMMON_CMAKE_ARGS,
            reason=f"{title}, {_memory_words(memory)}: {words} on {cpus} cores, CPU only",
        )
    if name == "jetson-orin":
        # Orin Nano 4 GB shares its memory between CPU and GPU: the 1.5B does not fit beside the
        # talker and Whisper there.
        model, words = _reasoner(memory, 6, 3)
        if memory is None:
            # Every Orin but the 4 GB Nano has 8 GB or more.
            model, words = REASONER_LARGE, "the 1.5B reasoner (memory unknown)"
        return PlatformProfile(
            name=name,
            reasoner_model=model,
            talker_threads=_clamp(half, 1, 4, cpus),
            # With every layer on the GPU, llama.cpp's threads only feed it.
            reasoner_threads=_clamp(2, 1, 2, cpus),
            asr_threads=_clamp(2, 1, 2, cpus),
            reasoner_gpu_layers=-1,
            asr_device="cuda",
            asr_compute_type="float16",
            llama_cmake_args=COMMON_CMAKE_ARGS + JETSON_CMAKE_ARGS,
            reason=f"Jetson Orin, {_memory_words(memory)}: {words} on the GPU, Whisper on CUDA",
        )
    if name == "x86":
        # cpu_count counts hyperthreads, and llama.cpp gains nothing from a core's second thread:
        # half is about the physical cores.  At least 2 each, because on a 2-core box the stages
        # mostly run one at a time and splitting would leave each one core; more than the CPUs
        # never, because llama.cpp's threads spin, and spinning on shared cores stalls them all.
        model, words = _reasoner(memory, 6, 2)
        return PlatformProfile(
            name=name,
            reasoner_model=model,
            talker_threads=_clamp(half, 2, 4, cpus),
            reasoner_threads=_clamp(half, 2, 8, cpus),
            asr_threads=_clamp(half, 2, 8, cpus),
            reasoner_gpu_layers=0,
            asr_device="cpu",
            asr_compute_type="int8",
            llama_cmake_args=COMMON_CMAKE_ARGS + X86_CMAKE_ARGS,
            reason=f"x86, {_memory_words(memory)}: {words} on {cpus} CPUs, AVX2 build",
        )
    raise ValueError(f"unknown platform {name!r} (known: {', '.join(PLATFORMS)})")


def current(root: Path = Path("/")) -> PlatformProfile:
    """The profile of the machine this runs on."""
    return profile_for(detect(root), memory_bytes(root), os.cpu_count() or 1)


def describe(profile: PlatformProfile) -> str:
    """The profile as ``key = value`` lines, the command arguments space-joined."""
    lines = []
    for field in fields(profile):
        value = getattr(profile, field.name)
        lines.append(f"{field.name} = {' '.join(value) if isinstance(value, tuple) else value}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    commands = ("cmake-args", "show", "name")
    if len(args) != 1 or args[0] not in commands:
        print(f"usage: platform.py {{{','.join(commands)}}}", file=sys.stderr)
        return 2
    profile = current()
    if args[0] == "cmake-args":
        print(" ".join(profile.llama_cmake_args))
    elif args[0] == "show":
        print(describe(profile))
    else:
        print(profile.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
