"""Micro-benchmarks: one component timed or checked on its own, away from the loop. What Cadence's
live splitter costs per model token and whether that cost stays linear on a unit that does not
end, its sentence ends against the kss gold sets, and how much faster top-token-first grammar
sampling decides.
"""
