"""The examples a tool decision is shown, chosen per request, and the planner hearth decides with.

:func:`default_planner` is what both the live turn and ``bench.suites.tool_accuracy`` use, so the
benchmark measures exactly what runs.  Per request it

- picks the ``k`` bank examples (:func:`agent.deciding.banks.example_bank`) nearest to the words in the
  request's language, plus one that calls no tool, by character n-gram TF-IDF cosine
  (robust to inflection, compounds and Korean particles, and needs no tokenizer);
- optionally narrows the reply grammar to the tools those examples call (and "none"), so a
  small model cannot wander into an unrelated tool;
- repairs the arguments from the user's own words (:mod:`agent.deciding.arguments`).
"""

from __future__ import annotations

import functools
import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent.deciding.arguments import READ_ONLY, changes_time_only, repair_arguments
from agent.deciding.banks import NONE, Entry, example_bank
from agent.deciding.corrections import asked_part
from agent.deciding.intents import (
    asks_for_act, asks_how_things_are, asks_nothing, asks_to_know, cued_alone, cued_tools, is_question, judges_a_length, makes_a_remark, offered, requests_an_act,
    opens_with_a_command, small_talk, spoken_to_another, tells_a_wish, tells_of_past, tells_own_plan, tells_what_is_written,
)
from agent.model.llm import ChatMessage
from agent.speaking.phrases import system_prompt
from agent.deciding.tool_calls import Example, Examples, JsonChatModel, ToolCallPlanner
from agent.deciding.utterance import found_once
from tools.registry import ToolRegistry

log = logging.getLogger(__name__)

_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LATIN = re.compile(r"[A-Za-z]")
_EN_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred"
).split()
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(_EN_NUMBER_WORDS) + r")\b")


def language_of(text: str, default: str = "en") -> str:
    """"ko" when the text has Hangul, "en" when it has Latin letters only, else ``default``."""
    if _HANGUL.search(text):
        return "ko"
    return "en" if _LATIN.search(text) else default


def _normalise(text: str) -> str:
    # Numbers are collapsed to one symbol: "12 minute timer" should match "3 minute timer" as
    # well as "twelve minute timer" does.
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _NUMBER_WORD.sub("0", text)
    text = re.sub(r"\d+(?:[.,]\d+)?", "0", text)
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _ngrams(text: str, sizes: Sequence[int] = (2, 3, 4), word_weight: float = 2.0) -> Counter[str]:
    """Character n-grams, plus whole words and word pairs, which tell "time" from "timer" and weigh "off"."""
    normalised = _normalise(text)
    padded = f" {normalised} "
    grams: Counter[str] = Counter(padded[i : i + n] for n in sizes for i in range(len(padded) - n + 1))
    words = normalised.split()
    for word in words:
        grams["w:" + word] += word_weight
    for first, second in zip(words, words[1:]):
        grams[f"b:{first} {second}"] += word_weight
    return grams


@dataclass(frozen=True)
class Scored:
    score: float
    entry: Entry


RANKINGS_KEPT = 64
"""Requests whose ranking an index keeps (a turn's partials, its final words and its rivals)."""


class ExampleIndex:
    """TF-IDF vectors of one language's bank entries; finds the entries nearest a request."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        counts = [_ngrams(request) for request, *_ in self.entries]
        df: Counter[str] = Counter()
        for grams in counts:
            df.update(grams.keys())
        n = len(self.entries)
        self.idf = {gram: math.log((1 + n) / (1 + d)) + 1.0 for gram, d in df.items()}
        self.vectors = [self._vector(grams) for grams in counts]
        self._ranked: dict[str, list[Scored]] = {}

    def _vector(self, grams: Counter[str]) -> dict[str, float]:
        vec = {g: (1.0 + math.log(c)) * self.idf[g] for g, c in grams.items() if g in self.idf}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {g: v / norm for g, v in vec.items()}

    def rank(self, text: str) -> list[Scored]:
        """Every entry, most similar first (ties keep bank order); ranked once per request (the
        Thinker's decision, the answer's and the example key all ask for the same words)."""
        ranked = self._ranked.get(text)
        if ranked is None:
            query = self._vector(_ngrams(text))
            scored = [Scored(sum(w * vec.get(g, 0.0) for g, w in query.items()), entry) for entry, vec in zip(self.entries, self.vectors)]
            ranked = self._ranked[text] = sorted(scored, key=lambda s: -s.score)
            while len(self._ranked) > RANKINGS_KEPT:
                self._ranked.pop(next(iter(self._ranked)))
        return list(ranked)


NEAR_TIE = 0.9
"""A tool asked for alone by a word comes before a nearer tool that needs no values when its best
example scores at least this share of the nearer one's."""


def _first_among_tools(ranked: list[Scored], tool: str) -> list[Scored]:
    """``ranked`` with ``tool``'s examples before the other tools' (in their order otherwise); the
    no-tool examples keep their places, so one nearer than the tool still leaves "none" open."""
    tools = [s for s in ranked if s.entry[2] != NONE]
    reordered = iter(sorted(tools, key=lambda s: s.entry[2] != tool))
    return [s if s.entry[2] == NONE else next(reordered) for s in ranked]


def as_example(entry: Entry) -> Example:
    request, say, tool, args = entry
    decision: dict[str, Any] = {"say": say, "tool": tool}
    if tool != NONE:
        decision["args"] = dict(args)
    return request, decision


class ExamplePicker:
    """Per request: the ``k`` nearest examples in its language, plus the nearest one that calls nothing.

    Called with the user's text it returns the examples least similar first, so the
    nearest one sits right before the request, where a small model attends most.
    """

    def __init__(
        self, language: str = "en", k: int = 6, bank: dict[str, list[Entry]] | None = None, cues: bool = True, fixed: int = 0,
        registry: ToolRegistry | None = None,
    ) -> None:
        self.language = language
        self.k = k
        self.fixed = fixed
        """How many of the ``k`` are the nearest example's tool's own first bank examples, the same
        whatever the words: the prompt up to them is then the same for every request near that
        tool, and a model keeps its state (:attr:`agent.model.llm.ChatMessage.keep`). The rest are
        the nearest to the words, the nearest last."""
        self.cues = cues
        """Offer only the tools the request asks for in words (:mod:`agent.deciding.intents`): examples of
        other tools are neither shown nor allowed by the grammar."""
        self.registry = registry
        """The tools' argument models, to tell which tool's whole call the words hold; None: never asked."""
        self._indexes = {lang: ExampleIndex(entries) for lang, entries in (bank or example_bank()).items() if entries}

    def index_for(self, text: str) -> ExampleIndex:
        lang = language_of(text, self.language)
        return self._indexes.get(lang) or self._indexes[self.language]

    def ranked(self, text: str) -> list[Scored]:
        """The entries nearest ``text`` first, of the tools it may be offered (and "none")."""
        if (asked := asked_part(text, language_of(text, self.language))) != text:
            return self.ranked(asked)  # "Pause it for a sec, I need to check the oven": the request, not its reason
        ranked = self.index_for(text).rank(text)
        if not self.cues:
            return ranked
        tools = list(dict.fromkeys(s.entry[2] for s in ranked if s.entry[2] != NONE))
        language = language_of(text, self.language)
        allowed = set(offered(text, language, tools)) | {NONE}
        if "timer_adjust" in allowed and changes_time_only(text):
            allowed.discard("timer_start")  # "another three minutes onto the cookie timer": a change, not a new timer
        if spoken_to_another(text, language) or small_talk(text, language) is not None or asks_nothing(text, language) \
                or tells_a_wish(text, language):
            allowed = {NONE}  # "Kids, dinner in five minutes!": said to someone else; "how's your day been?": to hearth
        elif asks_to_know(text, language) or asks_how_things_are(text, language):
            allowed &= READ_ONLY | {NONE}  # a "why" question, or "did I put eggs on the list?", never acts
        elif judges_a_length(text, language):
            allowed = {NONE}  # "Ten minutes is never enough for these potatoes": a length judged, no timer asked for
        elif tells_of_past(text, language) or tells_what_is_written(text, language):
            # A story acts on nothing, and asks nothing unless it is a question; "I got the eggs" ticks them off
            allowed &= (READ_ONLY if is_question(text, language) else set()) | {NONE, "shopping_complete"}
        elif tells_own_plan(text, language) and not is_question(text, language) \
                and not any(opens_with_a_command(c, language) for c in re.split(r"[,.;!?]+", text)[1:]):
            # "I'm going to try that lasagne recipe on Sunday": the user's own plan asks nothing to be
            # looked up; an act it names is asked back (:func:`agent.deciding.arguments.act_asked_for`)
            allowed -= READ_ONLY
        elif makes_a_remark(text, language):
            # "시간 진짜 빨리 간다": nothing to look up, and no act the words do not hold whole
            allowed = {NONE} | {t for t in allowed - READ_ONLY if self._holds_whole(t, text)}
        kept = [s for s in ranked if s.entry[2] in allowed]
        return self._alone_first(self._whole_first(kept, text, language), text, language)

    def _alone_first(self, ranked: list[Scored], text: str, language: str) -> list[Scored]:
        """``ranked`` with the examples of the one tool a word asks for alone first, when the
        nearest tool is asked for only by words others share: "국수 타이머는 취소해" is nearer
        "국수 타이머 4분" than any cancel, but only the cancel is asked for by 취소."""
        tools = list(dict.fromkeys(s.entry[2] for s in ranked if s.entry[2] != NONE))
        if len(tools) < 2 or self.registry is None or whole_call_in(self.registry, tools[0], text):
            return ranked
        alone = cued_alone(text, language, tools)
        if tools[0] in alone or len(alone) != 1:
            return ranked
        tool = next(iter(alone))
        if not needs_values(self.registry, tools[0]):
            # A nearest tool that needs no values is passed over only for a near tie: "Will I need a
            # jacket tonight?" is as near "what do I need to buy" as the umbrella, but only the
            # jacket asks for one tool.
            best = {t: max(s.score for s in ranked if s.entry[2] == t) for t in (tools[0], tool)}
            if best[tool] < NEAR_TIE * best[tools[0]]:
                return ranked
        return _first_among_tools(ranked, tool)

    def _whole_first(self, ranked: list[Scored], text: str, language: str) -> list[Scored]:
        """``ranked`` with the examples of the tool whose whole call the words hold first, when the
        nearest tool's are not: "We need eggs." is nearer "do we need anything from the store" than
        any addition, but holds a whole addition, and no question."""
        if self.registry is None or (is_question(text, language) and not requests_an_act(text, language)):
            return ranked  # "Can you add peas to the list?" is a request, and its whole call counts
        tools = list(dict.fromkeys(s.entry[2] for s in ranked if s.entry[2] != NONE))
        if not tools or whole_call_in(self.registry, tools[0], text):
            return ranked
        if tools[0] in cued_alone(text, language, tools) and (tools[0] not in READ_ONLY or needs_values(self.registry, tools[0])):
            # "Stop talking for a second": the stop is asked for alone, the "second" is no timer; a
            # look-up named by a noun ("Take milk off my shopping list") is no act asked for alone
            return ranked
        whole = next((tool for tool in tools[1:] if whole_call_in(self.registry, tool, text)), None)
        if whole is None:
            return ranked
        return _first_among_tools(ranked, whole)

    def head(self, text: str, ranked: list[Scored] | None = None) -> list[Entry]:
        """The examples fixed for the tool of the example nearest ``text`` (none when ``fixed`` is 0);
        ``ranked``: :meth:`ranked` of ``text``, when already at hand."""
        ranked = self.ranked(text) if ranked is None else ranked
        if not self.fixed or not ranked:
            return []
        tool = next((s.entry[2] for s in ranked if s.entry[2] != NONE), NONE)
        return [entry for entry in self.index_for(text).entries if entry[2] == tool][: self.fixed]

    def heads(self, language: str | None = None) -> list[Examples]:
        """The fixed examples of every tool in ``language`` (default: the picker's): what a model
        may keep before the first request."""
        if not self.fixed:
            return []
        index = self._indexes.get(language or self.language)
        if index is None:
            return []
        tools = dict.fromkeys(entry[2] for entry in index.entries)
        return [Examples([as_example(e) for e in index.entries if e[2] == tool][: self.fixed], fixed=self.fixed) for tool in tools]

    def pick(self, text: str, ranked: list[Scored] | None = None) -> list[Entry]:
        """The examples picked for the words (after the head, when there is one), least similar first."""
        ranked = self.ranked(text) if ranked is None else ranked
        # The nearest are picked even when the head holds them: the example right before the
        # request is the one a small model follows, and a head example there is worth repeating.
        head = self.head(text, ranked)
        chosen = [s.entry for s in ranked[: self.k - len(head)]]
        # A no-tool example is added to a prompt of picked examples only: after a head of one
        # tool's examples it sits right before the request and talks the model out of the tool
        # ("Make a note that the oven runs hot" → none).
        if not head and not any(entry[2] == NONE for entry in chosen):
            nearest_none = next((s.entry for s in ranked if s.entry[2] == NONE), None)
            if nearest_none is not None:
                chosen.append(nearest_none)
        # The bank holds no duplicates, so ordering by rank position is well defined.
        position = {id(s.entry): i for i, s in enumerate(ranked)}
        return sorted(chosen, key=lambda entry: -position[id(entry)])

    def tools_for(self, text: str, n: int | None = None) -> list[str]:
        """The tools the ``n`` (default ``k``) nearest examples call, nearest first, without "none"."""
        return self.choices(text, n)[0]

    def choices(self, text: str, n: int | None = None, none_within: int | None = None) -> tuple[list[str], bool]:
        """The tools of the ``n`` nearest examples, and whether answering without a tool stays open.

        It stays open when one of the ``none_within`` (default: all) nearest examples calls no
        tool, or when none of the ``n`` nearest calls one.
        """
        ranked = self.ranked(text)
        names: list[str] = []
        # The nearest examples that call a tool, however near a no-tool one is: the ranking has
        # kept only the tools the words ask for, so a tool is on offer whenever one was asked for
        # ("Make a note that the good knife needs sharpening." is nearer "good evening" than any
        # note), and "none" beside it when a no-tool example is close.
        nearest_none = next((s.score for s in ranked if s.entry[2] == NONE), 0.0)
        # Behind a nearer no-tool example only a tool the words ask for by name is kept: a follow-up
        # is offered every tool, and "And then she said it was fine." asks for none of them.
        asked = cued_tools(text, language_of(text, self.language)) if ranked and ranked[0].entry[2] == NONE else set()
        for scored in [s for s in ranked if s.entry[2] != NONE][: n or self.k]:
            tool = scored.entry[2]
            if tool not in names and (ranked[0].entry[2] != NONE or (tool in asked and (
                    nearest_none < NONE_FLOOR or scored.score >= NONE_MARGIN * nearest_none or self._holds_whole(tool, text)))):
                names.append(tool)
        if not names and asked:
            # "우유 두 팩 장보기에.": nearer "장보기에... 아니 됐어", but a whole addition, however far its examples
            names = [tool for tool in dict.fromkeys(s.entry[2] for s in ranked if s.entry[2] in asked)
                     if self._holds_whole(tool, text)][:1]
        window = ranked if none_within is None else ranked[:none_within]
        allow_none = not names or any(scored.entry[2] == NONE for scored in window)
        return names, allow_none

    def _holds_whole(self, tool: str, text: str) -> bool:
        """Whether the words, no question, hold the tool's whole call: "Actually scratch the butter,
        there's a block left." is nearer "scratch that" than any tick-off, but names what comes off."""
        return self.registry is not None and not is_question(text, language_of(text, self.language)) \
            and whole_call_in(self.registry, tool, text)

    def __call__(self, text: str) -> Examples:
        ranked = self.ranked(text)  # ranked once for the head and the rest
        head = [as_example(entry) for entry in self.head(text, ranked)]
        return Examples([*head, *(as_example(entry) for entry in self.pick(text, ranked))], fixed=len(head))


def needs_values(registry: ToolRegistry, tool: str) -> bool:
    """Whether ``tool`` takes a value it cannot do without (a duration, an item)."""
    spec = registry.get(tool)
    return spec is not None and any(field.is_required() for field in spec.args.model_fields.values())


@found_once(text_at=2)
def whole_call_in(registry: ToolRegistry, tool: str, text: str) -> bool:
    """Whether ``text`` holds every value ``tool`` needs, read from the words alone (a tool that
    needs no value never does: its words alone are no call). Read once per registry, tool and
    reading: the ranking and the grammar's narrowing both ask."""
    spec = registry.get(tool)
    if spec is None:
        return False
    needed = [name for name, field in spec.args.model_fields.items() if field.is_required()]
    if not needed:
        return False
    read = repair_arguments(tool, {}, text)
    try:
        spec.args.model_validate(read)
    except ValueError:
        return False
    return True


class NarrowedChat:
    """A chat model whose reply grammar is narrowed, per request, to the tools its nearest examples call.

    The planner hands over the registry's full schema; this swaps it for one with only the
    likely tools and "none".  The request is the last user message the planner sends.
    """

    def __init__(
        self,
        chat: JsonChatModel,
        registry: ToolRegistry,
        picker: ExamplePicker,
        n: int | None = None,
        none_within: int | None = None,
        max_chars: int | None = None,
        tool_first: bool = False,
    ) -> None:
        self.chat = chat
        self.max_chars = max_chars
        self.tool_first = tool_first
        self.registry = registry
        self.picker = picker
        self.n = n
        self.none_within = none_within

    def _asks_to_read(self, tool: str, text: str) -> bool:
        if tool not in READ_ONLY or needs_values(self.registry, tool):
            return False
        language = language_of(text, self.picker.language)
        cued = set(offered(text, language, sorted(cued_tools(text, language))))  # "장 볼 거 뭐 남았는지": the list's, not a timer's
        asks = is_question(text, language) or asks_for_act(text, language)  # "and then she said it was fine" tells
        return asks and tool in cued and cued_alone(text, language, cued) == {tool} and not tells_of_past(text, language)

    def schema_for(self, text: str) -> dict[str, Any]:
        names, allow_none = self.picker.choices(text, self.n, self.none_within)
        names = [name for name in names if name in self.registry]
        if allow_none and names and (whole_call_in(self.registry, names[0], text) or self._asks_to_read(names[0], text)):
            # The words ask for the tool and hold every value it needs ("we're out of eggs"), or
            # ask in their own words for a look-up that needs none ("목록 좀 불러 줘"): a no-tool
            # example near them ("we're out of time", "택시 불러 줘") does not make them small talk.
            allow_none = False
        return self.registry.tool_call_schema(names, allow_none=allow_none, max_chars=self.max_chars, tool_first=self.tool_first)

    def stream(
        self, messages: Sequence[ChatMessage], max_tokens: int | None = None, json_schema: dict[str, Any] | None = None
    ) -> AsyncIterator[str]:
        if json_schema is not None:
            request = next((m.content for m in reversed(messages) if m.role == "user"), "")
            json_schema = self.schema_for(request)
        return self.chat.stream(messages, max_tokens, json_schema=json_schema)

    def __getattr__(self, name: str) -> Any:  # warm(), load() and the like pass straight through
        return getattr(self.chat, name)


def example_values(bank: dict[str, list[Entry]] | None = None) -> frozenset[str]:
    """Every string argument value in the bank, case-folded: what a model that copies would write."""
    return frozenset(
        str(value).casefold()
        for entries in (bank or example_bank()).values()
        for *_, args in entries
        for value in args.values()
        if isinstance(value, str)
    )


NONE_MARGIN = 0.5
"""A tool asked for in words stays on offer behind a nearer no-tool example while it scores at
least this share of it: "Make a note that the good knife needs sharpening." (a note at 0.34
behind "good evening" at 0.35) keeps the note; "떡볶이 배달 좀 주문해 줘" (a recipe, cued by the 볶
in the dish's name, at 0.23 behind "배달 음식 주문해 줘" at 0.57) does not."""

NONE_FLOOR = 0.15
"""A no-tool example scoring below this is no nearer than chance ("계란 다 떨어졌어" is 0.07 from
"감사합니다"): it takes no tool off the offer."""


NARROW = 1
"""How many nearest examples' tools the grammar keeps by default.

With one, the nearest example's tool is the only tool on offer (besides "none", when a no-tool
example is close): SmolLM2-135M picks wrongly among two far more often than the retrieval does
(two against one, right tool: en-kitchen 90 % / 95 %, ha-en 82 % / 96 %, ko-kitchen 70 % / 85 %;
on fresh English requests 76 % / 74 %).
"""


FIXED = 5
"""Of the ``k`` examples, how many are fixed per nearest tool by default (:attr:`ExamplePicker.fixed`).

With five of six fixed, a decision evaluates a median 67–76 prompt tokens instead of ~300 (the
head is loaded from the model's kept state), and the right tool and arguments stay where they were
(`en-fresh` 90.2 % either way, `en-kitchen` 96.4 % against 97.6 %).
"""


def default_planner(
    chat: JsonChatModel,
    registry: ToolRegistry,
    language: str,
    *,
    k: int = 6,
    narrow: int | None = NARROW,
    none_within: int | None = 3,
    repair: bool = True,
    max_chars: int | None = 60,
    max_tokens: int = 128,
    cues: bool = True,
    fixed: int = FIXED,
    tool_first: bool = False,
    places: Callable[[], Iterable[str]] | None = None,
) -> ToolCallPlanner:
    """The planner hearth decides tool calls with: picked examples, narrowed grammar, repaired arguments.

    ``narrow``: None keeps the full grammar; 0 narrows to the tools of the ``k`` picked examples;
    a positive number to those of that many nearest examples (:data:`NARROW`).  ``none_within``: "none" stays on offer only when a no-tool example is
    among that many nearest (None: always), since a small model otherwise declines clear requests.
    ``max_chars`` caps the spoken line and string arguments.  ``cues``: a tool is offered only
    when the request asks for it in words (:mod:`agent.deciding.intents`).  ``fixed``: see :data:`FIXED`.
    ``tool_first``: the decision names the tool and its arguments, and writes a line only when no tool
    answers (see :meth:`tools.registry.ToolRegistry.tool_call_schema`).  ``places``: the names of the
    places the household's forecast covers, read when a weather question's place is repaired.
    """
    picker = ExamplePicker(language, k, cues=cues, fixed=fixed, registry=registry)
    model: JsonChatModel = chat
    if narrow is not None:
        model = NarrowedChat(chat, registry, picker, narrow or None, none_within, max_chars, tool_first)
    return ToolCallPlanner(
        model,
        registry.specs,
        registry.tool_call_schema(max_chars=max_chars, tool_first=tool_first),
        system_prompt(language),
        picker,
        max_tokens=max_tokens,
        repair=functools.partial(repair_arguments, copied=example_values(), places=places) if repair else None,
        say_chars=max_chars,
        tool_first=tool_first,
    )
