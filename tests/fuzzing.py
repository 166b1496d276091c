"""What the fuzz tests share: how many examples each runs, and the checks on what hearth says.

``FUZZ`` bounds every fuzz test to a fixed number of examples with no per-example deadline, so
the suite's time stays small and no example fails for being slow on a busy machine.  The examples
are the same on every run and every machine (derandomized, no example database): a test run says
whether the code changed, not whether today's draw was unlucky.  To look for new failures, draw
afresh and more: ``HEARTH_FUZZ_RANDOM=1 HEARTH_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz_*.py``
(a failure found so becomes a regression test or a documented limit, not a flaky suite).
"""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("HEARTH_FUZZ_EXAMPLES", "150"))
"""Examples per fuzz test (each test may scale it for a cheap or a costly target)."""
RANDOM = os.environ.get("HEARTH_FUZZ_RANDOM") == "1"
"""Draw new examples on every run (and keep failures in hypothesis's database) instead of the fixed ones."""


def fuzz(scale: float = 1.0) -> settings:
    """The settings of one fuzz test: ``scale`` times :data:`EXAMPLES` examples, no deadline,
    the same examples every run unless :data:`RANDOM`."""
    fixed: dict[str, object] = {} if RANDOM else {"derandomize": True, "database": None}
    return settings(
        max_examples=max(10, int(EXAMPLES * scale)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
        **fixed,  # type: ignore[arg-type]
    )


MAX_DIGITS = 10
"""The most digits a spoken number may have (commas and a decimal point aside): 2,030,000 teaspoons
is 7; a 150-digit duration is a bug."""

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_NOT_A_NUMBER = re.compile(r"\b(?:inf|infinity|nan)\b|\d[eE][+-]?\d", re.IGNORECASE)


def speakable_problems(text: str) -> list[str]:
    """What is wrong with ``text`` as something hearth says: inf, nan, exponents, huge numbers."""
    problems = [f"says {m.group()!r}" for m in _NOT_A_NUMBER.finditer(text)]
    for match in _NUMBER.finditer(text):
        digits = sum(c.isdigit() for c in match.group())
        if digits > MAX_DIGITS:
            problems.append(f"says a number of {digits} digits")
    return problems
