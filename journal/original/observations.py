"""The original's decoded emulator observations, as its journal evidence records them.

Every observation is ``{schemaVersion: 1, observationId, sessionId, characterId, worldId,
goalVersion, capturedAt, frame, kind, data}``; ``kind`` picks the shape of ``data``:
overworld, menu, party, inventory, battle, dialog, scene, frame_reference, danger, action.
Fields the original marks nullish (null or absent) are ``X | None = None``; optional-only
fields refuse null (:func:`journal.original.base.absent`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from journal.original.base import Id, Sha256, Strict, Timestamp, absent, text

__all__ = ["Observation", "Overworld", "Scene"]

Facing = Literal["north", "east", "south", "west"]
_Summary = text(1024, 1)


class _Base(Strict):
    schemaVersion: Literal[1]
    observationId: text(128, 1)  # type: ignore[valid-type]
    sessionId: Id
    characterId: Id
    worldId: Id
    goalVersion: int = Field(ge=0)
    capturedAt: Timestamp
    frame: int = Field(ge=0, le=100_000_000)


class Position(Strict):
    mapId: text(128, 1)  # type: ignore[valid-type]
    x: int = Field(ge=0, le=65_535)
    y: int = Field(ge=0, le=65_535)


class _Tile(Strict):
    x: int = Field(ge=-1, le=1024)
    y: int = Field(ge=-1, le=1024)
    passable: bool
    elevation: Annotated[int, Field(ge=0, le=15)] | None
    metatileId: Annotated[int, Field(ge=0, le=1023)] | None


class _Surroundings(Strict):
    north: _Tile
    east: _Tile
    south: _Tile
    west: _Tile
    ahead: _Tile


class _MapSize(Strict):
    width: int = Field(ge=1, le=1024)
    height: int = Field(ge=1, le=1024)


class _TopLeft(Strict):
    x: int = Field(ge=0, le=65_535)
    y: int = Field(ge=0, le=65_535)


class _Minimap(Strict):
    topLeft: _TopLeft
    rows: list[text(64, 1)] = Field(min_length=1, max_length=32)  # type: ignore[valid-type]


class _Occupant(Strict):
    localId: int = Field(ge=0, le=255)
    graphicsId: int = Field(ge=0, le=255)
    x: int = Field(ge=0, le=65_535)
    y: int = Field(ge=0, le=65_535)
    facing: Facing | None = None


class _Warp(Strict):
    x: int = Field(ge=0, le=65_535)
    y: int = Field(ge=0, le=65_535)
    destination: text(128, 1)  # type: ignore[valid-type]
    walkTo: Literal["supported", "unsupported"] = absent()  # absent before world protocol v3


class _Connection(Strict):
    direction: Literal["north", "south", "west", "east"]
    destination: text(128, 1)  # type: ignore[valid-type]


class _Exits(Strict):
    warps: list[_Warp] = Field(max_length=32)
    connections: list[_Connection] = Field(max_length=8)


class _OverworldData(Strict):
    position: Position
    facing: Facing
    surroundings: _Surroundings | None = None
    mapSize: _MapSize | None = None
    minimap: _Minimap | None = None
    occupants: list[_Occupant] | None = Field(default=None, max_length=31)
    exits: _Exits | None = None
    ramStateSha256: Sha256


class Overworld(_Base):
    kind: Literal["overworld"]
    data: _OverworldData


class _MenuEntry(Strict):
    id: text(128, 1)  # type: ignore[valid-type]
    label: text(256, 1)  # type: ignore[valid-type]


class _MenuData(Strict):
    menuId: text(128, 1)  # type: ignore[valid-type]
    cursor: int = Field(ge=0, le=63)
    entries: list[_MenuEntry] = Field(min_length=1, max_length=16)
    untrusted: Literal[True]


class Menu(_Base):
    kind: Literal["menu"]
    data: _MenuData


class _Member(Strict):
    slot: int = Field(ge=0, le=5)
    speciesId: text(128, 1)  # type: ignore[valid-type]
    level: int = Field(ge=1, le=100)
    currentHp: int = Field(ge=0, le=9_999)
    maxHp: int = Field(ge=1, le=9_999)
    status: Literal["healthy", "fainted"]

    @model_validator(mode="after")
    def _hp(self) -> _Member:
        if self.currentHp > self.maxHp:
            raise ValueError("currentHp exceeds maxHp")
        return self


class _PartyData(Strict):
    activeSlot: int = Field(ge=0, le=5)
    members: list[_Member] = Field(max_length=6)


class Party(_Base):
    kind: Literal["party"]
    data: _PartyData


class _Item(Strict):
    pocket: Literal["items", "key-items", "poke-balls", "tm-hm", "berries"]
    itemId: text(128, 1)  # type: ignore[valid-type]
    count: int = Field(ge=1, le=999)


class _InventoryData(Strict):
    items: list[_Item] = Field(max_length=186)


class Inventory(_Base):
    kind: Literal["inventory"]
    data: _InventoryData


class _Opponent(Strict):
    speciesId: text(128, 1)  # type: ignore[valid-type]
    level: int = Field(ge=1, le=100)
    currentHp: int = Field(ge=0, le=9_999)
    maxHp: int = Field(ge=1, le=9_999)


class _Move(Strict):
    moveId: text(128, 1)  # type: ignore[valid-type]
    power: int = Field(ge=0, le=999)


class _BattleData(Strict):
    battleId: text(128, 1)  # type: ignore[valid-type]
    turn: int = Field(ge=1, le=10_000)
    phase: Literal["awaiting_input", "resolving", "won", "lost"]
    opponent: _Opponent
    activePartySlot: int = Field(ge=0, le=5)
    moveCursor: int = Field(ge=0, le=3)
    legalMoves: list[_Move] = Field(min_length=1, max_length=4)
    untrusted: Literal[True]


class Battle(_Base):
    kind: Literal["battle"]
    data: _BattleData


class _DialogData(Strict):
    speaker: text(128, 1)  # type: ignore[valid-type]
    lines: list[text(512)] = Field(max_length=8)  # type: ignore[valid-type]
    lineIndex: int = Field(ge=0, le=7)
    untrusted: Literal[True]


class Dialog(_Base):
    kind: Literal["dialog"]
    data: _DialogData


SceneMode = Literal[
    "unknown", "overworld", "dialog", "menu", "naming", "cutscene", "battle", "battle_won", "battle_lost"
]


class _SceneData(Strict):
    mode: SceneMode
    inputReady: bool
    waitingForDialogAdvance: bool


class Scene(_Base):
    kind: Literal["scene"]
    data: _SceneData


class _FrameReferenceData(Strict):
    artifactId: text(256, 1)  # type: ignore[valid-type]
    uri: Annotated[str, Field(pattern=r"^artifact://[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$")]
    framebufferSha256: Sha256
    ramStateSha256: Sha256
    summary: _Summary  # type: ignore[valid-type]


class FrameReference(_Base):
    kind: Literal["frame_reference"]
    data: _FrameReferenceData


class _DangerData(Strict):
    severity: Literal["low", "medium", "high", "critical"]
    code: Literal["uncertain_state", "desync_detected", "input_bound", "policy_boundary"]
    summary: _Summary  # type: ignore[valid-type]
    stateCertain: bool


class Danger(_Base):
    kind: Literal["danger"]
    data: _DangerData


class _ActionData(Strict):
    actionId: Id
    status: Literal["queued", "running", "completed", "cancelled", "failed", "denied", "stale"]
    summary: _Summary  # type: ignore[valid-type]


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
