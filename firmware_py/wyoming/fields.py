"""The fields of the events hearth reads, checked before the wyoming library's classes read them.

The library's ``from_event`` takes whatever a client sent: a ``transcript`` whose ``text`` is 5
fails later, deep in hearth, as "object of type 'int' has no len()".  Here each field hearth reads
is checked against the kind the protocol gives it, and a wrong one is refused in the client's own
terms: which event, which field, what it must be and what came instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from firmware_py.wyoming.asr import Refused


@dataclass(frozen=True)
class Field:
    """One field of an event's data."""

    kind: type
    """``str``, ``dict`` or ``list``: what the protocol says it holds."""
    required: bool = False
    """The event means nothing without it (a ``transcript``'s ``text``)."""
    inner: Mapping[str, Field] | None = None
    """For an object: the fields inside it that are read too (a voice's ``name``)."""


_VOICE = {"name": Field(str), "language": Field(str), "speaker": Field(str)}

FIELDS: Mapping[str, Mapping[str, Field]] = {
    "transcribe": {"name": Field(str), "language": Field(str), "context": Field(dict),
                   "transcript_names": Field(list), "transcript_terms": Field(list)},
    "transcript": {"text": Field(str, required=True), "language": Field(str), "context": Field(dict)},
    "synthesize": {"text": Field(str, required=True), "voice": Field(dict, inner=_VOICE), "context": Field(dict)},
    "synthesize-start": {"voice": Field(dict, inner=_VOICE), "context": Field(dict)},
    "synthesize-chunk": {"text": Field(str, required=True)},
    "ping": {"text": Field(str)},
}
"""Per event type, the fields hearth reads.  Audio events' formats are checked where they are read
(:func:`firmware_py.wyoming.asr.check_format`); a field not listed is not read, so anything goes."""

_NAMES = {str: "a string", dict: "an object", list: "a list"}


def json_kind(value: object) -> str:
    """What a JSON value is, in the protocol's words ("a number", "a list")."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return _NAMES.get(type(value), "something else")


def check_fields(event_type: str, data: Mapping[str, object]) -> None:
    """Raise :class:`Refused` (``bad-event``) naming the first field of ``data`` that is missing or
    of the wrong kind for an event of ``event_type``; an absent or null optional field is fine."""
    _check(event_type, data, FIELDS.get(event_type, {}), "")


def _check(event_type: str, data: Mapping[str, object], fields: Mapping[str, Field], prefix: str) -> None:
    for name, field in fields.items():
        value = data.get(name)
        where = f"{prefix}{name}"
        if value is None:
            if field.required:
                raise Refused(f"{event_type}: {where!r} is missing", "bad-event")
            continue
        if not isinstance(value, field.kind) or isinstance(value, bool):
            raise Refused(f"{event_type}: {where!r} must be {_NAMES[field.kind]}, not {json_kind(value)}", "bad-event")
        if field.inner is not None and isinstance(value, dict):
            _check(event_type, value, field.inner, f"{where}.")
