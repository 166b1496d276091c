"""Home commands hearth hears itself: "turn on the kitchen lights", "거실 불 꺼 줘", "set the heating
to 21", "is the oven on?", "거실 몇 도야?".

Like the volume, these are fixed in form and frequent, so they are read here, in a blink and
without the model, the way Home Assistant's own Assist matches its sentences. The words come from
the lexicons (:mod:`agent.deciding.lexicon`): the verbs of each act, the endings of a question, the
fillers around a request. Which thing is meant is the home tool's to work out from the words
(names, aliases, areas); here the words only have to name something in the home at all
(``refers``), so "turn off the timer" and "불고기 레시피" stay with the other tools.

Guards, whatever the words' form:

- a question never acts: "did we leave the hood fan running?" reads the fan, it never switches it;
- a verb with other kitchen meanings ("start", "run", "stop", "open", "틀어", "열어") acts on the
  home only on a thing the home has ("run the tap" is no home command);
- a clear act on a thing the home does not have or does not share ("turn on the boiler" where
  Home Assistant exposes no boiler) is refused in its own words, never guessed onto another device;
- "it", "그거" is the device the turn just before switched, and only then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agent.deciding.extract import strip_korean_particle
from agent.deciding.intents import speaks_korean, spoken_to_another, utterance_words
from agent.deciding.lexicon import Lexicon, lexicon
from agent.deciding.spoken_numbers import EN_ONES, EN_TENS, KO_NUMBER, english_numbers, korean_number
from agent.deciding.tool_calls import ToolPlan
from tools.home_assistant.names import HERE
from tools.spoken import topic

MAX_HOME_WORDS = 14
MAX_REFUSED_WORDS = 3
"""A thing refused by name is a short noun ("the dishwasher", "보일러"): longer words are left to the
other tools, which may serve them."""

Refers = Callable[..., bool]

_HERE = "(?:" + "|".join(re.escape(h).replace(r"\ ", r"\s+") for h in sorted(HERE, key=len, reverse=True)) + ")"
"""The words for the speaker's own room, as the home tool matches them (:data:`tools.home_assistant.names.HERE`)."""


def home_command(text: str, language: str, refers: Refers, last: list[str] | None = None) -> ToolPlan | None:
    """The home call the utterance asks for, a refusal (a plan with no tool and the line to say),
    or None.  ``refers(words, temperature=False)``: the words name something in the home (a name,
    an alias, an area, a kind of thing: "lights", "불"); with ``temperature``, a room or a thing
    that reports its temperature ("오븐 몇 도로 해야 돼?" asks how to bake, not what the oven
    says).  ``last``: the entities the last home act changed, which "turn it off" / "그거 다시 켜
    줘" mean.  A request of several sentences is read by the one that asks ("It's too bright.
    Turn it off.")."""
    korean = speaks_korean(text, language)
    if spoken_to_another(text, language):
        return None  # "Honey, flick the lounge light off": asked of someone else in the room
    lex = lexicon("ko" if korean else "en")
    refusal: ToolPlan | None = None
    clauses = list(_clauses(text))
    for clause in clauses:
        words = utterance_words(clause, keep="%.").rstrip(". ")
        if not words or len(words.split()) > MAX_HOME_WORDS or _names_own_things(words, lex, korean):
            continue
        found = _korean(words, lex) if korean else _english(words, lex)
        if found is None:
            continue
        plan, weak = found
        said_target = str(plan.args.get("target") or "").strip()
        target = _within_one_clause(said_target, clause)
        if target != said_target:
            plan = ToolPlan(plan.say, plan.tool, {**plan.args, "target": target})
        if (not target or _is_pronoun(target, lex, korean)) and (appliance := _appliance_named(text, lex, korean)) is not None \
                and (not last or _opens_a_clause(appliance, text, lex, korean)):
            # "식기세척기에 그릇 꽉 찼어, 작동시켜 줘요": the verb alone is about the appliance named, which
            # the home does not share, never the thing the turn before switched
            return ToolPlan(_cannot_control(appliance, korean), None, {})
        if not target or _is_pronoun(target, lex, korean):
            # "The hood fan, is it still on?": "it" is the thing named in a clause of its own, or
            # the one another clause is about ("후드 너무 시끄럽다, 그만 꺼 줘")
            others = [c for c in clauses[1:] if c != clause]
            named = next((t for c in others if (t := _thing_alone(c, lex, korean, refers))), None) \
                or next((t for c in others if (t := _topic(c, lex, korean, refers))), None)
            if named is not None:
                plan = ToolPlan("", plan.tool, {**plan.args, "target": named})
        decided = _decide(plan, weak, refers, last, lex, korean)
        if decided is not None and decided.tool is not None:
            return decided
        refusal = refusal or decided  # refused only when no clause names a thing the home has
    return refusal


MAX_THINGS_ASKED = 3
"""The most things asked about that "it" or "them" may mean: a question about all the lights at home is no one thing."""


def home_things(tool: str, data: Mapping[str, Any]) -> tuple[str, ...]:
    """The home's things a call switched (``home_control``) or read the state of (``home_state``),
    from what the tool reported: what "it" means in the turn after ("Is the fan on?", "turn it off")."""
    if tool == "home_control":
        return tuple(str(e) for e in data.get("entity_ids") or [])
    asked = list(data.get("states") or {}) if tool == "home_state" else []
    return tuple(str(e) for e in asked) if len(asked) <= MAX_THINGS_ASKED else ()


def _thing_alone(clause: str, lex: Lexicon, korean: bool, refers: Refers) -> str | None:
    """The thing a clause is made of alone ("the oven", "거실 불"), when the home has it."""
    words = utterance_words(clause).strip()
    words = re.sub(r"^(?:" + lex.alternation("lead") + r"\s+)+", "", words) if words else words
    if not words or len(words.split()) > MAX_REFUSED_WORDS or _is_pronoun(words, lex, korean):
        return None
    return words if refers(words) else None


def _topic(clause: str, lex: Lexicon, korean: bool, refers: Refers) -> str | None:
    """The thing a clause opens with and is about ("the hood fan is so loud", "후드 소리 너무
    시끄럽다"): its first words while each names something in the home."""
    words = re.sub(r"^(?:" + lex.alternation("lead") + r"\s+)+", "", utterance_words(clause)).split()
    article = words[:1] if words[:1] == ["the"] and not korean else []
    kept: list[str] = []
    for word in words[len(article):]:
        if not refers(word):
            break
        kept.append(word)
    return " ".join(article + kept) if kept and refers(" ".join(kept)) else None


def _within_one_clause(target: str, said: str) -> str:
    """``target`` cut where its clause ends in ``said``: "Put the aircon on, the oven has made the
    whole flat hot" names the aircon, never the oven of the reason after it."""
    words = target.split()
    if len(words) < 2 or not re.search(r"[,.;!?]", said):
        return target
    parts = [f" {utterance_words(part)} " for part in re.split(r"[,.;!?]+", said)]
    if f" {target} " not in f" {utterance_words(said)} " or any(f" {target} " in part for part in parts):
        return target  # not the words as said ("the heating", for a temperature), or said within one clause
    best: list[str] = []
    for found in parts:
        kept: list[str] = []
        for word in words:
            if f" {' '.join([*kept, word])} " not in found:
                break
            kept.append(word)
        best = kept if len(kept) > len(best) else best
    return " ".join(best) if best else target


def _clauses(text: str) -> Iterator[str]:
    """The whole text, then its sentences and clauses from the last: the request is mostly said last
    ("Oh wait, actually, switch it off"), thanks mostly after it ("Turn off the fan, thanks")."""
    yield text
    parts = [p for p in re.split(r"[.!?;,](?=\s|$)", text) if p.strip()]
    if len(parts) > 1:
        yield from reversed(parts)


def _names_own_things(words: str, lex: Lexicon, korean: bool) -> bool:
    if korean:
        return any(w in words for w in lex.phrases("not_home"))
    return re.search(r"\b" + lex.alternation("not_home") + r"\b", words) is not None


def _decide(plan: ToolPlan, weak: bool, refers: Refers, last: list[str] | None, lex: Lexicon, korean: bool) -> ToolPlan | None:
    target = str(plan.args.get("target") or "").strip()
    if not target or _is_pronoun(target, lex, korean):
        # "turn it off", "is it on now?", "꺼 줄래요?": the thing the turn before switched or asked about
        if last and plan.tool in ("home_control", "home_state") and plan.args.get("what") != "temperature":
            return ToolPlan("", plan.tool, {k: v for k, v in plan.args.items() if k != "target"} | {"entity_ids": list(last)})
        return None
    temperature = plan.args.get("what") == "temperature"
    if refers(target, temperature=temperature):
        return plan
    # "the telly in the living room": refused by its own name, the room aside
    thing = target if korean else re.sub(r"\s+(?:in|of)\s+the\s+.*$", "", target)
    if plan.tool == "home_control" and (not weak or _an_appliance(target, lex, korean)) and _a_thing(thing, lex, korean):
        return ToolPlan(_cannot_control(thing, korean), None, {})
    return None


def _an_appliance(target: str, lex: Lexicon, korean: bool) -> bool:
    """Whether ``target`` names a kind of appliance ("the boiler", "the dishwasher"): refused by
    name even after a verb with other kitchen meanings ("fire up the boiler")."""
    bare = " ".join(w for w in target.split() if w not in lex.phrases("fill")) if korean else re.sub(r"^(?:the|my|our)\s+", "", target)
    words = bare.split()
    # "the kitchen window", "베란다 창문", "the telly in the living room": an appliance among the words
    return any(lex.has("appliance", " ".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, len(words) + 1))


def _appliance_named(text: str, lex: Lexicon, korean: bool) -> str | None:
    """The appliance the words name anywhere ("식기세척기에", "the dishwasher's"), or None."""
    words = _bare_words(text, korean)
    return next((" ".join(words[i:j]) for i in range(len(words)) for j in range(len(words), i, -1)
                 if lex.has("appliance", " ".join(words[i:j]))), None)


def _bare_words(text: str, korean: bool) -> list[str]:
    """The words of ``text`` without their particles ("식기세척기에") or possessive ("the dishwasher's")."""
    return [strip_korean_particle(w) if korean else re.sub(r"'s$", "", w) for w in utterance_words(text).split()]


def _opens_a_clause(thing: str, text: str, lex: Lexicon, korean: bool) -> bool:
    """Whether ``thing`` is what a clause of ``text`` is about, said first ("The dishwasher's
    packed, get it running"), not a word inside one ("there's too much glare on the telly, turn it
    off again": "it" is still the light the turn before switched)."""
    for part in re.split(r"[,.;!?]+", text):
        bare = _bare_words(re.sub(r"^(?:" + lex.alternation("lead") + r"\s+)+", "", utterance_words(part)), korean)
        if bare and not korean and lex.has("pointing_determiner", bare[0]):
            bare = bare[1:]
        if " ".join(bare[: len(thing.split())]) == thing:
            return True
    return False


def _is_pronoun(target: str, lex: Lexicon, korean: bool) -> bool:
    bare = target if korean else target.removeprefix("the ")
    bare = " ".join(w for w in bare.split() if not (korean and w in lex.phrases("fill")))
    return lex.has("pronoun", bare)


def _a_thing(target: str, lex: Lexicon, korean: bool) -> bool:
    """Whether ``target`` is a short name of a thing, which a refusal may repeat."""
    words = target.split()
    if not words or len(words) > MAX_REFUSED_WORDS + (0 if korean else 1) or any(ch.isdigit() for ch in target):
        return False
    if korean and re.search(r"[어아요다지네해줘야]$", words[-1]):
        return False  # "됐어 꺼 줘": a word said before the verb that is no thing's name
    return target not in HERE and not any(lex.has("pronoun", w) for w in words)


def _cannot_control(target: str, korean: bool) -> str:
    if korean:
        return f"{topic(target)} 제가 켜고 끌 수 있는 기기가 아니에요."
    thing = target if target.startswith(tuple(f"{word} " for word in lexicon("en").phrases("thing_determiner"))) else f"the {target}"
    return f"I can't control {thing}."


# -- English ---------------------------------------------------------------------------------
def _strip(words: str, lex: Lexicon) -> str:
    """``words`` without the fillers before and the politeness after."""
    lead = re.compile(r"^(?:" + lex.alternation("lead") + r"\s+)+")
    tail = re.compile(r"(?:\s+" + lex.alternation("tail") + r")+$")
    return tail.sub("", lead.sub("", words)).strip()


def _english(words: str, lex: Lexicon) -> tuple[ToolPlan, bool] | None:
    words = _strip(words, lex)
    if not words:
        return None
    # "kitchen lights, on or off?": asked which of the two, it reads
    if (m := re.search(rf"\s+(?:(?:is|are)\s+(?:it|they)\s+)?(?:{lex.alternation('state_either')})$", words)) is not None and m.start() > 0:
        target = re.sub(r"^(?:(?:is|are)\s+)", "", words[: m.start()])
        return ToolPlan("", "home_state", {"target": _thing(target, lex)}), False
    # "I've a feeling I left the oven on, is it?": what was left, asked after
    m = re.match(rf"^(?:(?:{lex.alternation('state_doubt')})\s+)?(?:i|we|you|someone|somebody)\s+(?:might have\s+|must have\s+|may have\s+)?"
                 rf"left\s+(?P<x>.+?)\s+(?:on|open|unlocked|running)\s+(?:{lex.alternation('state_tag')})$", words)
    if m is not None:
        return ToolPlan("", "home_state", {"target": m["x"]}), False
    # After "can you" and the like are stripped: "can you check if the oven is on" asks, "can you
    # turn on the oven" acts.
    if re.match(lex.alternation("question_open") + r"\b", words):
        plan = _english_question(words, lex)
        return (plan, False) if plan is not None else None
    # "Pop the kitchen lights on for Grandad", "open the window a crack": what the act is for
    # and how far it goes are no part of the thing
    words = _without_purpose(words, lex)
    # "turn the lights on in the living room": the room said last belongs to the thing.
    where = ""
    if (m := re.match(r"^(?P<rest>.+?)\s+(?P<where>(?:in|of)\s+the\s+[\w' ]{2,30}?|" + _HERE + r")$", words)) is not None:
        words, where = m["rest"], m["where"]
    found = _english_act(words, lex)
    if found is None:
        return None
    plan, weak = found
    if where and plan.args.get("target"):
        plan.args["target"] = f"{plan.args['target']} {where}"
    return plan, weak


def _without_purpose(words: str, lex: Lexicon) -> str:
    """The words without who or what the act is for, said after it ("… on for Grandad", "… off so
    the baby can sleep")."""
    words = re.sub(rf"\s+(?:{lex.alternation('purpose_lead')})\s+.*$", "", words)
    return re.sub(rf"\s+(?:{lex.alternation('degree_tail')})$", "", words)


def _english_question(words: str, lex: Lexicon) -> ToolPlan | None:
    """A question about how a thing is (its state, its temperature) reads it; any other question
    ("how do I turn up the heat on a sauce?") is no home request."""
    # "how many degrees is it in here" asks a reading, as "how warm" does; "how many cups" is know-how
    reading = re.match(r"how many degrees\b", words) is not None
    if re.match(lex.alternation("know_how") + r"\b", words) and not reading:
        return None
    # "Did you remember to close the garage door?": whether it is closed
    m = re.match(r"^(?:did|has|have)\s+(?:anyone|anybody|someone|somebody|you|we|i|they)\s+(?:remember(?:ed)?|forget|forgot|think|thought)\s+"
                 r"(?:to\s+|of\s+)?(?:lock(?:ing)?|clos(?:e|ing)|shut(?:ting)?|turn(?:ing)?\s+(?:off|on)|switch(?:ing)?\s+(?:off|on))"
                 r"\s+(?P<x>.+)$", words)
    if m is not None:
        return ToolPlan("", "home_state", {"target": m["x"]})
    body = re.sub(r"^" + lex.alternation("question_open") + r"\s+", "", words)
    body = re.sub(rf"\s+(?:{lex.alternation('state_adverb')})(?=\s|$)", "", body)
    if re.search(lex.alternation("home_temperature"), words):
        target = re.sub(r"^.*?\b(?:in|of|is|are)\s+", "", body) if re.search(r"\b(?:in|of|is|are)\s", body) else body
        target = re.sub(r"\s+(?:at|now|right now)$", "", target)
        return ToolPlan("", "home_state", {"target": _thing(target, lex), "what": "temperature"})
    if not re.search(r"\b" + lex.alternation("home_state_word") + r"\b", body):
        return None  # "is the oven preheated enough for bread?" asks no state the home reports
    return ToolPlan("", "home_state", {"target": _thing(body, lex)})


def _thing(words: str, lex: Lexicon) -> str:
    """The thing in the words of a question: without the state asked about and the people around it."""
    words = re.sub(r"^(?:(?:i|we|you|someone|somebody|anyone|they)\s+)?(?:still\s+)?(?:leave|left|turn|turned|switch|switched|"
                   r"shut|put)(?:\s+(?:on|off))?\s+", "", words)
    words = re.sub(r"\s+(?:is|are|was|were)(?=\s+(?:still\s+)?" + lex.alternation("home_state_word") + r"\b)", "", words)
    words = re.sub(r"^(?:the\s+)?(?:temperature|temp)\s+(?:in|of)\s+", "", words)
    words = re.sub(r"\s+(?:still\s+)?" + lex.alternation("home_state_word") + r"(?:\s+(?:right now|now|still|yet|to))?$", "", words)
    return re.sub(r"\s+(?:still|right now|now)$", "", words).strip()


_EN_NUMBER_FIRST = "(?=\\d|(?:" + "|".join(sorted({*EN_ONES, *EN_TENS}, key=len, reverse=True)) + ")\\b)"
"""Where a number said in English begins: a digit or a number's word."""


def _english_act(words: str, lex: Lexicon) -> tuple[ToolPlan, bool] | None:
    weak = set(lex.phrases("home_weak_verbs"))
    # "Make it 22 degrees in the living room": a temperature said with no thing is the heating's.
    m = re.match(lex.alternation("home_set") + r"\s+(?:" + lex.alternation("home_set_subject") + r"\s+)?(?:up\s+|down\s+)?(?:to\s+|at\s+)?"
                 r"(?P<n>[\w.]+(?:[ -][\w.]+)?)\s*" + lex.alternation("temperature_unit") + r"(?P<rest>(?:\s+.*)?)$", words)
    if m is not None and (numbers := english_numbers(m["n"])):
        return ToolPlan("", "home_control", {"action": "set", "target": ("the heating" + m["rest"]).strip(), "value": numbers[0].value}), False
    # "nudge the thermostat up two degrees", "heating down a degree": a step from where it is set
    m = re.match(rf"^(?:(?:{lex.alternation('home_step_verb')})\s+)?(?P<x>(?:the\s+)?[\w' ]{{2,40}}?)\s+(?P<d>up|down)\s+(?:by\s+)?"
                 rf"(?P<n>{_EN_NUMBER_FIRST}[\w.]+|an?\b|one\b)\s*(?:{lex.alternation('temperature_unit')})$", words)
    if m is not None and not re.search(r"\b(?:is|are|was|were|it|i|we|you)\b|'s\b", m["x"]):
        steps = english_numbers(m["n"]) if not lex.has("one_as_article", m["n"]) else []
        size = steps[0].value if steps else 1.0
        return ToolPlan("", "home_control", {"action": "set", "target": m["x"], "step": size if m["d"] == "up" else -size}), False
    number = r"(?P<n>[\w.]+(?:[ -][\w.]+)?)(?:\s*(?:degrees?|percent|%|celsius|c))?"
    # "set the heating to 21", "put the thermostat on eighteen": "on" a number is a level, not a switch
    m = re.match(lex.alternation("home_set") + r"\s+(?:up\s+|down\s+)?(?P<x>.+?)\s+(?:up\s+|down\s+)?(?:to|at|on)\s+" + number + "$", words)
    if m is not None and (numbers := english_numbers(m["n"])):
        return ToolPlan("", "home_control", {"action": "set", "target": m["x"], "value": numbers[0].value}), False
    for action in ("on", "off"):
        m = re.match(rf"(?P<v>{lex.alternation('home_' + action)})\s+(?P<x>.+)$", words)
        if m is not None:
            return ToolPlan("", "home_control", {"action": action, "target": m["x"]}), " ".join(m["v"].split()) in weak
        m = re.match(rf"(?P<v>{lex.alternation('home_' + action + '_after')})\s+(?P<x>.+?)\s+{lex.alternation('home_' + action + '_particle')}$", words)
        if m is not None:
            return ToolPlan("", "home_control", {"action": action, "target": m["x"]}), " ".join(m["v"].split()) in weak
    for action in ("unlock", "lock", "open", "close"):
        m = re.match(rf"(?P<v>{lex.alternation('home_' + action)})\s+(?P<x>.+)$", words)
        if m is not None:
            return ToolPlan("", "home_control", {"action": action, "target": m["x"]}), " ".join(m["v"].split()) in weak
    # "Living room thermostat, twenty-two degrees": a thing and a temperature, no verb, sets it;
    # "could the heating go up to 21?": the thing its subject, a verb of going, then the number
    m = re.match(rf"^(?:(?:could|can|would|will|should)\s+)?(?P<x>(?:the\s+)?[\w' ]{{2,40}}?)\s+(?P<v>(?:{lex.alternation('home_level_verb')})\s+)?"
                 rf"(?P<d>up\s+|down\s+)?(?P<p>(?:to|at)\s+)?(?P<n>{_EN_NUMBER_FIRST}[\w.]+(?:[ -][\w.]+)?)\s*(?P<u>{lex.alternation('temperature_unit')})?$", words)
    said_degrees = re.search(rf"\s{lex.alternation('temperature_unit')}$", words) is not None
    # "Living room thermostat down to 19": a way and "to" say the number is where it goes
    if m is not None and (said_degrees or (m["p"] and (m["v"] or m["d"]))) and (numbers := english_numbers(m["n"])) \
            and not re.search(r"\b(?:is|are|was|were|it|i|we|you)\b|'s\b", m["x"]):
        return ToolPlan("", "home_control", {"action": "set", "target": m["x"], "value": numbers[0].value}), True
    # "the front door needs locking", "the hood fan needs turning off"
    m = re.match(rf"^(?P<x>(?:the\s+)?[\w' ]{{2,40}}?)\s+needs?\s+(?P<v>{lex.alternation('home_needs')})"
                 r"(?:\s+(?:before|when|by|for|so|now|tonight|soon|asap)\b.*)?$", words)
    if m is not None:
        said = " ".join(m["v"].split()).removeprefix("to be ")
        action = next(a for stem, a in (("unlock", "unlock"), ("lock", "lock"), ("open", "open"), ("clos", "close"), ("shut", "close"),
                                        ("on", "on"), ("off", "off")) if stem in said.split()[-1] or said.endswith(stem))
        return ToolPlan("", "home_control", {"action": action, "target": m["x"]}), False
    # "get the garage door up", "bring the blinds down": a cover raised opens, lowered closes
    m = re.match(rf"^(?:{lex.alternation('home_raise_verb')})\s+(?P<x>(?:the\s+)?[\w' ]{{2,40}}?)\s+(?P<d>up|down)$", words)
    if m is not None and re.search(rf"\b{lex.alternation('cover_word')}$", m["x"]):
        return ToolPlan("", "home_control", {"action": "open" if m["d"] == "up" else "close", "target": m["x"]}), True
    # "garage door up": a cover said with its way raises or lowers it
    m = re.match(r"^(?P<x>(?:the\s+)?[\w' ]{2,40}?)\s+(?P<d>up|down)$", words)
    if m is not None and re.search(rf"\b{lex.alternation('cover_word')}$", m["x"]):
        return ToolPlan("", "home_control", {"action": "open" if m["d"] == "up" else "close", "target": m["x"]}), True
    # "so the light can go off", "the fan can be switched on now": what the thing may do, asked
    m = re.match(r"^(?:so\s+)?(?P<x>(?:the\s+)?[\w' ]{2,40}?)\s+can\s+(?:go|be\s+(?:turned|switched|put))\s+(?P<a>on|off)(?:\s+now)?$", words)
    if m is not None and not re.search(r"\b(?:is|are|it|that|this|i|we|you)\b|'s\b", m["x"]):
        return ToolPlan("", "home_control", {"action": m["a"], "target": m["x"]}), True
    # "Lights in here, please", "some light in the kitchen": light asked for where the speaker is, or a room
    m = re.match(rf"^(?:some\s+)?(?P<x>(?:the\s+)?(?:[\w']+\s+)?(?:{lex.alternation('light_word')})(?:\s+(?:in|on)\s+(?:here|the\s+[\w' ]+))?)$", words)
    if m is not None:
        return ToolPlan("", "home_control", {"action": "on", "target": m["x"]}), True
    # "kitchen lights on": a bare thing and its state asks; "the oven is on" says how things are.
    m = re.match(r"^(?P<x>(?:the\s+)?[\w' ]{2,40}?)\s+(?P<a>on|off)$", words)
    if m is not None and not re.search(r"\b(?:is|are|was|were|be|been|still|it|that|this|i|we|you)\b|'s\b", m["x"]):
        return ToolPlan("", "home_control", {"action": m["a"], "target": m["x"]}), True
    return None


# -- Korean ----------------------------------------------------------------------------------
def _korean(words: str, lex: Lexicon) -> tuple[ToolPlan, bool] | None:
    # 좀 softens wherever it stands, inside the verb too ("잠금 좀 풀어 줘")
    words = " ".join(w for w in words.split() if w != "좀")
    words = re.sub(r"^(?:" + lex.alternation("lead") + r"\s+)+", "", words).rstrip("? ")
    if not words:
        return None
    polite = r"(?:\s*" + lex.alternation("request_end") + r")*\s*$"
    m = re.match(rf"^(?P<x>.+?)\s*(?P<n>{KO_NUMBER})\s*(?:도|퍼센트|%)\s*(?:로|으로|에)\s*(?:좀\s*)?{lex.alternation('home_set')}{polite}", words)
    if m is not None and (value := korean_number(m["n"])) is not None:
        return ToolPlan("", "home_control", {"action": "set", "target": _ko_thing(m["x"], lex), "value": value}), False
    # "난방 온도 일 도만 올려 줘", "보일러 두 도 낮춰": a step from where it is set, up or down
    m = re.match(rf"^(?P<x>.+?)\s*(?:온도\s*(?:를|을)?\s*)?(?P<n>{KO_NUMBER})\s*도\s*(?:만|정도|쯤)?\s*(?:더\s*)?"
                 rf"(?P<v>{lex.alternation('home_step_up')}|{lex.alternation('home_step_down')}){polite}", words)
    if m is not None and (size := korean_number(m["n"])) is not None:
        up = lex.has("home_step_up", m["v"])
        return ToolPlan("", "home_control", {"action": "set", "target": _ko_thing(m["x"], lex), "step": size if up else -size}), False
    # A question about a state reads it, before any verb inside it ("켜져 있어?" holds "켜") is taken for an act.
    m = re.match(rf"^(?P<x>.+?)\s*(?:아직\s*|혹시\s*)?(?:{lex.alternation('home_state_question')}|"
                 rf"{lex.alternation('home_state_stem')}\s*{lex.alternation('home_state_confirm')})"
                 rf"(?:\s*(?:\?|{lex.alternation('home_state_check_tail')}))*\s*$", words)
    if m is not None:
        return ToolPlan("", "home_state", {"target": _ko_thing(m["x"], lex)}), False
    m = re.match(rf"^(?P<x>.+?)\s*(?:온도\s*(?:가|는)?\s*)?{lex.alternation('home_temperature_question')}", words)
    if m is not None:
        return ToolPlan("", "home_state", {"target": _ko_thing(m["x"], lex), "what": "temperature"}), False
    weak = set(lex.phrases("home_weak_verbs"))
    for action in ("unlock", "lock", "on", "off", "open", "close"):
        m = re.match(rf"^(?P<x>.*?)\s*(?:좀\s*)?(?P<v>{lex.alternation('home_' + action)}){polite}", words)
        if m is not None:
            return ToolPlan("", "home_control", {"action": action, "target": _ko_thing(m["x"], lex)}), " ".join(m["v"].split()) in weak
    return None


def _ko_thing(words: str, lex: Lexicon) -> str:
    """The thing's words without the fillers inside the request (좀, 다 aside: "다" may mean all)."""
    kept = [w for w in words.split() if w == "다" or w not in lex.phrases("fill")]
    return " ".join(kept).strip()
