"""What a request must say for a tool to be on offer.

A small model asked to choose between a tool and none too often calls the tool
its nearest example calls: "Turn the volume up" cancelled a timer, "Tell me a
joke" read the shopping list.  So a tool is offered to the model only when the
request says something that asks for it: a cancel needs a cancel word, an add an
add word, the weather a word about the weather.  The model still decides among
what is offered, and "none" is always among it; the cue only takes away what the
user cannot have meant.

A follow-up ("and one more for the rolls", "what about the day after tomorrow?",
"내일은?") leans on the turn before, so it is not narrowed.

English cues match at the start of a word ("cancel" also matches "cancelled"),
or as a phrase of whole words; Korean cues match anywhere in the text, since
particles and endings attach to the stem.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from agent.deciding.extract import HANGUL
from agent.deciding.lexicon import lexicon

_EN: dict[str, tuple[str, ...]] = {
    "timer_start": (
        "timer", "time", "countdown", "count down", "set", "start", "remind", "alarm", "clock", "buzz",
        "wake me", "give me", "minute", "second", "hour",
    ),
    "timer_cancel": (
        "cancel", "stop", "delete", "remove", "kill", "clear", "turn off", "switch off", "shut off", "end",
        "get rid", "forget the", "drop the",
    ),
    "timer_status": ("timer", "left", "remaining", "how long", "how much longer", "how much time", "status", "done", "goes off", "go off"),
    "timer_adjust": (
        "add", "more", "extra", "another", "longer", "shorter", "less", "off", "minus", "reduce", "extend",
        "increase", "decrease", "shorten", "cut", "knock", "remove", "take", "away",
    ),
    "timer_pause": ("pause", "hold", "freeze"),
    "timer_resume": ("resume", "continue", "unpause", "un-pause", "carry on", "keep", "restart", "start", "go on", "run again", "going again"),
    "time_now": ("time", "clock", "how late", "o'clock", "hour"),
    "date_today": ("date", "day", "today", "month", "year", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "shopping_add": (
        "add", "need", "buy", "get", "out of", "ran out", "run out", "running out", "pick up", "forget",
        "low on", "grab",
    ),
    "shopping_complete": (
        "tick", "check", "cross", "remove", "delete", "take", "got", "bought", "mark", "strike", "scratch", "complete",
        "off the list", "off my list", "off our list", "from the list", "from my list",
    ),
    "shopping_list": ("list", "shopping", "grocer", "store", "shop", "buy", "need", "pick up"),
    "note_add": ("note", "remember", "write", "jot", "save", "memo", "record", "remind"),
    "convert_units": (
        "convert", "how many", "how much", "in grams", "gram", "kilo", "ounce", "oz", "pound", "lb", "cup",
        "spoon", "tsp", "tbsp", "litre", "liter", "millilit", "ml", "celsius", "fahrenheit", "degree", "gas mark",
        "weigh", "stick",
    ),
    "recipe_search": ("recipe", "cook", "make", "bake", "prepare", "dish", "dinner", "lunch", "breakfast", "meal", "idea", "how do i", "how to"),
    "weather": (
        "weather", "forecast", "rain", "sun", "cloud", "snow", "wind", "storm", "cold", "hot", "warm", "temperature",
        "degree", "umbrella", "jacket", "coat", "humid", "outside", "freezing", "chilly",
    ),
    "air_quality": ("air", "dust", "pollution", "pollen", "smog", "mask", "particulate", "pm2", "pm10", "window"),
}

_KO: dict[str, tuple[str, ...]] = {
    "timer_start": ("타이머", "재 줘", "재줘", "재 주", "재주", "알람", "시작", "설정", "맞춰", "분", "초", "시간"),
    "timer_cancel": ("취소", "꺼", "끄", "끝내", "중지", "그만", "없애", "지워", "삭제", "멈춰"),
    "timer_status": ("남았", "남은", "언제", "얼마나", "몇 분", "몇 초", "끝나", "타이머"),
    "timer_adjust": ("추가", "더", "늘려", "연장", "빼", "줄여", "줄이", "당겨"),
    "timer_pause": ("일시정지", "일시 정지", "멈춰", "세워", "잠깐", "정지"),
    "timer_resume": ("다시", "계속", "재개", "이어", "풀어"),
    "time_now": ("몇 시", "몇시", "시간", "시각"),
    "date_today": ("날짜", "며칠", "몇 월", "몇월", "요일", "오늘"),
    "shopping_add": ("추가", "넣어", "담아", "사야", "사 와", "떨어졌", "필요", "적어"),
    "shopping_complete": ("지워", "빼", "샀", "체크", "표시", "완료", "삭제", "없애"),
    "shopping_list": ("목록", "리스트", "장보기", "장 볼", "장볼", "살 거", "사야", "쇼핑"),
    "note_add": ("메모", "적어", "기억", "기록", "써 둬", "써둬", "남겨"),
    "convert_units": (
        "그램", "킬로", "컵", "큰술", "작은술", "스푼", "밀리", "리터", "파운드", "온스", "섭씨", "화씨", "도는", "가스 마크",
        "몇 도", "바꿔", "환산", "변환", "얼마야", "몇 그램",
    ),
    "recipe_search": ("레시피", "요리", "만드", "만들", "끓이", "굽", "볶", "조리", "방법", "어떻게"),
    "weather": ("날씨", "비 ", "비가", "비 와", "비와", "눈 ", "눈이", "추워", "춥", "더워", "덥", "기온", "온도", "우산", "맑", "흐려", "바람", "몇 도", "예보"),
    "air_quality": ("미세먼지", "먼지", "공기", "대기", "황사", "마스크", "창문"),
}

CUES: Mapping[str, Mapping[str, tuple[str, ...]]] = {"en": _EN, "ko": _KO}
"""Per language, per tool: the words and phrases of which a request must hold one to be offered that tool."""

COMMAND_CUES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    # "put" adds only with the list to put it on: "put on some music" is no shopping.
    "en": {"shopping_add": ("list", "shopping")},
    "ko": {"shopping_add": ("목록", "리스트", "장보기")},
}
"""Cues that ask for a tool only in a command, not in a question: "shopping list: baking soda" adds,
"what's on my shopping list?" reads."""

OPPOSITE_ACTS: Mapping[str, str] = {
    "shopping_add": "shopping_complete", "shopping_complete": "shopping_add",
    "timer_start": "timer_cancel", "timer_cancel": "timer_start",
}
"""Acts that undo each other. A follow-up that asks for one in words never stands for the other:
"and flour, butter on the shopping list" (heard over a tap) adds, it does not tick off."""

_QUESTION_EN = re.compile(r"^\s*(what|what's|whats|which|who|how|is|are|do|does|did|can|could|will|any|read|tell|show|list)\b|\?\s*$")
_QUESTION_KO = re.compile(r"[?？]\s*$|뭐|무엇|알려|불러|읽어|있어|있지|있나|몇")

_FOLLOW_UP_EN = re.compile(r"^\s*(and|also|plus|what about|how about|same|then|ok(ay)?,? (and|now))\b|\b(too|as well|also|another one|one more|that one|make (it|that))\b")
_FOLLOW_UP_KO = re.compile(r"^\s*(그럼|그리고|그거|그건|아까|또|이번엔)|[은는]\s*[?？]?\s*$|(도 해|도 추가|하나 더)")
_OWN_PLAN_EN = re.compile(
    r"^(?:(?:ok|okay|well|oh|so|right|fine|no),? )*(?:i'll|i will|i'm going to|i am going to|i'm gonna|we'll|we will|"
    r"we're going to|we are going to|let me)\b(?! (?:take|have|need|want)\b)"
)
_OWN_PLAN_KO = re.compile(r"(?:내가|제가).*(?:[을할갈살넣볼]게|게요)\s*$")


_ASKS_TO_KNOW_EN = re.compile(
    r"^(?:(?:ok|okay|so|and|hey|um|uh),? )*(?:why|how come)\b|\bwhat (?:can|could|should|do) (?:i|we) (?:use|do)\b|"
    r"\b(?:what(?:'s| is)|is there) (?:a |an )?(?:good )?(?:substitute|replacement|alternative)\b|"
    r"\b(?:what(?:'s| is) (?:a )?(?:good|the best)|which \w+(?: \w+)? (?:is|are|goes?) (?:good|best))\b|\brecommend\b"
)
_ASKS_TO_KNOW_KO = re.compile(r"왜|대신(?:에)? (?:뭐|무엇|뭘)|대체할 (?:만한|수)|뭘 (?:써|쓰)|뭐가 좋|어떤 게 좋|어떤 걸 추천|추천해")


def asks_to_know(text: str, language: str) -> bool:
    """Whether the request asks why, what to use instead, or what is good ("Why do onions make my
    eyes water?", "What can I use if I've run out of baking powder?", "참기름은 왜 마지막에 넣어?",
    "메모 앱은 뭐가 좋아?"): a question for knowledge, never a request to act, whatever act words
    it holds."""
    return _found(text, language, _ASKS_TO_KNOW_EN, _ASKS_TO_KNOW_KO)


_MEAL_EN = r"(?:dinner|lunch|breakfast|brunch|supper|tonight)"
_IDEA_EN = re.compile(
    rf"\bideas?\b(?! (?:how|when|where|why|if|whether|who)\b)(?! what (?!to (?:cook|make|eat|have)\b))"
    rf".*\b(?:{_MEAL_EN}|meal|food|menu|dish|recipe|to (?:cook|make|eat))\b|"
    rf"\b(?:{_MEAL_EN}|meal|menu|recipe|cooking) ideas?\b|"
    rf"\bwhat (?:should|could|can|shall|do|will) (?:i|we) (?:cook|make|have|eat)"
    rf"(?: (?:for {_MEAL_EN}|{_MEAL_EN}|today|this evening|now|quickly|with \w.*|using \w.*))*$|"
    rf"\bwhat(?:'s| is) for {_MEAL_EN}\b|"
    rf"\b(?:suggest|recommend)\b.*\b(?:{_MEAL_EN}|meal|dish|recipe|something (?:quick|easy|simple|to (?:cook|make|eat)))\b|"
    rf"\b(?:don't|do not|dont) know what to (?:cook|make|eat|have)\b|\bwhat to (?:cook|make|eat|have) (?:for|tonight|today)\b"
)
_IDEA_KO = re.compile(
    r"(?:뭐|뭘|무엇을?|무얼)\s*(?:해\s*먹|만들어\s*먹|먹|만들|요리)(?:지|을까|을래|을지|ㄹ까|까|래|할까|할지|하지)(?:\s|$|요)|"
    r"(?:메뉴|식단|요리|음식|레시피|저녁|점심|아침)\s*(?:좀\s*)?(?:추천|아이디어)|"
    r"(?:저녁|점심|아침)\s*메뉴\s*(?:뭐|뭘|정해|골라)"
)


_NOT_AN_IDEA_EN = re.compile(r"\b(?:substitut\w*|replac\w*|instead|alternative|how long|temperature|how hot|safe)\b")
_NOT_AN_IDEA_KO = re.compile(r"대신|대체|몇 ?분|몇 ?도|온도|얼마나|보관")


def asks_for_idea(text: str, language: str) -> bool:
    """Whether the request asks for an idea of what to cook ("What is a quick idea for dinner
    tonight?", "what should I cook", "뭐 해 먹지?", "간단한 저녁 메뉴 추천해 줘"): the recipe book
    answers it, with its quickest recipes when no dish is named (:func:`tools.recipes.recipe_tools`).
    A question for know-how that mentions an idea is not one ("any idea how long to cook rice?",
    "recommend a substitute for butter in this recipe")."""
    if _found(text, language, _NOT_AN_IDEA_EN, _NOT_AN_IDEA_KO):
        return False
    return _found(text, language, _IDEA_EN, _IDEA_KO)


# Whole small-talk utterances only: "고마워, 타이머 하나 더" is a request, not thanks.
def small_talk(text: str, language: str) -> str | None:
    """"thanks", "greeting" or "never_mind" when the whole utterance is only that ("고마워.",
    "안녕, 좋은 아침!", "아니야, 됐어.", "Thanks!"); None for anything else. A request that
    starts with one and goes on ("타이머 좀... 아, 아니다. 신경 쓰지 마.") is read by its last sentence."""
    lex = lexicon("ko" if speaks_korean(text, language) else "en")
    sentences = [s for s in re.split(r"[.!?…]+", text) if s.strip()]
    last = utterance_words(sentences[-1]) if sentences else ""
    last = re.sub(r"^(?:" + lex.alternation("small_talk_lead") + r"\s+)+", "", last)
    for kind in ("thanks", "greeting", "never_mind"):
        said = lex.alternation(f"small_talk_{kind}")
        if re.fullmatch(rf"{said}(?:\s+{said})*", last):
            return kind
    return None


_TIME_LEFT_EN = re.compile(
    r"^(?:(?:ok|okay|so|and|hey|um|uh|hmm)\s+)*(?:"
    r"how (?:long|much (?:longer|more time|time))(?: (?:until|till|til|before|is left|left|to go|more|now|is it|does (?:it|that|the \w+) have))?"
    r"|(?:is|are) (?:it|that|they|the \w+)(?: \w+)? (?:done|ready|finished|cooked)(?: yet)?"
    r"|when (?:will|does|is|do) (?:it|that|they|the \w+)(?: \w+)? (?:be )?(?:done|ready|finished|go(?:ing)? off|goes off|ring)"
    r")\b(?P<rest>.*)$"
)
_DONE_EN = re.compile(r"\b(?:done|ready|finished|cooked|left|longer|remaining|to go|go off|goes off|ring|more time)\b|^how much longer$")
_KNOW_HOW_WORDS_EN = re.compile(r"\b(?:do i|do you|should|can i|does \w+ take|to cook|to boil|to bake|take to)\b")
_TIME_LEFT_KO = re.compile(r"(?:언제|얼마나|몇 분|아직)?\s*(?:다 (?:돼|되|됐|익어|익었)|끝나|끝났|남았|남은|더 걸려|완성)")


def asks_time_left(text: str, language: str) -> bool:
    """Whether the words ask how long is left of what is cooking ("How long until it's done?",
    "Is it ready yet?", "언제 다 돼?", "얼마나 더 걸려?"): with a timer running, the timer's status
    answers, not general knowledge. "How long do I boil an egg?" asks know-how."""
    words = utterance_words(text)
    if not words:
        return False
    if speaks_korean(words, language):
        return _TIME_LEFT_KO.search(words) is not None and is_question(text, language)
    match = _TIME_LEFT_EN.match(words)
    return match is not None and _DONE_EN.search(words) is not None and _KNOW_HOW_WORDS_EN.search(words) is None


_BACKCHANNEL_EN = re.compile(
    r"^(?:(?:mm+|m+hm+|hm+|uh huh|uh-huh|okay|ok|right|alright|all right|i see|got it|cool|nice|great|ah+|oh+|aha|"
    r"yeah|yep|sure|fine|good|perfect)\s*)+$"
)
_BACKCHANNEL_KO = re.compile(r"^(?:(?:응+|음+|네+|예|그래|그렇구나|그렇군요|아하|아|오|알겠어|알겠어요|알았어|오케이|좋아)\s*)+$")


def is_backchannel(text: str, language: str) -> bool:
    """Whether the words only show the user is listening ("mm", "okay", "I see", "응", "네",
    "그렇구나"): no request, and no new exchange. After a question hearth asked, "okay" and "네"
    are answers; the caller asks this only when no question is open."""
    words = utterance_words(text)
    return bool(words) and _found(text, language, _BACKCHANNEL_EN, _BACKCHANNEL_KO)


def is_question(text: str, language: str) -> bool:
    """Whether the words ask something (a question mark, a question word first, a Korean question ending)."""
    stripped = text.strip()
    if stripped.endswith(("?", "？")):
        return True
    words = utterance_words(stripped)
    if speaks_korean(words, language):
        return re.search(r"(?:까|니|나|냐|야|어|아|지|요|래|게)$", words) is not None and re.search(
            r"뭐|무엇|어떻게|얼마|몇|왜|언제|어디|어느|누구|있어|돼|될까|까$", words) is not None
    return re.match(r"(?:what|what's|whats|which|who|why|how|when|where|is|are|do|does|did|can|could|should|will|would)\b", words) is not None


_ASKS_FOR_ACT_EN = re.compile(
    r"\b(?:can|could|would|will|won't) you\b|\b(?:can|could|may) (?:i|we) (?:get|have)\b|\bplease\b|\bwould you mind\b|"
    r"^(?:and |so |ok |okay )?(?:how about|what about)\b"
)
_ASKS_FOR_ACT_KO = re.compile(r"줘|주세요|줄래|줄 수|주실|할래|해 ?줄|부탁|하자|할까")


def asks_for_act(text: str, language: str) -> bool:
    """Whether a question is a request ("Can you set a timer?", "타이머 맞춰 줄래?")."""
    words = utterance_words(text)
    return (_ASKS_FOR_ACT_KO if speaks_korean(words, language) else _ASKS_FOR_ACT_EN).search(words) is not None


def tells_own_plan(text: str, language: str) -> bool:
    """Whether the user says what they will do themselves ("I'll add the salt myself later",
    "소금은 내가 넣을게"): words of an act, but no request to hearth."""
    return _found(text, language, _OWN_PLAN_EN, _OWN_PLAN_KO)


def _found(text: str, language: str, english: re.Pattern[str], korean: re.Pattern[str]) -> bool:
    """Whether the pattern of the language ``text`` is in matches somewhere in its words."""
    words = utterance_words(text)
    return (korean if speaks_korean(words, language) else english).search(words) is not None


def speaks_korean(text: str, language: str) -> bool:
    """Whether ``text`` is to be read as Korean: the language says so, or it holds Hangul."""
    return language == "ko" or HANGUL.search(text) is not None


def utterance_words(text: str, keep: str = "") -> str:
    """``text`` lower-cased, its punctuation (but apostrophes and ``keep``) made spaces, spaces single."""
    return " ".join(re.sub(rf"[^\w'가-힣\s{re.escape(keep)}]", " ", text.lower()).split())


def says(cue: str, text: str, korean: bool) -> bool:
    """Whether ``text`` (normalized) holds ``cue``: anywhere in Korean, at a word start in English."""
    if korean:
        return cue in text
    return re.search(r"(?<![\w'])" + re.escape(cue), text) is not None


WEAK_CUES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "en": {"date_today": ("today",)},
    "ko": {"date_today": ("오늘",)},
}
"""Cues that ask for their tool only when nothing else is asked: "today" names the day of the
weather, the air or dinner ("오늘 비 와?") far more often than it asks the date."""


def cued_tools(text: str, language: str, tools: Iterable[str] | None = None) -> set[str]:
    """The tools (of ``tools``, default every tool with cues) that the request asks for in words."""
    korean = speaks_korean(text, language)
    table = CUES["ko" if korean else "en"]
    normalized = utterance_words(text, keep="-")
    names = table.keys() if tools is None else [t for t in tools if t in table]
    cued = {name for name in names if any(says(cue, normalized, korean) for cue in table[name])}
    if not (_QUESTION_KO if korean else _QUESTION_EN).search(text.strip().lower()):
        commands = COMMAND_CUES["ko" if korean else "en"]
        cued |= {name for name in names if any(says(cue, normalized, korean) for cue in commands.get(name, ()))}
    for name, weak in WEAK_CUES["ko" if korean else "en"].items():
        strong = [cue for cue in table.get(name, ()) if cue not in weak]
        if name in cued and cued - {name} and not any(says(cue, normalized, korean) for cue in strong):
            cued.discard(name)
    return cued


def is_follow_up(text: str, language: str) -> bool:
    """Whether the request leans on the turn before ("and one more…", "what about tomorrow?", "내일은?")."""
    korean = speaks_korean(text, language)
    pattern = _FOLLOW_UP_KO if korean else _FOLLOW_UP_EN
    return pattern.search(text.strip().lower()) is not None


def offered(text: str, language: str, tools: Iterable[str]) -> list[str]:
    """Of ``tools`` (in their order), those the request may be given: the cued ones; every one for
    a follow-up; tools without a cue table are always offered."""
    tools = list(tools)
    known = {t for t in tools if t in CUES["ko" if language == "ko" else "en"] or t in CUES["en"]}
    if is_follow_up(text, language):
        return tools
    cued = cued_tools(text, language, tools)
    return [t for t in tools if t in cued or t not in known]
