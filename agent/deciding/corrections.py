"""A request the user corrected while saying it: the last value is the one meant.

People fix a word as they speak: "set a timer for ninety minutes, no wait, two hours",
"what's the air like in Busan, no, I mean Ilsan", "부산, 아니 일산 미세먼지 어때?".  The
words after the last correction replace as many words just before it (the fixed
phrase is usually said again in the same shape), so the arguments are read from
"set a timer for two hours" and "what's the air like in Ilsan", and a value the user
took back is never acted on.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from agent.deciding.extract import HANGUL
from agent.deciding.intents import is_question, opens_with_a_command
from agent.deciding.lexicon import lexicon
from agent.deciding.spoken_numbers import durations, numbers, prepare


@functools.cache
def _en() -> re.Pattern[str]:
    """The English corrections: a run of markers (the classes ``correction_pause``, where a comma may
    follow the first word, then ``correction_marker``), each a whole word, after a pause or a space."""
    lex = lexicon("en")
    paused = [re.escape(first) + ",?" + "".join(" " + re.escape(w) for w in rest)
              for first, *rest in (p.split() for p in lex.phrases("correction_pause"))]
    plain = [" ".join(re.escape(w) for w in p.split()) for p in lex.phrases("correction_marker")]
    markers = "|".join([*paused, *plain])
    return re.compile(r"(?:^|[,.;!?…]|\s)\s*(?:(?:" + markers + r")\b\s*[,.;:!…]*\s*)+(?=\S)", re.IGNORECASE)


_KO = re.compile(r"(?:^|[,.;!?…]|\s)\s*(?:(?:(?:아|어|음|아이)\s+)?(?:아니(?:다|요|야)?|아 ?참|그게 아니라|정정할게)\s*[,.;:!…]*\s*)+(?=\S)")
"""The Korean corrections, with the sound made before one ("팔 분, 아 아니 십 분"): the sound is no word
taken back."""
_KO_ACT_VERB = re.compile(r"(?:넣어|넣고|추가해|추가|담아|적어|올려|빼|지워|맞춰|켜|꺼|틀어|사와|사 와)(?:줘|줘요|주세요|요)?")
"""A Korean verb of an act said after its thing ("콜라 넣어"), which a correction after it leaves in place."""
_HESITATION = re.compile(r"(?:[,\s]+(?:er|erm|um|uh|uhh|umm|oh|ah|hmm|아|어|음|그))+[,\s]*$", re.IGNORECASE)
"""A sound made just before a correction ("four hours, er, actually five"): no word taken back."""
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
    pattern = _KO if korean else _en()
    last = None
    for match in pattern.finditer(text):
        if match.start() > 0 and re.search(r"\w", text[: match.start()]) and re.search(r"\w", text[match.end() :]) \
                and (korean or not _a_reason_follows(text[match.end() :])):
            last = match
    if last is None:
        return text
    said_before = _HESITATION.sub("", text[: last.start()])
    said_after = without_reason(text[last.end() :], korean)
    for swap in (_new_length, _new_number):
        if (swapped := swap(said_before, said_after)) is not None:
            return swapped
    before = _WORD.findall(said_before)
    after = _EN_SAY_AGAIN.sub("", said_after).strip() if not korean else said_after.strip()
    if not korean and (again := _said_again(before, after)) is not None:
        return again
    if korean:
        # Korean puts the value first and the verb last: the word just before is the one taken back.
        replaced = min(1, len(before))
        if len(before) >= 2 and len(found := numbers(before[-2])) == 1 and found[0].end - found[0].start == len(prepare(before[-2])):
            replaced = 2  # a number and its counter ("두 개, 아니 세 개") are taken back together
        elif len(before) >= 2 and _KO_ACT_VERB.fullmatch(before[-1].rstrip(",.;:!?…")) and not _KO_ACT_VERB.fullmatch(after.rstrip(" ,.;:!?…")):
            # "목록에 콜라 넣어, 아 아니 사이다": the thing before the verb is taken back, the verb
            # stays, and so do where it goes and a 좀 ("우유 목록에 넣어, 아니 두유")
            at = len(before) - 2
            while at > 0 and (re.search(r"(?:에|에다|에다가|에서|으로|로)$", before[at]) or before[at] == "좀"):
                at -= 1
            return " ".join([*before[:at], after.rstrip(" ,.;:!?…"), *before[at + 1 :]]).strip()
    else:
        # "Put cheddar on the list, oh wait, mozzarella": the words after the thing stay where they were
        tail = re.search(r"(?:\s+(?:" + lexicon("en").alternation("request_tail") + r"))+[\s,.;:!…]*$", " " + " ".join(before), re.IGNORECASE)
        kept_tail = _WORD.findall(tail.group()) if tail is not None else []
        if kept_tail and len(kept_tail) < len(before):
            before = before[: len(before) - len(kept_tail)]
            after = " ".join([after.rstrip(" ,.;:!?…"), *kept_tail]).rstrip(",;")
            return " ".join([*before[: len(before) - min(len(_WORD.findall(after)) - len(kept_tail), len(before) - 1)], after]).strip()
        replaced = min(len(_WORD.findall(after)), len(before))
        if replaced == len(before) and not _NUMBER.match(before[0]):
            replaced -= 1  # an English request opens with its verb ("add", "set"): keep it
    kept = before[: len(before) - replaced]
    return " ".join([*kept, after]).strip()


def _a_reason_follows(after: str) -> bool:
    """Whether what follows a word like "actually" is a reason with its own subject and no value
    ("Take the butter back off actually, Mum's bringing some"): the words before stand, nothing is
    taken back."""
    return tells_a_reason(after.strip()) and not numbers(after) and not durations(after)


def _said_again(before: list[str], after: str) -> str | None:
    """``before`` with the phrase ``after`` replaces put back in its place, when ``after`` ends in a
    word said before, not last: "Add red peppers to the list, no, I mean yellow peppers" takes back
    "red peppers", not "the list"."""
    said = _WORD.findall(after)
    bare = [w.strip(",.;:!?…").casefold() for w in before]
    head = said[-1].strip(",.;:!?…").casefold() if said else ""
    at = max((i for i, w in enumerate(bare) if w == head), default=None)
    if at is None or at == len(before) - 1 or len(said) > at + 1:
        return None  # not said before, or said last (the counted words are right), or too long
    start = at + 1 - len(said)
    if start == 0 and lexicon("en").has("command_open", bare[0]):
        start = 1  # "Add milk to the list, no, oat milk": the verb stays
    tail = before[at][len(before[at].rstrip(",.;:!?…")):]
    end = said[-1][len(said[-1].rstrip(",.;:!?…")):]  # how the whole was said to end
    words = [*before[:start], *said[:-1], said[-1].rstrip(",.;:!?…") + tail, *before[at + 1 :]]
    return (" ".join(words).rstrip(",;") + end).strip()


def _new_length(before: str, after: str) -> str | None:
    """``before`` with its last length replaced by the one ``after`` gives, when ``after`` says a
    length and nothing but that (a filler word aside) and other words stand between the two; else
    None.

    Said again after a sentence break, the new value comes in its own shape ("…forty minutes for
    the stew, no wait. Make it an hour.", "사십 분 맞춰 줘. 아니 한 시간으로 해 줘."), not as the
    words it replaces: counting words would take back "the stew" and keep the forty minutes.
    """
    new, old = durations(after), durations(before)
    if len(new) != 1 or not old:
        return None
    said, source = prepare(after), unicodedata.normalize("NFKC", before)
    rest = _FILLER.sub(" ", said[: new[0].start] + " " + said[new[0].end :])
    if rest.strip(" ,.;:!?…"):
        return None  # more than a length after it ("an hour for the soup"): the words are counted
    if len(prepare(before)) != len(source):
        source = prepare(before)  # the offsets are the prepared words' ("9분"), and so is the text
    spelled = unicodedata.normalize("NFKC", after)
    length = (spelled if len(spelled) == len(said) else said)[new[0].start : new[0].end]  # the user's own spelling
    value = old[-1]
    if not re.search(r"\w", source[value.end :]):
        # the length was said last ("사 분 아니 오 분 맞춰 줘"): what follows the new one stays
        return (source[: value.start] + unicodedata.normalize("NFKC", after).strip()).strip()
    return (source[: value.start] + length + source[value.end :]).strip().rstrip(",;")


_UNIT_SAID = re.compile(r"(?:minutes?|mins?|hours?|hrs?|seconds?|secs?|분|시간|초)$", re.IGNORECASE)


def _new_number(before: str, after: str) -> str | None:
    """``before`` with its last number replaced by the bare number ``after`` says, when ``after`` is
    a number and nothing but that (fillers aside): "nine minutes, no, make that eleven" keeps the
    minutes, "두 개, 아니 세 개" the count, "two lemons, no, three" the lemons; else None."""
    bare = _EN_SAY_AGAIN.sub("", after.strip()).strip(" ,.;:!?…")
    found = numbers(bare)
    said = prepare(bare)
    if len(found) != 1 or _FILLER.sub(" ", said[: found[0].start] + " " + said[found[0].end :]).strip(" ,.;:!?…"):
        return None
    number = said[found[0].start : found[0].end]
    source = unicodedata.normalize("NFKC", before)
    if len(prepare(before)) != len(source):
        source = prepare(before)
    lengths = durations(source)
    if lengths:
        value = lengths[-1]
        unit = _UNIT_SAID.search(source[value.start : value.end].rstrip())
        if unit is None:
            return None  # "an hour and a half, no, two": which part is meant is not said
        return (source[: value.start] + f"{number} {unit.group()}" + source[value.end :]).strip().rstrip(",;")
    counted = numbers(source)
    if not counted:
        return None
    value = counted[-1]
    return (source[: value.start] + number + source[value.end :]).strip().rstrip(",;")


_EN_SAY_AGAIN = re.compile(r"^\s*(?:(?:make (?:it|that)|i mean|i meant|it should be|change (?:it|that) to|let's say|say)\s+)+",
                           re.IGNORECASE)
"""How a value is said again after a correction ("no, make that eleven"): the words before the value."""


def tells_a_reason(clause: str) -> bool:
    """Whether an English clause opens as a reason does: with its own subject or a word of cause, or
    a thing and what it is ("it's raining", "because we're out", "the pan is thick")."""
    lex = lexicon("en")
    reason = re.compile(rf"(?:{lex.alternation('reason_lead')})\b|(?:the|this|that|these|those|my|our|his|her|their)\s+"
                        rf"(?:[\w']+\s+){{0,2}}?(?:{lex.alternation('reason_verb')})\b", re.IGNORECASE)
    return reason.match(clause.strip()) is not None


def without_reason(said: str, korean: bool) -> str:
    """The words without the reasons said after them ("almond milk, she's switched again", "make
    that eleven, they're the big ones", "no, I meant twenty, it needs to reduce more"): a last
    clause that opens with its subject or a word of cause asks nothing more. The first clause, and
    one that says a number, always stay."""
    if korean:
        return said
    clauses = re.split(r"(?<=[,;.!?])\s+", said.strip())
    while len(clauses) > 1 and tells_a_reason(clauses[-1]) and not numbers(clauses[-1]):
        clauses.pop()
    return " ".join(clauses).rstrip(" ,;") if len(clauses) > 0 else said



_FILLER = re.compile(
    r"\b(?:make|set|change|do|it|that|to|for|please|instead|then|actually|rather|just|only|be|should|a|an|the)\b|"
    r"(?<=[\d분초간])(?:으로|로)|(?<![\w가-힣])(?:으로|로)(?=\s|$)|(?:해|바꿔|맞춰|하자|할게|해요|주세요|줘|요|로|으로|그걸|그거)(?=\s|$|[,.!?])"
)
"""Words around a new length that add nothing to it ("make it an hour", "한 시간으로 해 줘")."""


def asked_part(text: str, language: str) -> str:
    """The part of English words that asks, without the reasons said after it: "Pause it for a sec,
    I need to check the oven" → "Pause it for a sec"; "What day are we on? I've lost track." →
    "What day are we on?". The words unchanged when nothing after them only tells, or what is left
    asks nothing."""
    if language == "ko" or HANGUL.search(text):
        return text
    clauses = [c for c in re.split(r"(?<=[,;.!?])\s+", text.strip()) if c.strip()]
    lead = re.compile(rf"(?:(?:{lexicon('en').alternation('lead')}|{lexicon('en').alternation('remark_lead')})[\s,.;!?]*)+$", re.IGNORECASE)

    def asks(clause: str) -> bool:
        return is_question(clause, language) or opens_with_a_command(clause, language)

    def tells(clause: str) -> bool:
        return not asks(clause) and (tells_a_reason(clause) or lead.match(clause.strip()) is not None)

    kept = list(clauses)
    while len(kept) > 1 and tells(kept[-1]):
        kept.pop()
    # What is told before the request stays: "The dish soap is nearly gone, put it on the list"
    # names in it what "it" is.
    asked = " ".join(kept).rstrip(" ,;")
    return asked if kept != clauses and any(asks(c) for c in kept) else text

