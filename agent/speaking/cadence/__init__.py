"""Cadence: a reply spoken in natural units with human pauses, cut live on the token stream.

It is a rule engine in the output path: it never changes what the model wrote, only where the
speaker breathes.  :mod:`.split` cuts, :mod:`.boundaries` finds where it may, :mod:`.spans`
keeps what must stay whole, :mod:`.korean` reads Korean endings, :mod:`.pacing` times the pauses.
"""

from agent.speaking.cadence.engine import Cadence
from agent.speaking.cadence.boundaries import Boundary, Tier, ends_sentence_here, scan, sentence_ends, whole_sentences
from agent.speaking.cadence.pacing import LivePacer, PaceSettings, speech_pauses, typed_delays
from agent.speaking.cadence.split import CadenceRules, UnitStream, find_cut, split_units

__all__ = [
    "Boundary",
    "Cadence",
    "CadenceRules",
    "LivePacer",
    "PaceSettings",
    "Tier",
    "UnitStream",
    "ends_sentence_here",
    "find_cut",
    "scan",
    "sentence_ends",
    "speech_pauses",
    "split_units",
    "typed_delays",
    "whole_sentences",
]
