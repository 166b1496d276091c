"""hearth's speech parts and agent, offered to Home Assistant over the Wyoming protocol.

``WyomingServer(offer_from(...))`` is the whole wiring: ``await server.start("tcp://127.0.0.1:10700")``.
"""

from firmware_py.wyoming.offer import Voice, WyomingLimits, WyomingOffer, offer_from
from firmware_py.wyoming.protocols import TextAnswers
from firmware_py.wyoming.server import WyomingServer

__all__ = ["TextAnswers", "Voice", "WyomingLimits", "WyomingOffer", "WyomingServer", "offer_from"]
