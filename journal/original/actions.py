"""The original service's action catalog, as its journal records a turn's action.

Two families: the emulator catalog (``button_press`` … ``select_menu_entry``) and the
body's saved-time actions (``save_checkpoint``, ``load_checkpoint``, ``restart_game``).
Differences from our own catalog that a reader must keep: ``holdFrames`` is required on a
button press and ``repeat``/``submit`` may be absent; ``walk_to`` reaches x, y ≤ 1023.

A journal's action reads as this catalog or, archivally, as any bounded historical
``{kind, …}`` (:class:`journal.actions.HistoricalAction`), exactly as for our own journals.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from journal.actions import HistoricalAction
from journal.original.base import Strict, absent

__all__ = [
    "BODY_ACTION_KINDS",
    "ORIGINAL_ACTION_KINDS",
    "OriginalAction",
    "OriginalActionRead",
]


class _Action(Strict):
    pass


Button = Literal["a", "b", "start", "select", "up", "down", "left", "right", "l", "r"]


class ButtonPress(_Action):
    kind: Literal["button_press"]
    button: Button
    holdFrames: int = Field(ge=1, le=240)
    repeat: Annotated[int, Field(ge=1, le=16)] = absent()


class FrameAdvance(_Action):
    kind: Literal["frame_advance"]
    frames: int = Field(ge=1, le=3600)


class WalkTo(_Action):
    kind: Literal["walk_to"]
    x: int = Field(ge=0, le=1023)
    y: int = Field(ge=0, le=1023)


class AdvanceDialog(_Action):
    kind: Literal["advance_dialog"]


class EnterText(_Action):
    kind: Literal["enter_text"]
    text: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9 .,!?/-]{1,10}$")]
    submit: bool = absent()


class SelectMenuEntry(_Action):
    kind: Literal["select_menu_entry"]
    entryId: Annotated[str, StringConstraints(min_length=1, max_length=64)]


class SaveCheckpoint(_Action):
    kind: Literal["save_checkpoint"]
    label: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")] = absent()


class LoadCheckpoint(_Action):
    kind: Literal["load_checkpoint"]
    checkpointId: Annotated[str, StringConstraints(min_length=1, max_length=200)] = absent()


class RestartGame(_Action):
    kind: Literal["restart_game"]


OriginalAction = Annotated[
    ButtonPress
    | FrameAdvance
    | WalkTo
    | AdvanceDialog
    | EnterText
    | SelectMenuEntry
    | SaveCheckpoint
    | LoadCheckpoint
    | RestartGame,
    Field(discriminator="kind"),
]
# Left to right: a catalog action is taken as such without also trying the open shape.
OriginalActionRead = Annotated[OriginalAction | HistoricalAction, Field(union_mode="left_to_right")]

ORIGINAL_ACTION_KINDS = frozenset(
    {
        "button_press",
        "frame_advance",
        "walk_to",
        "advance_dialog",
        "enter_text",
        "select_menu_entry",
        "save_checkpoint",
        "load_checkpoint",
        "restart_game",
    }
)
BODY_ACTION_KINDS = frozenset({"save_checkpoint", "load_checkpoint", "restart_game"})
