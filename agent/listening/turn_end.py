"""When has the user finished speaking?  The end of a turn from the pause, the sound and the words.

A fixed silence is wrong both ways: people stop to think in the middle of a
request ("set a timer for … ten minutes") and are cut off, or they finish
crisply and wait.  At each pause the listener weighs three things:

* the **sound**: an end-of-turn model (:class:`~audio.protocols.TurnEndModel`) hears
  whether the voice sounds finished;
* the **words**: a request does not end on "for", "the" or "add", nor a Korean one
  on a particle ("목록에") or a bare noun ("타이머"), when a partial transcript already
  covers the speech up to the pause (they are not waited for);
* the **room**: the pause only counts while the room stays as quiet as it was
  between words, because the voice detector reports new speech late.

When the sound says finished and the words do not say otherwise, the turn ends
at once: the final transcript is decoded and the model starts thinking.  Otherwise
it ends after a longer silence (``end_silence_s``), and the sound is asked again
while the silence grows.

Neither the sound nor the words are sure: a small recognizer completes "a recipe
for" as "a recipe.", and the end-of-turn model hears a comma as an end.  So an
early end is only a head start: hearth listens on until ``end_silence_s``, and if
the user speaks again it drops what it prepared and hears the whole request.
Nothing is said and no tool runs before then.  A late answer costs a moment; a
cut-off request makes hearth act on half of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["TurnEndSettings", "quiet_since", "sounds_unfinished"]


@dataclass(frozen=True)
class TurnEndSettings:
    """How the end of a tapped utterance is decided."""

    finished_threshold: float = 0.5
    """The end-of-turn model's P(finished) at or above which the sound says finished."""
    end_silence_s: float = 1.5
    """Silence after which the user has surely finished.  A turn ends here when the sound or the
    words say it goes on; and after an earlier end hearth keeps listening until here, acting on
    nothing and saying nothing, so a user who only paused to think is heard whole."""
    sure_end_silence_s: float = 0.6
    """After an early end that everything agrees on, the silence after which hearth answers
    instead of ``end_silence_s``: the sound says finished with at least ``sure_threshold``, the
    final transcript's words do not leave the request open, the hearing is sure, and the last
    partial decode already had the final's words. A user who goes on after it is heard as over a
    reply."""
    sure_threshold: float = 0.9
    """The end-of-turn model's P(finished) at or above which the sound agrees to a sure end."""
    recheck_s: float = 0.15
    """While a pause lasts, the end-of-turn model is asked again after this much more silence."""
    quiet_margin_db: float = 0.0
    """The pause holds while no 10 ms frame since it began is louder than the geometric mean of the
    room's floor and the voice's level, plus this margin (a word said 12 dB softer still counts)."""


# Words an English request does not end on: articles, possessives, prepositions that cannot close
# a kitchen request ("turn it on" can, "a recipe for" cannot), conjunctions, forms of "be", fillers.
_EN_UNFINISHED = frozenset(
    """a an the these those my your our his her their its every
    for to of at with from by about into onto than
    and or but nor because if
    is are was were am
    um uh er erm hmm""".split()
)
# Command verbs that need an object: said alone ("add …") they open a request.
_EN_OPENERS = frozenset("add put set start find convert make give tell remove take search cancel".split())
_WORD = re.compile(r"[a-z']+|[가-힣]+|\d+")

# Syllables a spoken Korean request ends on: the sentence-final endings of requests and questions
# (해 줘, 어때, 몇 시야, 맞춰, 알려 줘요, 있지, 할까, 뭐니, 한대 …).
_KO_FINAL_SYLLABLES = frozenset("요줘해야지까니래어아다죠네자라때냐봐돼대나워여군걸")


def sounds_unfinished(text: str, language: str) -> bool:
    """True when the words so far cannot be the whole request.

    English: the last word is one a request does not end on, or the only word is a command verb
    that needs an object.  Korean: the last word does not
    end with a sentence-final ending, so a particle ("목록에"), a bare noun ("타이머") or a
    number ("3분") leaves it open.
    """
    words = _WORD.findall(text.lower())
    if not words:
        return True
    last = words[-1]
    if language == "ko" or re.fullmatch(r"[가-힣]+", last):
        return not (re.fullmatch(r"[가-힣]+", last) and last[-1] in _KO_FINAL_SYLLABLES)
    return last in _EN_UNFINISHED or (len(words) == 1 and last in _EN_OPENERS)


def quiet_since(audio: np.ndarray, start: int, speech: tuple[int, int], rate: int, margin_db: float) -> bool:
    """True when no 10 ms frame of ``audio[start:]`` sounds like a voice coming back.

    The level that counts as a voice is the geometric mean of the room's floor (the quietest
    frames before ``start``) and the voice's level (the loud frames of ``speech``, a
    (begin, end) sample range), plus ``margin_db``; so a fan or a hob that hums through the
    whole utterance does not count, and a word that starts again does.
    """
    frame = rate // 100
    floor = _levels(audio[:start], frame)
    voice = _levels(audio[speech[0] : speech[1]], frame)
    tail = _levels(audio[start:], frame)
    if len(tail) == 0 or len(voice) == 0:
        return True
    room = max(float(np.percentile(floor, 10)) if len(floor) else 0.0, 1e-4)
    level = float(np.percentile(voice, 90))
    threshold = np.sqrt(room * max(level, room)) * 10 ** (margin_db / 20)
    return bool(tail.max() <= threshold)


def _levels(audio: np.ndarray, frame: int) -> np.ndarray:
    n = len(audio) // frame
    if n == 0:
        return np.zeros(0)
    return np.sqrt(np.mean(np.square(audio[: n * frame].reshape(n, frame).astype(np.float64)), axis=1))
