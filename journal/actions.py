"""The live action vocabulary of every world, and the open historical shape.

The journal owns the action schema because it must validate a turn's action on write
(live catalog only) and read back any bounded historical ``{kind, …payload}`` on read.
Worlds import their catalogs from here; ``journal`` imports nothing from ``bot``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypedDict, cast, get_args

import orjson
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, model_validator

from journal.json_types import JSONObject, JSONValue

GBA_BUTTONS = ("a", "b", "start", "select", "up", "down", "left", "right", "l", "r")
NAMED_KEYS = (
    "Space",
    "Enter",
    "Escape",
    "Tab",
    "Backspace",
    "Delete",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
)
BROWSER_VIEWPORT = (1280, 800)
HISTORICAL_ACTION_MAX_BYTES = 4096


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- GBA catalog (sandbox, pokeagent) -------------------------------------------------


class ButtonPress(_Action):
    """Press one button; held for holdFrames frames, repeated `repeat` times."""

    kind: Literal["button_press"]
    button: Literal["a", "b", "start", "select", "up", "down", "left", "right", "l", "r"]
    holdFrames: int = Field(default=16, ge=1, le=240)
    repeat: int = Field(default=1, ge=1, le=16)


class FrameAdvance(_Action):
    """Let the game run for a number of frames (60 per second) without input."""

    kind: Literal["frame_advance"]
    frames: int = Field(ge=1, le=3600)


class WalkTo(_Action):
    """Walk to a tile of the current map along a shortest path."""

    kind: Literal["walk_to"]
    x: int = Field(ge=0, le=255)
    y: int = Field(ge=0, le=255)


class AdvanceDialog(_Action):
    """Advance the open dialog until it closes or needs a choice."""

    kind: Literal["advance_dialog"]


class SelectMenuEntry(_Action):
    """Choose an entry of the open menu by its id."""

    kind: Literal["select_menu_entry"]
    entryId: Annotated[str, StringConstraints(min_length=1, max_length=64)]


class EnterText(_Action):
    """Type a name on the naming screen; submit confirms it."""

    kind: Literal["enter_text"]
    text: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9 .,!?/-]{1,10}$")]
    submit: bool = True


# --- browser catalog ------------------------------------------------------------------


class Click(_Action):
    """Click at viewport CSS pixels (x, y) or on a DOM element by ref."""

    kind: Literal["click"]
    x: int | None = Field(default=None, ge=0, le=BROWSER_VIEWPORT[0] - 1)
    y: int | None = Field(default=None, ge=0, le=BROWSER_VIEWPORT[1] - 1)
    ref: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None

    @model_validator(mode="after")
    def _one_target(self) -> Click:
        has_xy = self.x is not None and self.y is not None
        if self.ref is not None and (self.x is not None or self.y is not None):
            raise ValueError("give either x and y or ref, not both")
        if self.ref is None and not has_xy:
            raise ValueError("give both x and y, or ref")
        return self


def _valid_key(key: str) -> str:
    if key in NAMED_KEYS or (len(key) == 1 and key.isprintable()):
        return key
    raise ValueError(f"key must be one printable character or one of {', '.join(NAMED_KEYS)}")


class Press(_Action):
    """Press a key; with hold_ms it is held down that long before release."""

    kind: Literal["press"]
    key: Annotated[str, StringConstraints(min_length=1, max_length=16)]
    hold_ms: int = Field(default=0, ge=0, le=2000)

    @model_validator(mode="after")
    def _key(self) -> Press:
        _valid_key(self.key)
        return self


class TypeText(_Action):
    """Type text into the focused element."""

    kind: Literal["type"]
    text: Annotated[str, StringConstraints(min_length=1, max_length=500)]


class Scroll(_Action):
    """Scroll the page vertically by dy CSS pixels."""

    kind: Literal["scroll"]
    dy: int = Field(ge=-5000, le=5000)


GbaAction = Annotated[
    ButtonPress | FrameAdvance | WalkTo | AdvanceDialog | SelectMenuEntry | EnterText,
    Field(discriminator="kind"),
]
BrowserAction = Annotated[Click | Press | TypeText | Scroll, Field(discriminator="kind")]
LiveAction = Annotated[
    ButtonPress
    | FrameAdvance
    | WalkTo
    | AdvanceDialog
    | SelectMenuEntry
    | EnterText
    | Click
    | Press
    | TypeText
    | Scroll,
    Field(discriminator="kind"),
]

LIVE_ACTION_MODELS: tuple[type[_Action], ...] = (
    ButtonPress,
    FrameAdvance,
    WalkTo,
    AdvanceDialog,
    SelectMenuEntry,
    EnterText,
    Click,
    Press,
    TypeText,
    Scroll,
)


def kind_of(model: type[BaseModel]) -> str:
    """The action kind a model declares: the one value of its ``kind: Literal[...]`` field."""
    (kind,) = get_args(model.model_fields["kind"].annotation)
    return str(kind)


LIVE_ACTION_KINDS: frozenset[str] = frozenset(kind_of(m) for m in LIVE_ACTION_MODELS)

_live_adapter: TypeAdapter[Any] = TypeAdapter(cast(Any, LiveAction))  # a special form


class HistoricalAction(BaseModel):
    """Any recorded action shape: a kind and its payload, bounded in size.

    Deliberately open: there is no list of retired kinds. Read-only; never written.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    kind: Annotated[str, StringConstraints(min_length=1, max_length=64)]

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and len(orjson.dumps(dict(data))) > HISTORICAL_ACTION_MAX_BYTES:
            raise ValueError(f"historical action is larger than {HISTORICAL_ACTION_MAX_BYTES} bytes")
        return data


class ActionDescription(TypedDict):
    """One action kind as a prompt describes it (:meth:`Catalog.describe`)."""

    kind: str
    description: str
    # Its arguments' JSON schema, a pydantic model's, which prompts read property by property
    # (bot/play/minds/openai_mind.py): nested JSON without a fixed shape.
    schema: dict[str, Any]


class Catalog:
    """A world's live action catalog: the models it offers, validated as one union."""

    def __init__(self, name: str, models: Sequence[type[_Action]]) -> None:
        if not models:
            raise ValueError("a catalog needs at least one action model")
        self.name = name
        self.models: tuple[type[_Action], ...] = tuple(models)
        self.kinds: tuple[str, ...] = tuple(kind_of(m) for m in self.models)
        union: Any = (
            self.models[0]
            if len(self.models) == 1
            else Annotated[_union(self.models), Field(discriminator="kind")]
        )
        self.adapter: TypeAdapter[Any] = TypeAdapter(union)

    def validate(self, data: Any) -> _Action:
        """Validate a decoded action (dict) against this catalog; raises pydantic.ValidationError."""
        result: _Action = self.adapter.validate_python(data)
        return result

    def json_schema(self) -> JSONObject:
        schema: JSONObject = self.adapter.json_schema()
        return schema

    def describe(self) -> list[ActionDescription]:
        """One entry per kind: its name, description and argument schema, for prompts."""
        out: list[ActionDescription] = []
        for model, kind in zip(self.models, self.kinds, strict=True):
            out.append(
                {
                    "kind": kind,
                    "description": (model.__doc__ or "").strip(),
                    "schema": model.model_json_schema(),
                }
            )
        return out


def _union(models: Sequence[type[_Action]]) -> Any:
    return functools.reduce(operator.or_, models)


GBA_CATALOG = Catalog("gba", (ButtonPress, FrameAdvance, WalkTo, AdvanceDialog, SelectMenuEntry, EnterText))
BROWSER_CATALOG = Catalog("browser", (Click, Press, TypeText, Scroll))


def validate_live(data: Any) -> _Action:
    """Validate against the union of every live catalog (what a journal may record on write)."""
    result: _Action = _live_adapter.validate_python(data)
    return result


def action_payload(action: BaseModel) -> dict[str, JSONValue]:
    """The JSON-ready dict of an action (all fields, defaults included)."""
    return action.model_dump(mode="json")
