"""Behaviours that can be switched off, so that each one's effect can be measured against its absence.

Every feature that changes what the listener hears, or when, gets a field here
(default on) and an entry in :data:`FEATURES`.  The benchmark's ``--ablate NAME``
turns one off for half of the runs; nothing else reads these names.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Features:
    """Which optional behaviours are on."""

    speculative_final: bool = True
    """Start the final decode at the first pause, before the utterance is known to be over."""
    partial_as_final: bool = True
    """Use a partial transcript as the final when it already covered all the speech and was decoded
    the way the final is (a whole, checked hypothesis, never a prefix of one)."""
    end_of_turn: bool = True
    """Decide the end of a tapped utterance from the end-of-turn model, the words before the pause
    and the silence; off, a fixed silence (``listen.tap_silence_s``) ends it."""
    sure_end: bool = True
    """After an early end that the sound, the words, the hearing and the last partial all agree
    on, answer after ``listen.sure_end_silence_s`` of silence instead of ``listen.end_silence_s``."""
    asr_bias: bool = True
    """Give the recognizer the household's words (units, list items, timer labels, recipe titles,
    places) as context, so it hears them rather than something that sounds alike."""
    cadence: bool = True
    """Speak the reply in Cadence's units, with pauses, as the model writes it; off, the whole
    reply is synthesised as one piece once the model has finished."""
    ready_voice: bool = True
    """Make the first unit of what a call will say (an act's confirmation, an early look-up's
    answer) into audio while the turn waits to say it (:mod:`agent.speaking.foresight`), where the
    voice can (``TurnDeps.voice_ahead``)."""
    pretool_line: bool = True
    """Speak a short line before a slow tool runs, so the wait is not silence."""
    flush_at_tool: bool = True
    """At a tool call, flush the stream filters (in order) and the sentence splitter, so the line
    before the tool reaches the speaker before the tool starts instead of with the answer."""

    hearing_confidence: bool = True
    """Weigh each heard turn (:mod:`agent.listening.hearing`): say it was not caught when the
    hearing is lost, and ask an act back first when it is doubtful; off, every transcript is
    acted on as heard."""
    released_hearing: bool = True
    """After a release (a held press), weigh the hearing without the last partial when it was
    decoded before the release: it heard fewer words than the final, its last word cut off, so
    its disagreement says nothing of the final. Off, it counts as after a tap."""
    two_ears: bool = True
    """Where two recognizers hear each utterance (``asr.second_ear_en``), ask an act back when its
    values are not in what the second one heard; off, the second ear's hearing is left unused."""
    heartbeat: bool = True
    """Think and fetch on the partial transcripts while the user speaks (:mod:`agent.deciding.thinker`),
    and answer from what is ready when they stop."""
    finish_newest: bool = True
    """At the end of speech, let the Thinker's decision on the newest partial's words run on
    (and start one when none had them), and answer with it when the final has the same words."""
    prefill: bool = True
    """Evaluate the decision's prompt in slices that a newer call preempts, and reuse what an earlier
    decision evaluated, so that after the end of speech only the last words are left to read."""

    reasoner: bool = True
    """Hand questions for knowledge, requests for several acts, and what the talker is unsure of
    to the reasoner (:mod:`agent.deciding.routing`), when one is configured."""
    read_ahead: bool = True
    """While the user is still saying a question for knowledge, let the reasoner read it (its
    prompt evaluated on the partial words), so only the last words are left at the end."""
    prewarm: bool = True
    """Keep the reasoner's prompt heads (its system prompts and the conversation so far) evaluated
    ahead of need, so a delegated request reads only its own words."""

    def without(self, *names: str) -> Features:
        """A copy with the named features (``FEATURES`` keys) switched off."""
        unknown = [n for n in names if n not in FEATURES]
        if unknown:
            raise ValueError(f"unknown feature {', '.join(unknown)}; known: {', '.join(sorted(FEATURES))}")
        return replace(self, **{FEATURES[n]: False for n in names})


FEATURES: dict[str, str] = {f.name.replace("_", "-"): f.name for f in fields(Features)}
"""Command-line name → field name, e.g. ``speculative-final`` → ``speculative_final``."""
