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

The words every rule here reads by are classes of the lexicons
(:mod:`agent.deciding.lexicon`, ``agent/deciding/data/lexicon-<language>.toml``): the cues are
the classes ``cue_<tool>``; the rules keep only the order of the words, and are made from the
lexicon on first use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from agent.deciding.extract import HANGUL
from agent.deciding.lexicon import lexicon
from agent.deciding.utterance import found_once, read
from agent.deciding.spoken_numbers import EN_ONES, EN_TENS, durations, numbers, prepare


@functools.cache
def cues(language: str) -> Mapping[str, tuple[str, ...]]:
    """Per tool, the words and phrases of which a request must hold one to be offered that tool:
    the lexicon's classes ``cue_<tool>`` ("en" or "ko")."""
    lex = lexicon(language)
    return {name.removeprefix("cue_"): lex.phrases(name) for name in lex.classes if name.startswith("cue_")}


@functools.cache
def command_cues(language: str) -> Mapping[str, tuple[str, ...]]:
    """Cues that ask for a tool only in a command, not in a question (the classes
    ``command_cue_<tool>``): "shopping list: baking soda" adds, "what's on my shopping list?" reads;
    "put" adds only with the list to put it on: "put on some music" is no shopping."""
    lex = lexicon(language)
    return {name.removeprefix("command_cue_"): lex.phrases(name) for name in lex.classes if name.startswith("command_cue_")}


OPPOSITE_ACTS: Mapping[str, str] = {
    "shopping_add": "shopping_complete", "shopping_complete": "shopping_add",
    "timer_start": "timer_cancel", "timer_cancel": "timer_start",
}
"""Acts that undo each other. A follow-up that asks for one in words never stands for the other:
"and flour, butter on the shopping list" (heard over a tap) adds, it does not tick off."""

TIMER_CHANGES = frozenset({"timer_cancel", "timer_pause", "timer_resume", "timer_adjust"})
"""The tools that change a running timer."""
TIMER_ACTS_ON_ONE = TIMER_CHANGES - {"timer_adjust"}
"""The changes that are an act on the timer itself, not on its time: cancel, pause, resume."""
TIMER_TOOLS = TIMER_CHANGES | {"timer_start", "timer_status"}
"""Every timer tool."""

def _alternation(language: str, name: str) -> str:
    """A class of the language's lexicon as a regular-expression alternation; in Korean the spaces
    inside a phrase are optional, since the recognizer spaces Korean words as it likes."""
    made = lexicon(language).alternation(name)
    return made.replace(r"\s+", r"\s*") if language == "ko" else made


def _ko_ending_in_rieul() -> str:
    """Every Hangul syllable that ends in ㄹ (할, 갈, 을, 끌): before 게, the ending a speaker
    promises their own act with (내가 할게, 제가 살게요)."""
    return "".join(chr(0xAC00 + 28 * i + 8) for i in range(19 * 21))


@functools.cache
def _rules(language: str) -> dict[str, re.Pattern[str]]:
    """The rules of this module for ``language``, made from its lexicon on first use."""
    a = functools.partial(_alternation, language)
    if language == "ko":
        return {
            "reading": re.compile(rf"[?？]\s*$|{a('reading_words')}"),
            "follow_up": re.compile(rf"^\s*{a('follow_up_open')}(?![가-힣])|[은는]\s*[?？]?\s*$|{a('follow_up_anywhere')}"),
            "also": re.compile(rf"(?:^|\s)(?P<noun>[가-힣]+)도\s*(?:\S+\s+){{0,2}}{a('also_act')}"),
            "own_plan": re.compile(rf"{a('self_subject')}.*(?:[{_ko_ending_in_rieul()}]게|게요)\s*$"),
            "asks_to_know": re.compile(
                rf"{a('ask_why')}|{a('instead')}\s*{a('what_word')}|{a('substitute')}|{a('what_word')}\s*{a('use_verb')}|"
                rf"{a('which_one')}\s*(?:{a('rank')}\s*)?{a('suits_well')}|{a('recommend')}"
            ),
            "idea": re.compile(
                r"(?:뭐|뭘|무엇을?|무얼)\s*(?:해\s*먹|만들어\s*먹|먹|만들|요리)(?:지|을까|을래|을지|ㄹ까|까|래|할까|할지|하지|을\s*수|ㄹ\s*수)(?:\s|$|요)|"
                rf"{a('meal_noun')}\s*(?:좀\s*)?{a('idea_word')}|"
                r"(?:저녁|점심|아침)\s*메뉴\s*(?:뭐|뭘|정해|골라)|"
                # "버섯으로 할 만한 요리 있어?": what can be made of what is at hand
                r"[가-힣](?:으로|로)\s+(?:할|만들|해\s*먹을|먹을)\s*(?:만한|수\s*있는)\s*(?:요리|반찬|거|음식|메뉴|게)"
            ),
            "not_an_idea": re.compile(a("not_an_idea")),
            "backchannel": re.compile(rf"^(?:(?:응+|음+|네+|{a('backchannel')})\s*)+$"),
            "asks_for_act": re.compile(a("asks_for_act")),
            "past": re.compile(rf"(?:^|\s){a('past_time')}(?:에는|에|엔|만\s*해도)?(?:\s|$)"),
            "day_named": re.compile(a("day_named")),
            "time_left": re.compile(a("time_left")),
            "question_ending": re.compile(rf"{a('question_ending')}$"),
            "question_word": re.compile(rf"{a('question_word')}|(?:^|\s){a('question_word_alone')}(?:\s|$)|까$"),
            "to_another": re.compile(rf"^\s*{a('addressee')}\s*[,!]|,\s*{a('addressee')}\s*[.!?~]*\s*$"),
            # "이유 목록이 아주 길더라": a list of other things, the list said as a subject or object
            # ("우유 목록에 넣어 줘" puts milk on the list)
            "other_list": re.compile(rf"(?<![가-힣])(?!{a('list_of_shopping')})[가-힣]+\s*(?:목록|리스트)(?:이|가|은|는|을|를|도)(?:\s|$)"),
            # "와, 시간 진짜 빨리 간다.": a remark in the plain present, which asks nothing
            # "오 분이면 충분하다니까", "원래 그렇게 하잖아": insisting on how things are, asking nothing
            # "부침개 생각나네": a thing noticed; "공기청정기를 두 대나 샀대": what others did, heard;
            # "오 분만 더 누워 있고 싶다": a wish, not a request
            "remark": re.compile(r"(?:[는]다|[가-힣](?<=[간온난한된진]다)|구나|구먼|다니까(?:요)?|잖아(?:요)?|(?<=[가-힣])네(?:요)?"
                                 r"|(?<=[았었였했샀갔왔봤졌췄켰])대(?:요)?|고\s*싶다|고\s*싶네|고\s*싶어(?:요)?)$"),
            "span_of_days": re.compile(a("span_of_days")),
            # after a length: "…이면 충분하다", "…은 너무 길어"
            "length_judged": re.compile(rf"\s*(?:이면은|이면|면|은|는|이|가|으로는|로는|이나|나)\s+(?:\S+\s+)?{a('length_judged')}"),
            # "내일 비 온다던데 …", "옆집 아줌마가 그러는데 …": what others said, told before what is said
            "hearsay_clause": re.compile(rf"^.*{a('hearsay_connective')}(?=\s|,|$)"),
        }
    meal, cook = a("meal"), a("cook_verb")
    return {
        "reading": re.compile(rf"^\s*{a('reading_open')}\b|\?\s*$"),
        "question": re.compile(rf"{a('question_first')}\b"),
        "follow_up": re.compile(rf"^{a('follow_up_open')}\b|\b{a('follow_up_anywhere')}\b"),
        "own_plan": re.compile(rf"^(?:{a('lead')}\s+)*{a('own_plan')}\b(?!\s+{a('own_plan_asking')}\b)"),
        "asks_to_know": re.compile(
            rf"^(?:{a('lead')}\s+)*{a('ask_why')}\b|"
            rf"\bwhat\s+{a('ask_modal')}\s+{a('asker')}\s+{a('ask_what_to_use')}\b|"
            rf"\b(?:what's|what\s+is|is\s+there|are\s+there)\s+(?:a\s+|an\s+|any\s+)?(?:good\s+)?{a('substitute')}\b|"
            rf"\bwhat(?:'s|\s+is|\s+are)\s+{a('good_one')}\b|"
            rf"\b(?:which|what)(?:\s+\w+){{0,2}}\s+{a('suits_verb')}\s+(?:the\s+)?{a('suits_well')}\b|"
            rf"\b{a('recommend')}\b"
        ),
        "idea": re.compile(
            rf"\bideas?\b(?!\s+(?:how|when|where|why|if|whether|who)\b)(?!\s+what\s+(?!to\s+{cook}\b))"
            rf".*\b(?:{meal}|{a('meal_noun')}|to\s+{cook})\b|"
            rf"\b(?:{meal}|{a('meal_noun')}|cooking)\s+ideas?\b|"
            rf"\bwhat\s+{a('idea_modal')}\s+{a('asker')}\s+{cook}"
            rf"(?:\s+(?:for\s+{meal}|{meal}|{a('idea_when')}|{a('idea_manner')}|{a('idea_with')}\s+\w.*))*$|"
            rf"\bwhat(?:'s|\s+is)\s+for\s+{meal}\b|"
            rf"\b{a('suggest')}\b.*\b(?:{meal}|{a('meal_noun')}|something\s+(?:{a('quick_kind')}|to\s+{cook}))\b|"
            rf"\b(?:don't|do\s+not|dont)\s+know\s+what\s+to\s+{cook}\b|\bwhat\s+to\s+{cook}\s+(?:for|tonight|today)\b|"
            # "anything we could make with the mince?": what can be made of what is at hand
            r"\b(?:anything|something|what)\s+(?:i|we)\s+(?:can|could)\s+(?:do|make|cook)\s+with\s+\w"
        ),
        "not_an_idea": re.compile(rf"\b{a('not_an_idea')}\b"),
        "backchannel": re.compile(rf"^(?:(?:mm+|m+hm+|hm+|ah+|oh+|{a('backchannel')})\s*)+$"),
        "asks_for_act": re.compile(rf"\b{a('asks_for_act')}\b|^(?:{a('lead')}\s+)*{a('suggestion_open')}\b"),
        "day_named": re.compile(rf"(?<![\w']){a('day_named')}(?![\w'])"),
        "past": re.compile(rf"\b{a('past_time')}\b"),
        "command_open": re.compile(rf"^(?:{a('lead')}\s+)*{a('command_open')}\b"),
        "time_left": re.compile(
            rf"^(?:{a('lead')}\s+)*(?:"
            r"how (?:long|much (?:longer|more time|time))(?: (?:until|till|til|before|is left|left|to go|more|now|is it|does (?:it|that|the \w+) have|on|for) (?:the|my|that|it)\b(?: \w+)?| (?:until|till|til|before|is left|left|to go|more|now|is it|does (?:it|that|the \w+) have))?"
            rf"|(?:is|are) (?:it|that|they|the \w+)(?: \w+)? {a('ready_word')}(?: yet)?"
            rf"|when (?:will|does|is|do) (?:it|that|they|the \w+)(?: \w+)? (?:be )?(?:{a('ready_word')}|go(?:ing)? off|goes off|ring)"
            r")\b"
        ),
        "time_left_word": re.compile(rf"\b{a('time_left_word')}\b|^how much longer$"),
        "know_how_phrase": re.compile(rf"\b(?:{a('know_how_phrase')}|does \w+ take)\b"),
        # "Kids, dinner in five!", "Did you get the milk, love?": someone else called first or last
        "to_another": re.compile(rf"^\s*(?:(?:hey|oi|okay|ok|right)\s+)?{a('addressee')}\s*[,!]|,\s*{a('addressee')}\s*[.!?]*\s*$"),
        # "Is it six yet?", "Has it gone half past five already?": the time asked about a time of day
        "clock_question": re.compile(
            rf"^(?:{a('lead')}\s+)*(?:is it|has it gone|is it already|is it past)\s+(?:{a('clock_part')}\s+)?"
            rf"{a('clock_hour')}(?:\s+(?:o'clock|thirty|fifteen|forty five|pm|am))?(?:\s+(?:yet|already))?$"
        ),
        # "the list of reasons she gave", "a list of guests": a list, but not of things to buy
        "other_list": re.compile(rf"\blist\s+of\s+(?!{a('list_of_shopping')}\b)\w+"),
        # "Honestly, that timer beep drives the dog mad": a subject first, and two words or more after it
        # "In my grandma's day nobody measured anything": when it was told first, then the subject
        "remark": re.compile(rf"^(?:{a('lead')}\s+)*(?:{a('remark_lead')}\s+)*(?:{a('remark_when')}\s+(?:[\w']+\s+){{1,3}}?)?"
                             rf"{a('remark_subject')}(?:\s+[\w']+){{2,}}"),
        # "…, hasn't it", "…, doesn't it?": a question tagged on a statement, asking only to agree
        "tag": re.compile(rf"^{a('tag_question')}$"),
        # a later clause of a remark: "…, like that's news"
        "remark_clause": re.compile(rf"^(?:{a('lead')}\s+)*(?:{a('remark_lead')}\s+)*(?:{a('remark_when')}\s+(?:[\w']+\s+){{1,3}}?)?"
                                    rf"{a('remark_subject')}(?:\s+[\w']+)+"),
        # "to be honest", "like, you know": a clause that is only an aside
        "aside": re.compile(rf"(?:(?:{a('lead')}|{a('remark_lead')})(?:\s+|$))+"),
        # "Ten minutes is never enough", "half an hour was too long": a length first, then a verb that judges it
        "length_judged": re.compile(
            rf"^(?:{a('lead')}\s+)*(?:{a('remark_lead')}\s+)*(?:[\w']+\s+){{0,4}}?"
            rf"(?:minutes?|mins?|hours?|seconds?|secs?|half|quarter)\s+{a('length_judged')}\b"
        ),
    }


def _rule(text: str, language: str, name: str) -> re.Pattern[str]:
    return _rules("ko" if speaks_korean(text, language) else "en")[name]


@found_once
def asks_to_know(text: str, language: str) -> bool:
    """Whether the request asks why, what to use instead, or which thing is good ("How come my
    dough is sticky?", "What could we swap in for cream?", "Which knife works best for tomatoes?",
    "된장은 왜 나중에 풀어?", "버터 대신 뭘 써?", "프라이팬은 어떤 게 제일 좋아?"): a question for
    knowledge, never a request to act, whatever act words it holds."""
    words = utterance_words(text)
    return _rule(text, language, "asks_to_know").search(words) is not None


@found_once
def asks_for_idea(text: str, language: str) -> bool:
    """Whether the request asks for an idea of what to cook ("What is a quick idea for dinner
    tonight?", "what should I cook", "뭐 해 먹지?", "간단한 저녁 메뉴 추천해 줘"): the recipe book
    answers it, with its quickest recipes when no dish is named (:func:`tools.recipes.recipe_tools`).
    A question for know-how that mentions an idea is not one ("any idea how long to cook rice?",
    "recommend a substitute for butter in this recipe")."""
    words = utterance_words(text)
    if _rule(text, language, "not_an_idea").search(words):
        return False
    return _rule(text, language, "idea").search(words) is not None


# Whole small-talk utterances only: "고마워, 타이머 하나 더" is a request, not thanks.
@found_once
def small_talk(text: str, language: str) -> str | None:
    """"thanks", "greeting", "never_mind" or "praise" when the whole utterance is only that ("고마워.",
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
    korean = speaks_korean(text, language)
    whole = utterance_words(text)
    if whole and len(whole.split()) <= MAX_ABOUT_HEARTH_WORDS and says_any(whole, korean, "praise_for_hearth") \
            and not cued_tools(text, language) - {"date_today", "time_now"}:
        return "praise"  # "You're doing great today, you know that?", "오늘 진짜 잘하네": thanked for, nothing looked up
    if last and len(last.split()) <= MAX_ABOUT_HEARTH_WORDS and says_any(last, korean, "about_hearth") \
            and not cued_tools(text, language) - {"date_today", "time_now"}:
        return "greeting"  # "So how's your day been?", "오늘 하루 어땠어?": asked of hearth itself, answered as a greeting
    if last and is_question(text, language) and not korean and says_any(last, korean, "hearth_taste") and (
            len(last.split()) <= MAX_ABOUT_HEARTH_WORDS or len(last.split()) <= MAX_HEARTH_TASTE_WORDS and (
                re.match(rf"^(?:{lex.alternation('small_talk_lead')}\s+)*{lex.alternation('hearth_taste')}\b", last)
                or not cued_tools(text, language) - {"date_today", "time_now"})):
        return "greeting"  # "What's your favourite thing to cook?": hearth's own taste, whatever food it names
    return None


MAX_ABOUT_HEARTH_WORDS = 10
"""The most words a question about hearth itself comes in; longer ones ask something more."""
MAX_HEARTH_TASTE_WORDS = 14
"""The most words a question about what hearth itself likes or does comes in ("Do you ever get bored
sitting on the counter all day?"), when it cues no tool but the clock's."""


@found_once
def asks_time_left(text: str, language: str) -> bool:
    """Whether the words ask how long is left of what is cooking ("How long until it's done?",
    "Is it ready yet?", "언제 다 돼?", "얼마나 더 걸려?"): with a timer running, the timer's status
    answers, not general knowledge. "How long do I boil an egg?" asks know-how."""
    words = utterance_words(text)
    if not words or _acts_on_a_timer_or_reads_the_list(text, language):
        return False
    if speaks_korean(words, language):
        return _rules("ko")["time_left"].search(words) is not None and is_question(text, language)
    rules = _rules("en")
    if _EN_TIME_ON.match(words):
        return True  # "How long on the spuds?": the time left on the thing cooking
    if (_EN_HOW_IS_IT_DOING.match(words) or _EN_WHERE_IS_IT_AT.match(words)) and not cued_tools(text, language, _OTHER_LOOK_UPS):
        return True  # "How's the pasta doing for time?"; "How's the weather doing?" asks the weather
    return (rules["time_left"].match(words) is not None and rules["time_left_word"].search(words) is not None
            and rules["know_how_phrase"].search(words) is None)


def _acts_on_a_timer_or_reads_the_list(text: str, language: str) -> bool:
    """Whether the words ask an act on a timer ("떡볶이 타이머 꺼도 돼, 다 됐어": its 다 됐어 says
    why) or name the list and no timer ("장보기 리스트에 뭐 남았는지": what is left to buy): then
    no question of a timer's time left."""
    # (a change of its time is no such act: "how much longer?", "얼마나 더 걸려?" hold its words)
    if cued_tools(text, language, TIMER_ACTS_ON_ONE):
        return True
    return "timer_status" in _other_than_the_list(text, language)


@found_once
def asks_which_timers(text: str, language: str) -> bool:
    """Whether the words ask which timers are running ("Which timers have I got going?", "Are any
    timers still on?", "타이머 뭐 돌아가고 있어?"): a question that names timers and what they are
    doing, says no length and asks no act on them, so the timers' status answers, not the clock."""
    words = utterance_words(text)
    if not words or not is_question(text, language):
        return False
    korean = speaks_korean(words, language)
    if not says_any(words, korean, "timer_word") or not says_any(words, korean, "timer_running_word"):
        return False
    return not numbers(text) and not cued_tools(text, language, TIMER_CHANGES)


@found_once
def is_backchannel(text: str, language: str) -> bool:
    """Whether the words only show the user is listening ("mm", "okay", "I see", "응", "네",
    "그렇구나"): no request, and no new exchange. After a question hearth asked, "okay" and "네"
    are answers; the caller asks this only when no question is open."""
    words = utterance_words(text)
    return bool(words) and _rule(text, language, "backchannel").search(words) is not None


@found_once
def is_question(text: str, language: str) -> bool:
    """Whether the words ask something (a question mark, a question word first, a Korean question ending)."""
    stripped = text.strip()
    if stripped.endswith(("?", "？")):
        return True
    words = utterance_words(stripped)
    if speaks_korean(words, language):
        rules = _rules("ko")
        return rules["question_ending"].search(words) is not None and rules["question_word"].search(words) is not None
    return _rules("en")["question"].match(words) is not None


@found_once
def asks_for_act(text: str, language: str) -> bool:
    """Whether a question is a request ("Can you set a timer?", "타이머 맞춰 줄래?"), or an English
    one put as a command with a question's rise ("The butter has gone. Pop it on the list?")."""
    words = utterance_words(text)
    if _rule(words, language, "asks_for_act").search(words) is not None:
        return True
    if speaks_korean(words, language):
        return False
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if utterance_words(s)]
    return bool(sentences) and sentences[-1].rstrip().endswith("?") and opens_with_a_command(sentences[-1], language)


@found_once
def asks_how_things_are(text: str, language: str) -> bool:
    """Whether English words ask how things are, yes or no ("Did I put eggs on the list?", "Is milk
    on the list?", "Are the lights on?"): a question opened by a verb of being, having or doing
    that asks nothing done ("Could you…" and "Will you…" ask an act, and are no such question)."""
    words = utterance_words(text)
    if not words or speaks_korean(words, language) or not is_question(text, language) or asks_for_act(text, language):
        return False
    rest = re.sub(rf"^(?:{_alternation('en', 'lead')}\s+)+", "", words)
    return rest.split()[0] in lexicon("en").phrases("state_question_open") if rest else False


@found_once
def requests_an_act(text: str, language: str) -> bool:
    """Whether a question is a request to change something ("Can you add peas to the list?", "우유
    추가해 줄래?"), not to say something ("Can you tell me what we still need?", "뭐 있는지 알려
    줄래?"): a request whose words hold no verb of telling or checking."""
    if not asks_for_act(text, language):
        return False
    words = utterance_words(text)
    return not says_any(words, speaks_korean(words, language), "telling_verb")


@found_once
def tells_own_plan(text: str, language: str) -> bool:
    """Whether the user says what they will do themselves ("I'll chop the onions myself in a bit",
    "후추는 내가 이따 뿌릴게"): words of an act, but no request to hearth. "I'll take a ten minute
    timer" asks for one (the class ``own_plan_asking``)."""
    words = utterance_words(text)
    return _rule(text, language, "own_plan").search(words) is not None


# A sentence that ends in the past tense (불었어, 넣어 놨어, 탔더라): a syllable of the past, then
# the plain or polite ending, if any.
_KO_PAST_END = re.compile(r"[았었였했놨샀썼됐났갔왔봤췄켰쳤졌렸웠셨탔불]\s*(?:어|다|네|더라|는데|지|음|어요|네요|더라고|어서|잖아|잖아요|거든|거든요)?\s*$")


_EN_HOW_IS_IT_DOING = re.compile(
    r"^(?:\w+ )?how(?:'s| is| are|'re) (?:it|that|they|the \w+(?: \w+)?|my \w+|our \w+) (?:doing|getting on|coming along|looking)"
    r"(?: (?:for|on) time| time ?wise)?$"
)
_EN_WHERE_IS_IT_AT = re.compile(
    r"^(?:\w+ )?(?:what(?:'s| is) (?:it|that|the timers?) at(?: now)?|where(?:'s| is) (?:it|that|the \w+(?: \w+)?) at(?: now)?"
    r"|where are we (?:at )?(?:on|with) (?:everything|it|that|all of it|the lot|the \w+(?: \w+)?)(?: now)?)$"
)
""""What's it at now?", "Where's the rice at?", "Where are we on everything?": how far the timers are."""
_OTHER_LOOK_UPS = ("weather", "air_quality", "recipe_search", "convert_units")
"""Look-ups a "how is the … doing" may ask instead of a timer's time left ("How's the weather doing?")."""
_EN_TIME_ON = re.compile(r"^(?:\w+ )?how (?:long|much longer|much more) (?:on|for) (?:the|my|our) \w+(?: \w+)?$")


@found_once
def tells_of_past(text: str, language: str) -> bool:
    """Whether the user tells of something past ("Last time I set a timer for the roast it came
    out dry", "어제 타이머 안 맞춰서 라면 다 불었어"): a story, no request, unless it asks for an
    act in words ("can you…", "…해 줘") or opens with one ("Cancel the timer I set yesterday")."""
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    rules = _rules("ko" if korean else "en")
    if rules["past"].search(words) is None or rules["asks_for_act"].search(words) is not None:
        return False
    if korean:
        return _KO_PAST_END.search(words) is not None  # "아까 맞춘 타이머 취소해" asks; "…넣어 놨어" tells
    return rules["command_open"].search(words) is None


@found_once
def tells_what_is_written(text: str, language: str) -> bool:
    """Whether the words tell what a box, a recipe, a label or someone else says ("The back of the
    packet says to bake it forty minutes", "The recipe says two eggs", "My sister reckons you should
    salt the water", "라면은 원래 사 분 끓이는 거래"): a remark, no request, unless it asks for an act
    in words or a clause opens with one ("The box says forty minutes, set a timer for that")."""
    words = utterance_words(text)
    if not words:
        return False
    if speaks_korean(words, language):
        # "라면은 원래 사 분 끓이는 거래", "계란은 칠 분 삶아야 반숙이 된대요": told as heard from others
        return _KO_HEARSAY.search(words) is not None and not is_question(text, language) and not asks_for_act(text, language)
    lex = lexicon("en")
    # "Preheat to two hundred, it says, then bake for half an hour": what is read out, "it says" said between
    aside = any(lex.has("written_aside", utterance_words(c)) for c in re.split(r"[,.;!?]+", text) if c.strip())
    # "It says bake for forty minutes": a label or a recipe, read out as "it"; "it wants an hour" is the dish
    if not aside and re.search(rf"\b{lex.alternation('written_source')}\s+(?:says|said|reckons|recommends|wants)\b|^(?:{lex.alternation('lead')}\s+)*it\s+(?:says|said)\b",
                 words) is None and not (
            makes_a_remark(text, language) and _REPORTED.search(words)):
        return False
    if asks_for_act(text, language):
        return False
    if aside:
        # What "it says" stands after is read out, and so is what goes on with "then" ("…, it says,
        # then turn them"); what comes after it otherwise ("…, it says, so set a timer") asks.
        kept = []
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            parts = [c for c in re.split(r"[,;]+", sentence) if c.strip()]
            at = next((i for i, c in enumerate(parts) if lex.has("written_aside", utterance_words(c))), None)
            if at is None:
                kept.append(sentence)
            else:
                kept += [c for c in parts[at + 1:] if not utterance_words(c).startswith("then ")]
        text = ", ".join(kept)
    clauses = [utterance_words(c) for c in re.split(r"[,.;!?]+|\b(?:so|and then)\b", text) if c.strip()]
    return not any(opens_with_a_command(c, language) for c in clauses)


def _ko_ending_in_nieun() -> str:
    """Every Hangul syllable that ends in ㄴ (the present's 는/ㄴ before 대: "못 연대", "넌대")."""
    return "".join(chr(0xAC00 + 28 * i + 4) for i in range(19 * 21))


_KO_HEARSAY = re.compile(rf"(?:거래|거래요|(?:[{_ko_ending_in_nieun()}있없났했었았였좋맞]|이)대(?:요|더라)?|(?:다|라)(?:더라|던데|더라고)(?:요)?|"
                         r"(?<=[분간초도개번])이래(?:요)?|(?<=[가-힣])더라(?:고)?(?:요)?)$")
"""How a Korean sentence ends when it tells what others say ("…끓이는 거래", "…된대요", "…맛있다더라")."""
_REPORTED = re.compile(r"\b(?:said|says|told (?:me|us|him|her|them)|reckons|recommends)\s+(?:to|that|you|we|it|i|they|he|she)\b")
"""Someone's words told ("the chef on the telly just said to add salt to everything"): told, not asked for."""


@found_once
def spoken_to_another(text: str, language: str) -> bool:
    """Whether the words are said to someone else in the room, called first or last ("Kids, dinner in
    five minutes!", "Honey, can you grab the salt?", "Did you get the milk, love?", "얘들아, 밥 먹어"):
    hearth is not asked anything."""
    said = read(text).lowered.strip()  # the comma kept
    if _rule(text, language, "to_another").search(said) is not None:
        return True
    return speaks_korean(said, language) and _called_by_name(said)


_KO_WISH = re.compile(r"고\s*싶(?:다|네|어|어요|네요|은데|다고)\s*[.!~]*$")


def tells_a_wish(text: str, language: str) -> bool:
    """Whether Korean words end by wishing, not asking ("오 분만 더 누워 있고 싶다", "라면 먹고
    싶네"): nothing is asked of hearth, whatever length or thing the wish holds."""
    return speaks_korean(text, language) and "?" not in text and _KO_WISH.search(text.strip()) is not None


def asks_nothing(text: str, language: str) -> bool:
    """Whether the words say that nothing is asked of hearth ("…, so no need for you to do anything",
    "Ignore me, talking to myself", "혼잣말이야"), with no other clause that asks for an act."""
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    if not words or not says_any(words, korean, "nothing_asked"):
        return False
    if korean:
        return True
    return not any(opens_with_a_command(c, language) for c in _clauses(text) if not says_any(c, False, "nothing_asked"))


_KO_CALLED = re.compile(r"^\s*([가-힣]{2,3}?)(야|아)\s*[,!]")


def _called_by_name(said: str) -> bool:
    """Whether Korean words open by calling someone by name, with the calling particle and a comma
    ("지민아, …", "서우야, …"): 야 after a name that ends in a vowel, 아 after one that ends in a
    consonant; words that take the same ending and call nobody (괜찮아, 이거야) are not names."""
    match = _KO_CALLED.match(said)
    if match is None:
        return False
    name, particle = match.groups()
    ends_in_consonant = (ord(name[-1]) - 0xAC00) % 28 != 0
    if ends_in_consonant != (particle == "아"):
        return False
    ko = lexicon("ko")
    return not ko.has("not_a_name", name) and not name.endswith(ko.phrases("not_a_name_ending"))


@found_once
def makes_a_remark(text: str, language: str) -> bool:
    """Whether the words are a remark about the world, no question and no request, nothing to look
    up: Korean in the plain present ("시간 진짜 빨리 간다", "비 온다"); English opened by its
    subject ("Honestly, that timer beep drives the dog mad", "The list your dad wrote is
    unreadable"), with no clause that opens with a command ("The pasta's done, stop the timer")."""
    words = utterance_words(text)
    if not words or asks_for_act(text, language):
        return False
    if speaks_korean(words, language):
        # "내일 비 온대? 빨래 널어도 되나 모르겠네.": a question asked first is asked
        return "?" not in text and not is_question(text, language) and _rules("ko")["remark"].search(words) is not None
    rules = _rules("en")
    clauses = _clauses(text)
    tagged = len(clauses) > 1 and rules["tag"].fullmatch(clauses[-1]) is not None
    if tagged:
        # "the weather's been miserable all week, hasn't it": agreement asked on what has been; "it's
        # bound to snow tomorrow, isn't it?" asks what will be
        clauses = clauses[:-1]
        if not says_any(" ".join(clauses), False, "remark_past"):
            return False
    elif is_question(text, language):
        return False
    if rules["remark"].search(words) is None or rules["own_plan"].search(words) is not None:
        return False
    # every clause a statement too: "It's back in, let the timer carry on" asks in its last
    return all((rules["remark_clause"].search(c) or rules["aside"].fullmatch(c)) and not opens_with_a_command(c, language)
               for c in clauses)


@found_once
def judges_a_length(text: str, language: str) -> bool:
    """Whether English words judge a length said as their subject ("Ten minutes is never enough for
    these potatoes", "Half an hour was way too long for the brownies"): no timer is asked for."""
    words = utterance_words(text)
    if not words or asks_for_act(text, language):
        return False
    if speaks_korean(words, language):
        # "삼겹살은 오 분이면 충분하다니까", "십 분은 너무 길어": the length judged, no timer asked for
        said = prepare(words)
        judged = _rules("ko")["length_judged"]
        return any(judged.match(said[length.end:]) for length in durations(said))
    rules = _rules("en")
    return rules["length_judged"].search(words) is not None and not any(opens_with_a_command(c, language) for c in _clauses(text))


def opens_with_a_command(text: str, language: str) -> bool:
    """Whether English words open, after any lead words, with a verb a request to act opens with
    ("add eggs", "okay, set it"); Korean says its requests at the end (:func:`asks_for_act`)."""
    words = utterance_words(text)
    return bool(words) and not speaks_korean(words, language) and _rules("en")["command_open"].search(words) is not None


def _clauses(text: str) -> list[str]:
    """The words of each clause of English ``text``: split at punctuation and at words that join clauses."""
    # "so" joins a clause when a subject follows it ("…, so no need"), not when it is "so pretty"
    joiner = r"[,.;:!?]+|\b(?:and then|but|because)\b|\bso\b(?=\s+(?:i|we|you|he|she|they|it|that|there|the|my|our|no)\b)"
    return [w for w in (utterance_words(c) for c in re.split(joiner, text)) if w]


def speaks_korean(text: str, language: str) -> bool:
    """Whether ``text`` is to be read as Korean: the language says so, or it holds Hangul."""
    return language == "ko" or HANGUL.search(text) is not None


def utterance_words(text: str, keep: str = "") -> str:
    """``text`` lower-cased, its punctuation (but apostrophes and ``keep``) made spaces, spaces single:
    the words of its one reading (:func:`agent.deciding.utterance.read`)."""
    return read(text).words_keeping(keep)


def says(cue: str, text: str, korean: bool) -> bool:
    """Whether ``text`` (normalized) holds ``cue``: anywhere in Korean, at a word start in English,
    where a verb and its particle may also stand apart ("turn the pasta timer off" says "turn off")."""
    if korean:
        if cue in lexicon("ko").phrases("word_start_cue"):
            # "1분 더": 더 as its own word; in "있더라" it is an ending that tells what was seen
            return re.search(rf"(?:^|\s){re.escape(cue)}(?!라|니|군)", text) is not None
        return cue in text
    if re.search(r"(?<![\w'])" + re.escape(cue) + _EN_CUE_ENDING, text) is not None:
        return True
    verb, _, particle = cue.partition(" ")
    if not particle or " " in particle or not lexicon("en").has("particle", particle):
        return False
    return re.search(rf"(?<![\w']){re.escape(verb)}(?:\s+[\w']+){{1,{MAX_SPLIT_WORDS}}}\s+{particle}\b", text) is not None


def says_any(text: str, korean: bool, *classes: str) -> bool:
    """Whether ``text`` (normalized) holds a phrase of any of the lexicon ``classes`` (:func:`says`)."""
    lex = lexicon("ko" if korean else "en")
    return any(says(phrase, text, korean) for name in classes for phrase in lex.phrases(name))


_EN_CUE_ENDING = r"(?:s|es|'s|d|ed|ing|er|ers|y|ier|iest|[a-z](?:ing|ed|er|ers|y))?(?![\w'])"
"""What may end a word a cue begins ("timers", "added", "setting", "reminder", "sunny"): "listening" holds no
"list", nor "settle" a "set"."""

MAX_SPLIT_WORDS = 4
"""How many words may stand between a verb and its particle ("turn the big pasta timer off")."""


@found_once
def cued_tools(text: str, language: str, tools: Iterable[str] | None = None) -> set[str]:
    """The tools (of ``tools``, default every tool with cues) that the request asks for in words.

    A word that names which day something is about ("today", "Friday", "오늘", "금요일": the class
    ``day_named``) asks for no tool but the date, and for the date only when nothing else is asked:
    "오늘 비 올까?" and "How's the air on Sunday?" ask about the weather or the air of that day."""
    korean = speaks_korean(text, language)
    rules = _rules("ko" if korean else "en")
    table = cues("ko" if korean else "en")
    normalized = utterance_words(text, keep="-")
    if korean:
        normalized = rules["span_of_days"].sub(" ", normalized)  # "며칠째 지지직거려": no date asked
        normalized = rules["hearsay_clause"].sub(" ", normalized)  # "내일 비 온다던데 소풍은 다음 주에 가자": told, not asked
    undated = rules["other_list"].sub(" ", rules["day_named"].sub(" ", normalized))
    names = table.keys() if tools is None else [t for t in tools if t in table]
    cued = {name for name in names if any(says(cue, undated, korean) for cue in table[name])}
    if not rules["reading"].search(text.strip().lower()):
        commands = command_cues("ko" if korean else "en")
        cued |= {name for name in names if any(says(cue, undated, korean) for cue in commands.get(name, ()))}
    if "weather" in cued and numbers(normalized) and not rules["day_named"].search(normalized) \
            and all(cue in lexicon("ko" if korean else "en").phrases("weak_weather_cue")
                    for cue in table["weather"] if says(cue, undated, korean)):
        cued.discard("weather")  # "Is a hundred and twenty too hot for meringues?": an oven's heat, not the day's
    if not korean and "shopping_add" in cued and _EN_NEEDS_A_LENGTH.search(undated) \
            and not any(says(cue, _EN_NEEDS_A_LENGTH.sub(" ", undated), korean) for cue in table["shopping_add"]):
        cued.discard("shopping_add")  # "the green beans only need eight": a cooking time, nothing to buy
    if not korean and "time_now" in names and rules["clock_question"].search(normalized):
        cued.add("time_now")
    if not cued and "date_today" in names and any(says(cue, normalized, korean) for cue in table["date_today"]):
        cued.add("date_today")
    return cued


_EN_NEEDS_A_LENGTH = re.compile(
    r"\b(?:needs?|wants?)\s+(?:only\s+|just\s+|about\s+|another\s+)?(?:\d+|"
    + "|".join(sorted((w for w in (*EN_ONES, *EN_TENS) if w not in ("a", "an")), key=len, reverse=True))
    + r")(?=\s*$|\s+(?:and|or|so|minutes?|mins?|more|then|can|could|the|it|they)\b)")
"""A thing that needs or wants a bare count, as what cooks does ("the potatoes want twenty and the
green beans only need eight"): a length, not a thing to buy."""


@found_once
def cued_alone(text: str, language: str, tools: Iterable[str]) -> set[str]:
    """Of ``tools`` (cued ones), those asked for by a word that asks for none of the others: in
    "국수 타이머는 취소해" the cancel's 취소, while 타이머 asks for a start and a status alike."""
    korean = speaks_korean(text, language)
    table = cues("ko" if korean else "en")
    undated = _rules("ko" if korean else "en")["day_named"].sub(" ", utterance_words(text, keep="-"))
    said = {tool: {cue for cue in table.get(tool, ()) if says(cue, undated, korean)} for tool in tools}
    alone = set()
    for tool, words in said.items():
        others = {w for other, ws in said.items() if other != tool for w in ws}
        if any(not any(word in other or other in word for other in others) for word in words):
            alone.add(tool)
    return alone


@found_once
def is_follow_up(text: str, language: str) -> bool:
    """Whether the request leans on the turn before ("and one more…", "what about tomorrow?", "내일은?",
    "양파도 추가해 줘")."""
    words = utterance_words(text)
    if not speaks_korean(text, language):
        return _rules("en")["follow_up"].search(words) is not None
    rules = _rules("ko")
    return rules["follow_up"].search(words) is not None or any(_also(m["noun"]) for m in rules["also"].finditer(words))


def _also(noun: str) -> bool:
    """Whether ``noun`` + 도 is the particle "also" ("양파도"), not a word that ends in 도 ("온도",
    "180도"): the act it comes with is the turn before's, done again."""
    if lexicon("ko").has("noun_ending_in_do", f"{noun}도") or re.search(r"\d$|몇$", noun):
        return False
    return not numbers(noun)


@found_once
def offered(text: str, language: str, tools: Iterable[str]) -> list[str]:
    """Of ``tools`` (in their order), those the request may be given: the cued ones; every one for
    a follow-up; tools without a cue table are always offered."""
    tools = list(tools)
    known = {t for t in tools if t in cues("ko" if language == "ko" else "en") or t in cues("en")}
    if is_follow_up(text, language):
        return tools
    cued = cued_tools(text, language, tools) - _other_than_the_timers(text, language) - _other_than_the_list(text, language)
    return [t for t in tools if t in cued or t not in known]


_NOUN_NEEDED = {"shopping_add": "list_noun", "shopping_complete": "list_noun", "shopping_list": "list_noun",
                "recipe_search": "recipe_noun"}
"""The tools a request about timers is not offered unless it names their own thing (a list, a recipe),
and the lexicon class of that thing's names."""


def _other_than_the_timers(text: str, language: str) -> set[str]:
    """The tools a request that names timers does not ask for: "돌아가는 타이머 싹 다 지워" clears
    the timers, not the list, and "떡볶이 타이머 꺼" names the dish as the timer, not a recipe to
    find; a list or a recipe said as well ("the rice timer, and rice on the list") keeps its tools."""
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    if not says_any(words, korean, "timer_word"):
        return set()
    return {tool for tool, noun in _NOUN_NEEDED.items() if not says_any(words, korean, noun)}


def _other_than_the_list(text: str, language: str) -> set[str]:
    """The timers' tools, when the words name the list or buying and no timer and no length: "what's
    left for me to buy?" asks the list, and its "left" is not a timer's time left."""
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    if says_any(words, korean, "timer_word") or durations(text) or not says_any(words, korean, "list_noun", "buy_word"):
        return set()
    return set(TIMER_TOOLS)
