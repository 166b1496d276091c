"""Reading a recipe aloud, step by step: the ingredients first, then one step at a time.

"Read me the banana bread recipe" opens it; "next", "repeat", "go back" ("다음", "다시",
"이전") move through it.  The place is kept in the settings store, so after a restart "next"
carries on where the cook was.  A step that says how long ("bake 55 to 60 minutes", "10분
끓인다") offers a timer for it; the shorter end of a range, since a cake is checked early.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.recipe_files import Recipe
from tools.recipes import MAX_QUERY_CHARS, RecipeBook, STOPWORDS, fold, spoken_title
from tools.settings import SettingsStore
from tools.spec import ToolOutput, ToolSpec
from tools.spoken import Language, check_language, join_words, say_minutes
from tools.threads import ToolThread

PLACE = "recipe_place"
_HANGUL = re.compile(r"[가-힣]")
_LATIN = re.compile(r"[A-Za-z]{2,}")
_PARTICLES = ("으로", "에서", "로", "를", "을", "은", "는", "이", "가", "도", "의")

# Amounts as the voice should say them: "75 g" is "75 grams", never "75 gee".
_EN_UNITS = (
    (r"\s*°\s*C\b", " degrees"), (r"\s*°\s*F\b", " degrees Fahrenheit"), (r"(?<=\d)\s*kg\b", " kilograms"),
    (r"(?<=\d)\s*g\b", " grams"), (r"(?<=\d)\s*ml\b", " millilitres"), (r"(?<=\d)\s*l\b", " litres"),
    (r"\b1\s*tsp\b", "1 teaspoon"), (r"(?<=\d)\s*tsp\b", " teaspoons"),
    (r"\b1\s*tbsp\b", "1 tablespoon"), (r"(?<=\d)\s*tbsp\b", " tablespoons"), (r"(?<=\d)\s*cm\b", " centimetres"),
)
_KO_UNITS = (
    (r"\s*°\s*C\b", "도"), (r"(?<=\d)\s*kg\b", "킬로그램"), (r"(?<=\d)\s*g\b", "그램"), (r"(?<=\d)\s*ml\b", "밀리리터"),
    (r"(?<=\d)\s*l\b", "리터"), (r"(?<=\d)\s*cm\b", "센티미터"),
)
_EN_TIME = re.compile(r"(\d+)(?:\s*(?:to|-|–|or)\s*\d+)?\s*(minutes?|mins?|hours?|hrs?)\b", re.IGNORECASE)
_KO_TIME = re.compile(r"(\d+)(?:\s*[~\-–]\s*\d+)?\s*(분|시간)")


def spoken_line(text: str, language: Language) -> str:
    """``text`` with its units written out for the voice."""
    for pattern, words in _KO_UNITS if language == "ko" else _EN_UNITS:
        text = re.sub(pattern, words, text)
    return text


def step_seconds(step: str) -> int | None:
    """How long the step says to wait, in seconds (the shorter end of a range), or None."""
    found = _EN_TIME.search(step) or _KO_TIME.search(step)
    if found is None or len(found.group(1)) > 5:  # more digits than any day has seconds
        return None
    amount, unit = int(found.group(1)), found.group(2).lower()
    seconds = amount * (3600 if unit.startswith(("h", "시")) else 60)
    return seconds if 0 < seconds <= 24 * 3600 else None


def _readable(recipe: Recipe, language: Language) -> bool:
    """Whether the voice of ``language`` can read the recipe's own words (an English voice never
    gets Hangul, nor a Korean voice an English-only recipe)."""
    text = " ".join((*recipe.ingredients, *recipe.steps))
    return not _HANGUL.search(text) if language == "en" else bool(_HANGUL.search(text)) or not _LATIN.search(text)


def _names_all(recipe: Recipe, query: str) -> bool:
    """Whether the recipe's names hold every word the query asks for ("chicken soup" is not
    "chicken curry"): reading the wrong recipe aloud is worse than saying there is none."""
    names = " ".join(fold(n) for n in (recipe.title, *recipe.aliases))
    packed = names.replace(" ", "")
    words = [w for w in re.findall(r"\w+", fold(query)) if w not in STOPWORDS]
    for word in words:
        bare = next((word[: -len(p)] for p in _PARTICLES if word.endswith(p) and len(word) - len(p) >= 2), word)
        if word not in names and word not in packed and bare not in packed:
            return False
    return bool(words)


@dataclass(frozen=True)
class Place:
    """Where the cook is: the recipe and the step last read (0: the ingredients)."""

    path: str
    step: int


class ReadingPlace:
    """The place in the recipe being read, kept across restarts."""

    def __init__(self, store: SettingsStore) -> None:
        self.store = store

    def get(self) -> Place | None:
        value = self.store.get(PLACE)
        if isinstance(value, dict) and isinstance(value.get("path"), str) and isinstance(value.get("step"), int):
            return Place(value["path"], value["step"])
        return None

    def put(self, place: Place) -> None:
        self.store.put(PLACE, {"path": place.path, "step": place.step})


class RecipeReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    query: str = Field(default="", max_length=MAX_QUERY_CHARS, description="The dish to read, e.g. banana bread.")


Move = Literal["next", "back", "repeat", "first", "ingredients"]


class RecipeStepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    move: Move = Field(description="next, back, repeat, first (start again) or ingredients.")


class _Reader:
    """What is said for each move; one per tool set."""

    def __init__(self, book: RecipeBook, place: ReadingPlace, language: Language) -> None:
        self.book, self.place, self.lang = book, place, language

    def ingredients(self, recipe: Recipe) -> str:
        name = spoken_title(recipe, self.lang)
        items = [spoken_line(i, self.lang) for i in recipe.ingredients]
        if self.lang == "ko":
            head = f"{name}{f', {recipe.servings}인분' if recipe.servings else ''}이에요."
            need = f" 재료는 {join_words(items, self.lang)}." if items else ""
            return head + need + (" 첫 단계로 가려면 '다음'이라고 하세요." if recipe.steps else "")
        head = name[:1].upper() + name[1:] + (f", for {recipe.servings}." if recipe.servings else ".")
        need = f" You need {join_words(items, self.lang)}." if items else ""
        return head + need + (" Say next for the first step." if recipe.steps else "")

    def step(self, recipe: Recipe, number: int) -> ToolOutput:
        total = len(recipe.steps)
        text = spoken_line(recipe.steps[number - 1].strip(), self.lang)
        if self.lang == "ko":
            said = f"{'마지막 ' if number == total and total > 1 else ''}{number}단계예요. {text}"
        else:
            said = f"Step {number} of {total}{', the last one' if number == total and total > 1 else ''}. {text}"
        data: dict[str, object] = {"title": recipe.title, "path": recipe.path, "step": number, "steps": total}
        seconds = step_seconds(recipe.steps[number - 1])
        if seconds is not None:
            label = spoken_title(recipe, self.lang)
            data["offer"] = {"tool": "timer_start", "args": {"duration_s": seconds, "label": label}}
            minutes = say_minutes(seconds // 60, self.lang)
            said += f" {minutes} 타이머를 맞출까요?" if self.lang == "ko" else f" Shall I set a {_hyphenated(minutes)} timer?"
        return ToolOutput(said if said[-1] in ".?!" else said + ".", data)

    def nothing_open(self) -> ToolOutput:
        if self.lang == "ko":
            return ToolOutput("읽고 있는 레시피가 없어요. '떡볶이 레시피 읽어 줘'처럼 말해 주세요.", {"error": "no_recipe"})
        return ToolOutput("No recipe is open. Ask me to read one, like: read me the pancake recipe.", {"error": "no_recipe"})

    def unreadable(self, recipe: Recipe) -> ToolOutput:
        data = {"error": "other_language", "title": recipe.title}
        if self.lang == "ko":
            return ToolOutput("그 레시피는 영어로 적혀 있어서 한국어로는 읽어 드릴 수 없어요.", data)
        return ToolOutput(f"The {spoken_title(recipe, self.lang)} recipe is written in Korean, so I can only read it out in Korean.", data)


def _hyphenated(minutes: str) -> str:
    """"55 minutes" → "55-minute" (as in "a 55-minute timer")."""
    parts = minutes.split()
    return "-".join(p[:-1] if p.endswith("s") and not p[0].isdigit() else p for p in parts)


def reading_tools(book: RecipeBook, place: ReadingPlace, language: str = "en") -> list[ToolSpec]:
    """recipe_read and recipe_step, bound to ``book`` (open) and ``place``; called by command words."""
    reader = _Reader(book, place, check_language(language))
    lang = reader.lang
    thread = ToolThread("recipe_reading")  # a stuck disk holds this thread, not the model's

    async def recipe_read(args: RecipeReadArgs) -> ToolOutput:
        if not args.query.strip() or not [w for w in re.findall(r"\w+", fold(args.query)) if w not in STOPWORDS]:
            current = place.get()
            recipe = await thread.run(book.by_path, current.path) if current else None
            if recipe is None:
                text = "어떤 레시피를 읽어 드릴까요?" if lang == "ko" else "Which recipe should I read?"
                return ToolOutput(text, {"error": "empty_query"})
        else:
            matches = await thread.run(book.search, args.query, 5)
            named = [r for r in matches if _names_all(r, args.query)]
            if not named:
                return _not_found(args.query, matches, lang)
            recipe = named[0]
        if not _readable(recipe, lang):
            return reader.unreadable(recipe)
        place.put(Place(recipe.path, 0))
        return ToolOutput(reader.ingredients(recipe), {"title": recipe.title, "path": recipe.path, "step": 0, "steps": len(recipe.steps)})

    async def recipe_step(args: RecipeStepArgs) -> ToolOutput:
        current = place.get()
        recipe = await thread.run(book.by_path, current.path) if current else None
        if current is None or recipe is None:
            return reader.nothing_open()
        if not _readable(recipe, lang):
            return reader.unreadable(recipe)
        total = len(recipe.steps)
        step = min(current.step, total)
        if args.move == "ingredients" or (args.move == "repeat" and step == 0) or (args.move == "back" and step <= 1 and total == 0):
            return ToolOutput(reader.ingredients(recipe), {"title": recipe.title, "path": recipe.path, "step": step, "steps": total})
        if total == 0:
            text = "이 레시피에는 단계가 적혀 있지 않아요." if lang == "ko" else "This recipe has no steps written down."
            return ToolOutput(text, {"error": "no_steps", "title": recipe.title})
        if args.move == "next" and step >= total:
            text = "마지막 단계까지 다 읽었어요. 맛있게 드세요!" if lang == "ko" else "That was the last step. Enjoy!"
            return ToolOutput(text, {"title": recipe.title, "path": recipe.path, "step": step, "steps": total, "finished": True})
        if args.move == "back" and step <= 1:
            out = reader.step(recipe, 1)
            place.put(Place(recipe.path, 1))
            first = "첫 단계예요. " if lang == "ko" else "That's the first step. "
            return ToolOutput(first + out.text, out.data)
        number = {"next": step + 1, "back": step - 1, "repeat": step, "first": 1}[args.move]
        place.put(Place(recipe.path, number))
        return reader.step(recipe, number)

    return [
        ToolSpec("recipe_read", "Read a recipe aloud: its ingredients, then step by step.", RecipeReadArgs, recipe_read,
                 "read", expected_s=0.1, timeout_s=5.0, model_calls=False),
        ToolSpec("recipe_step", "Move through the recipe being read: next, back, repeat.", RecipeStepArgs, recipe_step,
                 "read", expected_s=0.05, timeout_s=5.0, model_calls=False),
    ]


def _not_found(query: str, matches: list[Recipe], language: Language) -> ToolOutput:
    close = [spoken_title(r, language) for r in matches[:2]]
    words = " ".join(w for w in re.findall(r"\w+", query) if fold(w) not in STOPWORDS) or query
    data: dict[str, object] = {"error": "not_found", "query": query, "closest": [r.title for r in matches[:2]]}
    if language == "ko":
        text = f"{words} 레시피는 없어요." + (f" 비슷한 건 {join_words(close, language)}예요." if close else "")
    else:
        text = f"I don't have a recipe for {words}." + (f" The closest I have: {join_words(close, language)}." if close else "")
    return ToolOutput(text, data)
