"""Audio for hearth: capture, voice activity, speech recognition, speech synthesis, playback.

Nothing here imports the rest of hearth; the agent depends on the protocols in
:mod:`audio.protocols` and the composition root picks the implementations.
"""
