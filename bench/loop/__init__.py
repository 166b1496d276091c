"""Benchmarks of the whole loop: recorded or synthesized requests played through hearth's own turn
(hearing, deciding, speaking) with the real models, timed from the end of speech to the first
sound, together with what the figures are made of (the suite runner behind ``hearth bench``, the
metrics and report, the recognizer's hearing of its references, the Wyoming round trip and the
companion page's latency) and the recorded requests they play.
"""
