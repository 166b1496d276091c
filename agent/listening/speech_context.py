"""What the recognizer should expect to hear: the kitchen's words and this household's names.

A small recognizer confuses words that sound alike ("grams" and "grants", "lasagna" and
"Elizon your").  Given a short text of the words a kitchen speaker hears, Whisper prefers
them when the sound allows both.  The text is rebuilt at the start of every turn from
what the household has made (running timers, the shopping list, places and dishes asked
about, the forecast's places, the recipe titles), so it follows the home rather than a
fixed list, and it is kept short: every word of it is read by the decoder on every decode,
and a long prompt pulls the decoder toward reading the prompt back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

KITCHEN_WORDS: dict[str, str] = {
    "en": "Kitchen timer, shopping list, recipes. Grams, cups, ounces, tablespoons, teaspoons, Celsius, Fahrenheit, gas mark."
          " Louder, quieter, volume. Next step.",
    "ko": "타이머, 장보기 목록, 레시피, 메모. 그램, 컵, 큰술, 작은술, 밀리리터, 섭씨, 화씨, 날씨, 미세먼지. 볼륨, 다음 단계.",
}
"""The words every kitchen request draws on, per language: the tools' nouns, the units, and hearth's
own command words (the volume, the recipe's steps)."""

_HANGUL = re.compile(r"[가-힣]")
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class SpeechContextSettings:
    """How long the context may be."""

    max_chars: int = 360
    """Longest context; about 80 Whisper tokens of English, which a decode reads in a few milliseconds."""
    max_names: int = 30
    """Most household names it holds, the likeliest first."""


class SpeechContext:
    """Builds the recognizer's context for a language from a source of household names.

    ``names`` returns names most likely first (see ``HomeTools.vocabulary``); a name in
    another script than the language's is left out, since a prompt in one language pulls
    Whisper toward transcribing, or translating into, the other.
    """

    def __init__(
        self,
        language: str,
        names: Callable[[], Sequence[str]] = lambda: (),
        settings: SpeechContextSettings = SpeechContextSettings(),
    ) -> None:
        self.language = language
        self.names = names
        self.settings = settings

    def __call__(self) -> str:
        s = self.settings
        base = KITCHEN_WORDS.get(self.language, "")
        script = _HANGUL if self.language == "ko" else _LATIN
        chosen: list[str] = []
        seen: set[str] = set()
        room = s.max_chars - len(base) - 1
        for raw in self.names():
            name = " ".join(str(raw).split()).strip(" ,.")
            key = name.casefold()
            if not name or key in seen or not script.search(name) or len(chosen) >= s.max_names:
                continue
            if len(name) + 2 > room:
                break
            seen.add(key)
            chosen.append(name)
            room -= len(name) + 2
        if not chosen:
            return base
        return f"{base} {', '.join(chosen)}."
