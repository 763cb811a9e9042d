"""The floor policy (bot/mouth/floor.py): the labelled corpus, each rule on its own, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.mouth import floor
from bot.mouth.floor import (
    ENGAGEMENT_S,
    FOLLOW_UP_WINDOW_S,
    INTERRUPT_MIN_SPEECH_MS,
    REASONS,
    UNKNOWN_SPEAKER,
    FloorMode,
    FloorState,
    Utterance,
    Verdict,
    addressed,
    decide,
    he_finished_speaking,
    heard,
    his_names,
    may_interrupt,
    offer_settled,
    other_name_leading,
    phonetic_key,
)
from tests.mouth.floor_corpus import CATEGORIES, CORPUS, PEOPLE, Item, verdict_for

NAMES = his_names([])
A, B, C = 1, 2, 3
ROOM = frozenset({A, B, C})


def say(speaker: int, text: str, start: float, seconds: float = 1.5) -> Utterance:
    return Utterance(speaker, text, start, start + seconds)


def run(
    state: FloorState, utterance: Utterance, humans: frozenset[int] = ROOM, mode: FloorMode = "addressed"
) -> Verdict:
    now = utterance.ended_at + 0.3
    return decide(utterance, humans, state, names=NAMES, mode=mode, now=now, people=PEOPLE)


# --- the corpus ----------------------------------------------------------------------------------


def test_the_corpus_is_large_and_covers_every_category() -> None:
    assert len(CORPUS) >= 150
    counts = {category: sum(1 for item in CORPUS if item.category == category) for category in CATEGORIES}
    assert all(count >= 10 for count in counts.values()), counts
    assert {item.category for item in CORPUS} == set(CATEGORIES)
    assert all(item.reason is None or item.reason in REASONS for item in CORPUS)
    # enough side talk that "per 10 minutes" is measured, not extrapolated
    assert sum(item.duration_s for item in CORPUS if not item.addressed) >= 600


@pytest.mark.parametrize("item", [i for i in CORPUS if i.known_miss is None], ids=lambda i: i.transcript[:60])
def test_corpus_item(item: Item) -> None:
    verdict = verdict_for(item)
    assert verdict.decision == item.expected, (item.category, verdict.reason)
    assert verdict.reason in REASONS
    if item.reason is not None:
        assert verdict.reason == item.reason
    assert verdict.acknowledge == item.acknowledge


@pytest.mark.parametrize(
    "item", [i for i in CORPUS if i.known_miss is not None], ids=lambda i: i.transcript[:60]
)
def test_known_misses_still_miss(item: Item) -> None:
    """Kept in the corpus so the bench's figures count them; when the policy learns one, this
    fails and the item's label moves back into the ordinary corpus."""
    assert verdict_for(item).decision != item.expected


# --- addressing ----------------------------------------------------------------------------------


def test_the_phonetic_key_folds_mishearings_and_keeps_syllables() -> None:
    key = phonetic_key("Clankie")
    assert key == "klVnkV"
    for heard_as in ("Clanky", "Clankey", "Klanky", "Clinky", "Clunky", "Clankee"):
        assert phonetic_key(heard_as) == key, heard_as
    assert phonetic_key("Cranky") == "krVnkV"
    assert phonetic_key("Planker") == "plVnkV"
    assert phonetic_key("clink") == "klVnk"  # one syllable: never a sound-alike of a two-syllable name
    assert phonetic_key("clanking") == "klVnkVng"


@pytest.mark.parametrize(
    ("text", "how", "soundalike"),
    [
        ("Clankie, go left.", "leading", False),
        ("Hey Clankie what's the score", "after_greeting", False),
        ("What now, Clankie?", "trailing_question", False),
        ("What now, Clankie", "trailing_vocative", False),
        ("Go left, Clanky.", "trailing_vocative", True),
        ("are you stuck clankie", "trailing_question", False),
        ("Who's winning? Honestly, Clankie.", "about_him", False),
        ("Everyone's here, Ann, Bob, Clankie.", "about_him", False),
        ("do you know clankie", "about_him", False),
        ("are you stuck clanky", "soundalike_only", False),
        ("Clankie?", "name_alone", False),
        ("Hey Cranky", "name_alone", True),
        ("Planker, can you go left?", "leading", True),
        ("Clankie's screen froze.", "possessive", False),
        ("Clankies turn now", "possessive", False),
        ("Ask Clankie about it.", "ask_tell", False),
        ("Clankie said no.", "about_him", False),
        ("Do you like Clankie?", "about_him", False),
        ("This UI is clunky.", "soundalike_only", False),
        ("Are you cranky?", "soundalike_only", False),
        ("Clunky, isn't it?", "soundalike_only", False),
        ("Clink clink.", "none", False),
        ("", "none", False),
    ],
)
def test_addressed_says_how_or_why_not(text: str, how: str, soundalike: bool) -> None:
    address = addressed(text, NAMES)
    assert (address.how, address.soundalike) == (how, soundalike)
    assert address.addressed == (
        how in ("leading", "after_greeting", "trailing_question", "trailing_vocative", "name_alone")
    )


def test_aliases_are_names_too_including_several_words() -> None:
    names = his_names(["Clank", "Mister Robot"])
    assert names[0] == "Clankie"
    assert addressed("Clank, go left.", names).how == "leading"
    assert addressed("Hey Mister Robot, what now?", names).how == "after_greeting"
    assert addressed("What now, Mister Robot?", names).how == "trailing_question"
    assert addressed("Mister, what now?", names).how == "none"  # half an alias is not a name
    assert addressed("Clank, go left.", NAMES).addressed is False  # not without the alias
    # short names get no sound-alikes: "Clank" would otherwise catch clink, clunk, plank
    assert addressed("Clink, go left.", names).addressed is False


def test_other_name_leading_by_people_or_by_shape() -> None:
    assert other_name_leading("Bob did you see that?", NAMES, PEOPLE)
    assert other_name_leading("Hey Ann, look.", NAMES, PEOPLE)
    assert other_name_leading("Zed, did you eat?", NAMES)  # a capitalised word + comma + "you"
    assert not other_name_leading("Left, I said left.", NAMES)
    assert not other_name_leading("Yeah, did you see?", NAMES)
    assert not other_name_leading("Clankie, did you see?", NAMES, PEOPLE)


# --- the decision: rules one by one ----------------------------------------------------------------


def test_one_human_answers_every_turn_with_no_name_needed() -> None:
    for text in ("go left", "this UI is clunky", "", "ask Clankie"):
        verdict = run(FloorState(), say(A, text, 10.0), humans=frozenset({A}))
        assert (verdict.decision, verdict.reason) == ("answered", "one_human")
    # the speaker alone counts as one human even when the channel list lags behind
    assert run(FloorState(), say(A, "hi", 10.0), humans=frozenset()).decision == "answered"


def test_open_mode_answers_everyone() -> None:
    verdict = run(FloorState(), say(B, "did you do the homework?", 10.0), mode="open")
    assert (verdict.decision, verdict.reason) == ("answered", "open_floor")


def test_addressed_turn_is_answered_and_gives_the_floor() -> None:
    verdict = run(FloorState(), say(A, "Clankie, go left.", 10.0))
    assert (verdict.decision, verdict.reason, verdict.acknowledge) == ("answered", "addressed_leading", False)
    assert verdict.state.holder == A
    assert verdict.state.engaged_until == pytest.approx(11.8 + ENGAGEMENT_S)
    assert verdict.state.his_audio_ended_at is None


def test_name_alone_is_acknowledged_and_opens_a_follow_up() -> None:
    first = run(FloorState(), say(A, "Clankie?", 10.0, 0.6))
    assert (first.decision, first.reason, first.acknowledge) == ("answered", "name_alone", True)
    state = he_finished_speaking(first.state, 12.0)
    follow = run(state, say(A, "What's the score?", 13.0))
    assert (follow.decision, follow.reason, follow.acknowledge) == ("offered", "holder_follow_up", False)


def _held(by: int = A, his_end: float = 20.0) -> FloorState:
    state = run(FloorState(), say(by, "Clankie, what's the plan?", 10.0)).state
    return he_finished_speaking(state, his_end)


def test_follow_up_window_is_measured_from_his_audio() -> None:
    state = _held(his_end=20.0)
    inside = run(state, say(A, "and then?", 20.0 + FOLLOW_UP_WINDOW_S - 0.01))
    assert inside.decision == "offered"
    late = run(state, say(A, "and then?", 20.0 + FOLLOW_UP_WINDOW_S + 0.01))
    assert (late.decision, late.reason) == ("listened", "follow_up_late")
    assert late.state == state  # a late turn does not take the floor away


def test_holder_talking_over_his_reply_is_offered() -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    assert state.his_audio_ended_at is None  # his reply is due or playing
    assert run(state, say(A, "wait, go back", 12.0)).decision == "offered"


def test_someone_between_blocks_the_offer_but_talk_during_his_audio_does_not() -> None:
    asked = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    during = run(asked, say(B, "ha, nice", 13.0, 1.0)).state  # while he was talking
    state = he_finished_speaking(during, 20.0)
    assert run(state, say(A, "and then?", 21.0)).decision == "offered"
    after = run(state, say(B, "yeah I agree", 20.5, 1.0))
    assert after.decision == "listened" and after.state.someone_else_since
    blocked = run(after.state, say(A, "and then?", 22.0))
    assert (blocked.decision, blocked.reason) == ("listened", "someone_between")


def test_heard_marks_a_turn_between_before_its_transcript_arrives() -> None:
    state = _held(his_end=20.0)
    assert heard(state, B, 19.0) == state  # ended while he was still talking
    assert heard(state, A, 21.0) == state  # the holder is never "someone else"
    assert heard(state, B, 21.0).someone_else_since
    assert heard(FloorState(), B, 21.0) == FloorState()  # nobody holds the floor: nothing to note
    assert run(heard(state, B, 21.0), say(A, "and then?", 22.0)).reason == "someone_between"


def test_another_name_leading_is_not_offered() -> None:
    state = _held()
    verdict = run(state, say(A, "Bob, did you see that?", 21.0))
    assert (verdict.decision, verdict.reason) == ("listened", "other_name_leading")


def test_engagement_lapses_after_a_minute() -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    state = he_finished_speaking(state, 11.0)
    lapse_at = 11.5 + ENGAGEMENT_S  # the address ended at 11.5 and was decided 0.3 s later
    verdict = decide(
        say(A, "and then?", lapse_at), ROOM, state, names=NAMES, mode="addressed", now=lapse_at + 0.5
    )
    assert (verdict.decision, verdict.reason) == ("listened", "floor_lapsed")
    assert verdict.state == FloorState()


def test_an_offered_follow_up_renews_engagement() -> None:
    state = _held(his_end=20.0)
    offered = run(state, say(A, "and then?", 21.0))
    assert offered.state.engaged_until == pytest.approx(22.8 + ENGAGEMENT_S)
    assert offered.state.holder == A and offered.state.his_audio_ended_at is None


def test_someone_else_addressing_him_takes_the_floor() -> None:
    state = _held(by=A)
    verdict = run(state, say(B, "Hey Clankie, my turn!", 21.0))
    assert verdict.decision == "answered" and verdict.state.holder == B
    assert run(he_finished_speaking(verdict.state, 25.0), say(A, "and then?", 26.0)).decision == "listened"


def test_empty_transcript_in_a_group_is_listened() -> None:
    assert run(FloorState(), say(B, "", 10.0)).reason == "no_transcript"
    assert run(_held(), say(A, "  ", 21.0)).reason == "no_transcript"


# --- interrupting him ---------------------------------------------------------------------------


def interrupts(state: FloorState, speaker: int, ms: float, partial: str | None, **kw: object) -> bool:
    return may_interrupt(state, speaker, ms, partial, ROOM, names=NAMES, mode="addressed", **kw)  # type: ignore[arg-type]


def test_only_the_holder_after_300_ms_or_his_name_interrupts() -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    assert not interrupts(state, A, INTERRUPT_MIN_SPEECH_MS - 1, None)
    assert interrupts(state, A, INTERRUPT_MIN_SPEECH_MS, None)
    assert not interrupts(state, B, 5000, None)
    assert not interrupts(state, B, 5000, "did you finish the homework")
    assert not interrupts(state, B, 5000, "ask Clankie later")
    assert not interrupts(state, B, 5000, "this UI is clunky")
    assert interrupts(state, B, 200, "Clankie, stop", complete=True)
    assert interrupts(state, B, 200, "Clankie", complete=True)
    assert not interrupts(FloorState(), A, 5000, "go left", complete=True)  # nobody holds the floor


def _stream(text: str) -> list[str]:
    """The words so far after each delta of a transcript arriving word by word."""
    words = text.split(" ")
    return [" ".join(words[: k + 1]) for k in range(len(words))]


@pytest.mark.parametrize(
    "text",
    [
        "Clankie said we lose.",
        "Clankie, go left, she said.",
        "Clankie, stop, he yelled, and it actually stopped.",
        "Clankie makes such weird moves sometimes. Look at that.",
        "Cranky? Me? Never.",
        "Clankie is winning, I think. Right?",
    ],
)
def test_words_still_arriving_never_cut_him_off_on_talk_about_him(text: str) -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    for words in _stream(text):
        assert not interrupts(state, B, 5000, words, people=PEOPLE), words
    assert not interrupts(state, B, 5000, text, complete=True, people=PEOPLE)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Clankie, stop! Go back.", "Clankie, stop! Go"),
        ("Clankie wait, go left. Now!", "Clankie wait, go left. Now!"),
        ("Clankie? Can you hear me?", "Clankie? Can"),
        ("Hey Clankie. Stop.", "Hey Clankie. Stop."),
    ],
)
def test_words_that_address_him_cut_him_off_once_the_sentence_is_settled(text: str, first: str) -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    cuts = [words for words in _stream(text) if interrupts(state, B, 200, words, people=PEOPLE)]
    assert cuts and cuts[0] == first
    assert interrupts(state, B, 200, "Clankie, stop", complete=True, people=PEOPLE)
    assert not interrupts(state, B, 200, "Clankie", people=PEOPLE)  # his name alone, still arriving


def test_no_words_still_arriving_cut_him_off_where_the_whole_turn_is_not_for_him() -> None:
    """Every corpus turn, streamed word by word over his answer from someone not holding the floor:
    a turn whose completed transcript does not address him never cuts him off on the way."""
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    streamed = 0
    for item in CORPUS:
        if not item.transcript or addressed(item.transcript, NAMES, PEOPLE).addressed:
            continue
        for words in _stream(item.transcript):
            assert not interrupts(state, B, 5000, words, people=PEOPLE), (words, item.transcript)
        streamed += 1
    assert streamed > 250


def test_interrupting_words_know_the_calls_people_like_the_turn_decision() -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    assert interrupts(state, B, 200, "Clancy, what's your move?", complete=True)  # a sound-alike of him
    assert not interrupts(state, B, 200, "Clancy, what's your move?", complete=True, people=["Clancy"])
    assert run(state, say(B, "Clancy, what's your move?", 12.0)).decision == "answered"
    verdict = decide(
        say(B, "Clancy, what's your move?", 12.0),
        ROOM,
        state,
        names=NAMES,
        mode="addressed",
        now=14.0,
        people=["Clancy"],
    )
    assert verdict.decision == "listened"


# --- who holds the floor --------------------------------------------------------------------------


def test_the_unknown_speaker_is_answered_but_never_holds_the_floor() -> None:
    verdict = run(FloorState(), say(UNKNOWN_SPEAKER, "Clankie, what's the plan?", 10.0))
    assert verdict.decision == "answered" and verdict.state == FloorState()
    held = _held(by=A)
    verdict = run(held, say(UNKNOWN_SPEAKER, "Hey Clankie, go up!", 21.0))
    assert verdict.decision == "answered" and verdict.state.holder == A
    # the unknown speaker's follow-up is never offered, nor does its speech cut him off
    after = he_finished_speaking(run(FloorState(), say(UNKNOWN_SPEAKER, "Clankie, hi!", 10.0)).state, 12.0)
    assert run(after, say(UNKNOWN_SPEAKER, "and then?", 13.0)).decision == "listened"
    stuck = FloorState(holder=UNKNOWN_SPEAKER, engaged_until=100.0)
    assert not interrupts(stuck, UNKNOWN_SPEAKER, 5000, None)


def _offered(state: FloorState, start: float) -> tuple[FloorState, Verdict]:
    verdict = run(state, say(A, "and then?", start))
    assert verdict.decision == "offered"
    return state, verdict


def test_a_declined_offer_gives_back_the_engagement_and_two_in_a_row_release_the_floor() -> None:
    held = _held(by=A, his_end=20.0)
    before, offer = _offered(held, 21.0)
    assert offer.state.engaged_until > held.engaged_until  # the offer engages, until it is declined
    state = offer_settled(offer.state, before, offer.state, declined=True)
    assert state.holder == A and state.engaged_until == held.engaged_until and state.declines == 1
    state = he_finished_speaking(state, 23.0)
    before, offer = _offered(state, 24.0)
    state = offer_settled(offer.state, before, offer.state, declined=True)
    assert state == FloorState()  # two declines in a row: nobody holds the floor
    # the next follow-up without his name is only listened to
    assert run(he_finished_speaking(state, 26.0), say(A, "and after that?", 27.0)).decision == "listened"


def test_a_taken_offer_ends_the_run_of_declines() -> None:
    held = _held(by=A, his_end=20.0)
    before, offer = _offered(held, 21.0)
    state = he_finished_speaking(offer_settled(offer.state, before, offer.state, declined=True), 23.0)
    before, offer = _offered(state, 24.0)
    state = offer_settled(offer.state, before, offer.state, declined=False)
    assert state.holder == A and state.declines == 0 and state.engaged_until == offer.state.engaged_until
    state = he_finished_speaking(state, 30.0)
    before, offer = _offered(state, 31.0)
    state = offer_settled(offer.state, before, offer.state, declined=True)
    assert state.holder == A and state.declines == 1  # one decline after a taken offer: still held


def test_a_declined_offer_does_not_undo_what_came_after_it() -> None:
    held = _held(by=A, his_end=20.0)
    before, offer = _offered(held, 21.0)
    readdressed = run(offer.state, say(A, "Clankie, go up!", 22.0)).state  # addressed again meanwhile
    assert offer_settled(readdressed, before, offer.state, declined=True) == readdressed
    taken = run(offer.state, say(B, "Hey Clankie, my turn!", 22.0)).state
    assert offer_settled(taken, before, offer.state, declined=True) == taken


def test_a_lapsed_holder_loses_the_right_to_interrupt_when_now_is_given() -> None:
    state = run(FloorState(), say(A, "Clankie, what's the plan?", 10.0)).state
    assert interrupts(state, A, 500, None, now=state.engaged_until)
    assert not interrupts(state, A, 500, None, now=state.engaged_until + 0.1)


def test_one_human_or_open_floor_interrupts_as_before() -> None:
    assert may_interrupt(FloorState(), A, 50, None, frozenset({A}), names=NAMES, mode="addressed")
    assert may_interrupt(FloorState(), B, 50, None, ROOM, names=NAMES, mode="open")


# --- properties ---------------------------------------------------------------------------------

# everyday words, some close in spelling to his name but not in sound shape (one syllable, or two edits)
_PLAIN_WORDS = (
    "the a you we go left right up down what is it this that so yeah no maybe board tile score game play "
    "robot bot he she they did do can could why how where when okay hey hi yo and but or clunk clank "
    "clink plank cookie monkey bank link think thank I my your tired clanking blanket frankie"
).split()
_CONTENT_WORDS = "the board tile score game robot it this that my your tired".split()
_WEAK = ["clunky", "cranky", "lanky", "slinky", "clinker"]
_PUNCT = st.sampled_from(["", "", "", ",", ".", "?", "!"])


def test_the_plain_vocabulary_holds_no_name_and_the_weak_words_are_sound_alikes() -> None:
    assert all(addressed(word, NAMES).how == "none" for word in _PLAIN_WORDS)
    assert all(addressed(f"this is {word}", NAMES).how == "soundalike_only" for word in _WEAK)


@st.composite
def side_talk(draw: st.DrawFn, words: list[str] = _PLAIN_WORDS) -> str:
    picked = draw(st.lists(st.sampled_from(words), min_size=0, max_size=14))
    return " ".join(w + draw(_PUNCT) for w in picked)


@settings(max_examples=300, deadline=None)
@given(text=side_talk(), speaker=st.sampled_from([A, B, C]))
def test_talk_without_a_name_token_is_never_answered_in_a_group(text: str, speaker: int) -> None:
    verdict = run(FloorState(), say(speaker, text, 10.0))
    assert (verdict.decision, verdict.reason) in {
        ("listened", "not_addressed"),
        ("listened", "no_transcript"),
    }


@settings(max_examples=300, deadline=None)
@given(
    first=st.sampled_from(_CONTENT_WORDS),
    middle=st.lists(st.sampled_from(_PLAIN_WORDS), max_size=6),
    weak=st.sampled_from(_WEAK),
    after=side_talk(),
)
def test_an_everyday_sound_alike_inside_a_sentence_is_never_an_address(
    first: str, middle: list[str], weak: str, after: str
) -> None:
    text = " ".join([first, *middle, weak, after]).strip()
    assert not addressed(text, NAMES).addressed
    assert run(FloorState(), say(B, text, 10.0)).decision == "listened"


@settings(max_examples=200, deadline=None)
@given(
    before=side_talk(),
    after=side_talk(),
    form=st.sampled_from(["Clankie's", "Clankies", "clankie's", "Clankie’s"]),
)
def test_a_possessive_is_never_an_address(before: str, after: str, form: str) -> None:
    text = f"{before} {form} {after}".strip()
    assert addressed(text, NAMES).how != "name_alone"
    if not any(addressed(w.strip(",.?!"), NAMES).addressed for w in (before + " " + after).split()):
        assert not addressed(text, NAMES).addressed


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200), speaker=st.sampled_from([A, B, C]), humans=st.integers(1, 3))
def test_any_text_gets_a_bounded_reason_and_one_human_is_always_answered(
    text: str, speaker: int, humans: int
) -> None:
    room = frozenset([A, B, C][:humans]) | {speaker} if humans > 1 else frozenset({speaker})
    verdict = run(_held(by=A), say(speaker, text, 21.0), humans=room)
    assert verdict.reason in REASONS
    if len(room) == 1:
        assert verdict.decision == "answered"


def _one_edit_away(word: str) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = {word[:i] + word[i + 1 :] for i in range(len(word))}
    out |= {word[:i] + ch + word[i + 1 :] for i in range(len(word)) for ch in letters}
    out |= {word[:i] + ch + word[i:] for i in range(len(word) + 1) for ch in letters}
    return sorted(out)


_NEAR = sorted({w for base in ("clankie", "clanky", "cranky", "planker") for w in _one_edit_away(base)})


@settings(max_examples=600, deadline=None)
@given(
    word=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=10)
    | st.sampled_from(_WEAK)
    | st.sampled_from(_NEAR)
)
def test_the_quick_consonant_test_never_rejects_a_sound_alike(word: str) -> None:
    """_strength skips building a key when too few letters can sound like the name's
    consonants; that shortcut must agree with comparing keys outright."""
    compiled = floor._compile_names(NAMES)
    key = phonetic_key(word)
    outright = any(
        floor._syllables(key) == floor._syllables(name_key) and floor._within_one_edit(key, name_key)
        for name_key in compiled.keys
    )
    assert (floor._strength(word, compiled) is not None) == (outright or word in compiled.single)


_MIXED = [
    *_PLAIN_WORDS,
    "Clankie",
    "Clankie,",
    "Clankie?",
    "Clankie's",
    "hey",
    "Bob,",
    "Cranky?",
    "clunky",
    "Klanky,",
]


@settings(max_examples=200, deadline=None)
@given(
    turns=st.lists(
        st.tuples(
            st.sampled_from([A, B, C]),
            st.lists(st.sampled_from(_MIXED), max_size=8).map(" ".join),
            st.floats(0.0, 30.0),  # silence before the turn
            st.booleans(),  # he spoke after the turn's decision
        ),
        max_size=25,
    )
)
def test_a_conversation_keeps_the_floor_rules(turns: list[tuple[int, str, float, bool]]) -> None:
    """Through any sequence of turns: only the holder is offered a turn, and only within the
    window with nobody between; an answer gives the speaker the floor; listening never hands
    it to anyone else."""
    state, clock = FloorState(), 0.0
    for speaker, text, silence, he_spoke in turns:
        clock += silence
        turn = say(speaker, text, clock)
        clock = turn.ended_at + 0.3
        before = state
        verdict = run(state, turn)
        holder = before.holder if clock <= before.engaged_until else None
        if verdict.decision == "offered":
            assert holder == speaker and not before.someone_else_since
            assert before.his_audio_ended_at is None or turn.started_at - before.his_audio_ended_at <= 8.0
            assert not addressed(text, NAMES).addressed
        if verdict.decision == "answered":
            assert addressed(text, NAMES).addressed and verdict.state.holder == speaker
        if verdict.decision == "listened":
            assert verdict.state.holder in (holder, None)
        state = verdict.state
        if he_spoke and verdict.decision != "listened":
            clock += 2.0
            state = he_finished_speaking(state, clock)


def test_a_person_in_the_call_is_not_a_sound_alike_of_him() -> None:
    assert addressed("Clancy, what's your move?", NAMES).how == "leading"  # misheard, nobody else
    assert addressed("Clancy, what's your move?", NAMES, ["Clancy Jones"]).how == "none"
    assert (
        addressed("Clankie, what's your move?", NAMES, ["Clankie"]).how == "leading"
    )  # his own name stays his
    state = _held()
    verdict = decide(
        say(A, "Clancy, did you see that?", 21.0),
        ROOM,
        state,
        names=NAMES,
        mode="addressed",
        now=22.8,
        people=["Clancy"],
    )
    assert (verdict.decision, verdict.reason) == ("listened", "other_name_leading")
    # a display name that is an everyday word does not turn every "So, …" into someone else's turn
    assert not other_name_leading("So, what now?", NAMES, ["So"])
