"""Small pieces of spoken English and Korean shared by the tools that answer in either."""

from __future__ import annotations

import logging
from typing import Literal

log = logging.getLogger(__name__)

Language = Literal["en", "ko"]
LANGUAGES: tuple[Language, ...] = ("en", "ko")


def check_language(language: str) -> Language:
    """``language`` if hearth speaks it; a typo in the settings should stop start-up, not mumble."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r} (supported: {', '.join(LANGUAGES)})")
    return language  # type: ignore[return-value]


def join_words(words: list[str], language: Language) -> str:
    """"a, b and c" in English; "a, b, c" in Korean, where "와/과" would depend on the last sound."""
    if language == "ko" or len(words) <= 1:
        return ", ".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def say_minutes(minutes: int, language: Language) -> str:
    """90 → "1 hour 30 minutes" / "1시간 30분"."""
    hours, mins = divmod(max(0, minutes), 60)
    if language == "ko":
        return " ".join(part for part in (f"{hours}시간" if hours else "", f"{mins}분" if mins or not hours else "") if part)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours != 1 else ''}")
    if mins or not hours:
        parts.append(f"{mins} minute{'s' if mins != 1 else ''}")
    return " ".join(parts)


def say_age(seconds: float, language: Language) -> str:
    """How long ago something was measured or fetched: "2 hours ago" / "2시간 전"."""
    seconds = max(0.0, seconds)
    if seconds < 120:
        return "방금" if language == "ko" else "just now"
    # Below two days hours stay clearer than days: "30 hours ago" is not "1 day ago".
    if seconds < 3600:
        amount, en_unit, ko_unit = int(seconds // 60), "minute", "분"
    elif seconds < 2 * 86400:
        amount, en_unit, ko_unit = int(seconds // 3600), "hour", "시간"
    else:
        amount, en_unit, ko_unit = int(seconds // 86400), "day", "일"
    if language == "ko":
        return f"{amount}{ko_unit} 전"
    return f"{amount} {en_unit}{'s' if amount != 1 else ''} ago"


def has_final_consonant(word: str) -> bool:
    """Whether a Korean word ends in a consonant (받침), which picks 은/는, 이/가, 을/를."""
    last = word.strip()[-1:] if word.strip() else ""
    if "가" <= last <= "힣":
        return (ord(last) - ord("가")) % 28 != 0
    # Digits and Latin letters: read the way Korean speakers usually say them.
    return last in "013678LMNRlmnr"


def subject(word: str) -> str:
    """``word`` with the subject particle: 우유가, 양파가, 당근이."""
    return f"{word}{'이' if has_final_consonant(word) else '가'}"


def topic(word: str) -> str:
    """``word`` with the topic particle: 서울은, 부산은, 제주는."""
    return f"{word}{'은' if has_final_consonant(word) else '는'}"
