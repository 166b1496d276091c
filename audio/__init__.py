"""Audio for hearth: capture, voice activity, speech recognition, speech synthesis, playback.

Nothing here imports the rest of hearth; the agent depends on the protocols in
:mod:`audio.protocols` and the composition root picks the implementations.
"""

import os

# onnxruntime (1.29 and later; Silero, Smart Turn and piper run on it) sends usage telemetry to
# Microsoft unless this is set before it starts, and every use of it goes through this package:
# hearth sends nothing anywhere, whichever program (hearth, a bench, a test) loads the models.
# An explicit setting in the environment is kept.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
