"""The static count of hand rules in the deciding code (bench/micro/rule_count.py)."""

from __future__ import annotations

from bench.micro.rule_count import count_module


def test_phrase_lists_regexes_and_their_alternatives_are_counted():
    source = '''
import re
A = ("turn on", "switch on", "power on")
B = ["one", "two"]  # too short to be a list of phrases
C = re.compile(r"^(?:yes|yeah|yep)$")
def f(words):
    return re.search("stop|halt", words) or re.sub(r"x", "", words) or re.match(PATTERN, words)
'''
    counted = count_module(source)
    assert counted["phrase_lists"] == 1 and counted["listed_phrases"] == 3
    assert counted["regexes"] == 3  # a pattern held in a name is not a literal to count
    assert counted["regex_alternatives"] == 3 + 2 + 1
    assert counted["lines"] == len(source.splitlines())
