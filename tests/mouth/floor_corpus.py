"""A labelled corpus of room utterances for the floor policy (bot/mouth/floor.py).

Written for this project: turns as a speech recogniser (gpt-4o-mini-transcribe style: capitals,
commas, question marks) would hand them over in a call of friends watching him play. Each item
says what should happen to it and in what situation. tests/mouth/test_floor.py runs the policy
on every item; bench/floor.py measures recall and false answers on it.

Situations: ``holder`` means the speaker holds the floor (he answered them) and his audio
ended ``gap_s`` before the turn started; ``between`` says whether another person spoke in
between (``"after"``: after his audio ended; ``"during"``: only while he was talking);
``lapsed`` means the floor was theirs more than 60 s ago. ``humans`` is how many humans are in
the call. ``addressed`` is the ground truth: the turn is meant for him (he should answer or be
offered it); everything else is talk he should only hear.

Durations are the speech span in seconds; when not given they come from the word count at a
conversational 2.5 words per second (at least 0.6 s), so "per 10 minutes of side talk" is
measured on speech, not on silence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.mouth.floor import FloorState, Utterance, Verdict, decide, he_finished_speaking, his_names

Expected = Literal["answered", "offered", "listened"]
Between = Literal["none", "during", "after"]

CATEGORIES: tuple[str, ...] = (
    "greeting_by_name",
    "name_at_end",
    "misheard",
    "name_alone",
    "holder_follow_up",
    "other_name_leading",
    "possessive_ask_tell",
    "soundalike_words",
    "side_talk",
    "overlapping",
    "one_person",
)


@dataclass(frozen=True, slots=True)
class Item:
    category: str
    transcript: str
    expected: Expected
    humans: int = 3
    holder: bool = False
    gap_s: float = 2.0
    between: Between = "none"
    lapsed: bool = False
    acknowledge: bool = False
    reason: str | None = None  # the reason code expected, where the item pins one
    known_miss: str | None = None  # the policy gets this one wrong, and why (kept, not hidden)
    seconds: float | None = None

    @property
    def duration_s(self) -> float:
        if self.seconds is not None:
            return self.seconds
        return max(0.6, len(self.transcript.split()) / 2.5)

    @property
    def addressed(self) -> bool:
        return self.expected != "listened"


NAMES: tuple[str, ...] = his_names([])
# the other people in the corpus's calls, as the session would pass their display names
PEOPLE: tuple[str, ...] = (
    "Bob",
    "Ann",
    "Sam",
    "Mika",
    "Priya",
    "Dave",
    "Jordan",
    "Lena",
    "Tom",
    "Alex",
    "Chris",
)
SPEAKER, OTHER, THIRD = 101, 202, 303
DECIDED_AFTER_S = 0.3  # the transcript lands this long after the turn ends


def situation(
    item: Item, *, names: tuple[str, ...] = NAMES
) -> tuple[Utterance, frozenset[int], FloorState, float]:
    """The turn, the humans, the floor state and the decision time that ``item`` describes,
    reached by running the policy itself through the turns that led there."""
    humans = frozenset((SPEAKER, OTHER, THIRD)[: item.humans])
    start = 1000.0
    state = FloorState()
    if item.holder:
        his_end = start - item.gap_s
        asked_end = his_end - 4.0  # he answered for about 3.7 s
        asked = Utterance(SPEAKER, "Clankie, what's the plan?", asked_end - 1.5, asked_end)
        state = decide(
            asked, humans, state, names=names, mode="addressed", now=asked_end + DECIDED_AFTER_S
        ).state
        if item.between == "during":
            talk = Utterance(OTHER, "Ha, nice.", his_end - 2.0, his_end - 1.0)
            state = decide(talk, humans, state, names=names, mode="addressed", now=his_end - 0.7).state
        state = he_finished_speaking(state, his_end)
        if item.between == "after":
            talk = Utterance(OTHER, "Yeah, that's what I thought.", his_end + 0.1, his_end + 0.9)
            state = decide(talk, humans, state, names=names, mode="addressed", now=his_end + 1.0).state
    utterance = Utterance(SPEAKER, item.transcript, start, start + item.duration_s)
    return utterance, humans, state, utterance.ended_at + DECIDED_AFTER_S


def verdict_for(item: Item, *, names: tuple[str, ...] = NAMES) -> Verdict:
    utterance, humans, state, now = situation(item, names=names)
    return decide(utterance, humans, state, names=names, mode="addressed", now=now, people=PEOPLE)


def _items(category: str, expected: Expected, *texts: str, **situation: object) -> list[Item]:
    return [Item(category, text, expected, **situation) for text in texts]  # type: ignore[arg-type]


CORPUS: tuple[Item, ...] = tuple(
    # --- greeting by name, or his name leading -------------------------------------------------
    _items(
        "greeting_by_name",
        "answered",
        "Hey Clankie, what are you doing?",
        "Hey Clankie what's the score",
        "Hi Clankie, can you hear us?",
        "Hello Clankie. How's the run going?",
        "Yo Clankie, go left!",
        "Yo, Clankie, you there?",
        "Okay Clankie, try the down arrow.",
        "Ok Clankie what do you see on the board",
        "Clankie, what's your plan?",
        "Clankie, can you go right instead?",
        "Clankie what are you thinking right now?",
        "Clankie, tell us a joke.",
        "Clankie look at the top corner.",
        "Clankie, hold on a second.",
        "Clankie is it my turn to pick?",
        "Clankie, do you want to stop?",
        "Clankie, are you stuck?",
        "Hey, Clankie, quick question.",
        "Thanks Clankie, that was great.",
        "Um, Clankie, why did you do that?",
        "Oh hey Clankie, didn't see you there.",
        "Clankie how many points is that?",
        "Clankie, please slow down a bit.",
        "Hi Clankie! Welcome back.",
        "Okay, okay. Clankie, what next?",
        "Alright Clankie, show us what you got.",
        "Clankie, help me out here, which tile?",
        "Hey Clankie, Bob wants to know your score.",
        "So Clankie, what do you think of the new level?",
        "Clankie, let's try a different strategy.",
    )
    # --- his name at the end, as a question ------------------------------------------------------
    + _items(
        "name_at_end",
        "answered",
        "What do you think, Clankie?",
        "Can you go left, Clankie?",
        "Is that a good move, Clankie?",
        "You there, Clankie?",
        "How's it going, Clankie?",
        "Which one should we merge, Clankie?",
        "What's the high score, Clankie?",
        "Are you winning, Clankie?",
        "Ready Clankie?",
        "Got it, Clankie?",
        "You still with us Clankie?",
        "What happened there Clankie?",
        "Did you see that Clankie?",
        "Want to try again, Clankie?",
        "Why'd you go up, Clankie?",
        "Is the board full yet, Clankie?",
        "We're stuck. Any ideas, Clankie?",
        "Okay so what now, Clankie?",
        "Can you hear me okay, Clankie?",
        "Was that on purpose, Clankie?",
    )
    # --- misheard spellings of his name, in addressing positions --------------------------------
    + _items(
        "misheard",
        "answered",
        "Hey Clinky, what's the score?",
        "Planker, can you go left?",
        "Hey Cranky, you there?",
        "Clanky, what are you doing?",
        "Clankey, try the other way.",
        "Klanky, are you stuck?",
        "Yo Klankie, nice move!",
        "Hey Clanky what's next",
        "What do you think, Clinky?",
        "Are you there, Cranky?",
        "Cranky, can you hear me?",
        "Hi Clanky! How are you?",
        "Clinky, look at the corner.",
        "Okay Clankey, go down.",
        "Hey Plankie, what's up?",
        "Clanker, what do you see?",
        "Hey Clunky, you awake?",
        "Is that right, Klankie?",
        "Clancy, what's your move?",
        "Hello Clankee, can you hear us?",
        "Hey Clanky, is it working now?",
        "Clinkie, why did you stop?",
    )
    # --- his name alone -------------------------------------------------------------------------
    + _items(
        "name_alone",
        "answered",
        "Clankie?",
        "Clankie.",
        "Clankie!",
        "Hey Clankie.",
        "Hey Clankie!",
        "Yo, Clankie?",
        "Clankie? Clankie.",
        "Hello, Clankie?",
        "Clanky?",
        "Cranky?",
        "Hey Clinky.",
        "Um, Clankie?",
        acknowledge=True,
        reason="name_alone",
    )
    # --- the holder follows up -------------------------------------------------------------------
    + _items(
        "holder_follow_up",
        "offered",
        "And what about the right side?",
        "Why that one though?",
        "Okay, and then what?",
        "Can you do it again?",
        "Wait, go back.",
        "No, the other one.",
        "Yeah, try that.",
        "How many moves is that?",
        "Oh nice, that worked.",
        "What's the plan after this?",
        "Hmm, are you sure?",
        "Do it!",
        "That's not what I meant.",
        "Left, I said left.",
        "Can you explain that again?",
        holder=True,
        reason="holder_follow_up",
    )
    + _items(
        "holder_follow_up",
        "offered",
        "And the bottom row?",
        "Really? Why?",
        holder=True,
        gap_s=7.5,
        reason="holder_follow_up",
    )
    + _items(
        "holder_follow_up",
        "offered",
        "Sorry, what did you say?",
        "Okay go on.",
        holder=True,
        between="during",
        reason="holder_follow_up",
    )
    + _items(
        "holder_follow_up",
        "listened",
        "Anyway, what were we talking about?",
        "Whatever, let's get food after this.",
        "And then my sister called me.",
        holder=True,
        gap_s=12.0,
        reason="follow_up_late",
    )
    + _items(
        "holder_follow_up",
        "listened",
        "Yeah, I think so too.",
        "Same, honestly.",
        "Ha, true.",
        holder=True,
        between="after",
        reason="someone_between",
    )
    + _items(
        "holder_follow_up",
        "listened",
        "So where were we?",
        "Okay, who wants to go next?",
        holder=True,
        lapsed=True,
        gap_s=65.0,
        reason="floor_lapsed",
    )
    # --- another name leading --------------------------------------------------------------------
    + _items(
        "other_name_leading",
        "listened",
        "Bob, did you see that?",
        "Ann, what do you think?",
        "Hey Sam, are you still there?",
        "Mika, can you mute your mic?",
        "Priya, it's your turn after this.",
        "Okay Dave, you try.",
        "Jordan, did you eat yet?",
        "Lena, look at his score.",
        "Tom, stop laughing.",
        "Alex, what time is it there?",
        holder=True,
        reason="other_name_leading",
    )
    + _items(
        "other_name_leading",
        "listened",
        "Bob, did you do the homework?",
        "Ann, you're muted.",
        "Hey Sam, can you hear me?",
        "Chris, your stream is lagging.",
        reason="not_addressed",
    )
    # --- possessive, and "ask/tell" ---------------------------------------------------------------
    + _items(
        "possessive_ask_tell",
        "listened",
        "Clankie's screen is frozen.",
        "Look at Clankie's score, that's insane.",
        "Is that Clankie's board or yours?",
        "I like Clankie's little voice.",
        "Clankie's turn is taking forever.",
        "Clankies tiles are all over the place.",
        "What's Clankie's high score?",
        "Hey, Clankie's doing well today.",
        "Wait, is it Clankie's turn?",
        "Who made Clankie's voice?",
        reason="possessive",
    )
    + _items(
        "possessive_ask_tell",
        "listened",
        "Ask Clankie what he thinks.",
        "Tell Clankie to go left.",
        "You should ask Clankie about it.",
        "Did you tell Clankie yet?",
        "Let's ask Clankie later.",
        "Can you tell Clankie to stop?",
        "I'll ask Clankie after this level.",
        "We could ask Clankie, I guess.",
        "Maybe tell Clankie the rules first.",
        "Don't ask Clankie, he'll just say up.",
        reason="ask_tell",
    )
    # --- words that only sound like him ----------------------------------------------------------
    + _items(
        "soundalike_words",
        "listened",
        "This UI is clunky.",
        "The menu is so clunky, right?",
        "Clunky, isn't it?",
        "Clunky but it works.",
        "I heard a clink.",
        "Clink clink, cheers everyone.",
        "The pipes clank all night.",
        "My old car was a real clunker.",
        "He gets cranky when he's tired.",
        "Why are you so cranky today?",
        "Are you cranky?",
        "Cranky old man energy.",
        "That's a lanky dude.",
        "I love slinky toys.",
        "Clank, clank, clank, goes the engine.",
        "It's a bit clunky on mobile.",
        "The new update feels clunky.",
        "The clinking of glasses woke me up.",
        "My cat gets cranky at six.",
        "Stinky socks everywhere.",
        "Put it in the plank position.",
        "Funky music in this one.",
        "Chunky monkey is the best flavour.",
        "It sounds kinda clanky, doesn't it?",
        "Planking was a weird trend.",
        "Oh, that's cranky.",
    )
    # --- side talk: people talking to each other, sometimes about him ---------------------------
    + _items(
        "side_talk",
        "listened",
        "Did you finish the assignment for tomorrow?",
        "I'm gonna grab a drink, one sec.",
        "Wait, who's making dinner tonight?",
        "No way, that's hilarious.",
        "My internet keeps cutting out.",
        "Can everyone hear me okay?",
        "Sorry, my dog is barking.",
        "Did anyone watch the game last night?",
        "I think we should order pizza.",
        "Yeah, I saw that video too.",
        "Hold on, my mic is weird.",
        "What time do we start tomorrow?",
        "That's what I said last week.",
        "Okay I'm back.",
        "Lol, no.",
        "Yes, exactly.",
        "Hmm, I don't know.",
        "My brother wants to join later.",
        "We should play something else after this.",
        "The new patch broke everything.",
        "Can you share your screen?",
        "You're breaking up a bit.",
        "I'll be right back, doorbell.",
        "Haha, that's so true.",
        "Do you want to play after dinner?",
        "I have to leave in ten minutes.",
        "What's your favourite game right now?",
        "Mine is still the old one, honestly.",
        "Ugh, Mondays.",
        "Who invited the new guy?",
        "It's raining again here.",
        "You sound like a robot, turn your mic down.",
        "Hey, can you stop typing so loud?",
        "Okay, who's next?",
        "Wait, what did you say?",
        "Say that again?",
        "Right, makes sense.",
        "That was a crazy move though.",
        "Is this thing even working?",
        "Okay, everyone ready?",
        reason="not_addressed",
    )
    + _items(
        "side_talk",
        "listened",
        "Clankie said we should go left.",
        "I think Clankie is winning.",
        "Clankie makes such weird moves sometimes.",
        "Clankie and I played this yesterday.",
        "Do you like Clankie?",
        "Have you met Clankie before?",
        "Honestly Clankie is better than me at this.",
        "Clankie just merged two tiles, look.",
        "Did Clankie lose again?",
        "Clankie is doing pretty good today.",
        "So Clankie went up and it worked.",
        "It's funny how Clankie talks.",
        "Why is Clankie so slow today?",
        "I told my mom about Clankie.",
        "What did Clankie say?",
        "Clankie keeps going left for some reason.",
        reason="about_him",
    )
    + [
        Item(
            "side_talk",
            "So I was telling my cousin about this game and she said the levels get way harder after "
            "the third world, and honestly I believe her because the second one was already brutal.",
            "listened",
            reason="not_addressed",
        ),
        Item(
            "side_talk",
            "Okay so the plan for Saturday is we meet at noon, grab food, then head to the park if the "
            "weather's fine, otherwise we just stay in and play something.",
            "listened",
            reason="not_addressed",
        ),
        Item(
            "side_talk",
            "I don't know, I feel like the robot voice is kind of cute, but my sister thinks it's creepy "
            "and she refuses to join when it's on.",
            "listened",
            reason="not_addressed",
        ),
        Item(
            "side_talk",
            "Did you hear the thing about the teacher who brought a snake to class? Apparently it got "
            "loose and they had to evacuate half the building.",
            "listened",
            reason="not_addressed",
        ),
        Item(
            "side_talk",
            "We tried that strategy last week and it failed twice, so I'm not sure it'll work now "
            "either, but whatever, it's not my run.",
            "listened",
            reason="not_addressed",
        ),
        Item("side_talk", "", "listened", reason="no_transcript", seconds=0.8),
    ]
    # --- overlapping speakers --------------------------------------------------------------------
    + [
        # the holder follows up while another person had talked over his answer only
        Item(
            "overlapping",
            "Wait, so go up?",
            "offered",
            holder=True,
            between="during",
            reason="holder_follow_up",
        ),
        Item(
            "overlapping",
            "Yeah but why?",
            "offered",
            holder=True,
            between="during",
            reason="holder_follow_up",
        ),
        # another person spoke after his answer, then the holder: not offered
        Item(
            "overlapping", "Okay and now?", "listened", holder=True, between="after", reason="someone_between"
        ),
        # two people at once; the dominant speaker named him first
        Item("overlapping", "Clankie, Clankie, over here, go left!", "answered", reason="addressed_leading"),
        Item(
            "overlapping", "Hey Clankie — no, wait — go right.", "answered", reason="addressed_after_greeting"
        ),
        # cross talk where his name is only mentioned in passing
        Item("overlapping", "No, you go, I'll ask Clankie after.", "listened", reason="ask_tell"),
        Item("overlapping", "Wait, what, no, I was talking to Bob.", "listened", reason="not_addressed"),
        Item("overlapping", "Yeah yeah yeah, same, I agree.", "listened", reason="not_addressed"),
        Item("overlapping", "Sorry, go ahead. No, you go.", "listened", reason="not_addressed"),
        # a non-holder talks over the holder's window
        Item("overlapping", "Can you pass me the charger?", "listened", reason="not_addressed"),
        Item("overlapping", "Clankie— sorry, go ahead, Clankie, what was that?", "answered"),
        Item("overlapping", "Hold on, hold on, Clankie, say that again?", "answered"),
    ]
    # --- written after the rules, to try them ---------------------------------------------------
    + _items(
        "greeting_by_name",
        "answered",
        "Hey there Clankie, how's it going?",
        "Listen, Clankie, we need to talk.",
        "Excuse me Clankie, what was that?",
        "Clankie buddy, what's next?",
        "Sup Clankie",
        "Clankie you there?",
        "Clankie go up",
        "Dude, Clankie, you missed it.",
        "Hey so Clankie I was wondering, can you go left?",
        "Clankie, I have a question.",
        "Clankie! Look!",
        "Hey hey Clankie, over here.",
        "Clankie-bot, what now?",
    )
    + _items(
        "name_at_end",
        "answered",
        "How about you, Clankie?",
        "And you, Clankie?",
        "What about the left side, Clankie?",
        "Is it my turn or yours, Clankie?",
        "Can we try something new Clankie?",
        "Should I go first, Clankie?",
        "Any tips, Clankie?",
    )
    + _items(
        "misheard",
        "answered",
        "Klinkie, go left.",
        "Yo Clanky, what's up?",
        "Blankie, can you hear me?",
        "Hey Clunkie, you there?",
        "Clankey? You there?",
        "Cranky? Are you there?",
        "Clankly, what's up?",
        "Klanki, go down.",
    )
    + _items(
        "name_alone",
        "answered",
        "Uh, Clankie? Hello?",
        "Thank you Clankie!",
        "Hey Klinky",
        "Hey Clinkie",
        acknowledge=True,
        reason="name_alone",
    )
    + _items(
        "side_talk",
        "listened",
        "Clankie is so cute.",
        "I'm watching Clankie play.",
        "Is Clankie okay?",
        "Can Clankie hear us?",
        "Does Clankie know?",
        "Is that Clankie talking?",
        "Is it Clankie?",
        "Do you think Clankie knows?",
        "What's Clankie doing?",
        "How does Clankie work?",
        "Who's Clankie?",
        "Wait, is that Clankie?",
        "Where's Clankie?",
        "Clankie seems stuck.",
        "Clankie played well.",
        "Say hi to Clankie.",
        "Give Clankie a second.",
        "Let Clankie do it.",
        "Poor Clankie.",
        "Clankie for president.",
        reason="about_him",
    )
    + _items(
        "side_talk",
        "listened",
        "You guys are so loud.",
        "I can't hear anything, hang on.",
        "Did you see my message?",
        "Let me check real quick.",
        "That's a good question actually.",
        "No idea, ask your mom.",
        "He's so good at this game.",
        "It's doing way better than yesterday.",
        "Is he going to win?",
        "Why does it keep going up?",
        "The robot voice is funny.",
        "Can you guys stop talking over each other?",
        "What's the score now?",
        "Is it stuck?",
        "Oh no, it's going to lose.",
        "Come on, come on, come on.",
        "Nooo, why would it do that?",
        "I'd go left if I were it.",
        "Honestly the bot is better than me.",
        "Hey Frankie, what's up?",
        "Frankie, go left.",
        reason="not_addressed",
    )
    + _items(
        "side_talk",
        "listened",
        "Clankie, go left, that's what she told it.",
        "Clankie, stop, he yelled, and it actually stopped.",
        "Hey Clankie is what I say when I want it to talk.",
        reason="about_him",
    )
    + _items(
        "possessive_ask_tell",
        "listened",
        "I asked Clankie already.",
        "Clankie's broken again.",
        "Bob, Clankie's doing it again.",
    )
    + _items(
        "soundalike_words",
        "listened",
        "The clunky one, the red one.",
        "Clunky? Yeah, a bit.",
        "Cranky? Me? Never.",
        "Stop being cranky.",
        "Honestly it's clunky, right?",
        "It's clunky, Bob.",
        "Yeah, clunky, I know.",
        "Kinky.",
        "Clink?",
        "So clunky.",
        "Clunky!",
        "Thanks, it's clunky though.",
        "Hey, that's clunky!",
        "Okay clunky, moving on.",
    )
    + [
        Item("overlapping", "Clankie wait — Bob stop — Clankie go left.", "answered"),
        Item("overlapping", "Yeah no, Clankie, go down, go down!", "answered"),
    ]
    # --- a longer stretch of ordinary group talk (a real call is mostly this) -------------------
    + _items(
        "side_talk",
        "listened",
        "Okay so I finally beat that boss last night, took me like forty tries, and the trick is you "
        "just stay on the left side and wait for the jump.",
        "Wait, are we still doing the thing on Friday or did that get cancelled?",
        "I think it's still on, but Maya said she might be late because of work.",
        "Honestly I don't get why people like that show, the first season was fine but then it just "
        "went nowhere.",
        "Can someone remind me what the password for the server was? I got logged out again.",
        "My mom keeps asking if I've done my homework and I keep saying yes, which is technically a lie.",
        "Dude, did you see the clip where the guy falls off the stage? I couldn't stop laughing.",
        "I need to buy a new headset, this one keeps crackling whenever I move my head.",
        "The cat just knocked my water over, hold on, I have to clean this up.",
        "Alright, I'm back, what did I miss?",
        "Not much, we were just watching it try to merge the big tiles.",
        "I swear the left corner strategy is the only one that actually works in this game.",
        "No, you want to keep the biggest tile in a corner and build along one edge.",
        "Yeah, that's what the guide said too, but it never works when I try it.",
        "It's kind of hypnotic watching it, like one of those satisfying videos.",
        "I should really go to bed, I have an exam at nine tomorrow.",
        "What's the exam on? Is it the chemistry one?",
        "Yeah, organic chemistry, I'm so dead.",
        "You'll be fine, you studied all week.",
        "I studied the wrong chapters, that's the problem.",
        "Okay, I'm getting food, does anyone want anything from the kitchen?",
        "Bring me a cookie if there are any left.",
        "There are no cookies, my brother ate all of them again.",
        "That's brutal, your brother is a menace.",
        "Did anyone else's internet just drop for a second?",
        "Mine did, I think it's the storm, the lights flickered too.",
        "We had a power cut last week for like six hours, it was awful.",
        "What did you even do for six hours with no power?",
        "Played cards by candlelight like it's the eighteen hundreds.",
        "That actually sounds kind of fun, not going to lie.",
        "The robot sounds way more natural than the one we tried last year.",
        "Last year's one kept talking over everybody, it was so annoying.",
        "This one mostly just listens, which is honestly nicer.",
        "Who's hosting the next game night? I hosted the last two.",
        "I can do it, but my place is tiny, so we'd have to sit on the floor.",
        "Floor is fine, we'll bring snacks.",
        "Somebody has to bring the good chips though, not the weird flavoured ones.",
        "The weird flavoured ones are the best, you have no taste.",
        "Okay, new rule, nobody argues about chips anymore.",
        "Haha, fine, fine.",
        "Wait, look, it's about to get the big tile.",
        "Oh no, it went the wrong way, that's going to mess everything up.",
        "It'll recover, it's done that before.",
        "I bet it loses in the next ten moves.",
        "I'll take that bet, five bucks.",
        "You never pay me when you lose bets.",
        "I paid you last time, in pizza.",
        "Pizza is not money.",
        "Pizza is better than money.",
        "Can you turn your music down a bit? It's coming through your mic.",
        "Oh, sorry, is that better?",
        "Much better, thanks.",
        "My sister wants to know if she can join next time.",
        "Sure, the more the merrier, just tell her to bring her own headset.",
        "Is it weird that I kind of want it to win?",
        "No, I want it to win too, I've been watching for an hour.",
        "We've literally been watching a robot play a puzzle game for an hour.",
        "And it's the best hour of my week, don't judge me.",
        "I'm going to stretch my legs, back in two minutes.",
        "Take your time, we'll keep watching.",
    )
    # --- a third batch, written before the rules last changed (two of its "no" turns were
    # answered then: "Clanky old radiators…" and "Clankie vs the board…") ----------------------
    + _items(
        "greeting_by_name",
        "answered",
        "Clankie, are you going to beat your high score today?",
        "Yo Clankie! What's good?",
        "Hey Clankie, can I ask you something?",
        "Okay Clankie, I'm back, what did I miss?",
        "Clankie what's the biggest tile you've ever made?",
        "Clankie, do a little dance.",
        "Clankie, say hi to my sister.",
        "Hey Clankie, this is my friend Sam.",
        "Hey, Clankie. You awake?",
        "Wait wait wait, Clankie, stop!",
        "So, Clankie, how was your day?",
        "Clankie, why do you keep going left?",
        "Clankie mate, go up.",
        "Hi there, Clankie!",
        "Ok Clankie now go down",
        "Um, Clankie, I think you missed one.",
        "Alright Clankie, your turn.",
        "Clankie you're doing great",
        "Wait, Clankie, really? No way.",
    )
    + _items(
        "name_at_end",
        "answered",
        "Are you okay, Clankie?",
        "Is the game hard, Clankie?",
        "What's up Clankie?",
        "Who made you, Clankie?",
        "Do you like this game, Clankie?",
        "Clankie? Can you hear me?",
    )
    + _items(
        "misheard",
        "answered",
        "Hey Klanky, you doing okay?",
        "Clinky, what's two plus two?",
        "Yo Cranky, what's up?",
    )
    + _items(
        "name_alone",
        "answered",
        "Hello? Clankie?",
        "Morning Clankie.",
        "Good morning Clankie!",
        acknowledge=True,
        reason="name_alone",
    )
    + _items(
        "side_talk",
        "listened",
        "I wonder if Clankie dreams.",
        "Clankie doesn't know what he's doing.",
        "Look, Clankie went up again.",
        "The thing with Clankie is that he's too careful.",
        "Bob, Clankie is talking to you.",
        "I'm not talking to Clankie, I'm talking to you.",
        "Clankie won't stop going left.",
        "Let's see what Clankie does.",
        "Clankie vs the board, round two.",
        "I named my plant Clankie.",
        "Why's Clankie so quiet?",
        "Was that Clankie?",
        "Did Clankie just say something?",
        reason="about_him",
    )
    + _items(
        "possessive_ask_tell",
        "listened",
        "Do you think we should tell Clankie?",
        "Should we ask Clankie?",
        "Clankie's so funny.",
    )
    + _items(
        "soundalike_words",
        "listened",
        "It's clunky but I like it.",
        "My grandpa is cranky in the morning.",
        "The printer made a clanking noise.",
        "I love how clunky old games feel.",
        "Cranky pants over here.",
        "Clanky old radiators are the worst.",
        "Blinky is the red ghost, right?",
        "Is Pinky the pink one?",
    )
    + _items(
        "other_name_leading",
        "listened",
        "Frankie, you're up.",
        "Hey Franky, how's school?",
        reason="not_addressed",
    )
    # --- his name at the end without a question mark (issue 38): after a break, or ending a
    # second-person question the transcriber left unpunctuated; and their near misses ------------
    + _items(
        "name_at_end",
        "answered",
        "What's the score, Clankie",
        "What's the score, Clankie.",
        "Go left, Clankie.",
        "Can you go up, Clankie.",
        "Try the other corner, Clankie",
        "I think you should merge those, Clankie.",
        "Any ideas, Clankie.",
        "Are you awake, Clanky.",
        "Hey, what do you see, Klanky",
        reason="addressed_trailing_vocative",
    )
    + _items(
        "name_at_end",
        "answered",
        "are you stuck clankie",
        "what are you doing clankie",
        "can you hear me clankie",
        "Hey are you still there Clankie",
        "why did you go up Clankie",
        "do you want to try again clankie",
        reason="addressed_trailing_question",
    )
    + _items(
        "side_talk",
        "listened",
        "Who's winning? Honestly, Clankie.",
        "Who's the best at this? I'd say, Clankie.",
        "Everyone's here, Ann, Bob, Clankie.",
        "The winner is, Clankie.",
        "do you know clankie",
        "did you see clankie",
        "are you better than clankie",
        "were you talking about clankie",
        "who do you like more, Bob or Clankie",
        "are you watching clankie",
        "is that clankie",
        "can you believe clankie",
        "I was going to say, Clankie.",
        "She said go left, Clankie.",
        reason="about_him",
    )
    + _items(
        "soundalike_words",
        "listened",
        "are you stuck clanky",
        "Go left, cranky.",
        "Honestly, it's just clunky",
        "Why are you so cranky",
    )
    # --- what the rules get wrong, kept so the figures are honest --------------------------------
    + _items(
        "greeting_by_name",
        "answered",
        "Good job Clankie!",
        "Nice one Clankie.",
        "Come on Clankie, you got this!",
        known_miss="praise or cheering with his name at the end and no question: the rules answer a "
        "trailing name only in a question, so he hears it and does not reply",
    )
    + [
        Item(
            "overlapping",
            "Bob and Clankie, come look at this.",
            "answered",
            known_miss="two people addressed at once, his name second: not a leading position",
        ),
        Item(
            "side_talk",
            "Clankie, Clankie, Clankie, I said, over and over, and nothing happened.",
            "listened",
            known_miss="quoting what he himself said to him earlier, with his name as a vocative: "
            'only a third person\'s report ("she said") marks a quote',
        ),
    ]
    # --- a one-person call: every turn is answered ---------------------------------------------
    + _items(
        "one_person",
        "answered",
        "What are you doing now?",
        "Go left.",
        "Why did you do that?",
        "This UI is clunky.",
        "Ask Clankie what he thinks.",
        "I'm gonna grab a drink.",
        "Clankie's score is good today.",
        "Okay.",
        "Can you hear me?",
        "Hmm.",
        "Tell me about the board.",
        "Nice move!",
        "I think you should try down.",
        "What's the high score?",
        "Bye for now.",
        humans=1,
        reason="one_human",
    )
    + [Item("one_person", "Clankie?", "answered", humans=1, acknowledge=True, reason="one_human")]
)
