"""Drills: hearth put through trouble on purpose and checked on how it came through. Faults
performed on the loop and on the audio server, processes killed at random moments, hundreds of
turns in a soak, the time from start to ready, and the private PulseAudio server they run on.
"""
