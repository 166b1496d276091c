"""Which of the home's entities the words mean: "the kitchen lights", "후드 팬", "거실 불", "the fan".

Matched against what Home Assistant calls them (names, aliases, areas and their aliases), as
Home Assistant's own Assist does, in English and Korean:

1. an entity whose whole name or alias is said is meant ("hood fan", "주방 불"); of several, the
   longest name said wins ("kitchen light strip" over "kitchen light");
2. otherwise a kind of thing ("the lights", "불", "the heating") narrowed by an area said
   ("in the living room", "거실"), else by the speaker's own area: "turn off the light" in the
   kitchen is the kitchen's light, as a light switch by the door would be;
3. what is left is ambiguous (asked back: "Which one?") or nothing.

Korean particles need no parsing: a name is found inside the words with their spaces removed
("거실불을" holds "거실" and "불").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tools.home_assistant.client import HomeEntity

_HANGUL = re.compile(r"[가-힣]")
_WORD = re.compile(r"[a-z0-9가-힣]+")
_EN_FILLER = {"the", "a", "an", "my", "our", "please", "in", "on", "of", "at", "to", "all", "every"}

KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    # kind: (English words, Korean words, the domains it covers)
    "light": (("light", "lights", "lamp", "lamps", "lighting", "bulb", "bulbs"),
              ("불", "조명", "전등", "등", "램프", "라이트"), ("light",)),
    "fan": (("fan", "fans", "extractor", "extractor fan", "hood", "range hood", "cooker hood", "vent", "exhaust fan"),
            ("팬", "후드", "환풍기", "레인지후드"), ("fan",)),
    "heating": (("heating", "heat", "heater", "thermostat", "temperature"),
                ("난방", "히터", "온도", "온도조절기"), ("climate",)),
    "cooling": (("air conditioning", "air conditioner", "ac", "aircon", "cooling"), ("에어컨", "냉방"), ("climate",)),
    "plug": (("plug", "socket", "outlet"), ("플러그", "콘센트", "스위치"), ("switch",)),
    "blind": (("blind", "blinds", "shade", "shades", "curtain", "curtains", "shutter", "shutters",
               "garage door", "garage"), ("블라인드", "커튼", "차고", "차고문", "셔터"), ("cover",)),
    "lock": (("lock", "door lock", "deadbolt"), ("도어락", "잠금장치", "현관문", "현관 잠금", "현관"), ("lock",)),
    "sensor": (("sensor",), ("센서",), ("sensor", "binary_sensor")),
}
"""Kinds of things said without a name, and the domains they cover.  A switch named for what it
powers ("Hood Fan", a switch) is found by its name's words as well as by its domain.  A kind is
what a thing does, not an appliance of its own: a boiler, a dishwasher or an electric fan
(선풍기) is found only by its own name, so asking for one the home does not share never finds
another device ("보일러 켜 줘" is not the living room's thermostat; "선풍기" is not the hood)."""

HERE = ("here", "in here", "over here", "this room", "in this room", "the room", "this kitchen", "right here",
        "여기", "여기 방", "이 방", "이쪽", "여기에", "이 방에", "여기서")
"""Words for the room the speaker stands in: the speaker's own area (the home commands read the
same words, so what they take for "here" is what is matched as here)."""

ROOMS: tuple[tuple[str, ...], ...] = (
    ("kitchen", "주방", "부엌"),
    ("living room", "lounge", "거실"),
    ("bedroom", "master bedroom", "침실", "안방"),
    ("spare room", "guest room", "small room", "box room", "작은방", "작은 방", "손님방", "옷방"),
    ("bathroom", "욕실", "화장실"),
    ("dining room", "다이닝룸", "식당"),
    ("hallway", "hall", "복도"),
    ("entrance", "entryway", "현관"),
    ("office", "study", "서재"),
    ("kids room", "children's room", "nursery", "playroom", "아이방", "애들방", "아기방", "놀이방"),
    ("garage", "차고"),
    ("balcony", "베란다", "발코니"),
    ("laundry", "laundry room", "utility room", "세탁실", "다용도실"),
    ("attic", "loft", "다락방"),
    ("basement", "cellar", "지하실"),
)
"""Common rooms in both languages, so a Korean household's "거실" finds an area Home Assistant
calls "Living Room" without an alias set (areas with aliases need none of this)."""


def normalize(text: str) -> str:
    """Lower-case words separated by one space, punctuation dropped."""
    return " ".join(_WORD.findall(text.casefold().replace("'s ", " ").replace("’s ", " ")))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def says(label: str, text: str) -> bool:
    """The whole of ``label`` is said in ``text`` (both normalized): word by word in English
    (plurals aside), inside the space-free text in Korean."""
    if not label:
        return False
    if _HANGUL.search(label):
        return label.replace(" ", "") in text.replace(" ", "")
    words = [_stem(w) for w in label.split() if w not in _EN_FILLER] or [_stem(w) for w in label.split()]
    said = [_stem(w) for w in text.split()]
    n = len(words)
    return any(said[i:i + n] == words for i in range(len(said) - n + 1))


def labels(entity: HomeEntity) -> list[str]:
    """What the entity is called: its name and aliases, normalized."""
    return [label for label in (normalize(x) for x in (entity.name, *entity.aliases)) if label]


def area_labels(area: str | None, aliases: Iterable[str] = ()) -> list[str]:
    """An area's names: its own, its aliases, and the other language's for a common room."""
    if not area:
        return []
    names = [normalize(area), *(normalize(a) for a in aliases)]
    for room in ROOMS:
        if any(normalize(r) in names for r in room):
            names += [normalize(r) for r in room]
    return list(dict.fromkeys(n for n in names if n))


def kinds_said(text: str) -> list[str]:
    """The kinds of things named in ``text`` ("light", "fan", …)."""
    found = []
    for kind, (english, korean, _domains) in KINDS.items():
        if any(says(w, text) for w in english) or any(_korean_kind(w, text) for w in korean):
            found.append(kind)
    return found


def _korean_kind(word: str, text: str) -> bool:
    # One-syllable words ("불", "등", "문") only as a word of their own or a word's end ("거실불"),
    # so "불고기" and "등심" are no lights.
    if len(word) > 1:
        return says(word, text)
    return any(w == word or (w.endswith(word) and len(w) <= 4) for w in (_KO_PARTICLE.sub("", t) or t for t in text.split()))


_KO_PARTICLE = re.compile(r"(?<=[가-힣])(?:을|를|이|가|은|는|도|만|좀|의|에|이랑|하고|까지|부터)$")


def _of_kind(entity: HomeEntity, kind: str) -> bool:
    english, korean, domains = KINDS[kind]
    if kind == "cooling" and entity.domain == "climate":
        return "cool" in (entity.attributes.get("hvac_modes") or ())  # a thermostat that only heats does not cool
    if entity.domain in domains:
        return True
    # A switch named for what it powers: "Hood Fan", "Kitchen Light Strip".
    return entity.domain in ("switch", "input_boolean") and any(
        says(w, label) for label in labels(entity) for w in (*english, *korean) if len(w) > 1)


@dataclass(frozen=True)
class Match:
    """What the words mean: the entities (one, or all of a kind when "all" was said), or the
    candidates to ask between, or nothing."""

    entities: tuple[HomeEntity, ...] = ()
    """Meant."""
    candidates: tuple[HomeEntity, ...] = ()
    """Several fit and none is meant more: ask which."""

    @property
    def found(self) -> bool:
        return bool(self.entities)


_ALL = re.compile(r"\b(?:all|every|everything)\b|모든|전부|모두|(?:^|\s)다(?:\s|$)|전체")


SWITCHED_OFF_TOGETHER = ("light", "switch", "fan", "input_boolean", "media_player")
"""What "everything in the kitchen" means, said with no kind of thing: what switches off."""


def match(text: str, entities: Sequence[HomeEntity], own_area: str | None = None,
          domains: Iterable[str] | None = None, everything: bool = False) -> Match:
    """The entities ``text`` means among ``entities`` (only those of ``domains`` when given).
    ``everything``: "everything in the kitchen", with no kind of thing, is all that switches there
    (asked only for switching off: "turn everything on" must not light the oven)."""
    said = normalize(text)
    pool = [e for e in entities if domains is None or e.domain in set(domains)]
    if not said or not pool or _room_not_here(said, entities):
        return Match()
    wants_all = bool(_ALL.search(said))
    areas_said = {e.entity_id for e in pool if any(says(a, said) for a in area_labels(e.area, e.area_aliases))}
    here = any(says(h, said) for h in HERE)
    if here and own_area and not areas_said:
        # "The light in here": the room the speaker stands in, named.
        areas_said = {e.entity_id for e in pool if e.area and normalize(own_area) in area_labels(e.area, e.area_aliases)}
        for h in sorted(HERE, key=len, reverse=True):
            said = re.sub(rf"(?<![\w가-힣]){h}(?![\w])", " ", said)
        said = " ".join(said.split())
    kinds = kinds_said(said)

    named = [(max(len(lb) for lb in labels(e) if says(lb, said)), e) for e in pool if any(says(lb, said) for lb in labels(e))]
    if named:
        longest = max(n for n, _ in named)
        best = [e for n, e in named if n == longest]
        if len(best) > 1 and areas_said:
            best = [e for e in best if e.entity_id in areas_said] or best
        if len(best) > 1 and kinds:
            best = [e for e in best if any(_of_kind(e, k) for k in kinds)] or best
        return Match(tuple(best)) if len(best) == 1 or wants_all else Match(candidates=tuple(best))

    if not kinds:
        if everything and wants_all and areas_said:
            return Match(tuple(e for e in pool if e.entity_id in areas_said and e.domain in SWITCHED_OFF_TOGETHER))
        return Match()
    fitting = [e for e in pool if any(_of_kind(e, k) for k in kinds)]
    unknown = _unknown_words(said, pool)
    if not areas_said and unknown:
        # A word that names nothing known ("가슐불": 거실 misheard) may be a room: the nearest room
        # by its letters, when one is clearly nearest; never this speaker's room by default.
        near = _nearest_area(unknown, fitting)
        if near is not None:
            areas_said = {e.entity_id for e in fitting if near in area_labels(e.area, e.area_aliases)}
    if areas_said:
        fitting = [e for e in fitting if e.entity_id in areas_said]
    elif own_area and not wants_all and not unknown:
        here = [e for e in fitting if e.area and normalize(own_area) in area_labels(e.area, e.area_aliases)]
        fitting = here or fitting
    if not fitting:
        return Match()
    if len(fitting) == 1 or wants_all:
        return Match(tuple(fitting))
    return Match(candidates=tuple(fitting))


def names_something(text: str, entities: Sequence[HomeEntity], temperature: bool = False) -> bool:
    """Whether ``text`` names something in the home: a kind of thing, or an entity's name, alias or
    area.  (Which one is :func:`match`'s to say.)  With ``temperature``, only a room or a thing
    that reports a temperature counts: "how hot should the oven be" is a cooking question."""
    said = normalize(text)
    if not said or _room_not_here(said, entities):
        return False
    if temperature:
        readers = [e for e in entities if reads_temperature(e)]
        return any(says(label, said) for e in readers for label in (*labels(e), *area_labels(e.area, e.area_aliases)))
    # A kind counts only when the home has a thing of it: "turn on the air conditioner" in a home
    # with none is refused, not asked "which one?" among nothing. With nothing read yet (Home
    # Assistant not reached), any kind counts: the home tool then says it cannot reach it.
    kinds = kinds_said(said)
    if kinds and (not entities or any(_of_kind(e, kind) for kind in kinds for e in entities)):
        return True
    if not entities:
        # Nothing read yet: a room's name counts as a kind does ("turn on the kitchen whites", a
        # mishearing), and the home tool says it cannot reach Home Assistant, not that it cannot
        # control a thing it has never been told of.
        return any(says(normalize(name), said) for room in ROOMS for name in room)
    if any(says(label, said) for e in entities for label in labels(e)):
        return True
    rooms = {label for e in entities for label in area_labels(e.area, e.area_aliases) if says(label, said)}
    return bool(rooms) and not _other_thing_in_room(said, rooms)


_KO_ROOM_WHOLE = {"전부", "다", "모두", "전체", "거", "것", "쪽", "여기", "거기", "에서", "에다", "있는", "좀", "싹", "몽땅"}
"""Korean words that may stand beside a room's name and name nothing of their own ("거실 거 다")."""
_EN_ROOM_WHOLE = {"everything", "stuff", "things", "thing", "it", "them", "here", "there", "room", "up", "down", "off"}
"""Words that may stand beside a room's name and name nothing of their own ("everything in the kitchen")."""


def _other_thing_in_room(said: str, rooms: set[str]) -> bool:
    """Whether English words name a room and also a thing that is neither a kind nor a name the home
    has ("the telly in the living room", "the kitchen window"): nothing in that room is meant, and
    no other thing of the room is guessed for it."""
    rest = f" {said} "
    if _HANGUL.search(said):
        for room in sorted(rooms, key=len, reverse=True):
            rest = rest.replace(room, " ")
        # "거실 티비": a word left that is more than a particle or a filler
        return any(w not in _KO_ROOM_WHOLE and len(w) > 1 for w in rest.split())
    for room in sorted(rooms, key=len, reverse=True):
        rest = re.sub(rf"\b{re.escape(room)}s?\b", " ", rest)
    return any(w not in _EN_FILLER and w not in _EN_ROOM_WHOLE for w in rest.split())


@functools.cache
def _kind_words() -> frozenset[str]:
    """Every word of every kind of thing, in both languages."""
    return frozenset(w for english, korean, _ in KINDS.values() for w in (*english, *korean))


def _room_not_here(said: str, entities: Sequence[HomeEntity]) -> bool:
    """Whether the words name a room this home has no area for ("the bedroom lamp" in a home with a
    kitchen and a living room): then nothing in the home is meant, and no other room's lamp is
    asked about. A room's word that is also a thing's name or a kind of thing ("the garage" for
    the garage door) counts as the thing."""
    if not entities:
        return False
    known: set[str] = set()
    for e in entities:
        known.update(labels(e))
        known.update(area_labels(e.area, e.area_aliases))
    kinds = _kind_words()
    named = [label for label in (*known, *kinds) if says(label, said)]
    for room in ROOMS:
        if any(says(word, said) for word in room) and not any(word in known or word in kinds for word in room) \
                and not any(says(word, label) for label in named for word in room):
            return True
    return False


def reads_temperature(entity: HomeEntity) -> bool:
    """A temperature sensor, or a thermostat that reports the room's temperature."""
    if entity.domain == "sensor":
        return entity.device_class == "temperature"
    return entity.domain == "climate" and isinstance(entity.attributes.get("current_temperature"), (int, float))


_FILLER_KO = {"좀", "다", "전부", "모두", "모든", "전체", "그", "저", "이"}


def _unknown_words(said: str, pool: Sequence[HomeEntity]) -> list[str]:
    """The words that are no kind of thing, no filler and no part of a known name or room."""
    known: set[str] = set()
    for e in pool:
        for label in (*labels(e), *area_labels(e.area, e.area_aliases)):
            known.update(label.split())
    kinds = _kind_words()
    unknown = []
    for word in said.split():
        bare = _KO_PARTICLE.sub("", word) or word
        if _HANGUL.search(bare):
            for kind in sorted((k for k in kinds if _HANGUL.search(k)), key=len, reverse=True):
                if bare.endswith(kind) and bare != kind:
                    bare = bare[: -len(kind)]  # "거실불" → "거실"
                    break
        if bare in known or _stem(bare) in known or bare in kinds or bare in _EN_FILLER or bare in _FILLER_KO or bare in HERE:
            continue
        unknown.append(bare)
    return unknown


def _jamo(text: str) -> str:
    """Hangul syllables as their letters (거실 → ㄱㅓㅅㅣㄹ), so near-misses compare by sound."""
    out = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            out += [chr(0x1100 + code // 588), chr(0x1161 + (code % 588) // 28)]
            if code % 28:
                out.append(chr(0x11A7 + code % 28))
        else:
            out.append(ch)
    return "".join(out)


NEAR_AREA = 0.6
"""How alike (difflib's ratio over Hangul letters) a misheard Korean word must be to a room's name."""


def _nearest_area(unknown: list[str], fitting: Sequence[HomeEntity]) -> str | None:
    import difflib

    rooms = {label for e in fitting for label in area_labels(e.area, e.area_aliases) if _HANGUL.search(label)}
    scores = sorted(((difflib.SequenceMatcher(None, _jamo(w), _jamo(r)).ratio(), r) for w in unknown if _HANGUL.search(w) for r in rooms),
                    reverse=True)
    if not scores or scores[0][0] < NEAR_AREA or (len(scores) > 1 and scores[1][0] >= scores[0][0] - 0.1 and scores[1][1] != scores[0][1]):
        return None
    return scores[0][1]


def home_words(entities: Sequence[HomeEntity]) -> list[str]:
    """Every name, alias and area of the home's entities (for the recognizer's prompt and for
    telling a home request from others)."""
    words: list[str] = []
    for e in entities:
        words += [e.name, *e.aliases]
        if e.area:
            # The room's names in both languages: a Korean household says "거실" for "Living Room".
            words += [e.area, *e.area_aliases, *area_labels(e.area, e.area_aliases)]
    return list(dict.fromkeys(w for w in words if w.strip()))
