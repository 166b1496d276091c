"""Recipe search over a folder of recipe files, indexed in SQLite FTS5.

The index is a cache of the folder: ``open()`` re-reads only files whose size or modification time
changed since the last start, so a speaker with thousands of recipes on an SD card starts quickly.
It uses FTS5's trigram tokenizer where SQLite has it (3.34+) because the default tokenizer splits
Korean on spaces only, and "김치찌개" must be found from "김치찌개를", "김치 찌개" or "찌개".
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sqlite3
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tools.db import use_wal
from tools.recipe_files import RECIPE_SUFFIXES, Recipe, RecipeFormatError, confined_path, read_recipe
from tools.spoken import Language, check_language, join_words, say_minutes
from tools.spec import ToolOutput, ToolSpec
from tools.threads import ToolThread

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 200
SCHEMA_VERSION = "1"
TRIGRAM_AVAILABLE = sqlite3.sqlite_version_info >= (3, 34, 0)

# Column weights for bm25: a word in the dish's name matters far more than one in a step.
_WEIGHTS = (10.0, 3.0, 1.0)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS recipe_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS recipe_files (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    recipe_id INTEGER  -- NULL: not a readable recipe; not retried until the file changes
);
CREATE TABLE IF NOT EXISTS recipes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    minutes INTEGER,
    servings INTEGER,
    data TEXT NOT NULL
);
"""

# Words that say "a recipe, please" rather than which one; removed before searching.
_FILLER_PHRASES = (
    "how do i make", "how do you make", "how to make", "how to cook", "recipe for", "recipes for", "a recipe",
    "만드는 법", "만드는법", "만드는 방법", "끓이는 법", "끓이는 방법", "어떻게 만들어", "어떻게 끓여", "어떻게 해",
)
STOPWORDS = frozenset(
    "a an the for of to with and or me my some any good nice easy quick simple recipe recipes find look up search "
    "show give tell have you got how make cook do i please something dish"
    " read walk through step steps by aloud out loud again 읽어 읽어줘 읽어 줘 단계별로 차근차근 하나씩"
    " 레시피 요리법 조리법 만드는 만들기 만들어 법 방법 알려줘 알려 줘 찾아줘 찾아 좀 어떻게 끓여 끓이는 요리 하는".split()
)
# Words that ask for an idea rather than name a dish ("what should I cook", "quick dinner idea",
# "뭐 해 먹지", "간단한 저녁 메뉴 추천해 줘"); with nothing else in a query, the book offers its quickest.
_IDEA_WORDS = frozenset(
    "idea ideas suggest suggestion suggestions recommend recommendation what what's whats is are should could can shall "
    "would will we us i eat have tonight today now this evening something anything fast quickly speedy food meal meals "
    "menu dish dishes option options hungry whip throw together up it that them don't dont know"
    " 뭐 뭘 무엇 무얼 뭔가 해 줘 좀 거 걸 게 오늘 지금".split()
)
_IDEA_STEMS_KO = ("먹", "해먹", "만들", "추천", "메뉴", "간단", "빠른", "빨리", "금방", "쉬운", "쉽게", "후딱", "아이디어",
                  "요리", "음식", "식사", "괜찮", "좋을", "좋은", "할까", "하지")
"""Korean words that ask for an idea, as stems: their endings vary ("먹지", "먹을까", "추천해")."""
_QUICK_WORDS = frozenset("quick quickly fast easy simple speedy 빠른 빨리 금방 간단한 간단히 간단하게 후딱 쉬운".split())
_MEALS = {
    "breakfast": ("breakfast", "brunch", "아침", "브런치"),
    "lunch": ("lunch", "점심"),
    "dinner": ("dinner", "supper", "tonight", "저녁"),
}
"""A meal a request may name, by the words that name it and the tags a recipe marks it with."""
_NOT_A_MEAL = frozenset("snack sweet baking dessert side 간식 디저트 반찬 분식 잔치".split())
"""Tags of what is no meal on its own: offered last when an idea for a meal is asked with no meal named."""
_MEAL_WORDS_KO = {"breakfast": "아침", "lunch": "점심", "dinner": "저녁"}

# Korean particles that cling to the noun ("김치찌개를"): searched both with and without them.
_PARTICLES = ("으로", "에서", "이랑", "하고", "로", "를", "을", "은", "는", "이", "가", "도", "랑", "와", "과", "의", "에")
_HANGUL = re.compile(r"^[\uac00-\ud7a3]+$")


@dataclass(frozen=True)
class IndexStats:
    """What one ``refresh()`` did."""

    indexed: int
    """Files read and (re)indexed because they are new or changed."""
    unchanged: int
    """Files skipped because their size and modification time are as before."""
    removed: int
    """Files gone from the folder, dropped from the index."""
    failed: int
    """Files read but not usable as recipes (logged, and not retried until they change)."""


def fold(text: str) -> str:
    """Lower case without accents, so "crepes" finds "Crêpes" (Hangul survives: NFC recomposes it)."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare).lower()


def _asks_an_idea(word: str) -> bool:
    return word in _IDEA_WORDS or word in _QUICK_WORDS or word.startswith(_IDEA_STEMS_KO) or meal_of(word) is not None


def meal_of(query: str) -> str | None:
    """The meal ``query`` names ("dinner", "저녁", "tonight" → ``"dinner"``), if any."""
    words = set(re.findall(r"\w+", fold(query)))
    stripped = {w[: -len(p)] for w in words for p in _PARTICLES if w.endswith(p) and len(w) > len(p)}
    for meal, names in _MEALS.items():
        if (words | stripped) & set(names):
            return meal
    return None


def asks_quick(query: str) -> bool:
    """Whether ``query`` asks for something quick ("quick", "easy", "간단한", "빨리")."""
    return any(w in _QUICK_WORDS for w in re.findall(r"\w+", fold(query)))


def query_terms(query: str, *, dish_only: bool = False) -> list[str]:
    """The search words in ``query``: filler removed, Korean particles split off as extra variants.

    ``dish_only``: also without the words that ask for an idea or name a meal ("what should I
    cook for dinner", "간단한 저녁 메뉴 추천해 줘" hold no dish at all)."""
    text = fold(query)
    for phrase in _FILLER_PHRASES:
        text = text.replace(phrase, " ")
    words = [w for w in re.findall(r"\w+", text) if w not in STOPWORDS]
    if dish_only:
        words = [w for w in words if not _asks_an_idea(w)]
    terms: list[str] = []
    for word in words:
        terms.append(word)
        if _HANGUL.match(word):
            for particle in _PARTICLES:
                if word.endswith(particle) and len(word) - len(particle) >= 2:
                    terms.append(word[: -len(particle)])
                    break
    hangul = [w for w in words if _HANGUL.match(w)]
    if len(hangul) >= 2:
        # Spacing in Korean is loose: "김치 찌개" is the dish "김치찌개".
        terms.extend(a + b for a, b in zip(hangul, hangul[1:]))
    return list(dict.fromkeys(t for t in terms if t not in STOPWORDS))


class RecipeBook:
    """Recipes from ``folder``, indexed in the SQLite file ``db_path``; call ``open()`` before use."""

    def __init__(self, folder: Path, db_path: Path, *, trigram: bool | None = None) -> None:
        self.folder = Path(folder)
        self.db_path = Path(db_path)
        self.trigram = TRIGRAM_AVAILABLE if trigram is None else trigram
        """Whether FTS5 uses the trigram tokenizer (otherwise unicode61 plus substring scans)."""
        if self.trigram and not TRIGRAM_AVAILABLE:
            raise ValueError(f"SQLite {sqlite3.sqlite_version} has no trigram tokenizer (needs 3.34)")
        self._conn: sqlite3.Connection | None = None
        # Searches run in a worker thread so speech keeps playing; one at a time on the connection.
        self._lock = threading.Lock()

    def open(self) -> IndexStats:
        """Open the index and bring it up to date with the folder."""
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        # NORMAL, not FULL: the index is rebuilt from the recipe files whenever it differs from
        # them, so a commit a power cut takes back costs a re-index, never anything said.
        use_wal(conn, "NORMAL")
        self._conn = conn
        self._prepare_schema()
        return self.refresh()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("RecipeBook.open() has not been called")
        return self._conn

    def _prepare_schema(self) -> None:
        tokenizer = "trigram" if self.trigram else "unicode61 remove_diacritics 2"
        conn = self.conn
        conn.executescript(_SCHEMA)
        meta = {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM recipe_meta")}
        if meta and (meta.get("schema") != SCHEMA_VERSION or meta.get("tokenizer") != tokenizer):
            log.info("recipe index built differently (%s); rebuilding", meta)
            conn.executescript("DROP TABLE IF EXISTS recipe_fts; DELETE FROM recipes; DELETE FROM recipe_files;")
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS recipe_fts USING fts5(names, ingredients, body, tokenize='{tokenizer}')"
        )
        conn.executemany("INSERT OR REPLACE INTO recipe_meta VALUES (?, ?)",
                         [("schema", SCHEMA_VERSION), ("tokenizer", tokenizer)])

    def _files(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        if not self.folder.is_dir():
            log.warning("recipe folder %s does not exist; no recipes", self.folder)
            return found
        for root, dirs, names in os.walk(self.folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.startswith(".") or name.lower().startswith("readme") or not name.lower().endswith(RECIPE_SUFFIXES):
                    continue
                path = Path(root) / name
                try:
                    st = path.stat()
                except OSError:
                    continue
                found[path.relative_to(self.folder).as_posix()] = (st.st_mtime_ns, st.st_size)
        return found

    def refresh(self) -> IndexStats:
        """Re-read new and changed files, forget removed ones."""
        found = self._files()
        with self._lock:
            conn = self.conn
            known = {r["path"]: (r["mtime_ns"], r["size"]) for r in conn.execute("SELECT path, mtime_ns, size FROM recipe_files")}
            indexed = unchanged = failed = 0
            conn.execute("BEGIN")
            try:
                gone = [p for p in known if p not in found]
                for rel in gone:
                    self._forget(rel)
                for rel, stamp in found.items():
                    if known.get(rel) == stamp:
                        unchanged += 1
                        continue
                    self._forget(rel)
                    recipe_id = None
                    try:
                        recipe_id = self._insert(read_recipe(confined_path(self.folder, rel), rel))
                        indexed += 1
                    except RecipeFormatError as exc:
                        log.warning("skipped recipe file %s: %s", rel, exc)
                        failed += 1
                    conn.execute("INSERT INTO recipe_files VALUES (?, ?, ?, ?)", (rel, *stamp, recipe_id))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        stats = IndexStats(indexed, unchanged, len(gone), failed)
        log.info("recipe index: %s", stats)
        return stats

    def _forget(self, rel: str) -> None:
        row = self.conn.execute("SELECT id FROM recipes WHERE path = ?", (rel,)).fetchone()
        if row is not None:
            self.conn.execute("DELETE FROM recipe_fts WHERE rowid = ?", (row["id"],))
            self.conn.execute("DELETE FROM recipes WHERE id = ?", (row["id"],))
        self.conn.execute("DELETE FROM recipe_files WHERE path = ?", (rel,))

    def _insert(self, recipe: Recipe) -> int:
        data = {"ingredients": recipe.ingredients, "steps": recipe.steps, "aliases": recipe.aliases,
                "tags": recipe.tags, "description": recipe.description}
        cur = self.conn.execute(
            "INSERT INTO recipes (path, title, minutes, servings, data) VALUES (?, ?, ?, ?, ?)",
            (recipe.path, recipe.title, recipe.minutes, recipe.servings, json.dumps(data, ensure_ascii=False)),
        )
        names = " | ".join((recipe.title, *recipe.aliases))
        ingredients = " | ".join((*recipe.ingredients, *recipe.tags))
        body = " ".join((recipe.description, *recipe.steps))
        self.conn.execute("INSERT INTO recipe_fts (rowid, names, ingredients, body) VALUES (?, ?, ?, ?)",
                          (cur.lastrowid, fold(names), fold(ingredients), fold(body)))
        return int(cur.lastrowid)

    def count(self) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT count(*) FROM recipes").fetchone()[0])

    def names(self, limit: int = 200) -> list[str]:
        """The recipes' titles, then their aliases, in the order they were indexed: words to listen for."""
        rows = self.conn.execute("SELECT title, data FROM recipes ORDER BY id LIMIT ?", (limit,)).fetchall()
        aliases = [a for row in rows for a in json.loads(row["data"]).get("aliases", []) if isinstance(a, str)]
        return [row["title"] for row in rows] + aliases

    def search(self, query: str, limit: int = 5) -> list[Recipe]:
        """Best matches first: full-text hits ranked by bm25 (names weigh most), then substring hits."""
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        if self.trigram:
            fts_terms = [t for t in terms if len(t) >= 3]
            like_terms = [t for t in terms if len(t) < 3]
        else:
            fts_terms = terms
            like_terms = [t for t in terms if _HANGUL.match(t)]
        pool = limit * 3
        with self._lock:
            ids = self._fts_ids(fts_terms, pool) if fts_terms else []
            if len(ids) < pool and like_terms:
                ids += [i for i in self._like_ids(like_terms, pool) if i not in ids]
            found = [self._load(i) for i in ids[:pool]]
        # bm25 alone can put "Crêpes" (alias "thin pancakes") above "Pancakes"; a title naming the
        # query wins, stably, so bm25 still orders the rest.
        whole = "".join(terms)

        def title_rank(recipe: Recipe) -> int:
            title = fold(recipe.title).replace(" ", "")
            if title == whole or title in terms:
                return 0
            return 1 if any(t in title for t in terms) else 2

        return sorted(found, key=title_rank)[:limit]

    def _fts_ids(self, terms: list[str], limit: int) -> list[int]:
        star = "" if self.trigram else "*"
        match = " OR ".join('"' + t.replace('"', '""') + '"' + star for t in terms)
        rows = self.conn.execute(
            "SELECT rowid FROM recipe_fts WHERE recipe_fts MATCH ? ORDER BY bm25(recipe_fts, ?, ?, ?), rowid LIMIT ?",
            (match, *_WEIGHTS, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def _like_ids(self, terms: list[str], limit: int) -> list[int]:
        # Too short for trigrams ("김치", "떡"): a scan, which stays in milliseconds for a few thousand recipes.
        hits: list[str] = []
        params: list[object] = []
        for term in terms:
            for weight, column in zip(_WEIGHTS, ("names", "ingredients", "body")):
                hits.append(f"{weight} * ({column} LIKE ? ESCAPE '\\')")
                params.append(f"%{_escape_like(term)}%")
        rows = self.conn.execute(
            f"SELECT rowid FROM (SELECT rowid, length(names) AS size, {' + '.join(hits)} AS score FROM recipe_fts) "
            "WHERE score > 0 ORDER BY score DESC, size, rowid LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def quickest(self, limit: int = 2, *, meal: str | None = None, language: Language = "en") -> list[Recipe]:
        """The quickest recipes to offer someone asking what to cook: those with a time, quickest
        first; written in ``language`` first (a voice reads its own), then marked for ``meal``
        ("dinner": tagged dinner or 저녁) when any is, else anything but a snack or a sweet."""
        names = set(_MEALS.get(meal, ())) - {"tonight"} if meal else set()

        def rank(recipe: Recipe) -> tuple[bool, bool]:
            tags = {fold(t) for t in recipe.tags}
            written_in = "ko" if _HANGUL.search(recipe.title) else "en"
            fits = bool(tags & names) if meal else not tags & _NOT_A_MEAL
            return (written_in != language, not fits)

        found: list[Recipe] = []
        with self._lock:
            rows = self.conn.execute("SELECT id FROM recipes ORDER BY minutes IS NULL, minutes, id").fetchall()
            for row in rows:
                found.append(self._load(int(row[0])))
                if sum(rank(r) == (False, False) for r in found) >= limit:
                    break  # quickest first: nothing later can come before these
        return sorted(found, key=rank)[:limit]  # stable: quickest first within each rank

    def by_path(self, path: str) -> Recipe | None:
        """The recipe read from ``path`` (relative to the folder), or None if it is gone."""
        with self._lock:
            row = self.conn.execute("SELECT id FROM recipes WHERE path = ?", (path,)).fetchone()
            return None if row is None else self._load(int(row[0]))

    def _load(self, recipe_id: int) -> Recipe:
        row = self.conn.execute("SELECT * FROM recipes WHERE id = ?", (recipe_id,)).fetchone()
        data = json.loads(row["data"])
        return Recipe(
            title=row["title"], path=row["path"], minutes=row["minutes"], servings=row["servings"],
            ingredients=tuple(data["ingredients"]), steps=tuple(data["steps"]), aliases=tuple(data["aliases"]),
            tags=tuple(data["tags"]), description=data["description"],
        )


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# -- the tool ----------------------------------------------------------------------


class RecipeSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The dish or ingredients, e.g. banana bread.")


SPOKEN_MATCHES = 3
"""How many titles the answer names; the rest are counted."""


_HANGUL = re.compile(r"[가-힣]")
_LATIN = re.compile(r"[A-Za-z]")


def _name_in(recipe: Recipe, language: Language) -> str:
    """The recipe's name in the script the voice of ``language`` reads: its title, else an alias, else
    a description ("a Korean recipe"); an English voice never gets Hangul, nor a Korean one Latin."""
    ours, theirs = (_HANGUL, _LATIN) if language == "ko" else (_LATIN, _HANGUL)
    for name in (recipe.title, *recipe.aliases):
        if ours.search(name) and not theirs.search(name):
            return name
    if language == "ko":
        return "영어 이름의 레시피"
    return "a Korean recipe" if _HANGUL.search(recipe.title) else "a recipe"


def spoken_title(recipe: Recipe, language: Language) -> str:
    """The recipe's name as said mid-sentence by the voice of ``language``."""
    # Mid-sentence "Banana bread" reads as "banana bread"; leave "BLT" and "Korean BBQ"-style names be.
    title = _name_in(recipe, language)
    words = title.split()
    if language == "en" and title[:1].isupper() and title[1:2].islower() and not any(w[:1].isupper() for w in words[1:]):
        return title[:1].lower() + title[1:]
    return title


def _match_data(recipe: Recipe) -> dict[str, object]:
    return {"title": recipe.title, "path": recipe.path, "minutes": recipe.minutes, "servings": recipe.servings,
            "ingredients": list(recipe.ingredients)}


def _found_text(matches: list[Recipe], language: Language) -> str:
    names = [spoken_title(r, language) for r in matches[:SPOKEN_MATCHES]]
    first = matches[0]
    if language == "ko":
        if len(matches) == 1:
            text = f"{names[0]} 레시피를 찾았어요."
        elif len(matches) <= SPOKEN_MATCHES:
            text = f"레시피를 {len(matches)}개 찾았어요: {join_words(names, language)}."
        else:
            text = f"레시피를 {len(matches)}개 찾았어요. 가장 잘 맞는 레시피: {join_words(names, language)}."
        if first.minutes:
            text += f" {'첫 번째는 ' if len(matches) > 1 else ''}{say_minutes(first.minutes, language)} 걸려요."
        return text
    if len(matches) == 1:
        text = f"I found a recipe for {names[0]}."
    elif len(matches) <= SPOKEN_MATCHES:
        text = f"I found {len(matches)} recipes: {join_words(names, language)}."
    else:
        text = f"I found {len(matches)} recipes; the best matches are {join_words(names, language)}."
    if first.minutes:
        text += f" {'The first' if len(matches) > 1 else 'It'} takes {say_minutes(first.minutes, language)}."
    return text


SUGGESTED = 2
"""How many recipes an idea offers: one, and one more to choose from."""


def _suggested_text(offered: list[Recipe], meal: str | None, language: Language) -> str:
    """The quickest recipes offered as an idea: "For dinner, how about fried rice? It takes 15
    minutes. Or tomato pasta, 25 minutes." / "저녁으로 된장찌개 어때요? 25분이면 돼요. …"."""
    names = [spoken_title(r, language) for r in offered]
    first, *rest = offered
    if language == "ko":
        text = f"{_MEAL_WORDS_KO[meal] + '으로 ' if meal else ''}{names[0]} 어때요?"
        if first.minutes:
            text += f" {say_minutes(first.minutes, language)}이면 돼요."
        for recipe, name in zip(rest, names[1:]):
            text += f" 아니면 {name}도 {say_minutes(recipe.minutes, language)}이면 돼요." if recipe.minutes else f" 아니면 {name}도 있어요."
        return text
    text = f"{'For ' + meal + ', how' if meal else 'How'} about {names[0]}?"
    if first.minutes:
        text += f" It takes {say_minutes(first.minutes, language)}."
    for recipe, name in zip(rest, names[1:]):
        text += f" Or {name}, {say_minutes(recipe.minutes, language)}." if recipe.minutes else f" Or {name}."
    return text


def recipe_tools(book: RecipeBook, language: str = "en", limit: int = 5) -> list[ToolSpec]:
    """recipe_search, bound to ``book`` (which must be open), answering in ``language``."""
    lang = check_language(language)
    thread = ToolThread("recipe_search")  # a stuck disk holds this thread, not the model's

    async def recipe_search(args: RecipeSearchArgs) -> ToolOutput:
        if not query_terms(args.query, dish_only=True):
            # No dish, only an idea asked for ("quick dinner idea", "뭐 해 먹지"): offer the quickest.
            meal = meal_of(args.query)
            offered = await thread.run(functools.partial(book.quickest, SUGGESTED, meal=meal, language=lang))
            if offered:
                return ToolOutput(_suggested_text(offered, meal, lang),
                                  {"query": args.query, "matches": [_match_data(r) for r in offered], "suggested": True})
        matches = await thread.run(book.search, args.query, limit)
        if matches and asks_quick(args.query):
            matches.sort(key=lambda r: (r.minutes is None, r.minutes or 0))  # "quick pasta": the quickest first
        if matches:
            return ToolOutput(_found_text(matches, lang), {"query": args.query, "matches": [_match_data(r) for r in matches]})
        data: dict[str, object] = {"query": args.query, "matches": []}
        if await thread.run(book.count) == 0:
            data["error"] = "no_recipes"
            text = "레시피 폴더에 아직 레시피가 없어요." if lang == "ko" else "There are no recipes in the recipe folder yet."
        else:
            data["error"] = "not_found"
            text = f"{args.query} 레시피를 찾지 못했어요." if lang == "ko" else f"I couldn't find a recipe for {args.query}."
        return ToolOutput(text, data)

    return [
        ToolSpec("recipe_search", "Find recipes in the kitchen's recipe collection by dish or ingredient.",
                 RecipeSearchArgs, recipe_search, "read", expected_s=0.6, timeout_s=5.0, speculable=True),
    ]
