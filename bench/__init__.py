"""hearth's benchmarks, by kind: ``loop`` (the whole turn with the real models), ``suites``
(scenario suites and their scoring), ``drills`` (faults, kills, soaks), ``echo`` (listening over
hearth's own voice), ``kitchen`` (requests heard across a simulated kitchen, over its sounds) and
``micro`` (one component on its own).  ``provenance`` records what wrote every result (module,
arguments, commit, uncommitted changes, machine) under its ``written_by``; ``data`` holds the evaluation data the benches read and
``results`` the figures kept.
"""
