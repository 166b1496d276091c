"""How sure hearth is that it heard the words it is about to act on.

Over a fan, a tap or a radio, Whisper still writes a sentence, often a fluent and wrong one
("…for 30 minutes" for "…for seven minutes").  Each heard turn is therefore weighed on what
the recognizer and the room say about it:

- the decoder's mean token log-probability of the words chosen (near 0 when sure);
- its probability that there was no speech at all;
- the voice's level above the room's on this turn (:func:`audio.levels.speech_snr_db`);
- whether the last partial decode, made on most of the same audio, agreed with the final.

A hearing can be sure as a whole and still unsure of the one word an act stands on ("five
seconds" for "forty-five seconds" over the fan): the decoder also says how sure it is of each
word.  The words below ``word_sure`` are left out of the hearing's ``sure_text``, and an act that
those words alone support is asked back (:mod:`agent.deciding.responder`).

Each is mapped to 0–1 between where it is lost and where it is sure; the turn's confidence
is the weakest of them, since one bad sign is enough to doubt a hearing.  Below
``unheard_below`` hearth says it did not catch that instead of answering; below
``doubtful_below`` an act is asked back before it is made (:mod:`agent.deciding.confirm`),
while a question that only reads may go ahead.  The thresholds were set on the kitchen
bench's rooms and checked on others (docs/hearing.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from audio.protocols import Transcript
from agent.deciding.spoken_numbers import numbers
from audio.whisper_decode import DEFAULT_HALLUCINATIONS, normalize

Verdict = Literal["sure", "doubtful", "unheard"]


@dataclass(frozen=True)
class HearingSettings:
    """Where each sign of a hearing is lost and where it is sure, and the verdict's thresholds."""

    use_logprob: bool = True
    """Whether the decoder's probabilities are signs: its mean log-probability, and each word's
    (``word_sure``).  Their scale is the model's own: the thresholds below were set for Whisper tiny.en; Whisper base on Korean has not been measured
    on real Korean speech (its only test voice is robotic), so Korean goes by the other signs."""
    logprob_lost: float = -1.0
    """A mean token log-probability at or below this gives no confidence at all."""
    logprob_sure: float = -0.35
    """A mean token log-probability at or above this is sure."""
    snr_lost_db: float = 0.0
    """A voice no louder than the room (dB above it on this turn) gives no confidence."""
    snr_sure_db: float = 15.0
    """A voice this far above the room is sure."""
    no_speech_sure: float = 0.2
    """A no-speech probability at or below this is sure; at 1.0 nothing was heard."""
    agreement_lost: float = 0.3
    """The share of the last partial's words the final kept, at or below which the hearing
    changed its mind too much to be trusted."""
    agreement_sure: float = 0.8
    """The share kept at or above which partial and final agree."""
    partial_cover: float = 0.6
    """A partial is compared with the final only when it covered this share of the audio."""
    doubtful_below: float = 0.5
    """Below this confidence an act is asked back first."""
    unheard_below: float = 0.15
    """Below this confidence hearth says it did not catch that and does nothing."""
    rival_margin: float = 0.06
    """Another of the n best whose mean log-probability is within this of the best is a rival
    hearing: an act its words do not support is asked back (:mod:`agent.deciding.responder`)."""
    word_sure: float = 0.4
    """A word the decoder gives less probability than this is not sure: an act that needs it is
    asked back."""
    phantom_sure: float = 0.9
    """A text Whisper is known to invent over noise ("Thank you.", "you") is taken only above
    this confidence; below it the turn is not heard."""


PHANTOMS = frozenset(normalize(text) for text in (*DEFAULT_HALLUCINATIONS, "thank you very much", "bye bye"))
"""Whole transcripts Whisper writes over noise or silence, compared without case, spaces or
punctuation.  "Yes", "okay" and "네" are not among them: they answer hearth's questions."""

_key = normalize


def words_of(text: str) -> str:
    """The words of a transcript, lower-cased and without punctuation, numbers as digits: what
    decides whether a partial is new, whether the final is what the Thinker already decided on, and
    whether the last partial had the final's words. A partial's "ten minutes" is the final's "10
    minutes", and Korean, which Whisper spaces differently from one decode to the next (십 분,
    10분; 해 주세요, 해주세요), is compared without its spaces."""
    plain = " ".join("".join(c if c.isalnum() or c in "'-" else " " for c in text.casefold()).split())
    if not plain:
        return plain
    found = numbers(plain)
    for number in reversed(found):
        value = int(number.value) if number.value == int(number.value) else number.value
        plain = f"{plain[:number.start]}{value}{plain[number.end:]}"
    return plain.replace(" ", "") if _HANGUL.search(plain) else " ".join(plain.split())


def _scale(value: float, lost: float, sure: float) -> float:
    return min(1.0, max(0.0, (value - lost) / (sure - lost)))


def agreement(partial: str, final: str) -> float:
    """The share of ``partial``'s words that ``final`` also has (1.0 when the partial had none).

    Korean is compared by syllables instead: Whisper spaces it differently from one decode to
    the next (해 주세요, 해주세요) and a particle changes the word (지금, 지금요).  The partial's
    last word is left out there, as a partial's window often ends inside it."""
    if _HANGUL.search(partial) or _HANGUL.search(final):
        return _syllables_kept(partial, final)
    said = [_key(w) for w in partial.split() if _key(w)]
    if not said:
        return 1.0
    left = [_key(w) for w in final.split() if _key(w)]
    kept = 0
    for word in said:
        if word in left:
            left.remove(word)
            kept += 1
    return kept / len(said)


_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _syllables_kept(partial: str, final: str) -> float:
    words = [_key(w) for w in partial.split() if _key(w)]
    said = "".join(words[:-1] if len(words) > 1 else words)
    if not said:
        return 1.0
    heard = _key(final)
    # Longest common subsequence: the syllables the final kept, in order.
    row = [0] * (len(heard) + 1)
    for ch in said:
        previous_diagonal = 0
        for j, other in enumerate(heard, 1):
            previous_diagonal, row[j] = row[j], previous_diagonal + 1 if ch == other else max(row[j], row[j - 1])
    return row[-1] / len(said)


@dataclass(frozen=True)
class Hearing:
    """One turn's hearing, weighed."""

    text: str
    confidence: float
    """0–1: the weakest of the signs below, each scaled between lost and sure."""
    verdict: Verdict
    avg_logprob: float | None = None
    no_speech_prob: float | None = None
    snr_db: float | None = None
    agreement: float | None = None
    weakest: str = ""
    """Which sign set the confidence ("logprob", "snr", "no_speech", "agreement", "phantom"), for the log."""
    rivals: tuple[str, ...] = ()
    """Other hearings of the same audio the decoder found nearly as likely (other words, not
    only other punctuation): an act must be supported by each of them to go ahead unasked."""
    unsure_words: tuple[str, ...] = ()
    """The words of ``text`` the decoder was unsure of (below ``word_sure``)."""
    sure_text: str | None = None
    """``text`` without its unsure words: what an act must be supported by to go ahead unasked.
    None when the recognizer does not say how sure it is of each word."""
    second_hearing: str | None = None
    """What a second ear heard of the same audio (None with one): an act's values must be in it
    too to go ahead unasked."""

    def marks(self) -> dict[str, object]:
        """The figures for the turn's timeline."""
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 3)
        return {
            "confidence": r(self.confidence), "verdict": self.verdict, "weakest": self.weakest,
            "avg_logprob": r(self.avg_logprob), "no_speech_prob": r(self.no_speech_prob),
            "snr_db": r(self.snr_db), "agreement": r(self.agreement), "rivals": list(self.rivals),
            "unsure_words": list(self.unsure_words),
            **({"second_ear": self.second_hearing} if self.second_hearing is not None else {}),
        }


SURE = Hearing("", 1.0, "sure")
"""A hearing nothing is known against (typed words; a recognizer that gives no scores)."""


def weigh(
    final: Transcript, snr_db: float | None, partial: Transcript | None = None, settings: HearingSettings = HearingSettings(),
) -> Hearing:
    """The hearing of ``final``: its confidence from the signs there are, and the verdict."""
    s = settings
    signs: dict[str, float] = {}
    if final.avg_logprob is not None and s.use_logprob:
        signs["logprob"] = _scale(final.avg_logprob, s.logprob_lost, s.logprob_sure)
    if final.no_speech_prob is not None:
        signs["no_speech"] = _scale(1.0 - final.no_speech_prob, 0.0, 1.0 - s.no_speech_sure)
    if snr_db is not None:
        signs["snr"] = _scale(snr_db, s.snr_lost_db, s.snr_sure_db)
    agreed: float | None = None
    if partial is not None and final.audio_s > 0 and partial.audio_s >= s.partial_cover * final.audio_s:
        agreed = agreement(partial.hypothesis or partial.text, final.text)
        signs["agreement"] = _scale(agreed, s.agreement_lost, s.agreement_sure)
    weakest = min(signs, key=lambda k: signs[k]) if signs else ""
    confidence = signs[weakest] if signs else 1.0
    if not _key(final.text):
        confidence, weakest = 0.0, "empty"
    elif _key(final.text) in PHANTOMS and confidence < s.phantom_sure:
        confidence, weakest = 0.0, "phantom"
    verdict: Verdict = "unheard" if confidence < s.unheard_below else "doubtful" if confidence < s.doubtful_below else "sure"
    unsure, sure_text = sure_words(final, s.word_sure) if s.use_logprob else ((), None)
    return Hearing(
        final.text, confidence, verdict, final.avg_logprob, final.no_speech_prob, snr_db, agreed, weakest,
        rivals(final, s.rival_margin), unsure, sure_text, final.second_hearing,
    )


def sure_words(final: Transcript, word_sure: float) -> tuple[tuple[str, ...], str | None]:
    """The words of ``final`` the recognizer was unsure of, and its text without them (None when
    it did not score the words of this text)."""
    words = final.word_probs
    if not words or [_key(w) for w, _ in words if _key(w)] != [_key(w) for w in final.text.split() if _key(w)]:
        return (), None
    unsure = tuple(w for w, p in words if p < word_sure)
    return unsure, " ".join(w for w, p in words if p >= word_sure)


def rivals(final: Transcript, margin: float) -> tuple[str, ...]:
    """The n best within ``margin`` of the best mean log-probability whose words differ from the final's."""
    if len(final.alternatives) < 2:
        return ()
    best = max(score for _, score in final.alternatives)
    chosen = _key(final.text)
    found: list[str] = []
    for text, score in final.alternatives:
        if score >= best - margin and _key(text) != chosen and _key(text) not in {_key(f) for f in found}:
            found.append(text.strip())
    return tuple(found)
