"""What people say and what happens next: the sandbox's story events.

`run(game, event, arg)` is called when a dialog closes (its `then`), when a menu entry is
chosen (`on_select`, with the entry id) or when a name is submitted (with the name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.worlds.sandbox.battle import MOVES, SPECIES, Battle, Partner
from bot.worlds.sandbox.milestones import MILESTONE_IDS
from bot.worlds.sandbox.ui import Menu

if TYPE_CHECKING:
    from bot.worlds.sandbox.game import Game
    from bot.worlds.sandbox.npcs import Npc

PROF = "Prof. Hazel"


def on_enter(game: Game, previous: str) -> None:
    """Arriving on a map from another one."""
    if game.map_id == "town":
        if game.reach("left_house"):
            return
        game.reach("returned_to_town")
    elif game.map_id == "route" and game.reach("reached_route"):
        game.say(
            PROF,
            [
                "Wait! Hold it right there!",
                "Fernway Path is full of tall grass, and wild partners live in it. "
                "You can't go out there without a partner of your own!",
                "I'm Professor Hazel. Come and see me in my lab, in the south-east "
                "of Mossdale Town. I'll hurry back there now!",
            ],
        )


def _partner_name(game: Game) -> str:
    return game.partner.name if game.partner else "your partner"


def talk(game: Game, npc: Npc) -> None:
    handler = _TALK.get(npc.id)
    if handler is None:
        game.say(npc.name, ["..."])
        return
    handler(game, npc)


def _mom(game: Game, npc: Npc) -> None:
    if game.has("first_battle_won"):
        lines = [f"You won a battle already? {_partner_name(game)} must be so proud of you!"]
    elif game.partner is not None:
        lines = [f"Oh, {_partner_name(game)} is adorable! Be careful out there, both of you."]
    else:
        lines = [
            "Good morning, sleepyhead! Professor Hazel was looking for you.",
            "He went north, to Fernway Path. Go on, say hello!",
        ]
    game.say(npc.name, lines)


def _hazel(game: Game, npc: Npc) -> None:
    if game.reach("met_professor"):
        game.say(
            PROF,
            [
                "Ah, there you are! Welcome to my lab.",
                "I study partners: creatures who live alongside people and grow with them.",
                "On that table are three of them. Choose the one you'd like to take with you!",
            ],
            then="partner_choice",
        )
    elif game.partner is None:
        game.say(PROF, ["Have you decided? Choose the partner you'd like!"], then="partner_choice")
    elif game.has("first_battle_won"):
        game.say(PROF, [f"You beat Tobi? Wonderful! You and {_partner_name(game)} are off to a fine start."])
    else:
        game.say(
            PROF,
            [
                f"How are you and {_partner_name(game)} getting along?",
                "Aide Pim will let you through to the north side of Fernway Path now.",
            ],
        )


def _kay(game: Game, npc: Npc) -> None:
    if not game.has("reached_route"):
        lines = ["The professor is out on Fernway Path, just north of town. He'll be back soon."]
    else:
        lines = ["The professor is so excited to hand out partners today!"]
    game.say(npc.name, lines)


def _pim(game: Game, npc: Npc) -> None:
    if game.has("named_partner"):
        lines = ["Go ahead! Youngster Tobi, up north, has been waiting for a challenger."]
    else:
        lines = [
            "Sorry, I can't let you through without a partner. Wild ones live in the tall grass!",
            "Professor Hazel's lab is in the south-east of Mossdale Town.",
        ]
    game.say(npc.name, lines)


def _tobi(game: Game, npc: Npc) -> None:
    if game.has("first_battle_won"):
        game.say(npc.name, [f"You and {_partner_name(game)} make a great team. I'll train harder!"])
    elif game.partner is not None:
        game.say(npc.name, ["Hey! You've got a partner? Then you've got to battle me!"], then="battle_start")
    else:
        game.say(npc.name, ["I'm waiting for someone with a partner to battle."])


def _simple(*lines: str) -> Callable[[Game, Npc], None]:
    def handler(game: Game, npc: Npc) -> None:
        game.say(npc.name, list(lines))

    return handler


_TALK: dict[str, Callable[[Game, Npc], None]] = {
    "mom": _mom,
    "hazel": _hazel,
    "kay": _kay,
    "pim": _pim,
    "tobi": _tobi,
    "mira": _simple(
        "Wild partners hide in tall grass. That's why the professor hands out partners of his own."
    ),
    "wren": _simple(
        "When I was young I walked Fernway Path every morning. Now I walk in circles around this pond."
    ),
    "ode": _simple("I'm looking for bug partners in the grass. Careful where you step!"),
}


# --- events run when a dialog closes, a menu entry is chosen or a name is submitted ---


def open_start_menu(game: Game) -> None:
    game.open_menu(
        Menu(
            kind="start",
            title="MENU",
            entries=[("party", "PARTY"), ("bag", "BAG"), ("info", "INFO"), ("close", "CLOSE")],
            on_select="start_menu",
            cancel_id="close",
        )
    )


def _start_menu(game: Game, entry: str | None) -> None:
    if entry == "party":
        p = game.partner
        text = (
            f"{p.name} the {p.species_name}  Lv{p.level}  HP {p.hp}/{p.max_hp}"
            if p
            else "You don't have a partner yet."
        )
        game.say(None, [text])
    elif entry == "bag":
        game.say(None, ["BAG: POTION x1, TOWN MAP. (Items can't be used in this sandbox.)"])
    elif entry == "info":
        game.say(
            None,
            [
                f"CLANKIE - milestones reached: {len(game.milestones)} of {len(MILESTONE_IDS)}.",
                "There is no saving here: every session starts a new game.",
            ],
        )


def _partner_choice(game: Game, entry: str | None) -> None:
    game.open_menu(
        Menu(
            kind="choice",
            title="PARTNERS",
            prompt="Which partner will you choose?",
            entries=[(k, f"{name} ({kind})") for k, (name, kind) in SPECIES.items()],
            on_select="partner_picked",
        )
    )


def _partner_picked(game: Game, entry: str | None) -> None:
    assert entry is not None
    game.pending_species = entry
    name, kind = SPECIES[entry]
    game.open_menu(
        Menu(
            kind="choice",
            title="CONFIRM",
            prompt=f"So, you want {name}, the {kind} partner?",
            entries=[("yes", "YES"), ("no", "NO")],
            on_select="partner_confirm",
            cancel_id="no",
        )
    )


def _partner_confirm(game: Game, entry: str | None) -> None:
    if entry != "yes" or game.pending_species is None:
        _partner_choice(game, None)
        return
    species = game.pending_species
    game.partner = Partner(species, SPECIES[species][0])
    game.reach("chose_partner")
    game.say(
        PROF,
        [
            f"{SPECIES[species][0]} is now your partner!",
            "Every partner deserves a name. What will you call yours?",
        ],
        then="name_partner",
    )


def _name_partner(game: Game, entry: str | None) -> None:
    assert game.partner is not None
    game.open_naming(f"Name your {game.partner.species_name}:", "partner_named")


def _partner_named(game: Game, name: str | None) -> None:
    assert game.partner is not None and name
    game.partner.name = name
    game.reach("named_partner")
    game.say(
        PROF,
        [
            f"{name}! What a fine name.",
            "Now go and see the world together. Aide Pim will let you through to the north of Fernway Path.",
            "If you meet Youngster Tobi up there, he'll want a battle!",
        ],
    )


def _battle_start(game: Game, entry: str | None) -> None:
    assert game.partner is not None
    game.partner.hp = game.partner.max_hp
    game.battle = Battle.against_tobi(game.partner)
    game.say(
        None,
        ["Youngster Tobi wants to battle!", "Tobi sent out NIBBLET!", f"Go! {game.partner.name}!"],
        then="battle_menu",
    )


def _battle_menu(game: Game, entry: str | None) -> None:
    game.open_menu(
        Menu(
            kind="battle",
            title=f"What will {_partner_name(game)} do?",
            entries=list(MOVES),
            on_select="battle_move",
        )
    )


def _battle_move(game: Game, entry: str | None) -> None:
    assert game.battle is not None and entry is not None
    texts, then = game.battle.turn(entry, game.battle_rng)
    game.say(None, texts, then=then)


def _battle_won(game: Game, entry: str | None) -> None:
    game.battle = None
    game.reach("first_battle_won")
    game.say(
        "Youngster Tobi",
        [
            "Aww, I lost! You two really are a team.",
            "(You have reached every milestone of the Mossdale sandbox. Well played!)",
        ],
    )


def _battle_lost(game: Game, entry: str | None) -> None:
    game.battle = None
    name = _partner_name(game)
    game.say(None, [f"You hurried home, and Mom nursed {name} back to health."], then="blackout")


def _blackout(game: Game, entry: str | None) -> None:
    if game.partner is not None:
        game.partner.hp = game.partner.max_hp
    game.facing = "down"
    game.move_to("house", 5, 5)


EVENTS: dict[str, Callable[[Game, str | None], None]] = {
    "start_menu": _start_menu,
    "partner_choice": _partner_choice,
    "partner_picked": _partner_picked,
    "partner_confirm": _partner_confirm,
    "name_partner": _name_partner,
    "partner_named": _partner_named,
    "battle_start": _battle_start,
    "battle_menu": _battle_menu,
    "battle_move": _battle_move,
    "battle_won": _battle_won,
    "battle_lost": _battle_lost,
    "blackout": _blackout,
}


def run(game: Game, event: str, arg: str | None = None) -> None:
    EVENTS[event](game, arg)
