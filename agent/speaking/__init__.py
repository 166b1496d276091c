"""Saying the answer: stream filters, Cadence's units and pauses, and what reached the speaker."""
