"""Argument values read straight from a request's words: timer labels, list items, notes, units, dishes, places.

Each function returns what the user said, or None when the words do not state it
unambiguously; none of them makes a value up.  English is matched on the lower-cased
text and values come back as said (original casing where it survives); Korean values lose
their trailing particle (우유를 → 우유) only when the word stays at least two syllables.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata

from agent.deciding.lexicon import lexicon
from agent.deciding.spoken_numbers import (
    EN_FRACTIONS,
    EN_ONES,
    EN_TENS,
    KO_NUMBER,
    durations,
    en_duration_units,
    english_numbers,
    english_tokens,
    ko_counters,
    korean_durations,
    korean_number,
    prepare,
    read_amount,
)

log = logging.getLogger(__name__)

HANGUL = re.compile(r"[가-힣]")


@functools.cache
def _en_not_labels() -> frozenset[str]:
    """English words that cannot name a timer: the class ``timer_not_label``, number words and units of time."""
    return frozenset(lexicon("en").phrases("timer_not_label")) | {*EN_ONES, *EN_TENS, *en_duration_units(), *EN_FRACTIONS}


@functools.cache
def _ko_not_labels() -> frozenset[str]:
    """Korean words that cannot name a timer (the class ``timer_not_label``)."""
    return frozenset(lexicon("ko").phrases("timer_not_label"))


def original(text: str, prepared: str, start: int, end: int) -> str:
    """The user's own spelling of ``prepared[start:end]`` when the offsets still line up."""
    source = unicodedata.normalize("NFKC", text)
    piece = source[start:end] if len(source) == len(prepared) else prepared[start:end]
    return piece.strip(" ,.!?;:'\"")


def strip_korean_particle(word: str) -> str:
    """``word`` without the particle it ends in (the class ``noun_particle``, longest first), when at
    least two syllables stay; or a one-syllable thing said with its topic or object particle
    (``one_syllable_noun_particle``: "국은", "밥을")."""
    for particle in lexicon("ko").phrases("noun_particle"):
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    if len(word) == 2 and HANGUL.match(word) and word[1] in lexicon("ko").phrases("one_syllable_noun_particle"):
        return word[0]
    return word


def _words_until_stop(words: list[str], limit: int = 3) -> list[str]:
    out: list[str] = []
    for word in words:
        if word in _en_not_labels() or not re.fullmatch(r"[a-z][a-z']*", word) or len(out) == limit:
            break
        out.append(word)
    return out


# -- timers ----------------------------------------------------------------------------------------


def could_be_label(value: str) -> bool:
    """Whether a label written by the model can name a timer at all ("hour", "timer" and "the" cannot);
    an ordinal ("first", "두번째") picks one of several."""
    words = prepare(value).split()
    if not words:
        return False
    if _EN_ORDINAL.search(f"{prepare(value)} one") or _KO_ORDINAL.fullmatch(prepare(value).replace(" ", "")):
        return True
    if HANGUL.search(value):
        return not any(w in _ko_not_labels() or _KO_LENGTH_WORD.search(w) or korean_number(w) is not None for w in words)
    return not all(w in _en_not_labels() or re.fullmatch(r"[\d.,]+", w) for w in words)


_KO_LENGTH_WORD = re.compile(r"(?:분|초|시간)(?:짜리|동안|정도|쯤)?$|^반?짜리$|^반(?:짜리|동안|정도|쯤)?$")
"""A word that is a length, or says what length a thing is ("삼십 초짜리 타이머"): no timer's name."""
_EN_ORDINAL = re.compile(r"\b(?:the\s+)?(first|second|third|fourth|fifth|last|latest|newest)\s+(?:one|timer)\b")
_KO_ORDINAL = re.compile(r"(첫|두|세|네|다섯)\s*번째|마지막")


_EN_LABEL_BEFORE = (
    re.compile(r"\btimers?\s+for\s+(?:the\s+|my\s+)?"), re.compile(r"\b(?:another one|one)\s+for\s+(?:the\s+|my\s+)?"),
    re.compile(r"\bfor\s+(?:the|my|our)\s+"), re.compile(r"\btime\s+(?:the|my|our)\s+"),
    re.compile(r"\bremind\s+(?:me|us)\s+(?:in\s+(?:\S+\s+){1,3}?)?(?:to\s+(?:\w+\s+)?(?:on\s+|in\s+|out\s+)?|about\s+)(?:the\s+|my\s+|our\s+)?"),
    re.compile(r"\b(?:minutes?|seconds?|hours?)\s+(?:to|from|off|on)\s+(?:the|my|our)\s+"),
    # "how long has the lamb got left", "is the rice done"
    re.compile(r"\b(?:has|have|does|do|is|are)\s+(?:the|my|our)\s+"),
)
"""What a timer's name is said right after, in the order tried: "timer for pizza", "for the bread",
"time the eggs", "remind me to flip the pancakes", "five more minutes to the garlic bread"."""


def timer_label(text: str) -> str | None:
    """The timer's name when the words give one: "pasta timer", "timer called tea", "for the bread", "라면 타이머";
    or which of several: "the first one", "the second timer", "두 번째 타이머"."""
    prepared_ordinal = prepare(text)
    if (match := (_KO_ORDINAL if HANGUL.search(text) else _EN_ORDINAL).search(prepared_ordinal)) is not None:
        return match.group(0).replace(" ", "") if HANGUL.search(text) else match.group(1)
    if HANGUL.search(text):
        return _korean_label(text)
    prepared = prepare(text)
    words = [t.text for t in english_tokens(text)]
    # "named pizza", "called the stew", "call it eggs", "name this one bread"
    for match in _EN_NAMING.finditer(prepared):
        found = _words_until_stop(re.findall(r"[a-z']+|\S", prepared[match.end():]))
        if found:
            return " ".join(found).strip("'")
    # "the chicken timer", "my pizza timers"
    for i, word in enumerate(words):
        if word in ("timer", "timers") and i > 0 and words[i - 1] not in _en_not_labels() and re.fullmatch(r"[a-z]+", words[i - 1]):
            before = words[max(0, i - 2) : i]
            if len(before) == 2 and before[0] not in _en_not_labels() and re.fullmatch(r"[a-z]+", before[0]):
                return " ".join(before)  # "banana bread timer"
            return words[i - 1]
    # "timer for pizza", "for the bread", "time the eggs for"; "remind me to flip the pancakes";
    # "add five more minutes to the garlic bread", "take two minutes off the rice"
    for pattern in _EN_LABEL_BEFORE:
        for match in pattern.finditer(prepared):
            found = _words_until_stop(re.findall(r"[a-z']+|\S", prepared[match.end():]), limit=2)
            if found:
                return " ".join(found)
    # "cancel the potato one", "the banana bread one"
    for match in re.finditer(r"\b(?:the|my|our)\s+((?:[a-z']+\s+){1,2}?)one\b", prepared):
        named = match.group(1).split()
        if named and _words_until_stop(named) == named:
            return " ".join(named)
    return _label_of_what_cooks(prepared) or _label_beside_length(prepared)


_EN_NAMING = re.compile(
    r"\b(?:named|called|labell?ed|(?:call|name|label)\s+(?:it|this|that)(?:\s+(?:one|timer))?)\s+(?:the\s+)?")
_EN_WHAT_COOKS = re.compile(
    r"(?P<x>[a-z']+(?:\s+(?!just\b|has\b|have\b|now\b)[a-z]+)?)"
    r"(?:(?:\s+(?:just|has|have|now)){0,2}(?:\s+(?:went|gone|goes|go|is|are)|'s|'re)\s+(?:in|on|boiling|simmering|roasting|baking|"
    r"cooking|frying|steaming|resting|proving|poaching|stewing|braising)\b"
    r"|\s+(?:needs|need|takes|take|gets|get|wants)\s+(?=\S))")
"""What cooks, said before where it went, what it is doing or how long it takes: "the lasagna just
went in", "the potatoes are on", "the eggs are boiling", "rice needs eighteen minutes", "pasta gets
twelve"."""


def _label_of_what_cooks(prepared: str) -> str | None:
    """The timer's name as the thing that cooks, when the same clause gives the length: "Lasagna
    just went in, give it twenty-five minutes." names the timer lasagna."""
    if not durations(prepared):
        return None
    for match in _EN_WHAT_COOKS.finditer(prepared):
        words = match["x"].split()
        if len(words) == 2 and not _words_until_stop(words[:1]):
            words = words[1:]  # "the eggs", "so rice"
        if words and _words_until_stop(words) == words and not any(lexicon("en").has("not_what_cooks", w) for w in words):
            return " ".join(words)
    return None


def _label_beside_length(prepared: str) -> str | None:
    """A name said as its own phrase beside the length: "Pasta, nine minutes.", "Start a timer,
    thirty-five minutes, chicken." (a phrase of one or two words that are no command, and no
    "okay", "thanks" or "no")."""
    clauses = prepared.split(",")
    for i, clause in enumerate(clauses):
        if not durations(clause):
            continue
        for near in (i + 1, i - 1):
            if 0 <= near < len(clauses):
                phrase = clauses[near].strip(" .!?;:")
                words = re.sub(r"^(?:the|my|our)\s+", "", phrase).split()
                if 1 <= len(words) <= 2 and _words_until_stop(words) == words and not durations(phrase) \
                        and not any(lexicon("en").has(kind, phrase) for kind in ("lead", "tail", "yes", "no", "backchannel")):
                    return " ".join(words)
    return None


_KO_LABEL_PATTERNS = (
    # "이름은 밥으로 해 줘", "국이라고 이름 붙여 줘": the name given in so many words
    re.compile(r"이름(?:은|을|이)?\s*([가-힣A-Za-z]+?)(?:으로|로|이라고|라고|(?:이요|요|이야|야)?\s*[.!]?\s*$)"), re.compile(r"([가-힣A-Za-z]+?)(?:이라고|라고)\s*이름"),
    # "국 끓이는 타이머", "감자 삶는 거": what cooks, before the verb said of it
    re.compile(r"([가-힣A-Za-z]+)\s+[가-힣]+(?:는|던)\s+(?:타이머|거)"),
    # "라면 타이머", "찜닭에서 오 분 빼 줘", "두 시간 타이머 맞춰 줘, 갈비찜.", "…, 계란 삶는 거요."
    re.compile(r"([가-힣A-Za-z]+)\s*타이머"), re.compile(r"([가-힣]+)(?:\s+거)?에서\s+\S+\s*(?:분|초|시간)"),
    re.compile(r",\s*([가-힣]+)(?:\s+\S+\s+거요?)?\s*[.!?]*$"),
    # "미역국 다시 돌려": a timer started again, named first ("에어컨 꺼 줘" names no timer).
    re.compile(r"^([가-힣]+)\s+다시\s+(?:돌려|시작|켜|재개)"),
    # "라면 얼마 남았어?", "육수는 몇 분 남았지?": how long the named one has
    re.compile(r"^([가-힣]+)\s+(?:얼마|몇\s*분|언제)"),
    # "감자 거 꺼 줘", "된장국 거": the one of that name
    re.compile(r"(?:^|\s)([가-힣]*[^는은던\s])\s+거(?:는|를|도)?(?:\s|$)"),
    # "십오 분 뒤에 닭 뒤집으라고 알려 줘": what to be reminded of, by its first word
    re.compile(r"(?:뒤에|후에|있다가|이따가)\s+([가-힣]+)\s+[^,.!?]*?(?:라고|하라고)\s*(?:알려|말해)"),
)


@functools.cache
def _ko_label_lead() -> frozenset[str]:
    """Fillers said before a timer's name that name nothing (the class ``timer_label_lead``)."""
    return frozenset(lexicon("ko").phrases("timer_label_lead"))


def _korean_label(text: str) -> str | None:
    prepared = prepare(text)
    for pattern in _KO_LABEL_PATTERNS:
        for match in pattern.finditer(prepared):
            if (word := _korean_name(match.group(1))) is not None:
                return word
    return _korean_name_before_length(prepared) or _korean_what_cooks(prepared)


def _korean_what_cooks(prepared: str) -> str | None:
    """"수육 삶을 거라서, 사십오 분짜리 타이머 걸어 줘", "사골 국물 올렸어요. 한 시간 이십 분 부탁해요":
    the timer's name as the thing that cooks, said first in a clause of its own with the verb of
    cooking it, when a length is asked for beside it."""
    if not korean_durations(prepared):
        return None
    stems = lexicon("ko").alternation("cook_stem")
    for clause in re.split(r"[,.!?]", prepared):
        words = [w for w in clause.split() if w not in _ko_label_lead()]
        at = next((i for i, w in enumerate(words) if re.match(stems, w)), None)
        if at is None or at == 0 or at > 2 or korean_durations(" ".join(words[:at])):
            continue
        for word in words[:at]:
            if any(word.endswith(ending) and len(word) > len(ending) for ending in lexicon("ko").phrases("where_it_cooks")):
                continue  # "오븐에 고구마 넣었어": the oven is where, the sweet potatoes what
            if (name := _korean_name(word)) is not None:
                return name
    return None


def _korean_name(word: str) -> str | None:
    word = strip_korean_particle(word)
    if word in _ko_not_labels() or word in _ko_label_lead() or _KO_LENGTH_WORD.search(word) or korean_number(word) is not None:
        return None
    return word


def _korean_name_before_length(prepared: str) -> str | None:
    """"라면 삼 분.", "밥, 이십 분 맞춰 줘.", "그리고 국 이십오 분도.", "차 우리는 거 삼 분만.": the
    name said first, right before the length."""
    lengths = korean_durations(prepared)
    if not lengths:
        return None
    words = [w for w in prepared[: lengths[0].start].replace(",", " ").split() if w not in _ko_label_lead()]
    if len(words) == 1 or (len(words) in (2, 3) and words[-1] == "거"):
        return _korean_name(words[0])
    return None


def mentions_all(text: str) -> bool:
    """Whether the request is about every timer ("all", "every", "전부", "모든", "다")."""
    prepared = prepare(text)
    # 다 asks for every timer only before the act ("타이머 다 꺼"): "다 익었어" says the potatoes are done
    return bool(re.search(r"\b(?:all|every|each)\b|전부|모든|모두|(?:^|\s)다\s+(?:꺼|끄|취소|멈춰|멈추|정지|지워|없애|삭제|중지|세워)", prepared))


_EN_LESS = r"\b(?:remove|off|decrease|subtract|reduce|shorten|shorter|less|minus|cut|knock|lower|fewer|take away)\b|\btake\b.*\bfrom\b"
_EN_MORE = r"\b(?:add|increase|more|extend|another|plus|longer|lengthen|give)\b"


def adjustment_sign(text: str) -> int | None:
    """-1 when the words take time away, +1 when they add it, None when they say neither; read
    first in the clause that says the length ("2분만 더 줘, 아직 덜 익었어" adds: the 덜 is of
    the dumplings, not of the time)."""
    for clause in re.split(r"[,.!?;]+", text):
        if durations(clause) and (sign := _sign_of(clause)) is not None:
            return sign
    return _sign_of(text)


def _sign_of(text: str) -> int | None:
    prepared = prepare(text)
    if re.search(_EN_LESS, prepared) or re.search(r"줄여|줄이|빼|감소|덜|단축", prepared):
        return -1
    if re.search(_EN_MORE, prepared) or re.search(r"더|추가|늘려|늘리|연장", prepared):
        return 1
    return None


def adjusting_lengths(text: str) -> list[int]:
    """The lengths a change of a timer says, in whole seconds: the durations said, or a bare count
    said with "more" or "off" and no unit ("take five off", "give it three more"), in minutes, the
    unit a kitchen timer is changed in."""
    said = timer_durations(text, naming=False)
    if said or HANGUL.search(text):
        return said
    prepared = prepare(text)
    bare = [n for n in english_numbers(prepared) if re.match(r"\s+(?:more|extra|off|less)\b", prepared[n.end:])]
    return [int(round(bare[0].value * 60))] if len(bare) == 1 and 0 < bare[0].value <= MAX_BARE_MINUTES else []


MAX_BARE_MINUTES = 90
"""The largest bare count read as minutes in a change of a timer."""


def timer_durations(text: str, naming: bool) -> list[int]:
    """Durations said, in whole seconds; with ``naming=False`` those that name a timer are left out.

    "remove 5 minutes from the 1 hour timer": the hour names the timer, the 5 minutes is the change.
    """
    prepared = prepare(text)
    out = []
    for found in durations(text):
        after = prepared[found.end :].lstrip()
        before = prepared[: found.start].rstrip()
        names_timer = bool(re.match(r"(?:timers?\b|타이머)", after)) or bool(re.search(r"\btimers?\s+for$", before))
        if naming or not names_timer:
            out.append(int(round(found.value)))
    return out


# -- shopping list ---------------------------------------------------------------------------------

_LIST = r"(?:the\s+|my\s+|our\s+)?(?:shopping\s+|grocery\s+|groceries\s+)?list\b"
_EN_ADD = (
    rf"\b(?:add|put|stick|throw|include|write)\s*,?\s+(?P<x>.+?)\s+(?:to|on|onto|in|into)\s+{_LIST}",
    r"\b(?:shopping|grocery)\s+list\s*[:,]\s*(?P<x>.+?)\s*[.!?]*$",
    r"\b(?:add|put)\s+(?P<x>.+?)(?:\s+(?:too|as well|also|please))?\s*[.!?]*$",
    r"\b(?:i'm|i am|we're|we are)\s+out\s+of\s+(?P<x>.+?)\s*(?:[,.!?]|$)",
    r"\bforget\s+to\s+(?:buy|get|pick up)\s+(?P<x>.+?)\s*[.!?]*$",
    r"\b(?:need\s+to|have\s+to|must)\s+(?:buy|get|pick up)\s+(?P<x>.+?)\s*[.!?]*$",
    # "We need eggs", "we're low on butter": what the household lacks, said as a statement.
    r"^(?:(?:oh|ok|okay|hey|so|and|also)\s*,?\s+)*we\s+(?:need|could use)\s+(?!to\b)(?:some\s+|more\s+)?(?:of\s+)?(?:that\s+|those\s+|the\s+)?(?P<x>[^,.!?]+?)"
    r"(?:\s+for\s+[^,.!?]+?)?\s*(?:[,.!?]|$)",  # "for tomorrow", "for the party": what it is for, no part of it
    r"\b(?:we're|we are|i'm|i am)\s+(?:low|running low|running out|almost out|nearly out)\s+(?:on|of)\s+(?P<x>.+?)\s*(?:[,.!?]|$)",
    # "Butter on the shopping list, please.", "Three onions on the list", "Milk to the shopping list"
    # (the verb clipped or misheard): the thing, then where it goes.
    # ("At bananas to the list": "add" misheard as a word no thing begins with.)
    rf"^(?:(?:ok|okay|oh|and|also|hey|so)\s*,?\s+)*(?:(?:at|ad|and)\s+)?(?P<x>[^,.!?]+?)\s+(?:on|onto|to)\s+{_LIST}",
    # "Grab some coriander next time", "pick up limes when you're out": what to buy on the next trip.
    r"\b(?:grab|pick up|get|buy)\s+(?P<x>[^,.!?]+?)\s+(?:next time|when you(?:'re| are) out|when you go|"
    r"(?:at|from) the (?:shop|shops|store|supermarket))\b",
    # "Put down a kilo of mince": written down, on the list; only a counted thing ("put down the
    # knife" is no shopping)
    r"\bput\s+down\s+(?P<x>(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|\d+)\s+[^,.!?]+?)\s*(?:[,.!?]|$)",
    # "We'll need a dozen limes for Saturday, put that down": what is needed, then written down as "that"
    r"^(?:(?:oh|ok|okay|so|right|and)\s*,?\s+)*(?:we|i)(?:'ll|\s+will)?\s+(?:need|want)\s+(?!to\b)(?P<x>[^,.!?]+?)"
    r"(?:\s+for\s+[^,.!?]+?)?\s*,\s*(?:so\s+)?(?:put|jot|write|pop|stick|add|note)\s+(?:that|it|them|those)\b",
    # "3 cans of chickpeas.", "Two bags of sweetcorn": a counted thing in its container, said alone
    r"^(?:(?:oh|ok|okay|and|also|plus)\s*,?\s+)*(?P<x>(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a\s+couple\s+of|a\s+few|\d+)\s+"
    r"(?:cans?|tins?|bags?|bottles?|packs?|packets?|cartons?|jars?|boxes?|loaves|loaf|bunch(?:es)?|tubs?|punnets?|blocks?)\s+of\s+[^,.!?]+?)\s*[.!?]*$",
)
_EN_COMPLETE = (
    rf"\b(?:tick|check|cross|strike|take|scratch|mark)\s*,?\s+(?P<x>.+?)\s+off\s+(?:of\s+|from\s+)?{_LIST}",
    rf"\b(?:remove|delete|complete|strike|cross off|check off|tick off|mark off|take off)\s*,?\s+(?P<x>.+?)\s+(?:from|on|in|off|of)\s+{_LIST}",
    r"\b(?:check|tick|cross|mark|strike)\s+off\s+(?P<x>.+?)\s*[.!?]*$",
    r"\bmark\s+(?P<x>.+?)\s+as\s+(?:bought|done|got|gotten)\b",
    # "Got the parsley from the garden, so you can mark that one done": what was got, then ticked off as "that"
    r"^(?:(?:oh|ok|okay|so|right|well)\s*,?\s+)*(?:i've\s+|we've\s+|i\s+|we\s+)?(?:got|bought|picked\s+up|grabbed|found)\s+"
    r"(?P<x>[^,.!?]+?)(?:\s+(?:from|at|in|on)\s+[^,.!?]+?)?\s*[,.]?\s+(?:so\s+)?(?:you\s+can\s+)?(?:mark|tick|cross|check|take)\s+"
    r"(?:that|it|them|those|that\s+one|those\s+ones)\s+(?:off|done)\b",
    r"\bi\s+(?:bought|got|picked up)\s+(?P<x>.+?)\s*(?:[,.!?]|$)",
    # "Actually scratch the butter, there's a block left", "scrap the cream": taken back off the list.
    r"^(?:(?:actually|oh|no|wait|ok|okay|and)\s*,?\s+)*(?:scratch|scrap)\s+(?P<x>(?!that\b|it\b)[^,.!?]+?)\s*(?:[,.!?]|$)",
    # "Actually, take the paper towels off.": the list is the one thing taken off without a length.
    r"\b(?:take|cross|tick|scratch|strike)\s+(?P<x>(?!(?:\S+\s+)?(?:minutes?|seconds?|hours?)\b).+?)\s+(?:back\s+)?off"
    r"(?:\s+(?:actually|then|now|please|too|again))?\s*(?:[,.!?]|$)",
)
_KO_LIST = r"(?:장바구니|쇼핑\s*리스트|장보기\s*목록|장보기\s*리스트|장보기|목록|리스트|장\s*볼\s*거)"
# "다진 돼지고기 한 근 적어 줘": a counted thing written down is a thing to buy, not a note
_KO_COUNTED_WRITTEN = rf"^(?P<x>[^,.!?]+?\s*{KO_NUMBER}\s*(?:근|팩|봉지|개|병|통|캔|모|망|상자|묶음|단|판))\s+(?:좀\s+)?적어"
# "다음에 장 볼 때 대파 사 오게": the trip said before the thing to buy on it
_KO_TRIP = r"(?:(?:다음에|나중에|이따)\s+)?(?:장\s*(?:볼|보러\s*갈)\s*때|마트\s*(?:갈\s*때|가면|갈)|장\s*보러\s*가면)\s+"
_KO_ADD = (
    rf"{_KO_LIST}(?:에다가|에다|에)\s+(?P<x>.+?)\s*(?:추가|넣어|넣|담아|담|적어|올려)",
    rf"^{_KO_TRIP}(?P<x>[^,.!?]+?)\s+(?:좀\s+)?(?:사\s*(?:와|오|다|야)|사\s*오게|넣어|추가|적어)",
    # "우유 두 팩 장보기에.": the thing and where it goes, the verb left off
    rf"^(?P<x>[^,.!?]+?)\s+{_KO_LIST}(?:에다가|에다|에)\s*[.!?]*$",
    _KO_COUNTED_WRITTEN,
    # "참기름 거의 없네": what is nearly gone
    r"^(?P<x>[^,.!?]+?)\s+거의\s+(?:없네|없어|다\s*썼)",
    # "두유 장보기 목록에 넣어 줘": the item before the list, the most usual order.
    rf"^(?P<x>[^,.!?]+?)\s+{_KO_LIST}(?:에다가|에다|에)\s*(?:추가|넣어|넣|담아|담|적어|올려)",
    # "두부 좀 적어 줘, 장보기 목록에.": where it goes said after, as an afterthought
    rf"^(?P<x>[^,.!?]+?)\s+(?:좀\s+)?(?:적어|올려|넣어|추가해|담아)[^,.!?]*,\s*{_KO_LIST}(?:에다가|에다|에)?\s*[.!?]*$",
    r"^(?P<x>[^,.!?]+?)\s*(?:추가|넣어|담아)",
    r"^(?P<x>[^,.!?]+?)\s+(?:좀\s+)?사(?:야\s*(?:돼|해|함|겠|할)|\s*와|\s*오)",
    # "계란 다 떨어졌어", "고춧가루 거의 다 썼어": what ran out is what to buy.
    r"^(?P<x>[^,.!?]+?)\s+(?:(?:거의\s+)?다\s+)?(?:떨어졌|떨어져\s*가|떨어지|써\s*가|썼)",
    # "요거트 두 통이요, 장보기 목록에.": the thing and its amount, then where it goes, no verb at all
    rf"^(?P<x>[^,.!?]+?(?:{KO_NUMBER})\s*[가-힣]{{1,2}}(?:이요|요)?)\s*,\s*{_KO_LIST}(?:에다가|에다|에)\s*[.!?]*$",
    # "양파, 마늘, 대파 목록에 넣어 줘": several things, with commas between, when nothing above read them
    rf"^(?P<x>[^.!?]+?)\s+{_KO_LIST}(?:에다가|에다|에)\s*(?:추가|넣어|넣|담아|담|적어|올려)",
)
_KO_COMPLETE = (
    rf"{_KO_LIST}에서\s+(?P<x>.+?)\s*(?:빼|지워|지우|삭제|체크|없애)",
    # "토마토 사 왔어, 목록에서 빼": bought, so off the list
    r"^(?P<x>[^,.!?]+?)\s+(?:사\s*왔|사\s*놨|샀)",
    rf"^(?P<x>[^,.!?]+?)\s+{_KO_LIST}에서\s*(?:빼|지워|지우|삭제|체크|없애)",
    r"^(?P<x>[^,.!?]+?)\s+(?:샀어|샀다|샀음|샀으니)",
    r"^(?P<x>[^,.!?]+?)\s+(?:체크|지워|빼)",
)
# Counters only things bought take (두부 두 모, 양파 한 망: the class ``shopping_counter``) are not
# among the numbers' counters, where "모" would read "둘 모두" as a count.
_KO_COUNT_ALONE = "하나|둘|셋|넷|다섯|여섯|일곱|여덟|아홉|열"
_KO_AMOUNT_PARTICLE = r"(?:\s*(?:정도|쯤|만큼)|만|씩|이나|나|도|이요|요)?"
"""A particle after an amount that leaves it the amount ("두부 두 모만", "계란 한 판 정도")."""
# "um, the eggs": a pause's filler goes as an article does
_EN_ITEM_LEAD = re.compile(r"^(?:the|a|an|some|my|our|more|some more|any|um|uh|er|erm)\s*,?\s+")
_EN_ITEM_LEAD_KEEPING_A = re.compile(r"^(?:the|some|my|our|more|some more|any|um|uh|er|erm)\s*,?\s+")
_SHOPPING_UNITS = {"shopping_unit_l": "l", "shopping_unit_ml": "ml", "shopping_unit_kg": "kg", "shopping_unit_g": "g",
                   "shopping_unit_lb": "lb", "shopping_unit_oz": "oz"}
"""Each lexicon class of units said in an amount to buy, and the unit written in the quantity."""


@functools.cache
def _shopping_units() -> dict[str, str]:
    """Each name of a unit said in an amount to buy, and the unit it names."""
    lex = lexicon("en")
    return {phrase: unit for name, unit in _SHOPPING_UNITS.items() for phrase in lex.phrases(name)}


@functools.cache
def _containers() -> frozenset[str]:
    """What things to buy come in (the class ``shopping_container``)."""
    return frozenset(lexicon("en").phrases("shopping_container"))


@functools.cache
def is_measure(word: str) -> bool:
    """Whether a word may stand between an amount to buy and "of": a unit, a container or another
    measure (the class ``measure_word``: sticks, cloves, pints), in the singular or the plural."""
    forms = {word, word.removesuffix("s"), word.removesuffix("es"), word.removesuffix("ves") + "f"}
    return bool(forms & (_containers() | _measure_words() | set(_shopping_units())))


@functools.cache
def _measure_words() -> frozenset[str]:
    return frozenset(lexicon("en").phrases("measure_word"))


@functools.cache
def _item_pointers() -> frozenset[str]:
    """Words that stand for a thing without naming it, in either language (the class ``item_pointer``)."""
    return frozenset(lexicon("en").phrases("item_pointer")) | frozenset(lexicon("ko").phrases("item_pointer"))


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _split_english_quantity(phrase: str) -> tuple[str, str | None]:
    words = re.sub(r"(\w)-(packs?)\b", r"\1 \2", phrase).split()
    if len(words) > 2 and words[0] in ("a", "an") and words[2] in ("pack", "packs") and read_amount(words, 1):
        words = words[1:]  # "a six-pack of sparkling water": six in a pack
    amount = read_amount(words, 0)
    if amount is None:
        return phrase, None
    value, j, article_only = amount
    unit = ""
    if j < len(words):
        word = words[j]
        if word in _shopping_units():
            unit, j = _shopping_units()[word], j + 1
        elif {word, word.removesuffix("s"), word.removesuffix("es")} & _containers():  # "bottles", "boxes", "bags"
            unit, j = word, j + 1
    if article_only and not unit:
        return " ".join(words[1:]) or phrase, None
    if j < len(words) and words[j] == "of":
        j += 1
    item = " ".join(words[j:])
    if not item:
        return phrase, None
    return item, f"{_number_text(value)} {unit}".strip()


def quantity_alone(phrase: str) -> str | None:
    """The amount, when English words are an amount of nothing named, hedged or not ("like one
    bag", "maybe two cartons", "a dozen"): said after a thing, it is that thing's amount."""
    hedges = lexicon("en").alternation("quantity_hedge")
    words = re.sub(rf"^(?:{hedges}\s+)+", "", phrase.casefold().strip(" ,.!?")).split()
    amount = read_amount(words, 0)
    if amount is None or amount[2]:
        return None
    rest = words[amount[1]:]
    if len(rest) > 1 or (rest and not (rest[0] in _shopping_units() or rest[0] in _containers()
                                        or rest[0].rstrip("s").rstrip("e") in _containers())):
        return None
    return " ".join(words)


def with_amounts_after(parts: list[str]) -> list[str]:
    """The parts of a list of things, an amount said after a thing ("frozen peas, like one bag")
    joined to that thing as its amount ("one bag of frozen peas")."""
    joined: list[str] = []
    for part in parts:
        if joined and (amount := quantity_alone(part)) is not None and quantity_alone(joined[-1]) is None:
            joined[-1] = f"{amount} of {joined[-1]}"
        else:
            joined.append(part)
    return joined


def _clean_item(phrase: str, keep_a: bool = False) -> str:
    # "a" stays before the quantity is read: "a bag of flour" is one bag.
    lead = _EN_ITEM_LEAD_KEEPING_A if keep_a else _EN_ITEM_LEAD
    phrase = phrase.strip(" ,.!?;:'\"")
    for tail in ("item_also", "item_tail_time"):  # "tortillas as well", "the bread already"
        phrase = re.sub(rf"\s+(?:{lexicon('en').alternation(tail)})$", "", phrase, flags=re.IGNORECASE)
    previous = None
    while previous != phrase:
        previous, phrase = phrase, lead.sub("", phrase)
    return phrase


def item_phrase(text: str, complete: bool = False) -> str | None:
    """The words naming what to add to (or tick off) the shopping list, as said: "eggs, milk and
    butter", "대파랑 양파랑 마늘"; None when no list request is read. The first reading that names a
    thing counts ("Butter on the shopping list, please": not "please")."""
    found = _item_found(text, complete)
    return found[0] if found is not None else None


def _item_found(text: str, complete: bool) -> tuple[str, str] | None:
    """The words naming the thing (:func:`item_phrase`) and the words said after the request."""
    prepared = prepare(text)
    korean = bool(HANGUL.search(text))
    patterns = (_KO_COMPLETE if complete else _KO_ADD) if korean else (_EN_COMPLETE if complete else _EN_ADD)
    for pattern in patterns:
        match = re.search(pattern, prepared)
        if match is not None and (phrase := original(text, prepared, match.start("x"), match.end("x"))) \
                and not (korean and any(_KO_CLAUSE_END.search(part.strip()) for part in prepared[match.start("x"):match.end("x")].split(",")[:-1])) \
                and read_item(phrase := phrase if korean else _before_a_remark(phrase), korean, complete) is not None:
            return phrase, prepared[match.end():]
    return None


_KO_CLAUSE_END = re.compile(r"(?:없어|있어|없네|있네|했어|졌어|졌네|됐어|돼|돼요|해요|거든|는데|잖아|었어|았어|였어|다)$")
"""How a clause before a comma ends when it is said of a thing, not the thing ("계란이 없어, 목록에 넣어 줘")."""


def _before_a_remark(phrase: str) -> str:
    """The things, without a clause of its own said after them: "the rice, there's a bag in the
    cupboard", "eggs and flour, I got them today"."""
    openers = lexicon("en").phrases("clause_open")
    parts = phrase.split(",")
    for i, part in enumerate(parts[1:], start=1):
        words = part.casefold().split()
        # "ripe ones if they've got them", "the big ones": which of them, not another thing
        if any(" ".join(words[: len(o.split())]) == o for o in openers) or "ones" in words[:3]:
            return ",".join(parts[:i]).strip()
    return phrase


def without_the_list(phrase: str) -> str:
    """English words naming a thing without where it goes at their end (the class
    ``list_destination``): "milk to the shopping list" is "milk"."""
    words = re.findall(r"[\w']+", phrase.casefold())
    for destination in lexicon("en").phrases("list_destination"):
        ending = destination.split()
        if len(words) > len(ending) and words[-len(ending):] == ending:
            kept = phrase.split()[: len(phrase.split()) - len(ending)]
            return " ".join(kept).rstrip(" ,")
    return phrase


def read_item(phrase: str, korean: bool, complete: bool = False) -> tuple[str, str | None] | None:
    """(item, quantity or None) of the words naming one thing; None when they name nothing."""
    if korean:
        item, quantity = _korean_size(*_split_korean_quantity(phrase))
        words = [w.strip(",") for w in item.split()]  # "음, 두유": a filler and its comma
        item = " ".join(strip_korean_particle(w) for w in words if w and w not in lexicon("ko").phrases("item_filler"))
        if len(item) == 2 and item[1] in "은는을를이가도" and not lexicon("ko").has("noun_ending_in_do", item):
            item = item[0]  # "쌀은 체크해 줘": a thing of one syllable keeps no particle either
        if item in lexicon("ko").phrases("not_an_item"):
            return None  # "돈이 거의 없네": short of money, not of a thing to buy
        if any(lexicon("ko").has("not_in_item", strip_korean_particle(w)) for w in words):
            return None  # "우리 언니는 마늘을 너무 많이 넣어": said of someone, nothing to buy
    else:
        head, _, after = phrase.rpartition(",")
        if head.strip() and len(one := with_amounts_after([head.strip(), after.strip()])) == 1:
            phrase = one[0]  # "frozen peas, like one bag": the peas' amount, said after them
        item, quantity = _split_english_quantity(_clean_item(phrase.lower(), keep_a=True))
        item = _restore_case(item, phrase)
        item = _clean_item(item)
    if not item or item.lower() in _item_pointers() or durations(item):
        return None  # "that", "오 분 더": a pointer or a length, no thing to buy
    if not korean and item.lower().split()[0] in lexicon("en").phrases("not_an_item_start"):
        return None  # "what I have to pick up at the store": a place, not a thing
    return item, (None if complete else quantity)


def shopping_item(text: str, complete: bool = False) -> tuple[str, str | None] | None:
    """(item, quantity or None) named in a request to add to (or tick off) the shopping list."""
    found = _item_found(text, complete)
    if found is None:
        return None
    korean = bool(HANGUL.search(text))
    read = read_item(found[0], korean, complete)
    if read is not None and read[1] is None and not complete and not korean:
        # "Add mince to the list, about 500 grams": the amount said after the request is the thing's
        after = next((c for c in found[1].split(",") if c.strip(" .!?")), "")
        if (amount := quantity_alone(after)) is not None:
            return read[0], _split_english_quantity(f"{amount} of {read[0]}".lower())[1] or amount
    return read


def _restore_case(lowered: str, phrase: str) -> str:
    at = phrase.lower().find(lowered)
    return phrase[at : at + len(lowered)] if at >= 0 else lowered


def _split_korean_quantity(phrase: str) -> tuple[str, str | None]:
    counters = "|".join(sorted((*ko_counters(), *lexicon("ko").phrases("shopping_counter")), key=len, reverse=True))
    match = re.match(rf"^(?P<item>.+?)\s*(?P<num>{KO_NUMBER})\s*(?P<counter>{counters}){_KO_AMOUNT_PARTICLE}$", phrase.strip())
    if match is None:
        # "배 하나": a count said on its own, without a counter word.
        alone = re.match(rf"^(?P<item>.+?)\s+(?P<num>{_KO_COUNT_ALONE}){_KO_AMOUNT_PARTICLE}$", phrase.strip())
        if alone is None or (value := korean_number(alone["num"])) is None:
            return phrase.strip(), None
        return alone["item"].strip(), _number_text(value)
    value = korean_number(match["num"])
    if value is None:
        return phrase.strip(), None
    return match["item"].strip(), f"{_number_text(value)}{match['counter']}"


_KO_SIZE = re.compile(rf"^(?P<item>.+?)\s+(?P<size>{KO_NUMBER}\s*(?:킬로|키로|kg|그램|g|리터|l|ml|미리|인분|구)\s*짜리)$")
"""A size said with 짜리 after the thing ("쌀 십 킬로짜리"): how big each is, part of the amount."""


def _korean_size(item: str, quantity: str | None) -> tuple[str, str | None]:
    """The thing without the size said after it, and the size put before its count ("쌀 십 킬로짜리
    하나" is one 10 kg bag of rice)."""
    match = _KO_SIZE.match(item)
    if match is None:
        return item, quantity
    size = " ".join(match["size"].split())
    return match["item"].strip(), f"{size} {quantity}" if quantity else size


# -- notes -----------------------------------------------------------------------------------------

_EN_NOTE = (
    re.compile(r"\b(?:make|take|add|leave|write|jot|put)(?:\s+down)?\s+(?:a\s+)?note\s*(?:that|saying|to say|:|,|-)?\s*(?P<x>.+)$"),
    re.compile(r"^(?:(?:please|hey|ok|okay|right|so|oh)[,\s]+)*note\s*(?:that|:|,|-|down)\s*(?P<x>.+)$"),
    # "Note to self: the blue pan scorches", "memo to self. the oven runs hot", "reminder for myself, …"
    re.compile(r"^(?:\w+[,\s]+)?(?:a\s+)?(?:note|memo|reminder)\s+(?:to|for)\s+(?:self|myself|me)\s*(?:that|:|,|-|\.)?\s*(?P<x>.+)$"),
    re.compile(r"\b(?:remember|write down|jot down)\s*(?:that|:|,)?\s*(?P<x>.+)$"),
    # "Jot this down: call the plumber", "write that down, the code is 1234"
    re.compile(r"\b(?:jot|write|put|note)\s+(?:this|that|it)\s+down\s*(?:that|:|,|-)?\s*(?P<x>.+)$"),
)
_KO_NOTE = (
    re.compile(r"메모\s*(?:좀\s*)?(?:해|남겨|적어)[^.,!?:]*[.,!?:]\s*(?P<x>.+)$"),
    re.compile(r"메모\s*(?:좀\s*)?[:：,]\s*(?P<x>.+)$"),
    re.compile(r"^(?P<x>.+?)(?:이?라고|고)\s*(?:메모|적어)"),
    re.compile(r"^(?P<x>.+?)\s*(?:적어|메모해)\s*(?:둬|줘|놔|두|주)"),
)


def note_text(text: str) -> str | None:
    """What to write down: "make a note that X" → X, "X라고 메모해 줘" → X; not a counted thing
    alone, nor a thing written on the list ("삼겹살 한 근 적어 줘", "깻잎 목록에 적어 줘" are for
    the shopping list)."""
    prepared = prepare(text)
    if HANGUL.search(text) and (re.match(_KO_COUNTED_WRITTEN, prepared) or re.search(rf"{_KO_LIST}(?:에다가|에다|에)\s*적어", prepared)):
        return None  # "계란 목록에 적어 줘": written on the shopping list, not a note
    for pattern in _KO_NOTE if HANGUL.search(text) else _EN_NOTE:
        match = pattern.search(prepared)
        if match:
            note = original(text, prepared, match.start("x"), match.end("x"))
            if HANGUL.search(note):
                # "…, 오븐이 세게 나온다고", "…, 점검은 토요일이라고": what is quoted, not the quoting
                note = re.sub(r"(?<=다)고$", "", re.sub(r"(?<=[가-힣])(?:이)?라고$", "", note))
            if note:
                return note
    return None
