"""The original's decoded emulator observations, as its journal evidence records them.

Every observation is ``{schemaVersion: 1, observationId, sessionId, characterId, worldId,
goalVersion, capturedAt, frame, kind, data}``; ``kind`` picks the shape of ``data``:
overworld, menu, party, inventory, battle, dialog, scene, frame_reference, danger, action.
Fields the original marks nullish (null or absent) are ``NotRequired[X | None]``;
optional-only fields are ``NotRequired[X]`` (absent, never null).

These are closed TypedDicts, not models: an evidence packet holds nine observations of a
dozen nested objects each, and validating into plain dicts is several times cheaper than
building a model instance per object, with the same strictness (unknown keys and out of
bound values fail). Read them by key: ``obs["data"]["position"]["mapId"]``.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import AfterValidator, ConfigDict, Field, with_config
from typing_extensions import TypedDict

from journal.original.base import Id, Sha256, Timestamp, text

__all__ = ["Observation", "Overworld", "Scene"]

_closed = with_config(ConfigDict(extra="forbid", strict=True))

Facing = Literal["north", "east", "south", "west"]
_Summary = text(1024, 1)


@_closed
class _Base(TypedDict):
    schemaVersion: Literal[1]
    observationId: text(128, 1)  # type: ignore[valid-type]
    sessionId: Id
    characterId: Id
    worldId: Id
    goalVersion: Annotated[int, Field(ge=0)]
    capturedAt: Timestamp
    frame: Annotated[int, Field(ge=0, le=100_000_000)]


@_closed
class Position(TypedDict):
    mapId: text(128, 1)  # type: ignore[valid-type]
    x: Annotated[int, Field(ge=0, le=65_535)]
    y: Annotated[int, Field(ge=0, le=65_535)]


@_closed
class _Tile(TypedDict):
    x: Annotated[int, Field(ge=-1, le=1024)]
    y: Annotated[int, Field(ge=-1, le=1024)]
    passable: bool
    elevation: Annotated[int, Field(ge=0, le=15)] | None
    metatileId: Annotated[int, Field(ge=0, le=1023)] | None


@_closed
class _Surroundings(TypedDict):
    north: _Tile
    east: _Tile
    south: _Tile
    west: _Tile
    ahead: _Tile


@_closed
class _MapSize(TypedDict):
    width: Annotated[int, Field(ge=1, le=1024)]
    height: Annotated[int, Field(ge=1, le=1024)]


@_closed
class _TopLeft(TypedDict):
    x: Annotated[int, Field(ge=0, le=65_535)]
    y: Annotated[int, Field(ge=0, le=65_535)]


@_closed
class _Minimap(TypedDict):
    topLeft: _TopLeft
    rows: Annotated[list[text(64, 1)], Field(min_length=1, max_length=32)]  # type: ignore[valid-type]


@_closed
class _Occupant(TypedDict):
    localId: Annotated[int, Field(ge=0, le=255)]
    graphicsId: Annotated[int, Field(ge=0, le=255)]
    x: Annotated[int, Field(ge=0, le=65_535)]
    y: Annotated[int, Field(ge=0, le=65_535)]
    facing: NotRequired[Facing | None]


@_closed
class _Warp(TypedDict):
    x: Annotated[int, Field(ge=0, le=65_535)]
    y: Annotated[int, Field(ge=0, le=65_535)]
    destination: text(128, 1)  # type: ignore[valid-type]
    walkTo: NotRequired[Literal["supported", "unsupported"]]  # absent before world protocol v3


@_closed
class _Connection(TypedDict):
    direction: Literal["north", "south", "west", "east"]
    destination: text(128, 1)  # type: ignore[valid-type]


@_closed
class _Exits(TypedDict):
    warps: Annotated[list[_Warp], Field(max_length=32)]
    connections: Annotated[list[_Connection], Field(max_length=8)]


@_closed
class _OverworldData(TypedDict):
    position: Position
    facing: Facing
    surroundings: NotRequired[_Surroundings | None]
    mapSize: NotRequired[_MapSize | None]
    minimap: NotRequired[_Minimap | None]
    occupants: NotRequired[Annotated[list[_Occupant], Field(max_length=31)] | None]
    exits: NotRequired[_Exits | None]
    ramStateSha256: Sha256


@_closed
class Overworld(_Base):
    kind: Literal["overworld"]
    data: _OverworldData


@_closed
class _MenuEntry(TypedDict):
    id: text(128, 1)  # type: ignore[valid-type]
    label: text(256, 1)  # type: ignore[valid-type]


@_closed
class _MenuData(TypedDict):
    menuId: text(128, 1)  # type: ignore[valid-type]
    cursor: Annotated[int, Field(ge=0, le=63)]
    entries: Annotated[list[_MenuEntry], Field(min_length=1, max_length=16)]
    untrusted: Literal[True]


@_closed
class Menu(_Base):
    kind: Literal["menu"]
    data: _MenuData


@_closed
class _Member(TypedDict):
    slot: Annotated[int, Field(ge=0, le=5)]
    speciesId: text(128, 1)  # type: ignore[valid-type]
    level: Annotated[int, Field(ge=1, le=100)]
    currentHp: Annotated[int, Field(ge=0, le=9_999)]
    maxHp: Annotated[int, Field(ge=1, le=9_999)]
    status: Literal["healthy", "fainted"]


def _hp(member: _Member) -> _Member:
    if member["currentHp"] > member["maxHp"]:
        raise ValueError("currentHp exceeds maxHp")
    return member


@_closed
class _PartyData(TypedDict):
    activeSlot: Annotated[int, Field(ge=0, le=5)]
    members: Annotated[list[Annotated[_Member, AfterValidator(_hp)]], Field(max_length=6)]


@_closed
class Party(_Base):
    kind: Literal["party"]
    data: _PartyData


@_closed
class _Item(TypedDict):
    pocket: Literal["items", "key-items", "poke-balls", "tm-hm", "berries"]
    itemId: text(128, 1)  # type: ignore[valid-type]
    count: Annotated[int, Field(ge=1, le=999)]


@_closed
class _InventoryData(TypedDict):
    items: Annotated[list[_Item], Field(max_length=186)]


@_closed
class Inventory(_Base):
    kind: Literal["inventory"]
    data: _InventoryData


@_closed
class _Opponent(TypedDict):
    speciesId: text(128, 1)  # type: ignore[valid-type]
    level: Annotated[int, Field(ge=1, le=100)]
    currentHp: Annotated[int, Field(ge=0, le=9_999)]
    maxHp: Annotated[int, Field(ge=1, le=9_999)]


@_closed
class _Move(TypedDict):
    moveId: text(128, 1)  # type: ignore[valid-type]
    power: Annotated[int, Field(ge=0, le=999)]


@_closed
class _BattleData(TypedDict):
    battleId: text(128, 1)  # type: ignore[valid-type]
    turn: Annotated[int, Field(ge=1, le=10_000)]
    phase: Literal["awaiting_input", "resolving", "won", "lost"]
    opponent: _Opponent
    activePartySlot: Annotated[int, Field(ge=0, le=5)]
    moveCursor: Annotated[int, Field(ge=0, le=3)]
    legalMoves: Annotated[list[_Move], Field(min_length=1, max_length=4)]
    untrusted: Literal[True]


@_closed
class Battle(_Base):
    kind: Literal["battle"]
    data: _BattleData


@_closed
class _DialogData(TypedDict):
    speaker: text(128, 1)  # type: ignore[valid-type]
    lines: Annotated[list[text(512)], Field(max_length=8)]  # type: ignore[valid-type]
    lineIndex: Annotated[int, Field(ge=0, le=7)]
    untrusted: Literal[True]


@_closed
class Dialog(_Base):
    kind: Literal["dialog"]
    data: _DialogData


SceneMode = Literal[
    "unknown", "overworld", "dialog", "menu", "naming", "cutscene", "battle", "battle_won", "battle_lost"
]


@_closed
class _SceneData(TypedDict):
    mode: SceneMode
    inputReady: bool
    waitingForDialogAdvance: bool


@_closed
class Scene(_Base):
    kind: Literal["scene"]
    data: _SceneData


@_closed
class _FrameReferenceData(TypedDict):
    artifactId: text(256, 1)  # type: ignore[valid-type]
    uri: Annotated[str, Field(pattern=r"^artifact://[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$")]
    framebufferSha256: Sha256
    ramStateSha256: Sha256
    summary: _Summary  # type: ignore[valid-type]


@_closed
class FrameReference(_Base):
    kind: Literal["frame_reference"]
    data: _FrameReferenceData


@_closed
class _DangerData(TypedDict):
    severity: Literal["low", "medium", "high", "critical"]
    code: Literal["uncertain_state", "desync_detected", "input_bound", "policy_boundary"]
    summary: _Summary  # type: ignore[valid-type]
    stateCertain: bool


@_closed
class Danger(_Base):
    kind: Literal["danger"]
    data: _DangerData


@_closed
class _ActionData(TypedDict):
    actionId: Id
    status: Literal["queued", "running", "completed", "cancelled", "failed", "denied", "stale"]
    summary: _Summary  # type: ignore[valid-type]


@_closed
class ActionObservation(_Base):
    kind: Literal["action"]
    data: _ActionData


Observation = Annotated[
    Overworld
    | Menu
    | Party
    | Inventory
    | Battle
    | Dialog
    | Scene
    | FrameReference
    | Danger
    | ActionObservation,
    Field(discriminator="kind"),
]
