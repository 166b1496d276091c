"""Where a benchmark's figures came from: what wrote them, the commit that ran and the machine it ran on.

Every bench that writes a result file records :func:`written_by` in it, under the key
``written_by``, beside its figures, so a result file says what wrote it and what it measured.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def git_commit(root: Path | None = None) -> str:
    """The checked-out commit (``git rev-parse HEAD``), or ``unknown`` outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=root or ROOT)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def tree_dirty(root: Path | None = None) -> bool | None:
    """Whether the checkout's tracked files differ from the commit (staged or not).

    Counts tracked files only (``git status --porcelain --untracked-files=no``): a new file nobody
    has added, such as a bench's own output, does not change the code that ran. ``None`` outside
    a git checkout, where it cannot be told.
    """
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True, check=True, cwd=root or ROOT)
    except (OSError, subprocess.CalledProcessError):
        return None
    return bool(out.stdout.strip())


def machine() -> dict[str, Any]:
    """The platform, processor, Python and CPU count."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
    }


def written_by(module: str, argv: Sequence[str] | None = None, root: Path | None = None) -> dict[str, Any]:
    """What wrote a result file, recorded in it under ``written_by``.

    ``module`` is the entry point that ran, as ``python -m`` names it (``bench.drills.faults``;
    ``hearth bench`` is ``firmware_py.cli``); ``argv`` its arguments, without the program's name
    (``sys.argv[1:]`` when left out). ``commit`` is ``HEAD`` and ``dirty`` whether tracked files
    differed from it (untracked files are not counted; see :func:`tree_dirty`), both of the
    checkout at ``root`` (this repository by default), and ``machine`` is :func:`machine`.
    """
    return {
        "module": module,
        "arguments": [str(a) for a in (sys.argv[1:] if argv is None else argv)],
        "commit": git_commit(root),
        "dirty": tree_dirty(root),
        "machine": machine(),
    }
