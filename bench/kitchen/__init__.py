"""A kitchen on the bench: requests heard from across a room, over a kitchen's sounds.

``rooms`` (kitchens as shoebox rooms, pyroomacoustics' impulse responses), ``noises`` (the
kitchen's sounds, synthesized from what each physically is), ``mix`` (conditions by name and the
microphone's signal for each), ``loop`` (``hearth bench --kitchen``: the whole loop per
condition), ``hear`` (the offline hearing bench, per front end: ``python -m bench.kitchen.hear``),
``front_ends`` (what the hearing bench compares), ``picture`` (figures against SNR).
"""
