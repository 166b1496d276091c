"""Cadence: cutting a reply into spoken units, on a whole text and live on a stream, and pacing them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.speaking.cadence import Cadence, CadenceRules, PaceSettings, UnitStream, speech_pauses, split_units, typed_delays
from agent.speaking.cadence.boundaries import Tier, scan

UMBRELLA = (
    "우산은 젖은 채로 접어두면 곰팡이 슬어버리니까 현관에 그냥 펼쳐두지 마. "
    "물기 털고 반쯤 펴서 통풍되는 데 두고, 완전히 마르면 그때 접어. "
    "근데 접이식은 살대 이음새에 물이 고여서 아무리 말려도 녹슬긴 해. "
    "오래 쓸 생각이면 장우산이 답이야."
)


def streamed(text: str, cuts: list[int], rules: CadenceRules = CadenceRules()) -> list[str]:
    """The units a stream gives out when ``text`` arrives cut at ``cuts``."""
    stream = UnitStream(rules)
    units: list[str] = []
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(text))), len(text)]
    for a, b in zip(bounds, bounds[1:]):
        units += stream.feed(text[a:b])
    return units + stream.flush()


# -- the seed's examples ---------------------------------------------------------------------


def test_the_seeds_umbrella_example_comes_out_exactly_as_the_seed_shows_it():
    assert [u.strip() for u in split_units(UMBRELLA)] == [
        "우산은 젖은 채로 접어두면 곰팡이 슬어버리니까",
        "현관에 그냥 펼쳐두지 마.",
        "물기 털고 반쯤 펴서 통풍되는 데 두고, 완전히 마르면 그때 접어.",
        "근데 접이식은 살대 이음새에 물이 고여서 아무리 말려도 녹슬긴 해.",
        "오래 쓸 생각이면 장우산이 답이야.",
    ]


@pytest.mark.parametrize("step", [1, 2, 3, 5, 8])
def test_the_umbrella_example_streamed_token_by_token_gives_the_same_units(step):
    assert streamed(UMBRELLA, list(range(step, len(UMBRELLA), step))) == split_units(UMBRELLA)


def test_a_short_sentence_is_not_cut_at_its_connective_ending():
    # The weak tier stays closed while the sentence fits in 40 characters.
    assert split_units("어제 간 카페에 사람이 없어서 공부하기 좋더라구요 또 갈까 싶어요") == [
        "어제 간 카페에 사람이 없어서 공부하기 좋더라구요 ",
        "또 갈까 싶어요",
    ]


@pytest.mark.parametrize("noun", ["사고", "라면", "화면", "표면", "수면"])
def test_never_cut_after_a_noun_that_looks_like_bare_go_or_myeon(noun):
    text = f"어제 저녁에 동네 앞 큰길에서 정말 크게 {noun} 소식을 듣고 한참 동안 아무 말도 못 하고 서 있었어."
    units = split_units(text)
    assert not any(u.rstrip().endswith(noun) for u in units), units


def test_go_and_myeon_with_a_comma_split_through_the_comma_rule():
    text = "밥을 천천히 다 먹고, 설거지까지 깨끗하게 끝내고 나서 산책하러 나가면 좋겠다."
    assert split_units(text)[0] == "밥을 천천히 다 먹고, "


# -- the sentence tier -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, units",
    [
        ("It costs 3.50 now. Thanks.", ["It costs 3.50 now. ", "Thanks."]),
        ("Ask Dr. Kim. She knows.", ["Ask Dr. Kim. ", "She knows."]),
        ("Use a pan, e.g. cast iron. Then heat it.", ["Use a pan, e.g. cast iron. ", "Then heat it."]),
        ("Add salt, pepper, etc. and stir.", ["Add salt, pepper, etc. and stir."]),
        ("Add salt, pepper, etc. Then stir.", ["Add salt, pepper, etc. ", "Then stir."]),
        ("Meet J. Smith at 3:30 p.m. today.", ["Meet J. Smith at 3:30 p.m. today."]),
        ("1. Preheat the oven. 2. Bake it.", ["1. Preheat the oven. ", "2. Bake it."]),
        ("2024. 5. 1. 에 만나요. 좋아요!", ["2024. 5. 1. 에 만나요. ", "좋아요!"]),
        ("Wait... what? Really!", ["Wait... ", "what? ", "Really!"]),
        ("Done.\n\nNext part", ["Done.\n\n", "Next part"]),
        ("a line\nanother line", ["a line\n", "another line"]),
        ("see example.com.au for more", ["see example.com.au for more"]),
        ("Preheat to 200 °C. Then bake.", ["Preheat to 200 °C. ", "Then bake."]),
        ("Bake at 180°C. Then cool.", ["Bake at 180°C. ", "Then cool."]),
    ],
)
def test_sentence_ends_and_what_is_not_one(text, units):
    assert split_units(text) == units


def test_korean_sentence_endings_without_punctuation_end_a_sentence():
    text = "오늘 저녁은 김치찌개 어때요 두부 넣으면 맛있습니다 ㅎㅎ 밥은 있어요"
    assert split_units(text) == ["오늘 저녁은 김치찌개 어때요 ", "두부 넣으면 맛있습니다 ㅎㅎ ", "밥은 있어요"]


def test_korean_colloquial_reply_is_cut_at_endings_and_connectives():
    text = (
        "아 그거 진짜 쉬워요~ 냄비에 물 붓고 끓으면 면 넣으면 되는데 "
        "스프는 물 끓기 전에 넣어야 국물이 훨씬 진하게 우러나거든 "
        "계란은 마지막에 넣고 불 끄면 끝!"
    )
    units = split_units(text)
    assert units == [
        "아 그거 진짜 쉬워요~ ",
        "냄비에 물 붓고 끓으면 면 넣으면 되는데 ",
        "스프는 물 끓기 전에 넣어야 국물이 훨씬 진하게 우러나거든 ",
        "계란은 마지막에 넣고 불 끄면 끝!",
    ]


def test_laughter_and_emoji_stay_with_their_sentence():
    assert split_units("맛있게 드세요. 😊 또 물어봐요") == ["맛있게 드세요. 😊 ", "또 물어봐요"]
    assert split_units("다 됐어요 ㅋㅋ 이제 먹자") == ["다 됐어요 ㅋㅋ ", "이제 먹자"]


# -- the clause tier -------------------------------------------------------------------------


def test_a_long_english_sentence_opens_the_clause_tier_at_its_last_comma_within_40():
    text = "Preheat the oven, grease the tin, then whisk the eggs with the sugar until pale and fluffy."
    assert split_units(text) == [
        "Preheat the oven, grease the tin, ",
        "then whisk the eggs with the sugar ",
        "until pale and fluffy.",
    ]


def test_no_clause_unit_is_left_too_short_at_the_end_of_a_sentence():
    text = "Whisk the eggs with the sugar and the butter, too. Then bake."
    assert split_units(text) == ["Whisk the eggs with the sugar and the butter, too. ", "Then bake."]


def test_a_long_english_sentence_without_commas_is_cut_before_because():
    text = "Let the dough rest for an hour at room temperature because the gluten needs time to relax."
    assert split_units(text) == [
        "Let the dough rest for an hour at room temperature ",
        "because the gluten needs time to relax.",
    ]


def test_no_unit_starts_after_an_abbreviation_comma():
    text = "Pick a firm white fish for this one, e.g., cod or haddock or pollock, and keep the skin on."
    assert not any(u.startswith("cod") for u in split_units(text))


def test_thousands_and_dates_with_commas_are_not_clause_boundaries():
    text = "The recipe from May 5, 2024 makes about 1,000 small dumplings for the whole street party tonight."
    assert split_units(text) == [text]


# -- the unit cap and switching Cadence off --------------------------------------------------


def test_at_most_five_units_and_the_tail_is_merged():
    text = "One. Two. Three. Four. Five. Six. Seven."
    assert split_units(text) == ["One. ", "Two. ", "Three. ", "Four. ", "Five. Six. Seven."]


def test_cadence_off_gives_the_original_text_as_one_unit():
    assert split_units(UMBRELLA, CadenceRules(enabled=False)) == [UMBRELLA]
    assert streamed(UMBRELLA, list(range(3, len(UMBRELLA), 3)), CadenceRules(enabled=False)) == [UMBRELLA]


def test_the_unit_count_goes_on_across_a_flush():
    stream = UnitStream()
    out = stream.feed("Hang on. ") + stream.flush()
    out += stream.feed("One. Two. Three. Four. Five.") + stream.flush()
    assert out == ["Hang on. ", "One. ", "Two. ", "Three. ", "Four. Five."]


# -- live on the stream ----------------------------------------------------------------------


def test_a_unit_is_given_out_as_soon_as_the_next_word_begins():
    stream = UnitStream()
    assert stream.feed("Sure, the oven is hot.") == []  # "hot.5"? not yet known
    assert stream.feed(" ") == []  # more spaces may follow; they belong to this unit
    assert stream.feed("N") == ["Sure, the oven is hot. "]


def test_a_korean_ending_is_certain_once_the_next_word_begins():
    stream = UnitStream()
    assert stream.feed("다 됐어요") == []
    assert stream.feed(" ") == []
    assert stream.feed("이") == ["다 됐어요 "]


def test_an_open_quote_holds_its_inside_until_it_closes():
    stream = UnitStream()
    assert stream.feed('It is called "Stop. Now. ') == []
    units = stream.feed('Go." Anyway. And') + stream.flush()
    assert units == ['It is called "Stop. Now. Go." ', "Anyway. ", "And"]


# -- properties ------------------------------------------------------------------------------

PIECES = [
    "Preheat", "the", "oven", "because", "until", "although", "so", "but", "and", "it", "be", "un",
    "사고", "라면", "화면", "표면", "수면", "먹고", "가면", "없어서", "좋은데", "했지만", "그러니까", "슬어버리니까",
    "맛있어요", "했습니다", "좋다", "있음", "ㅋㅋ", "ㅎ", "^^", "😊", "👩\u200d🍳", "🇰🇷",
    ".", "..", "…", "!", "?", "?!", ",", ";", ":", "~", "—", "(", ")", "(aside)", '"', "“", "”", "'", "`", "```",
    " ", " ", " ", "  ", "\n", "\n\n", "\t",
    "3.5", "1,000", "3:30", "p.m.", "2024. 5. 1.", "May 5, 2024", "5 kg", "180°C", "e.g.", "Dr.", "U.S.", "etc.",
    "https://example.com/a.b?c=1", "cook@example.com", "`x = 1.5`", "“Eat, Pray, Love”", "1.", "A.",
]  # fmt: skip


def _reply(pieces: list[str]) -> str:
    return "".join(pieces)


replies = st.lists(st.sampled_from(PIECES), max_size=60).map(_reply) | st.text(max_size=120)
deterministic = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@deterministic
@given(replies)
def test_units_join_back_into_the_text_exactly(text):
    assert "".join(split_units(text)) == text


@deterministic
@given(replies, st.integers(2, 8))
def test_never_more_units_than_allowed(text, max_units):
    assert len(split_units(text, CadenceRules(max_units=max_units))) <= max_units


@deterministic
@given(replies, st.data())
def test_streamed_units_equal_the_whole_text_units_however_the_text_is_cut(text, data):
    cuts = data.draw(st.lists(st.integers(0, max(0, len(text))), max_size=max(1, len(text))))
    assert streamed(text, cuts) == split_units(text)


PROTECTED = [
    "https://example.com/a.b?c=1", "cook@example.com", "3.5", "1,000.25", "3:30", "2024. 5. 1.", "May 5, 2024",
    "5 kg", "180°C", "e.g.", "Dr.", "U.S.", "😊", "👩\u200d🍳", "“Eat. Pray, Love”", "`a. b, c`", "```x. y\nz. w```",
]  # fmt: skip
FILLER = ["Stir it.", "Wait,", "because", "then", "맛있어요", "없어서", "좋아요.", "ok!", "\n", "and", "so"]


@deterministic
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 100)), min_size=1, max_size=30))
def test_nothing_is_cut_inside_a_protected_span(parts):
    text, spans = "", []
    for protected, n in parts:
        piece = PROTECTED[n % len(PROTECTED)] if protected else FILLER[n % len(FILLER)]
        if protected:
            spans.append((len(text), len(text) + len(piece)))
        text += piece + " "
    cuts, at = [], 0
    for unit in split_units(text, CadenceRules(weak_open_chars=12, max_units=50)):
        at += len(unit)
        cuts.append(at)
    assert not [(c, s) for c in cuts for s in spans if s[0] < c < s[1]]


@deterministic
@given(st.lists(st.sampled_from(["사고", "라면", "화면", "표면", "수면", "먹고", "가면", "정말", "맛있는", "큰"]), max_size=40))
def test_never_cut_after_a_bare_go_or_myeon_word(words):
    text = " ".join(words) + " 끝."
    units = split_units(text, CadenceRules(weak_open_chars=10, max_units=50))
    assert not any(u.rstrip()[-1:] in ("고", "면") for u in units[:-1]), units


@deterministic
@given(
    st.lists(st.text(min_size=0, max_size=80), min_size=0, max_size=8),
    st.floats(0.2, 5), st.floats(0.2, 5), st.floats(0.2, 5), st.floats(0.01, 3),
)  # fmt: skip
def test_pauses_start_at_zero_and_stay_within_the_budget(units, closeness, busy, mood, max_pause):
    pace = PaceSettings(closeness=closeness, busy=busy, mood=mood, max_pause_s=max_pause, min_pause_s=min(0.12, max_pause))
    pauses, delays = speech_pauses(units, pace), typed_delays(units, pace)
    assert len(pauses) == len(units) == len(delays)
    if units:
        assert pauses[0] == 0 and delays[0] == 0
    assert sum(delays) <= pace.budget_s + 1e-9
    assert sum(pauses) <= pace.budget_s + 1e-9
    assert all(0 <= p <= pace.max_pause_s + 1e-9 for p in pauses)


def test_pause_mapping_in_numbers():
    # 20 and 40 spoken characters: typed in 2.2 s and 4.4 s, a tenth of that as silence.
    assert speech_pauses(["Hi.", "x" * 20]) == pytest.approx([0.0, 20 / 9 * 0.1])
    assert speech_pauses(["Hi.", "x" * 40]) == pytest.approx([0.0, 40 / 9 * 0.1])
    assert speech_pauses(["Hi.", "x" * 200]) == pytest.approx([0.0, 0.6])  # capped
    assert speech_pauses(["Hi.", "ok"]) == pytest.approx([0.0, 0.12])  # the floor
    # The weights multiply: a close, relaxed household gets quicker pauses.
    quick = speech_pauses(["Hi.", "x" * 40], PaceSettings(closeness=0.5))
    assert quick[1] == pytest.approx(40 / 9 * 0.5 * 0.1)


def test_a_long_reply_shares_the_budget():
    units = ["x" * 40] * 5  # 4 × 4.44 s of typing: over the 6 s budget, scaled to 1.5 s each
    assert typed_delays(units) == pytest.approx([0, 1.5, 1.5, 1.5, 1.5])
    assert speech_pauses(units) == pytest.approx([0, 0.15, 0.15, 0.15, 0.15])


def test_scan_tiers():
    found = scan("Yes, sure. 네, 좋아요\n끝", 0, final=True).boundaries
    assert [(b.tier, b.cut) for b in found] == [(Tier.CLAUSE, 5), (Tier.SENTENCE, 11), (Tier.CLAUSE, 14), (Tier.PARAGRAPH, 18)]


def test_settle_gives_out_held_text_only_when_it_ends_a_sentence():
    rules = CadenceRules(language="en")
    for held in ["Okay, one at", "Ask Dr.", "Okay,", "Ask J."]:
        cadence = Cadence(rules)
        assert cadence.feed(held) == []
        assert cadence.settle() == [] and cadence.held == held  # kept for what comes next
    cadence = Cadence(rules)
    assert cadence.feed("Okay, one at a time.") == []  # the sentence end waits for the next word
    assert cadence.settle() == ["Okay, one at a time."]
    assert cadence.held == ""
    # The units are those of the whole reply when what follows begins a new sentence (the space
    # between goes with the unit after, not the one before).
    rest = " Then roast the potatoes for forty minutes, turning them once and salting them well."
    units = ["Okay, one at a time.", *cadence.feed(rest), *cadence.flush()]
    assert "".join(units) == "Okay, one at a time." + rest
    assert [u.strip() for u in units] == [u.strip() for u in split_units("Okay, one at a time." + rest, rules)]


def test_settle_leaves_the_tail_whole_and_a_disabled_cadence_alone():
    rules = CadenceRules(language="en", max_units=2)
    cadence = Cadence(rules)
    assert cadence.feed("One. ") == []
    assert cadence.feed("Two.") == ["One. "]
    assert cadence.settle() == []  # after max_units - 1 cuts the rest is one unit
    off = Cadence(CadenceRules(enabled=False))
    off.feed("All of it.")
    assert off.settle() == []
