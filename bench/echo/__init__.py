"""Listening over hearth's own voice: which echo canceller, false barge-ins, stop words and a
person talking over a reply, measured on a kitchen room made of PulseAudio (hearth's speaker
heard by its own microphone) and on a simulated one. ``python -m bench.echo`` runs the listening
bench (:mod:`bench.echo.listening`).
"""
