"""Platform profiles: detection from fake file trees, the choices per memory tier, and setup.sh's use."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_py import platform
from firmware_py.platform import GB, PlatformProfile, current, detect, memory_bytes, profile_for

REPO = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = Path("/usr/bin/python3")
X86_ARGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
JETSON_COMPATIBLE = b"nvidia,p3768-0000+p3767-0005\x00nvidia,p3767-0005\x00nvidia,tegra234\x00"


def _tree(root: Path, files: dict[str, bytes], mem_kb: int | None = 8_000_000) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    if mem_kb is not None:
        (root / "proc").mkdir(exist_ok=True)
        (root / "proc/meminfo").write_text(f"MemTotal:       {mem_kb} kB\nMemFree:         1000 kB\n")
    return root


def test_pi5_from_device_tree_model(tmp_path: Path):
    root = _tree(tmp_path, {"proc/device-tree/model": b"Raspberry Pi 5 Model B Rev 1.0\x00"})
    # The device tree decides, whatever the architecture says.
    assert detect(root, machine="aarch64") == "pi5"
    assert detect(root, machine="x86_64") == "pi5"


def test_raspberry_pi_4_is_not_pi5(tmp_path: Path):
    root = _tree(tmp_path, {"proc/device-tree/model": b"Raspberry Pi 4 Model B Rev 1.4\x00"})
    assert detect(root, machine="aarch64") == "generic"


@pytest.mark.parametrize(
    "files",
    [
        {"etc/nv_tegra_release": b"# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64\n"},
        {"proc/device-tree/compatible": JETSON_COMPATIBLE},
        {"proc/device-tree/model": b"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\x00"},
        {
            "etc/nv_tegra_release": b"# R36 (release)\n",
            "proc/device-tree/model": b"NVIDIA Jetson AGX Orin Developer Kit\x00",
            "proc/device-tree/compatible": JETSON_COMPATIBLE,
        },
    ],
)
def test_jetson_orin(tmp_path: Path, files: dict[str, bytes]):
    assert detect(_tree(tmp_path, files), machine="aarch64") == "jetson-orin"


@pytest.mark.parametrize("machine", ["x86_64", "amd64", "AMD64"])
def test_x86(tmp_path: Path, machine: str):
    assert detect(_tree(tmp_path, {}), machine=machine) == "x86"


@pytest.mark.parametrize("machine", ["aarch64", "armv7l", "riscv64"])
def test_generic(tmp_path: Path, machine: str):
    root = _tree(tmp_path, {"proc/device-tree/model": b"Radxa ROCK 5B\x00"})
    assert detect(root, machine=machine) == "generic"


def test_detect_defaults_to_this_machines_architecture(tmp_path: Path):
    expected = "x86" if os.uname().machine.lower() in ("x86_64", "amd64") else "generic"
    assert detect(tmp_path) == expected


def test_memory_bytes(tmp_path: Path):
    assert memory_bytes(_tree(tmp_path, {}, mem_kb=8_138_720)) == 8_138_720 * 1024
    assert memory_bytes(tmp_path / "nowhere") is None
    (tmp_path / "proc/meminfo").write_text("MemFree: 1 kB\n")
    assert memory_bytes(tmp_path) is None
    (tmp_path / "proc/meminfo").write_text("MemTotal: lots kB\n")
    assert memory_bytes(tmp_path) is None


GiB = 2**30


@pytest.mark.parametrize(
    "name, memory, reasoner",
    [
        ("pi5", 8 * GiB, "qwen2.5-coder-0.5b"),
        ("pi5", 4 * GiB, "qwen2.5-coder-0.5b"),
        ("pi5", 2 * GiB, "none"),
        ("pi5", None, "qwen2.5-coder-0.5b"),
        ("jetson-orin", 8 * GiB, "qwen2.5-coder-1.5b"),
        ("jetson-orin", 64 * GiB, "qwen2.5-coder-1.5b"),
        ("jetson-orin", 4 * GiB, "qwen2.5-coder-0.5b"),
        ("jetson-orin", None, "qwen2.5-coder-1.5b"),
        ("x86", 16 * GiB, "qwen2.5-coder-1.5b"),
        ("x86", 6 * GB, "qwen2.5-coder-1.5b"),
        ("x86", 4 * GiB, "qwen2.5-coder-0.5b"),
        ("x86", 2 * GB, "qwen2.5-coder-0.5b"),
        ("x86", 1 * GiB, "none"),
        ("x86", None, "qwen2.5-coder-0.5b"),
        ("generic", 8 * GiB, "qwen2.5-coder-0.5b"),
        ("generic", 3 * GB, "qwen2.5-coder-0.5b"),
        ("generic", 2 * GiB, "none"),
    ],
)
def test_reasoner_per_memory_tier(name: str, memory: int | None, reasoner: str):
    profile = profile_for(name, memory, 4)
    assert profile.reasoner_model == reasoner
    assert profile.name == name
    assert "\n" not in profile.reason and profile.reason


def test_pi5_profile():
    profile = profile_for("pi5", 8 * GiB, 4)
    assert (profile.talker_threads, profile.reasoner_threads, profile.asr_threads) == (2, 2, 2)
    assert (profile.reasoner_gpu_layers, profile.asr_device, profile.asr_compute_type) == (0, "cpu", "int8")
    assert profile.llama_cmake_args == ("-DLLAVA_BUILD=OFF",)
    assert profile.reason == "Raspberry Pi 5, 8 GB: the 0.5B reasoner on 4 cores, CPU only"


def test_jetson_profile():
    profile = profile_for("jetson-orin", 8 * GiB, 6)
    assert "-DGGML_CUDA=on" in profile.llama_cmake_args
    assert "-DLLAVA_BUILD=OFF" in profile.llama_cmake_args
    assert (profile.reasoner_gpu_layers, profile.asr_device, profile.asr_compute_type) == (-1, "cuda", "float16")


@pytest.mark.parametrize("memory", [1 * GiB, 4 * GiB, 16 * GiB])
def test_x86_profile(memory: int):
    profile = profile_for("x86", memory, 8)
    assert " ".join(profile.llama_cmake_args) == X86_ARGS
    assert "-DGGML_NATIVE=ON" not in profile.llama_cmake_args
    assert (profile.reasoner_gpu_layers, profile.asr_device, profile.asr_compute_type) == (0, "cpu", "int8")


def test_two_core_x86_shares_both_cores():
    profile = profile_for("x86", 8 * GiB, 2)
    assert (profile.talker_threads, profile.reasoner_threads, profile.asr_threads) == (2, 2, 2)


def test_cuda_only_on_the_jetson():
    for name in ("pi5", "x86", "generic"):
        profile = profile_for(name, 8 * GiB, 4)
        assert not any("CUDA" in arg for arg in profile.llama_cmake_args)
        assert profile.asr_device == "cpu"


@pytest.mark.parametrize("name", platform.PLATFORMS)
@pytest.mark.parametrize("cpus", range(1, 17))
def test_threads_within_cpus(name: str, cpus: int):
    profile = profile_for(name, 8 * GiB, cpus)
    for threads in (profile.talker_threads, profile.reasoner_threads, profile.asr_threads):
        assert 1 <= threads <= cpus
    if name in ("pi5", "generic") and cpus >= 2:
        # Where they split the cores, the two LLMs together never ask for more than there are.
        assert profile.talker_threads + profile.reasoner_threads <= cpus


def test_fewer_than_one_cpu_counts_as_one():
    profile = profile_for("x86", 8 * GiB, 0)
    assert (profile.talker_threads, profile.reasoner_threads, profile.asr_threads) == (1, 1, 1)


def test_unknown_platform():
    with pytest.raises(ValueError, match="unknown platform 'mainframe'"):
        profile_for("mainframe", 8 * GiB, 4)


def test_profile_is_frozen():
    profile = profile_for("pi5", 8 * GiB, 4)
    assert isinstance(profile, PlatformProfile)
    with pytest.raises(AttributeError):
        profile.talker_threads = 4  # type: ignore[misc]


def test_current_from_a_fake_tree(tmp_path: Path):
    root = _tree(tmp_path, {"proc/device-tree/model": b"Raspberry Pi 5 Model B Rev 1.0\x00"}, mem_kb=8_138_720)
    profile = current(root)
    assert profile == profile_for("pi5", 8_138_720 * 1024, os.cpu_count() or 1)


def test_only_the_standard_library():
    tree = ast.parse(Path(platform.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.add((node.module or "").split(".")[0])
    assert imported and imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


def _run_script(*args: str) -> subprocess.CompletedProcess[str]:
    # As setup.sh runs it: the system python3, a plain script path from the repository root, no venv.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = "/usr/bin:/bin"
    return subprocess.run(
        [str(SYSTEM_PYTHON), "firmware_py/platform.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=30
    )


@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no system python3 at /usr/bin/python3")
def test_script_prints_cmake_args_with_the_system_python():
    result = _run_script("cmake-args")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == " ".join(current().llama_cmake_args)
    if detect() == "x86":
        assert result.stdout.strip() == X86_ARGS


@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no system python3 at /usr/bin/python3")
def test_script_show_and_usage():
    shown = _run_script("show")
    assert shown.returncode == 0, shown.stderr
    lines = dict(line.split(" = ", 1) for line in shown.stdout.strip().splitlines())
    assert lines["name"] == detect()
    assert lines["llama_cmake_args"] == " ".join(current().llama_cmake_args)
    assert set(lines) == {f for f in PlatformProfile.__dataclass_fields__}
    assert _run_script("name").stdout.strip() == detect()
    bad = _run_script("frobnicate")
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_setup_sh_takes_cmake_args_from_the_profile():
    text = (REPO / "setup.sh").read_text()
    assert "firmware_py/platform.py cmake-args" in text
    assert 'CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE}"' in text  # an existing CMAKE_ARGS still wins
    assert "set -euo pipefail" in text
    assert "-DWITH_CUDA=ON -DWITH_CUDNN=ON" in text


def test_setup_sh_parses():
    result = subprocess.run(["bash", "-n", str(REPO / "setup.sh")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
