"""The original's decoded emulator observations, as its journal evidence records them.

Every observation is ``{schemaVersion: 1, observationId, sessionId, characterId, worldId,
goalVersion, capturedAt, frame, kind, data}``; ``kind`` picks the shape of ``data``:
overworld, menu, party, inventory, battle, dialog, scene, frame_reference, danger, action.
Fields the original marks nullish (null or absent) are ``X | None | UnsetType``;
optional-only fields are ``X | UnsetType`` (absent reads as ``UNSET``; null fails).

These are msgspec Structs that forbid unknown fields, validated with the rest of a turn's
evidence (journal/original/evidence.py): an evidence packet holds nine observations of a
dozen nested objects each, the bulk of a line, and msgspec validates them several times
faster than pydantic with the same strictness (no bool for an int, bounds, patterns,
closed key sets).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from journal.original.base import SAFE_INTEGER, ZOD_DATETIME
from journal.schema import not_an_instant

__all__ = [
    "OBSERVATION_TYPES",
    "Observation",
    "Overworld",
    "Scene",
    "check_instants",
    "msgspec_reason",
]

Facing = Literal["north", "east", "south", "west"]
# msgspec matches patterns with re.search: \Z, not $ (which also matches before a final newline).
Sha256 = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}\Z")]
# zod's datetime() form (journal/original/base.py); its calendar is checked after decoding
# (check_instants), as msgspec has no validator of its own.
Timestamp = Annotated[str, Meta(pattern=ZOD_DATETIME + r"\Z")]
Id = Annotated[str, Meta(min_length=1)]
Str128 = Annotated[str, Meta(min_length=1, max_length=128)]
Summary = Annotated[str, Meta(min_length=1, max_length=1024)]
Coord = Annotated[int, Meta(ge=0, le=65_535)]


class _S(Struct, forbid_unknown_fields=True):
    pass


def check_instants(*stamps: tuple[str, str | None]) -> None:
    """Raise ValueError naming the first ``(field, timestamp)`` that is no real instant (in
    __post_init__, where msgspec reports it at the struct's path)."""
    for name, value in stamps:
        reason = None if value is None else not_an_instant(value)
        if reason is not None:
            raise ValueError(f"{name}: {reason} ({value!r})")


class Position(_S):
    mapId: Str128
    x: Coord
    y: Coord


class _Tile(_S):
    x: Annotated[int, Meta(ge=-1, le=1024)]
    y: Annotated[int, Meta(ge=-1, le=1024)]
    passable: bool
    elevation: Annotated[int, Meta(ge=0, le=15)] | None
    metatileId: Annotated[int, Meta(ge=0, le=1023)] | None


class _Surroundings(_S):
    north: _Tile
    east: _Tile
    south: _Tile
    west: _Tile
    ahead: _Tile


class _MapSize(_S):
    width: Annotated[int, Meta(ge=1, le=1024)]
    height: Annotated[int, Meta(ge=1, le=1024)]


class _TopLeft(_S):
    x: Coord
    y: Coord


class _Minimap(_S):
    topLeft: _TopLeft
    rows: Annotated[
        list[Annotated[str, Meta(min_length=1, max_length=64)]], Meta(min_length=1, max_length=32)
    ]


class _Occupant(_S):
    localId: Annotated[int, Meta(ge=0, le=255)]
    graphicsId: Annotated[int, Meta(ge=0, le=255)]
    x: Coord
    y: Coord
    facing: Facing | None | UnsetType = UNSET


class _Warp(_S):
    x: Coord
    y: Coord
    destination: Str128
    walkTo: Literal["supported", "unsupported"] | UnsetType = UNSET  # absent before world protocol v3


class _Connection(_S):
    direction: Literal["north", "south", "west", "east"]
    destination: Str128


class _Exits(_S):
    warps: Annotated[list[_Warp], Meta(max_length=32)]
    connections: Annotated[list[_Connection], Meta(max_length=8)]


class _OverworldData(_S):
    position: Position
    facing: Facing
    ramStateSha256: Sha256
    surroundings: _Surroundings | None | UnsetType = UNSET
    mapSize: _MapSize | None | UnsetType = UNSET
    minimap: _Minimap | None | UnsetType = UNSET
    occupants: Annotated[list[_Occupant], Meta(max_length=31)] | None | UnsetType = UNSET
    exits: _Exits | None | UnsetType = UNSET


class _Base(_S, tag_field="kind"):
    schemaVersion: Literal[1]
    observationId: Str128
    sessionId: Id
    characterId: Id
    worldId: Id
    goalVersion: Annotated[int, Meta(ge=0, le=SAFE_INTEGER)]
    capturedAt: Timestamp
    frame: Annotated[int, Meta(ge=0, le=100_000_000)]

    def __post_init__(self) -> None:
        if not_an_instant(self.capturedAt) is not None:
            check_instants(("capturedAt", self.capturedAt))


class Overworld(_Base, tag="overworld"):
    data: _OverworldData


class _MenuEntry(_S):
    id: Str128
    label: Annotated[str, Meta(min_length=1, max_length=256)]


class _MenuData(_S):
    menuId: Str128
    cursor: Annotated[int, Meta(ge=0, le=63)]
    entries: Annotated[list[_MenuEntry], Meta(min_length=1, max_length=16)]
    untrusted: Literal[True]


class Menu(_Base, tag="menu"):
    data: _MenuData


class _Member(_S):
    slot: Annotated[int, Meta(ge=0, le=5)]
    speciesId: Str128
    level: Annotated[int, Meta(ge=1, le=100)]
    currentHp: Annotated[int, Meta(ge=0, le=9_999)]
    maxHp: Annotated[int, Meta(ge=1, le=9_999)]
    status: Literal["healthy", "fainted"]

    def __post_init__(self) -> None:
        if self.currentHp > self.maxHp:
            raise ValueError("currentHp exceeds maxHp")


class _PartyData(_S):
    activeSlot: Annotated[int, Meta(ge=0, le=5)]
    members: Annotated[list[_Member], Meta(max_length=6)]


class Party(_Base, tag="party"):
    data: _PartyData


class _Item(_S):
    pocket: Literal["items", "key-items", "poke-balls", "tm-hm", "berries"]
    itemId: Str128
    count: Annotated[int, Meta(ge=1, le=999)]


class _InventoryData(_S):
    items: Annotated[list[_Item], Meta(max_length=186)]


class Inventory(_Base, tag="inventory"):
    data: _InventoryData


class _Opponent(_S):
    speciesId: Str128
    level: Annotated[int, Meta(ge=1, le=100)]
    currentHp: Annotated[int, Meta(ge=0, le=9_999)]
    maxHp: Annotated[int, Meta(ge=1, le=9_999)]


class _Move(_S):
    moveId: Str128
    power: Annotated[int, Meta(ge=0, le=999)]


class _BattleData(_S):
    battleId: Str128
    turn: Annotated[int, Meta(ge=1, le=10_000)]
    phase: Literal["awaiting_input", "resolving", "won", "lost"]
    opponent: _Opponent
    activePartySlot: Annotated[int, Meta(ge=0, le=5)]
    moveCursor: Annotated[int, Meta(ge=0, le=3)]
    legalMoves: Annotated[list[_Move], Meta(min_length=1, max_length=4)]
    untrusted: Literal[True]


class Battle(_Base, tag="battle"):
    data: _BattleData


class _DialogData(_S):
    speaker: Str128
    lines: Annotated[list[Annotated[str, Meta(max_length=512)]], Meta(max_length=8)]
    lineIndex: Annotated[int, Meta(ge=0, le=7)]
    untrusted: Literal[True]


class Dialog(_Base, tag="dialog"):
    data: _DialogData


SceneMode = Literal[
    "unknown", "overworld", "dialog", "menu", "naming", "cutscene", "battle", "battle_won", "battle_lost"
]


class _SceneData(_S):
    mode: SceneMode
    inputReady: bool
    waitingForDialogAdvance: bool


class Scene(_Base, tag="scene"):
    data: _SceneData


class _FrameReferenceData(_S):
    artifactId: Annotated[str, Meta(min_length=1, max_length=256)]
    uri: Annotated[str, Meta(pattern=r"^artifact://[A-Za-z0-9._~!$&'()*+,;=:@%/-]+\Z")]
    framebufferSha256: Sha256
    ramStateSha256: Sha256
    summary: Summary


class FrameReference(_Base, tag="frame_reference"):
    data: _FrameReferenceData


class _DangerData(_S):
    severity: Literal["low", "medium", "high", "critical"]
    code: Literal["uncertain_state", "desync_detected", "input_bound", "policy_boundary"]
    summary: Summary
    stateCertain: bool


class Danger(_Base, tag="danger"):
    data: _DangerData


class _ActionData(_S):
    actionId: Id
    status: Literal["queued", "running", "completed", "cancelled", "failed", "denied", "stale"]
    summary: Summary


class ActionObservation(_Base, tag="action"):
    data: _ActionData


Observation = (
    Overworld
    | Menu
    | Party
    | Inventory
    | Battle
    | Dialog
    | Scene
    | FrameReference
    | Danger
    | ActionObservation
)
OBSERVATION_TYPES = (
    Overworld,
    Menu,
    Party,
    Inventory,
    Battle,
    Dialog,
    Scene,
    FrameReference,
    Danger,
    ActionObservation,
)


_AT = re.compile(r"^(.*) - at `\$(.*)`$", re.S)
_NAMED = re.compile(r"^Object (contains unknown|missing required) field `(.+)`$")


def msgspec_reason(exc: msgspec.ValidationError) -> str:
    """msgspec's message in the journal's words: ``unknown field 1.data.weather`` and so on."""
    text = str(exc)
    match = _AT.match(text)
    message, where = (match.group(1), match.group(2)) if match else (text, "")
    where = re.sub(r"\[(\d+)\]", r".\1", where).lstrip(".")
    named = _NAMED.match(message)
    if named:
        field = ".".join(filter(None, [where, named.group(2)]))
        return f"{'unknown' if named.group(1).startswith('contains') else 'missing'} field {field}"
    return f"{where}: {message}" if where else message
