"""Partners and the one trainer battle of the sandbox (turn-based, seeded damage)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from bot.worlds.sandbox.state import BattleView, PartnerView

SPECIES: dict[str, tuple[str, str]] = {
    "sprigling": ("SPRIGLING", "grass"),
    "cindercub": ("CINDERCUB", "fire"),
    "puddlepup": ("PUDDLEPUP", "water"),
}
MOVES: tuple[tuple[str, str], ...] = (("tackle", "TACKLE"), ("growl", "GROWL"), ("run", "RUN"))


@dataclass
class Partner:
    species: str
    name: str
    level: int = 5
    hp: int = 20
    max_hp: int = 20

    @property
    def species_name(self) -> str:
        return SPECIES[self.species][0]

    def view(self) -> PartnerView:
        return {
            "name": self.name,
            "species": self.species_name,
            "level": self.level,
            "hp": self.hp,
            "maxHp": self.max_hp,
        }


@dataclass
class Battle:
    trainer: str
    foe_name: str
    foe_level: int
    foe_hp: int
    foe_max_hp: int
    ally: Partner
    foe_attack_drop: int = 0

    @classmethod
    def against_tobi(cls, ally: Partner) -> Battle:
        return cls("Youngster Tobi", "NIBBLET", 3, 14, 14, ally)

    def turn(self, move: str, rng: random.Random) -> tuple[list[str], str]:
        """Play one turn; returns the messages and the next story event."""
        me, foe = self.ally.name, f"Foe {self.foe_name}"
        if move == "run":
            return ["No! There's no running from a trainer battle!"], "battle_menu"
        if move == "growl":
            self.foe_attack_drop = min(2, self.foe_attack_drop + 1)
            texts = [f"{me} used GROWL!", f"{foe}'s attack fell!"]
        else:
            damage = rng.randint(4, 6)
            self.foe_hp = max(0, self.foe_hp - damage)
            texts = [f"{me} used TACKLE! It hit for {damage}."]
            if self.foe_hp == 0:
                return texts + [f"{foe} fainted!"], "battle_won"
        damage = max(1, rng.randint(2, 4) - self.foe_attack_drop)
        self.ally.hp = max(0, self.ally.hp - damage)
        texts.append(f"{foe} used SCRATCH! {me} took {damage}.")
        if self.ally.hp == 0:
            return texts + [f"{me} fainted!"], "battle_lost"
        return texts, "battle_menu"

    def view(self) -> BattleView:
        return {
            "trainer": self.trainer,
            "foe": {
                "name": self.foe_name,
                "level": self.foe_level,
                "hp": self.foe_hp,
                "maxHp": self.foe_max_hp,
            },
            "ally": self.ally.view(),
        }
