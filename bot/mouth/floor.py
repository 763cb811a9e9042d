"""The floor: which committed turns he answers when he shares a call with a room
(docs/architecture.md §12).

The room is heard; the floor is who he answers. Everything said stays in the conversation as
context, and this module decides, per committed turn, whether he speaks. It is pure: no clock,
no I/O, no logging, and nothing it returns holds a word of the transcript (a reason is a code
from :data:`REASONS`), so a verdict may be written to the receipt trail as it is.

The decision (:func:`decide`)
-----------------------------
* ``mode == "open"`` or at most one human in the channel: every turn is ``answered``
  (reason ``open_floor`` / ``one_human``), with no added wait beyond the transcript.
* Addressed (see below): ``answered``; that speaker now holds the floor and his engagement
  runs for :data:`ENGAGEMENT_S` from now. The name alone ("Clankie?") is answered with
  ``acknowledge=True``: a short acknowledgement, and the floor for that speaker. The unknown
  speaker (:data:`UNKNOWN_SPEAKER`: no human was loud in the turn) is answered but never holds
  the floor.
* The holder speaks again, not addressing him: ``offered`` (reason ``holder_follow_up``) when
  the turn starts within :data:`FOLLOW_UP_WINDOW_S` of the end of his last audio, nobody else
  spoke since that audio ended, and no other name leads ("Bob, did you…"). The session offers
  the turn with a ``stay_silent`` tool; a decline is recorded by the session as ``declined``
  with reason ``model_declined``. When the offer's response ends the caller tells
  :func:`offer_settled`: a declined offer gives back the engagement it gave, the
  :data:`MAX_DECLINES`-th decline in a row releases the floor, a taken offer ends the run.
* Otherwise ``listened``, with a reason saying why (see :data:`REASONS`).
* Engagement lapses :data:`ENGAGEMENT_S` after the last turn that was addressed or offered to
  him: the holder is then nobody (reason ``floor_lapsed`` on the old holder's next turn).

While he speaks (:func:`may_interrupt`) only the holder, after :data:`INTERRUPT_MIN_SPEECH_MS`
of speech, or someone addressing him by name interrupts him; with one human or an open floor
any speech does, as before. Words still arriving count only as far as they are settled
(:func:`words_address_him`): his name in the first delta of "Clankie said we lose." or of
"Clankie, go left, she said" is no address yet.

How addressing is matched (:func:`addressed`)
---------------------------------------------
The transcript is split into words and punctuation; a comma, semicolon, colon, dash or "…"
after a word is a *break*, and ".", "!" and "?" end a sentence. A word *names him* in one of
three strengths:

1. **exact**: the word (or, for a multi-word alias, the words) equals one of ``names``,
   ignoring case;
2. **sound-alike**: not exact, but its *phonetic key* is within one edit of a name's key and
   has the same number of syllables (vowel groups). The key is built for how speech
   recognisers mishear a name, not for spelling: ``ph``→f, ``ck``/``c``/``q``→k (``c`` before
   e/i/y → s), ``x``→ks, ``z``→s; a diminutive or unstressed ending (-ie, -y, -ey, -ee, -i, -ea,
   -er, -a, -ah) becomes one vowel; every vowel group becomes one vowel symbol; doubled
   letters collapse. So "Clankie", "Clanky", "Clankey", "Klanky", "Clinky", "Clunky" all key
   ``klVnkV``; "Cranky" (krVnkV) and "Planker" (plVnkV) are one edit away; "clank", "clink"
   and "clunk" (klVnk) have one syllable, and "clanking" (klVnkVng) is two edits away: never.
   A name of one syllable, or with a key shorter than 5 symbols, gets no sound-alikes: with
   its vowel folded away too many ordinary words share its key ("Clank": clink, clunk).
3. a sound-alike that is also an ordinary English word (:data:`COMMON_SOUNDALIKES`: "clunky",
   "cranky", "slinky"…) is *weak*: it counts only in the strictly vocative shapes below.

A naming word counts as addressing him only in these positions, checked per sentence:

* **leading**: the first word of a sentence. Followed by a break or the end ("Clankie, …",
  "Clankie.") it is a vocative. Followed directly by another word, it is read as a sentence
  *about* him (``about_him``) when that word is a third-person verb or connective ("Clankie
  said…", "Clankie makes…", "Clankie and I…") or an auxiliary not followed by a subject
  pronoun ("Clankie is winning" vs. "Clankie is it my turn"); otherwise (an imperative, a
  question word) it addresses him. A weak sound-alike must be followed by a break and then
  words that speak to him (an auxiliary + pronoun, "you", a question word, a common
  imperative: "Cranky, are you there?", not "Clunky, isn't it?"), or directly by "you", a
  question word or "please"; "Cranky? You there?" counts, "Clunky? Yeah, a bit." does not.
  A vocative followed after a break by a third person's report ("Clankie, go left, she said")
  is a quote, not a call.
* **after a greeting**: the same, after any run of greetings and fillers ("hey", "hi",
  "hello", "yo", "ok", "okay", "thanks", "good morning", "excuse me", "um", "so", "listen"…).
  After a true salutation ("hey", "hi", "hello", "yo", "oi", "hiya") even a weak sound-alike
  counts ("Hey Cranky").
* **a clause that opens with him**: after a break inside a sentence, an exact or sound-alike
  name followed by "?"/"!", or by words that speak to him ("Hold on, Clankie, say that
  again"; not "We saw Bob, Clankie, and Ann").
* **trailing question**: the last word of a sentence ending in "?". After a break
  ("…, Clankie?") it counts at any strength. Without one, an exact or sound-alike name counts
  unless the word before it takes an object or makes him the subject ("ask", "about", "like",
  "know", "where's", "is it"…: "do you like Clankie?", "where's Clankie?" are about him); a weak
  sound-alike never counts without the break ("are you cranky?"). A second-person question the
  transcriber left without its "?" (it opens with an auxiliary or a question word: "are you
  stuck clankie") counts the same way for his exact name.
* **trailing vocative**: the last word of a sentence not ending in "?", after a break, exact or
  sound-alike, when the words before it speak to someone (a question opening, an imperative,
  "you": "what's the score, Clankie", "go left, Clankie.") and are more than one word since the
  last break ("Ann, Bob, Clankie." is a list; "Who's winning? Honestly, Clankie." an answer).
* **name alone**: nothing but salutations, "ok", "thanks"/"thank you", hesitations ("um",
  "oh", "so") and naming words ("Clankie?", "Hey Clankie!", "Thank you Clankie"); a weak
  sound-alike alone needs a "?" or a salutation ("Cranky?").

Never addressed: a possessive ("Clankie's screen", "Clankies turn"), a name right after
"ask"/"tell" ("ask Clankie"), talk about him (his exact name anywhere else), or a sound-alike
outside those positions ("this UI is clunky", "clink clink"). Positions are what keep the
loose key safe: "clunky" keys exactly like "Clankie", and only its place in the sentence
tells them apart.

"Bob, …" leading (:func:`other_name_leading`) is a word among ``people`` (the call's display
names), or without them a capitalised word + comma that is no interjection, in a sentence that
says "you".

Timing: regexes are compiled at import, the name set once per set of names, each word's naming
once (LRU-cached); before a word's key is built, a quick count of the letters that can sound like
the name's consonants rules most words out. bench/floor.py: ~0.03 ms a turn, under 1 ms for a
60 s monologue with every cache cleared; the target is 2 ms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

FloorMode = Literal["addressed", "open"]
Decision = Literal["answered", "offered", "listened"]

HIS_NAME = "Clankie"
FOLLOW_UP_WINDOW_S = 8.0  # the holder's follow-up is offered within this of the end of his audio
ENGAGEMENT_S = 60.0  # the holder's engagement lapses after this without a turn addressed to him
INTERRUPT_MIN_SPEECH_MS = 300.0  # the holder interrupts him after this much speech
MAX_DECLINES = 2  # this many offers declined in a row release the floor
UNKNOWN_SPEAKER = 0  # a turn nobody's audio was loud in (Discord ids are never 0): never the holder

REASONS: frozenset[str] = frozenset(
    {
        # answered
        "one_human",
        "open_floor",
        "addressed_leading",
        "addressed_after_greeting",
        "addressed_trailing_question",
        "addressed_trailing_vocative",
        "name_alone",
        # offered
        "holder_follow_up",
        # declined (recorded by the session when the model calls stay_silent on an offer)
        "model_declined",
        # listened: the holder's turn that is not offered
        "other_name_leading",
        "someone_between",
        "follow_up_late",
        "floor_lapsed",
        # listened: anybody's turn that does not address him
        "possessive",
        "ask_tell",
        "about_him",
        "soundalike_only",
        "not_addressed",
        "no_transcript",
    }
)

AddressHow = Literal[
    "leading",
    "after_greeting",
    "trailing_question",
    "trailing_vocative",
    "name_alone",
    "possessive",
    "ask_tell",
    "about_him",
    "soundalike_only",
    "none",
]
ADDRESSING: frozenset[str] = frozenset(
    {"leading", "after_greeting", "trailing_question", "trailing_vocative", "name_alone"}
)


@dataclass(frozen=True, slots=True)
class Address:
    """How a transcript addresses him (``how`` in :data:`ADDRESSING`), or why it does not."""

    how: AddressHow
    soundalike: bool = False  # the deciding name word was a sound-alike, not one of the names

    @property
    def addressed(self) -> bool:
        return self.how in ADDRESSING


@dataclass(frozen=True, slots=True)
class Utterance:
    speaker_id: int
    transcript: str
    started_at: float  # monotonic seconds: the speech span of the committed turn
    ended_at: float


@dataclass(frozen=True, slots=True)
class FloorState:
    holder: int | None = None  # the human he is engaged with, if any
    engaged_until: float = 0.0  # monotonic seconds; after this the holder is nobody
    his_audio_ended_at: float | None = None  # end of his last audio; None while a reply is due/playing
    someone_else_since: bool = False  # another human spoke since his audio ended
    declines: int = 0  # the holder's offers he declined in a row


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    reason: str  # one of REASONS
    acknowledge: bool  # the name alone: answer with a short acknowledgement
    state: FloorState


# --- words -----------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*['’]?|\d+|[.!?…]+|[,;:—–]|(?<=\s)-+(?=\s)")


@dataclass(frozen=True, slots=True)
class _Word:
    lower: str  # lower case, ’ as '
    capitalised: bool
    brk: str  # punctuation right after: "" none, "," a break, "." "!" "?" a sentence end


def _break_of(token: str) -> str:
    if "?" in token:
        return "?"
    if "!" in token:
        return "!"
    if token == ".":
        return "."
    return ","  # a comma, dash, colon, "..." or "…": a pause, not a sentence end


def _words(text: str) -> list[_Word]:
    lowers: list[str] = []
    caps: list[bool] = []
    breaks: list[str] = []
    for token in _TOKEN.findall(text):
        first = token[0]
        if first.isalnum():
            lowers.append(token.replace("’", "'").lower())
            caps.append(first.isupper())
            breaks.append("")
        elif lowers and (not breaks[-1] or (breaks[-1] == "," and first in ".!?")):
            breaks[-1] = _break_of(token)  # "Clankie, ?": the sentence end wins over the pause
    return [_Word(lower, cap, brk) for lower, cap, brk in zip(lowers, caps, breaks, strict=True)]


def _sentences(words: list[_Word]) -> list[list[_Word]]:
    sentences: list[list[_Word]] = []
    current: list[_Word] = []
    for word in words:
        current.append(word)
        if word.brk in (".", "!", "?"):
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


# --- the phonetic key ------------------------------------------------------------------------

_ENDING = re.compile(r"(?:ie|ey|ee|ea|ah|er|y|i|a)$")


_NOT_LETTER = re.compile(r"[^a-z]+")
_SOFT_C = re.compile(r"c(?=[eiy])")
_VOWEL_RUN = re.compile(r"[aeiouy]+")
_DOUBLED = re.compile(r"([^V])\1+")
_SINGLE_SOUNDS = str.maketrans({"q": "k", "z": "s", "x": "ks"})


@lru_cache(maxsize=8192)
def phonetic_key(word: str) -> str:
    """A key for how a word sounds to a speech recogniser ("Clankie" → ``klVnkV``)."""
    w = _NOT_LETTER.sub("", word.lower())
    if not w:
        return ""
    w = w.replace("ph", "f").replace("ck", "k").translate(_SINGLE_SOUNDS)
    w = _SOFT_C.sub("s", w).replace("c", "k")
    ending = _ENDING.search(w)
    if ending is not None and ending.start() > 0:
        w = w[: ending.start()] + "a"
    head = "y" if w[0] == "y" else ""  # a leading y is a consonant
    return _DOUBLED.sub(r"\1", head + _VOWEL_RUN.sub("V", w[len(head) :]))


def _syllables(key: str) -> int:
    return key.count("V")


def _within_one_edit(a: str, b: str) -> bool:
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if la == lb:
        return a[i + 1 :] == b[i + 1 :]
    return a[i:] == b[i + 1 :]


# Ordinary English words that sound like him: they count only in strictly vocative shapes.
COMMON_SOUNDALIKES: frozenset[str] = frozenset(
    """
    clunky cranky clinker clinkers blinky slinky kinky lanky hanky planky blanky blankie plinky
    clanger clinger clunker cranker crinkly clingy clicky clacky clerky plonker plonky banker canker
    tanker anchor flanker flunky flunkey funky chunky cheeky cookie junkie junky monkey donkey honky
    hunky spunky stinky pinky winky dinky inky
    """.split()
)

Strength = Literal["exact", "soundalike", "weak"]


@dataclass(frozen=True, slots=True, eq=False)  # one instance per name set (cached): hashed by identity
class _Names:
    single: frozenset[str]
    multi: tuple[tuple[str, ...], ...]  # multi-word aliases, longest first
    keys: tuple[str, ...]  # phonetic keys of single-word names long enough for sound-alikes
    # a quick necessary test before a word's key is built: the word keeps at least
    # ``consonants_needed`` letters that can sound like a consonant of some name's key
    # (one edit changes at most one of them; "ck", doubled letters and x only count more)
    keep_consonants: dict[int, None]
    consonants_needed: int


# the letters that can become each key consonant (phonetic_key's folds)
_SOURCES = {"k": "kcqx", "s": "szcx", "f": "fp"}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@lru_cache(maxsize=64)
def _compile_names(names: tuple[str, ...]) -> _Names:
    single: set[str] = set()
    multi: set[tuple[str, ...]] = set()
    keys: set[str] = set()
    for name in names:
        parts = tuple(w.lower for w in _words(name))
        if not parts:
            continue
        if len(parts) == 1:
            single.add(parts[0])
            key = phonetic_key(parts[0])
            if len(key) >= 5 and _syllables(key) >= 2:
                keys.add(key)
        else:
            multi.add(parts)
    sources = {
        letter for key in keys for symbol in key if symbol != "V" for letter in _SOURCES.get(symbol, symbol)
    }
    needed = min((sum(1 for symbol in key if symbol != "V") - 1 for key in keys), default=0)
    delete = {ord(letter): None for letter in _LETTERS if letter not in sources}
    return _Names(
        frozenset(single), tuple(sorted(multi, key=len, reverse=True)), tuple(sorted(keys)), delete, needed
    )


def _strength(word: str, names: _Names) -> Strength | None:
    if word in names.single:
        return "exact"
    if not names.keys or len(word) < 4:
        return None
    if len(word.translate(names.keep_consonants)) < names.consonants_needed:
        return None
    key = phonetic_key(word)
    syllables = _syllables(key)
    for name_key in names.keys:
        if syllables == _syllables(name_key) and _within_one_edit(key, name_key):
            return "weak" if word in COMMON_SOUNDALIKES else "soundalike"
    return None


Naming = Literal["exact", "soundalike", "weak", "possessive"]


@lru_cache(maxsize=16384)
def _naming(word: str, names: _Names) -> Naming | None:
    """How one lower-case word names him: a strength, a possessive of a name ("clankie's",
    "clankies'", or "clankies" with the apostrophe the transcriber dropped), or not at all."""
    for suffix in ("'s", "s'", "'", "s"):
        if word.endswith(suffix) and _strength(word[: -len(suffix)], names) is not None:
            return "possessive"
    return _strength(word, names)


def clear_caches() -> None:
    """Forget every word seen (bench/floor.py times decisions on words never seen before)."""
    phonetic_key.cache_clear()
    _naming.cache_clear()


# --- grammar word lists ------------------------------------------------------------------------

SALUTATIONS: frozenset[str] = frozenset({"hey", "hi", "hello", "yo", "oi", "hiya", "heya", "howdy", "ahoy"})
GREETINGS: frozenset[str] = SALUTATIONS | frozenset(
    """
    ok okay thanks thank cheers morning afternoon evening night good sup alright allright excuse
    pardon there
    """.split()
)
FILLERS: frozenset[str] = frozenset(
    """
    um uh uhm erm er so oh ah and but well right now mm hmm you me listen look wait sorry please
    dude bro man buddy
    """.split()
)
# what may stand beside his name in "the name alone" ("Hey Clankie!", "Um, Clankie?", "Thank you Clankie")
_ALONE_WITH = SALUTATIONS | frozenset(
    "ok okay um uh uhm erm er oh ah so well hmm mm thanks thank good morning afternoon evening night".split()
)
_AUXILIARIES = frozenset(
    """
    is was are were can could will would should did do does have has
    """.split()
)
_SUBJECTS = frozenset({"you", "we", "i", "it", "that", "this", "there", "they", "he", "she", "anyone"})
_QUESTION_WORDS = frozenset(
    {"what", "what's", "whats", "how", "how's", "where", "where's", "why", "when", "who", "who's", "which"}
)
# Words after his name that speak to him (a question, "you", a common imperative).
_VOCATIVE_FOLLOW = _AUXILIARIES | frozenset(
    """
    you your you're please let's tell look help go stop wait listen check show say try hold press
    pick give any ready are do
    """.split()
)
_ABOUT_HIM_NEXT = frozenset(
    """
    said says thinks thought told wants wanted went keeps kept just always never really also still
    already totally probably literally actually doesn't didn't isn't wasn't can't won't couldn't
    wouldn't hasn't hadn't got had made knew saw took lost won ran and or to the of for with from
    here there again too is was he's seems sounds might may must gonna wanna being been
    vs versus v than
    """.split()
)
_NOT_THIRD_PERSON_S = frozenset({"is", "this", "us", "yes", "plus", "thanks", "please", "as", "its", "has"})
_OBJECT_TAKERS = frozenset(
    """
    ask asked asking tell told telling like love hate about with to for at from of is was see saw
    hear heard met meet call called trust use using beat and or the than watch watching by on
    against ping pinged let mean blame named be are were am not know knew believe remember miss
    want need prefer follow pick picked choose chose
    """.split()
)
_ASK_TELL = frozenset({"ask", "asked", "asking", "tell", "told", "telling"})
# Words that open a sentence with a comma and are not a person's name ("Yeah, did you…").
_NOT_A_NAME = (
    GREETINGS
    | FILLERS
    | frozenset(
        """
    yes yeah yep yup no nope nah wait look listen man dude guys folks everyone everybody anyway
    anyways actually honestly seriously sure fine cool nice great please sorry see then also like
    basically lol wow damn dang whoa oops huh really true totally exactly jeez god geez ugh aw aww
    hm first second plus besides however otherwise meanwhile personally obviously clearly maybe
    perhaps sadly luckily yesterday today tonight tomorrow bro mate buddy friends team y'all ya'll left right up down
    ha haha hahaha i well there here what why how who when where this that it we they he she
    """.split()
    )
)


# --- addressing --------------------------------------------------------------------------------


def _merge_aliases(words: list[_Word], names: _Names) -> list[_Word]:
    if not names.multi:
        return words
    out: list[_Word] = []
    i = 0
    while i < len(words):
        for alias in names.multi:
            n = len(alias)
            span = words[i : i + n]
            if len(span) == n and tuple(w.lower for w in span) == alias and all(not w.brk for w in span[:-1]):
                out.append(_Word(_alias_token(alias), span[0].capitalised, span[-1].brk))
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


def _alias_token(alias: tuple[str, ...]) -> str:
    """The single token a multi-word alias is merged into (exact by construction)."""
    return " ".join(alias)


def _name_strength(word: _Word, names: _Names) -> Strength | None:
    if " " in word.lower:
        return "exact"  # a merged multi-word alias
    naming = _naming(word.lower, names)
    return None if naming == "possessive" else naming  # a possessive never names him


def _leading_verdict(
    sentence: list[_Word], i: int, strength: Strength, salutation: bool, following: _Word | None = None
) -> bool | None:
    """Whether the naming word at ``sentence[i]`` (first after greetings) addresses him:
    True addressed, False about him, None not a vocative shape for this strength."""
    word = sentence[i]
    nxt = sentence[i + 1] if i + 1 < len(sentence) else None
    if word.brk or nxt is None:
        if strength != "weak" or salutation:
            return True
        # a weak sound-alike with a break: only when what follows speaks to him
        if (
            word.brk == ","
            and nxt is not None
            and (nxt.lower in _QUESTION_WORDS or nxt.lower in _VOCATIVE_FOLLOW)
        ):
            return True
        # "Cranky? You there?" speaks to him; "Clunky? Yeah, a bit." does not
        if word.brk == "?" and following is not None:
            fl = following.lower
            return True if (fl in _QUESTION_WORDS or fl in _VOCATIVE_FOLLOW or fl in SALUTATIONS) else None
        return None
    if strength == "weak" and salutation:
        strength = "soundalike"
    nl = nxt.lower
    after = sentence[i + 2].lower if i + 2 < len(sentence) else None
    if nl in _AUXILIARIES:
        if after in _SUBJECTS:
            return True
        return False if strength != "weak" else None
    if strength == "weak":
        return True if (nl in _QUESTION_WORDS or nl in ("you", "your", "please")) else None
    if nl in _QUESTION_WORDS or nl in _VOCATIVE_FOLLOW:
        return True
    if strength == "soundalike":
        return None  # "Clanky old radiators…": a sound-alike with no break needs words that speak to him
    if nl in _ABOUT_HIM_NEXT or nl.endswith("'s"):
        return False
    if len(nl) > 3 and nl.endswith("ed"):
        return False
    if len(nl) > 3 and nl.endswith("s") and not nl.endswith("ss") and nl not in _NOT_THIRD_PERSON_S:
        return False
    return True


_QUESTION_OPENERS = (
    _QUESTION_WORDS
    | _AUXILIARIES
    | frozenset(
        """
    isn't wasn't aren't weren't can't couldn't won't wouldn't shouldn't didn't don't doesn't
    haven't hasn't
    """.split()
    )
)
_IMPERATIVES = frozenset(
    """
    go stop wait listen check show say try hold press pick give tell help look let's move turn
    keep come put take use do don't
    """.split()
)


def _speaks_to_him(sentence: list[_Word], i: int, last: int) -> bool:
    """Whether the words before a sentence's last word speak to someone: a question opening
    ("what's the score, Clankie"), an imperative ("go left, Clankie") or "you" among them
    ("I think you should go up, Clankie"). Not a bare answer ("Honestly, Clankie.", "I'd say,
    Clankie.")."""
    opener = sentence[i].lower
    if opener in _QUESTION_OPENERS or opener in _IMPERATIVES or opener == "any":
        return True
    return any(sentence[k].lower in _SECOND_PERSON for k in range(i, last))


def _clause_before(sentence: list[_Word], last: int) -> int:
    """How many words the clause before the sentence's last word holds (back to a break)."""
    count = 0
    k = last - 1
    while k >= 0:
        count += 1
        if k > 0 and sentence[k - 1].brk:
            break
        k -= 1
    return count


def _takes_him_as_object(sentence: list[_Word], k: int) -> bool:
    """Whether the words before a trailing name make it the question's object or subject
    ("do you like Clankie?", "where's Clankie?", "is that Clankie?") rather than a vocative."""
    before = sentence[k - 1].lower
    if before in _OBJECT_TAKERS or before.endswith("'s"):
        return True
    if before in ("it", "that", "this") and k >= 2:
        return sentence[k - 2].lower in ("is", "was", "isn't", "wasn't")
    return False


_REPORTING_SUBJECTS = frozenset({"he", "she", "they", "that's", "thats"})
_REPORTING_VERBS = frozenset({"said", "says", "told", "tells", "goes", "went", "yelled", "asked", "what"})


def _reported_tail(sentence: list[_Word], start: int) -> bool:
    """Whether a clause after a break reports the words before it as someone else's speech
    ("…, she said", "…, that's what he told it"). "I said" is not one: people repeat
    themselves to him ("Left, I said left")."""
    for j in range(start + 1, len(sentence) - 1):
        if sentence[j - 1].brk == "," and sentence[j].lower in _REPORTING_SUBJECTS:
            if sentence[j + 1].lower in _REPORTING_VERBS:
                return True
    return False


def _clause_vocative(sentence: list[_Word], k: int) -> bool:
    word = sentence[k]
    nxt = sentence[k + 1] if k + 1 < len(sentence) else None
    if word.brk in ("?", "!"):
        return True
    if nxt is None:
        return False
    speaks_to_him = nxt.lower in _QUESTION_WORDS or nxt.lower in _VOCATIVE_FOLLOW
    if word.brk == ",":
        after = sentence[k + 2].lower if k + 2 < len(sentence) else None
        return speaks_to_him and (nxt.lower not in _AUXILIARIES or after in _SUBJECTS)
    return speaks_to_him and _leading_verdict(sentence, k, "exact", False) is True


def addressed(transcript: str, names: Sequence[str], people: Sequence[str] = ()) -> Address:
    """How ``transcript`` addresses him by one of ``names`` (or a sound-alike), or why not.

    ``people``: the other humans' display names; a word that is one of them is that person,
    never a sound-alike of him (a "Clancy" in the call is not a misheard "Clankie")."""
    compiled = _compile_names(tuple(names))
    words = _merge_aliases(_words(transcript), compiled)
    if not words:
        return Address("none")
    strengths = [_name_strength(w, compiled) for w in words]
    if people:
        others = _people(tuple(people))
        strengths = [
            None if s is not None and s != "exact" and w.lower in others else s
            for w, s in zip(words, strengths, strict=True)
        ]

    # name alone: nothing but greetings, hesitations and naming words
    if any(strengths) and all(
        s is not None
        or w.lower in _ALONE_WITH
        or (w.lower == "you" and k > 0 and words[k - 1].lower == "thank")
        for k, (w, s) in enumerate(zip(words, strengths, strict=True))
    ):
        saluted = any(w.lower in SALUTATIONS for w in words)
        naming = [s for s in strengths if s is not None]
        strongest = "exact" if "exact" in naming else ("soundalike" if "soundalike" in naming else "weak")
        if strongest != "weak" or saluted or words[-1].brk == "?":
            return Address("name_alone", soundalike=strongest != "exact")

    about = possessive = ask_tell = soundalike_seen = False
    position = 0
    for sentence in _sentences(words):
        base = position
        position += len(sentence)
        i = 0
        salutation = False
        while i < len(sentence) and (sentence[i].lower in GREETINGS or sentence[i].lower in FILLERS):
            salutation = salutation or sentence[i].lower in SALUTATIONS
            i += 1
            if sentence[i - 1].lower == "thank" and i < len(sentence) and sentence[i].lower == "you":
                i += 1
        # "you" is a filler only in "thank you"; a sentence that starts with "you" is not greeting
        if i > 0 and sentence[i - 1].lower == "you" and not (i >= 2 and sentence[i - 2].lower == "thank"):
            i = 0
            salutation = False
        if i < len(sentence):
            strength = strengths[base + i]
            if strength is not None:
                following = words[position] if position < len(words) else None
                verdict = _leading_verdict(sentence, i, strength, salutation, following)
                if verdict is True and _reported_tail(sentence, i):
                    verdict = False  # "Clankie, go left, she told it": a quote, not a call
                if verdict is True:
                    return Address("leading" if i == 0 else "after_greeting", soundalike=strength != "exact")
                if verdict is False:
                    about = True
        last = len(sentence) - 1
        if sentence[last].brk == "?" and last > i:
            strength = strengths[base + last]
            if strength is not None:
                before = sentence[last - 1]
                if before.brk == ",":
                    return Address("trailing_question", soundalike=strength != "exact")
                if strength != "weak" and not _takes_him_as_object(sentence, last):
                    return Address("trailing_question", soundalike=strength != "exact")
        elif sentence[last].brk in ("", ".") and last > i:
            strength = strengths[base + last]
            if strength is not None and strength != "weak" and _speaks_to_him(sentence, i, last):
                if sentence[last - 1].brk == ",":
                    if _clause_before(sentence, last) >= 2:  # "Ann, Bob, Clankie." is a list
                        return Address("trailing_vocative", soundalike=strength != "exact")
                elif (
                    strength == "exact"
                    and not sentence[last - 1].brk
                    and sentence[i].lower in _QUESTION_OPENERS
                    and not _takes_him_as_object(sentence, last)
                ):
                    # "are you stuck clankie": a second-person question whose "?" the transcriber left out
                    return Address("trailing_question")
        # a clause inside the sentence opening with his name and speaking to him
        # ("Hold on, Clankie, say that again"): strict shape only
        for k in range(i + 1, len(sentence)):
            strength = strengths[base + k]
            if strength is None or strength == "weak" or sentence[k - 1].brk != ",":
                continue
            if sentence[k - 1].lower in _ASK_TELL:
                continue
            if _clause_vocative(sentence, k):
                return Address("leading", soundalike=strength != "exact")

    for index, word in enumerate(words):
        strength = strengths[index]
        if strength is None:
            if " " not in word.lower and _naming(word.lower, compiled) == "possessive":
                possessive = True
            continue
        if index > 0 and words[index - 1].lower in _ASK_TELL and not words[index - 1].brk:
            ask_tell = True
        elif strength == "exact":
            about = True
        else:
            soundalike_seen = True
    if possessive:
        return Address("possessive")
    if ask_tell:
        return Address("ask_tell")
    if about:
        return Address("about_him")
    if soundalike_seen:
        return Address("soundalike_only")
    return Address("none")


def other_name_leading(transcript: str, names: Sequence[str], people: Sequence[str] = ()) -> bool:
    """Whether the transcript opens by addressing someone else ("Bob, did you…", "Hey Ann, …").

    A leading word that is one of ``people`` (the other humans' display names, any case)
    counts; so does a capitalised word followed by a comma that is not a greeting, filler,
    interjection or one of his names."""
    compiled = _compile_names(tuple(names))
    words = _merge_aliases(_words(transcript), compiled)
    i = 0
    while (
        i < len(words)
        and (words[i].lower in GREETINGS or words[i].lower in FILLERS)
        and words[i].lower != "you"
    ):
        i += 1
    if i >= len(words):
        return False
    word = words[i]
    strength = _name_strength(word, compiled)
    if strength == "exact":
        return False
    if people and word.lower in _people(tuple(people)) and word.lower not in _NOT_A_NAME:
        return True  # ("So" or "Sure" as someone's display name does not make every "So, …" theirs)
    if strength is not None:
        return False
    if not (word.capitalised and word.brk == "," and word.lower not in _NOT_A_NAME):
        return False
    # without a list of people: a name is only taken as one when the sentence speaks to "you"
    rest = words[i + 1 :]
    for later in rest:
        if later.lower in _SECOND_PERSON:
            return True
        if later.brk in (".", "!", "?"):
            break
    return False


_SECOND_PERSON = frozenset({"you", "your", "you're", "yours", "ya", "you'll", "you've", "yourself"})


@lru_cache(maxsize=64)
def _people(people: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for person in people:
        words = _words(person)
        if words:
            out.add(words[0].lower)  # "Ann Smith" is called "Ann"
    return frozenset(out)


# --- the decision ------------------------------------------------------------------------------


def _answer_reason(how: AddressHow) -> str:
    return {
        "leading": "addressed_leading",
        "after_greeting": "addressed_after_greeting",
        "trailing_question": "addressed_trailing_question",
        "trailing_vocative": "addressed_trailing_vocative",
        "name_alone": "name_alone",
    }[how]


def _listen_reason(how: AddressHow) -> str:
    return "not_addressed" if how == "none" else how


def _engage(speaker_id: int, now: float) -> FloorState:
    return FloorState(holder=speaker_id, engaged_until=now + ENGAGEMENT_S)


def lapsed(state: FloorState, now: float) -> FloorState:
    """The state with the holder released once engagement has lapsed."""
    if state.holder is not None and now > state.engaged_until:
        return FloorState()
    return state


def decide(
    utterance: Utterance,
    humans: frozenset[int],
    state: FloorState,
    *,
    names: Sequence[str],
    mode: FloorMode,
    now: float,
    people: Sequence[str] = (),
) -> Verdict:
    """Whether he answers, is offered, or listens to this committed turn, and the next state.

    ``humans``: the humans in the channel now (not him, not other bots). ``names``: his name
    and aliases. ``people``: the other humans' display names, to recognise "Bob, …" (optional;
    without it a capitalised word plus comma is taken as a name)."""
    current = lapsed(state, now)
    text = utterance.transcript
    address = addressed(text, names, people)
    acknowledge = address.how == "name_alone"
    speaker = utterance.speaker_id

    unknown = speaker == UNKNOWN_SPEAKER  # answered when it asks, but never given the floor
    if mode == "open" or len(humans - {speaker}) == 0:
        reason = "open_floor" if mode == "open" else "one_human"
        return Verdict("answered", reason, acknowledge, current if unknown else _engage(speaker, now))
    if address.addressed:
        engaged = current if unknown else _engage(speaker, now)
        return Verdict("answered", _answer_reason(address.how), acknowledge, engaged)

    if current.holder is not None and current.holder == speaker:
        why: str | None = None
        if not text.strip():
            why = "no_transcript"
        elif other_name_leading(text, names, people):
            why = "other_name_leading"
        elif current.someone_else_since:
            why = "someone_between"
        elif (
            current.his_audio_ended_at is not None
            and utterance.started_at - current.his_audio_ended_at > FOLLOW_UP_WINDOW_S
        ):
            why = "follow_up_late"
        if why is None:  # the offer's engagement is taken back if he declines it (offer_settled)
            offered = replace(_engage(speaker, now), declines=current.declines)
            return Verdict("offered", "holder_follow_up", False, offered)
        return Verdict("listened", why, False, current)

    if state.holder == speaker and current.holder is None:
        reason = "floor_lapsed"
    elif not text.strip():
        reason = "no_transcript"
    else:
        reason = _listen_reason(address.how)
    return Verdict("listened", reason, False, heard(current, speaker, utterance.ended_at))


def offer_settled(
    state: FloorState, before: FloorState, offered: FloorState, *, declined: bool
) -> FloorState:
    """The response to an offered turn ended: ``before`` is the state the offer was decided
    on, ``offered`` the state it gave. Taken (he spoke): the run of declines ends. Declined
    (``stay_silent``): the engagement the offer gave is taken back, and the
    :data:`MAX_DECLINES`-th decline in a row releases the floor. Nothing changes when the
    floor has moved on since the offer (another holder, or the holder addressed him again)."""
    if state.holder is None or state.holder != offered.holder or state.engaged_until != offered.engaged_until:
        return state
    if not declined:
        return replace(state, declines=0)
    if state.declines + 1 >= MAX_DECLINES:
        return FloorState()
    return replace(state, engaged_until=before.engaged_until, declines=state.declines + 1)


def heard(state: FloorState, speaker_id: int, ended_at: float) -> FloorState:
    """Note that ``speaker_id`` spoke until ``ended_at`` (safe to call at commit time, before
    the transcript is in, so the order transcripts arrive in cannot hide a turn between)."""
    if state.holder is None or speaker_id == state.holder or state.someone_else_since:
        return state
    if state.his_audio_ended_at is not None and ended_at <= state.his_audio_ended_at:
        return state  # spoke only while he was still talking
    if state.his_audio_ended_at is None:
        return state  # he has not answered yet: talk over his reply is not "between"
    return replace(state, someone_else_since=True)


def he_finished_speaking(state: FloorState, at: float) -> FloorState:
    """His audio ended (or his reply was declined/cancelled) at ``at``: the holder's follow-up
    window starts here, and only turns after it count as someone speaking between."""
    return replace(state, his_audio_ended_at=at, someone_else_since=False)


def settled_words(partial: str) -> str:
    """The part of a transcript still arriving that later words can no longer change: every
    sentence that has ended (".", "!", "?") and that another word already follows. What is in
    the sentence still open may yet turn out to be about him ("Clankie said…") or a quote
    ("Clankie, go left, she said"), and a sentence just ended may still get a following word
    that decides it ("Cranky? Me? Never.")."""
    settled = 0
    ended_at: int | None = None
    for match in _TOKEN.finditer(partial):
        token = match.group()
        if token[0].isalnum():
            if ended_at is not None:
                settled, ended_at = ended_at, None
        elif "?" in token or "!" in token or token == ".":
            ended_at = match.end()
    return partial[:settled]


def words_address_him(
    words: str, names: Sequence[str], people: Sequence[str] = (), *, complete: bool
) -> bool:
    """Whether the words of a turn, ``complete`` or still arriving, address him. Words still
    arriving count only as far as they are settled (:func:`settled_words`): a name followed by
    a break and more words ("Clankie, stop! Go back", "Clankie wait, go left. Now") addresses
    him once the sentence it is in has ended and the next one begun; his name alone in the
    first delta never does."""
    if complete:
        return addressed(words, names, people).addressed
    settled = settled_words(words)
    return (
        bool(settled)
        and addressed(settled, names, people).addressed
        and addressed(words, names, people).addressed
    )


def may_interrupt(
    state: FloorState,
    speaker_id: int,
    speech_ms: float,
    words: str | None,
    humans: frozenset[int],
    *,
    names: Sequence[str],
    mode: FloorMode,
    now: float | None = None,
    complete: bool = False,
    people: Sequence[str] = (),
) -> bool:
    """Whether this speech, heard while he is speaking, cuts him off.

    Open floor or one human: yes, as before. Otherwise the holder after
    :data:`INTERRUPT_MIN_SPEECH_MS` of speech, or anyone whose words address him by name
    (:func:`words_address_him`: ``complete`` says whether ``words`` is the completed
    transcript; ``people`` are the other humans' display names, as for :func:`decide`).
    ``now``, when given, lets a lapsed holder lose the right. The unknown speaker
    (:data:`UNKNOWN_SPEAKER`) never holds the floor."""
    if mode == "open" or len(humans - {speaker_id}) == 0:
        return True
    current = state if now is None else lapsed(state, now)
    if (
        speaker_id != UNKNOWN_SPEAKER
        and current.holder is not None
        and current.holder == speaker_id
        and speech_ms >= INTERRUPT_MIN_SPEECH_MS
    ):
        return True
    if words:
        return words_address_him(words, names, people, complete=complete)
    return False


def his_names(aliases: Sequence[str]) -> tuple[str, ...]:
    """His name followed by the configured ``[voice] names`` aliases, for ``names=``."""
    return (HIS_NAME, *(a for a in aliases if a.lower() != HIS_NAME.lower()))
