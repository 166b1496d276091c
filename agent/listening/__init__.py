"""Hearing the user: the utterance, its end, speaking up, and the words to listen for."""
