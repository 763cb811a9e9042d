"""The shapes of the PokeAgent world's JSON: the observation state made from the server's
``/state`` and ``/milestones`` answers (bot/worlds/pokeagent/mapping.py says what each entry
means), the ``/action`` request, and what waiting for the emulator to settle found.

The server's own answers are read key by key, as untrusted JSON objects (``ServerAnswer``); what
it sends inside a party member is passed on as sent."""

from __future__ import annotations

from typing import NotRequired, TypedDict

ServerAnswer = dict[str, object]
"""A JSON object the server answered (any other JSON is a protocol error)."""


class PokeLocation(TypedDict):
    map: str
    x: int
    y: int
    facing: str


class PokeMetrics(TypedDict):
    """The progress metrics, None where the server sent null (its memory read failed)."""

    badges: int | None
    pokedexCaught: int | None
    money: int | None


class PartyMember(TypedDict):
    species: object
    nickname: object
    level: object
    hp: list[object]
    status: object


class PokeDialog(TypedDict):
    open: bool
    text: str | None


class PokeAgentState(TypedDict, total=False):
    """What ``PokeAgentWorld.observe`` puts in an observation's state, in this order (the journal
    keeps it so). Always there: playerName, metrics, party, gameState, dialog, inBattle,
    stepNumber, milestones; the others only when they apply."""

    location: PokeLocation
    playerName: str | None
    metrics: PokeMetrics
    party: list[PartyMember]
    gameState: str
    dialog: PokeDialog
    inBattle: bool
    battle: dict[str, object]
    mapView: str
    stepNumber: int | None
    milestones: list[str]
    menu: str


class ActionRequest(TypedDict):
    """The body of ``POST /action``."""

    buttons: list[str]
    speed: str
    source: str
    hold_frames: NotRequired[int]
    release_frames: NotRequired[int]


class SettleRecord(TypedDict):
    """What waiting for the emulator found, as an action result reports it."""

    settled: bool
    fps: float
    stepCount: NotRequired[int]
    settleDetail: NotRequired[str]
