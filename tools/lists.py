"""The shopping list and spoken notes, kept in SQLite (may share the timers' file)."""

from __future__ import annotations

import difflib
import logging
import sqlite3
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tools.db import connect
from tools.spec import NoArgs, ToolOutput, ToolSpec, optional_text_argument, text_argument
from tools.spoken import Language, check_language, has_final_consonant, join_words, subject, topic

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS shopping_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    item TEXT NOT NULL,
    key TEXT NOT NULL,
    quantity TEXT,
    added_at REAL NOT NULL,
    done_at REAL
);
-- One open entry per item: adding it again updates that entry.
CREATE UNIQUE INDEX IF NOT EXISTS shopping_open_key ON shopping_items(key) WHERE done_at IS NULL;
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class ShoppingItem:
    """One open entry on the shopping list."""

    id: int
    """Row id."""
    item: str
    """The item as the user last said it ("Oat milk")."""
    quantity: str | None
    """Free-form amount ("2 litres"), or None."""


@dataclass(frozen=True)
class Note:
    """A note the user dictated."""

    id: int
    """Row id."""
    text: str
    """The note itself."""
    created_at: float
    """Wall-clock time it was taken."""


class UnknownItem(Exception):
    """The item to tick off is not on the list; ``nearest`` are the closest that are."""

    def __init__(self, item: str, nearest: list[str]) -> None:
        super().__init__(item)
        self.item = item
        self.nearest = nearest


def item_key(item: str) -> str:
    """How items are matched: case and spacing do not matter, nor control and format characters
    (an item kept with a terminal escape or a bidi override in it is ticked off by its plain name)."""
    return " ".join("".join(ch for ch in item.lower() if unicodedata.category(ch) not in ("Cc", "Cf")).split())


def item_name(item: str) -> str:
    """An item as the list keeps it: its words, spaced once."""
    return " ".join(item.split())


class ListStore:
    """Shopping list and notes in a SQLite file; call ``open()`` before use."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self._conn: sqlite3.Connection | None = None

    def open(self) -> None:
        self._conn = connect(self.path, _SCHEMA)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("ListStore.open() has not been called")
        return self._conn

    def items(self) -> list[ShoppingItem]:
        """Open items, in the order they were first added."""
        rows = self.conn.execute(
            "SELECT id, item, quantity FROM shopping_items WHERE done_at IS NULL ORDER BY id"
        ).fetchall()
        return [ShoppingItem(r["id"], r["item"], r["quantity"]) for r in rows]

    def add(self, item: str, quantity: str | None = None) -> tuple[ShoppingItem, bool]:
        """Add an item, or update the quantity of the open one; returns (item, newly added)."""
        name = item_name(item)
        if not name:
            raise ValueError("empty item")
        key = item_key(name)
        row = self.conn.execute(
            "SELECT id, quantity FROM shopping_items WHERE key = ? AND done_at IS NULL", (key,)
        ).fetchone()
        if row is not None:
            # Saying it again without an amount should not wipe the amount said before.
            new_quantity = quantity if quantity is not None else row["quantity"]
            self.conn.execute(
                "UPDATE shopping_items SET quantity = ?, item = ? WHERE id = ?", (new_quantity, name, row["id"])
            )
            return ShoppingItem(row["id"], name, new_quantity), False
        cur = self.conn.execute(
            "INSERT INTO shopping_items (item, key, quantity, added_at) VALUES (?, ?, ?, ?)",
            (name, key, quantity, self.clock()),
        )
        log.info("shopping list: added %r", name)
        return ShoppingItem(cur.lastrowid, name, quantity), True

    def complete(self, item: str) -> ShoppingItem:
        """Tick an item off; raises UnknownItem naming the nearest open items."""
        key = item_key(item)
        open_items = self.items()
        for entry in open_items:
            if item_key(entry.item) == key:
                self.conn.execute("UPDATE shopping_items SET done_at = ? WHERE id = ?", (self.clock(), entry.id))
                return entry
        keys = {item_key(e.item): e.item for e in open_items}
        close = difflib.get_close_matches(key, list(keys), n=3, cutoff=0.5)
        # Substring matches ("milk" vs "oat milk") are what people mean more often than edit distance says.
        close += [k for k in keys if (key in k or k in key) and k not in close]
        raise UnknownItem(item, [keys[k] for k in close[:3]])

    def add_note(self, text: str) -> Note:
        body = text.strip()
        if not body:
            raise ValueError("empty note")
        now = self.clock()
        cur = self.conn.execute("INSERT INTO notes (text, created_at) VALUES (?, ?)", (body, now))
        return Note(cur.lastrowid, body, now)

    def remove_note(self, note_id: int) -> Note | None:
        """Delete note ``note_id``; the note as it was, or None if there is no such note."""
        row = self.conn.execute("SELECT id, text, created_at FROM notes WHERE id = ?", (note_id,)).fetchone()
        if row is None:
            return None
        self.conn.execute("DELETE FROM notes WHERE id = ?", (note_id,))
        return Note(row["id"], row["text"], row["created_at"])

    def notes(self) -> list[Note]:
        rows = self.conn.execute("SELECT id, text, created_at FROM notes ORDER BY id").fetchall()
        return [Note(r["id"], r["text"], r["created_at"]) for r in rows]


ITEM_MAX_CHARS = 80
"""A shopping-list item is a few words ("gluten-free oat milk"); the whole list is read back aloud."""
QUANTITY_MAX_CHARS = 40
"""An amount is a number and a unit or two ("2 litres", "a dozen large")."""
NOTE_MAX_CHARS = 1000
"""A dictated note: an utterance is at most 28 s, about a hundred words, well under this."""
MAX_ROW_ID = 2**63 - 1
"""The largest id SQLite stores: a larger one is no note, and would not even reach the query."""

Item = Annotated[str, text_argument(ITEM_MAX_CHARS)]


class ShoppingAddArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: Item = Field(min_length=1, description="The item, e.g. milk.")
    quantity: Annotated[str | None, optional_text_argument(QUANTITY_MAX_CHARS)] = Field(
        default=None, description="How much, e.g. 2 litres.")


class ShoppingCompleteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: Item = Field(min_length=1, description="The item to tick off.")


class NoteAddArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: Annotated[str, text_argument(NOTE_MAX_CHARS)] = Field(min_length=1, description="The note, as the user said it.")


class NoteRemoveArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int = Field(ge=1, le=MAX_ROW_ID, description="The note's number, as note_add reported it.")


def _spoken_item(entry: ShoppingItem, language: Language = "en") -> str:
    # Korean counts after the noun: "우유 2리터", not "2리터 우유".
    if language == "ko":
        return f"{entry.item} {entry.quantity}" if entry.quantity else entry.item
    return f"{entry.quantity} {entry.item}" if entry.quantity else entry.item


def _object(word: str) -> str:
    return f"{word}{'을' if has_final_consonant(word) else '를'}"


def _toward(word: str) -> str:
    """``word`` with 으로/로: 로 after a vowel or ㄹ ("2리터로", "1로", "3봉지로"), else 으로 ("3병으로")."""
    last = word.strip()[-1:]
    if "가" <= last <= "힣":
        final = (ord(last) - ord("가")) % 28
        return f"{word}{'로' if final in (0, 8) else '으로'}"
    # 1, 7 and 8 are read 일, 칠, 팔: they end in ㄹ.
    return f"{word}{'로' if last in '178Ll' or not has_final_consonant(word) else '으로'}"


def _item_data(entry: ShoppingItem) -> dict[str, object]:
    return {"item": entry.item, "quantity": entry.quantity}


class SharedList(Protocol):
    """A list the household shares (Home Assistant's to-do list) that ``store`` is the working copy of."""

    async def changed(self, change: Literal["add", "complete"], item: str, quantity: str | None = None) -> None:
        """A change just made to the working copy, to be shared (now, or once it can be)."""
        ...

    async def refresh(self) -> None:
        """Bring the working copy up to date with the shared list, where it can be reached."""
        ...


def list_tools(store: ListStore, language: str = "en", shared: SharedList | None = None) -> list[ToolSpec]:
    """The shopping-list and note tools, bound to ``store`` (which must be open), answering in
    ``language``; with ``shared``, the shopping list is kept in step with the household's."""
    lang = check_language(language)
    ko = lang == "ko"

    def added_words(entry: ShoppingItem) -> str:
        if ko:
            return f"장보기 목록에 {_object(_spoken_item(entry, lang))} 추가했어요."
        return f"Added {_spoken_item(entry)} to the shopping list."

    async def shopping_add(args: ShoppingAddArgs) -> ToolOutput:
        entry, added = store.add(args.item, args.quantity)
        if shared is not None:
            await shared.changed("add", entry.item, entry.quantity)
        data = {**_item_data(entry), "added": added}
        if added:
            return ToolOutput(added_words(entry), data)
        if ko:
            if args.quantity is not None:
                return ToolOutput(
                    f"{topic(entry.item)} 이미 목록에 있어요. 수량을 {_toward(str(entry.quantity))} 바꿨어요.", data
                )
            return ToolOutput(f"{topic(entry.item)} 이미 장보기 목록에 있어요.", data)
        if args.quantity is not None:
            return ToolOutput(f"{entry.item} is already on the list; changed it to {entry.quantity}.", data)
        return ToolOutput(f"{entry.item} is already on the shopping list.", data)

    async def shopping_complete(args: ShoppingCompleteArgs) -> ToolOutput:
        if shared is not None:
            await shared.refresh()  # an item another speaker or a phone added can be ticked off here
        try:
            entry = store.complete(args.item)
        except UnknownItem as exc:
            data = {"error": "not_found", "item": args.item, "nearest": exc.nearest}
            return ToolOutput(_not_on_list(args.item, exc.nearest, not store.items(), lang), data)
        if shared is not None:
            await shared.changed("complete", entry.item)
        data = {**_item_data(entry), "remaining": len(store.items())}
        if ko:
            return ToolOutput(f"장보기 목록에서 {_object(entry.item)} 지웠어요.", data)
        return ToolOutput(f"Ticked {entry.item} off the list.", data)

    async def shopping_list(args: NoArgs) -> ToolOutput:
        if shared is not None:
            await shared.refresh()
        entries = store.items()
        data = {"items": [_item_data(e) for e in entries]}
        if not entries:
            return ToolOutput("장보기 목록이 비어 있어요." if ko else "The shopping list is empty.", data)
        spoken = join_words([_spoken_item(e, lang) for e in entries], lang)
        if ko:
            # A sentence that ends with its verb, not a list after a colon: that is how it is said.
            if len(entries) == 1:
                return ToolOutput(f"장보기 목록에는 {subject(spoken)} 있어요.", data)
            return ToolOutput(f"장보기 목록에 {spoken}, 이렇게 {len(entries)}개가 있어요.", data)
        count = "1 item" if len(entries) == 1 else f"{len(entries)} items"
        return ToolOutput(f"{count} on the list: {spoken}.", data)

    def foretell_add(args: ShoppingAddArgs) -> str:
        # As the store will most often keep it; a thing already on the list is said otherwise.
        return added_words(ShoppingItem(0, item_name(args.item), args.quantity))

    def noted(_args: NoteAddArgs) -> str:
        return "메모했어요." if ko else "Noted."

    async def note_add(args: NoteAddArgs) -> ToolOutput:
        note = store.add_note(args.text)
        return ToolOutput(noted(args), {"id": note.id, "text": note.text})

    async def note_remove(args: NoteRemoveArgs) -> ToolOutput:
        note = store.remove_note(args.id)
        if note is None:
            return ToolOutput("그 메모는 이미 없어요." if ko else "That note is already gone.", {"error": "not_found", "id": args.id})
        return ToolOutput("메모를 지웠어요." if ko else "Note removed.", {"id": note.id, "text": note.text})

    return [
        ToolSpec("shopping_add", "Add an item to the shopping list, or change its quantity.", ShoppingAddArgs, shopping_add, "act",
                 foretell=foretell_add),
        ToolSpec("shopping_complete", "Tick an item off the shopping list.", ShoppingCompleteArgs, shopping_complete, "act"),
        ToolSpec("shopping_list", "Read out the shopping list.", NoArgs, shopping_list, "read", speculable=True, stale_after_s=0.0),
        ToolSpec("note_add", "Write down a note the user dictates.", NoteAddArgs, note_add, "act", foretell=noted),
        # Only "undo that" removes a note: the model is never offered a delete.
        ToolSpec("note_remove", "Remove a note just written.", NoteRemoveArgs, note_remove, "act", model_calls=False),
    ]


def _not_on_list(item: str, nearest: list[str], list_empty: bool, language: Language) -> str:
    if language == "ko":
        if nearest:
            return f"{topic(item)} 목록에 없어요. 혹시 {join_words(nearest, language)} 말씀이세요?"
        if list_empty:
            return f"{topic(item)} 목록에 없어요. 장보기 목록이 비어 있어요."
        return f"{topic(item)} 장보기 목록에 없어요."
    if nearest:
        return f"{item} isn't on the list. Did you mean {join_words(nearest, language)}?"
    if list_empty:
        return f"{item} isn't on the list; the shopping list is empty."
    return f"{item} isn't on the shopping list."
