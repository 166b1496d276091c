"""A request the user corrected while saying it: the last value is the one meant.

People fix a word as they speak: "set a timer for ninety minutes, no wait, two hours",
"what's the air like in Busan, no, I mean Ilsan", "부산, 아니 일산 미세먼지 어때?".  The
words after the last correction replace as many words just before it (the fixed
phrase is usually said again in the same shape), so the arguments are read from
"set a timer for two hours" and "what's the air like in Ilsan", and a value the user
took back is never acted on.
"""

from __future__ import annotations

import re

from agent.deciding.extract import HANGUL

_EN_MARKERS = (
    r"no,? wait", r"wait,? no", r"no,? sorry", r"sorry,? i mean", r"i mean", r"i meant", r"make (?:it|that)",
    r"no,? no", r"no", r"actually", r"or rather", r"rather",
)
_EN = re.compile(r"(?:^|[,.;!?…]|\s)\s*(?:(?:" + "|".join(_EN_MARKERS) + r")\b\s*[,.;:!…]*\s*)+(?=\S)", re.IGNORECASE)
_KO = re.compile(r"(?:^|[,.;!?…]|\s)\s*(?:(?:아니(?:다|요|야)?|아 ?참|그게 아니라|정정할게)\s*[,.;:!…]*\s*)+(?=\S)")
_NUMBER = re.compile(
    r"^(\d|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|"
    r"ninety|a|an|half|quarter)\b", re.IGNORECASE
)
_WORD = re.compile(r"\S+")


def corrected(text: str) -> str:
    """``text`` with the words taken back replaced by what the user said instead (unchanged if none).

    A correction needs words before it and after it; "no" that starts an answer ("No, thanks")
    is not one.
    """
    korean = HANGUL.search(text) is not None
    pattern = _KO if korean else _EN
    last = None
    for match in pattern.finditer(text):
        if match.start() > 0 and re.search(r"\w", text[: match.start()]) and re.search(r"\w", text[match.end() :]):
            last = match
    if last is None:
        return text
    before = _WORD.findall(text[: last.start()])
    after = text[last.end() :].strip()
    if korean:
        # Korean puts the value first and the verb last: the word just before is the one taken back.
        replaced = min(1, len(before))
    else:
        replaced = min(len(_WORD.findall(after)), len(before))
        if replaced == len(before) and not _NUMBER.match(before[0]):
            replaced -= 1  # an English request opens with its verb ("add", "set"): keep it
    kept = before[: len(before) - replaced]
    return " ".join([*kept, after]).strip()
