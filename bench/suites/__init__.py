"""Scenario suites and their scoring: the YAML suites of spoken requests with the tool calls and
answers they should lead to, Home Assistant's intent sentences as suites, the kitchens planted for
the injection suites, the synthesized audio of each scenario, and the tool-accuracy bench that
plays them on text through the planner.
"""
