"""Where a benchmark's figures came from: the commit that ran and the machine it ran on.

Every kind of bench records these beside its figures, so a result file says what it measured.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any


def git_commit() -> str:
    """The checked-out commit (``git rev-parse HEAD``), or ``unknown`` outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


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
