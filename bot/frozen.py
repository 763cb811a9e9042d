"""A cheaper ``__init__`` for frozen dataclasses built on every play turn.

A ``@dataclass(frozen=True)`` ``__init__`` sets each field with ``object.__setattr__`` (the
class's own ``__setattr__`` refuses), which costs about a third of a microsecond per field:
7 µs for an 18-field :class:`~bot.play.settled.SettledTurn`, a real share of a turn's loop
overhead (bench/turns.py). :func:`fast_init` replaces that ``__init__`` with one that fills the
instance's ``__dict__`` directly — the same signature, defaults, default factories and
``__post_init__``, and the instance stays exactly as frozen afterwards (assignment still
raises ``FrozenInstanceError``). Only plain frozen dataclasses are accepted: no ``slots``, no
keyword-only fields, no ``InitVar``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["fast_init"]


def fast_init(cls: type[T]) -> type[T]:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" in cls.__dict__:
        raise TypeError(f"fast_init wants a frozen dataclass without slots, not {cls.__name__}")
    namespace: dict[str, Any] = {"MISSING": dataclasses.MISSING}
    args: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]  # checked to be a dataclass above
        if f.kw_only:
            raise TypeError(f"fast_init: {cls.__name__}.{f.name} is keyword-only")
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            value = f.name if f.init else f"_default_{f.name}"
            if f.init:
                args.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            if f.init:
                args.append(f"{f.name}=MISSING")
                body.append(f"  if {f.name} is MISSING: {f.name} = _factory_{f.name}()")
                value = f.name
            else:
                value = f"_factory_{f.name}()"
        elif f.init:
            args.append(f.name)
            value = f.name
        else:
            continue  # no value to give: the generated dataclass __init__ leaves it unset too
        body.append(f"  d[{f.name!r}] = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    source = f"def __init__(self, {', '.join(args)}):\n  d = self.__dict__\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # noqa: S102  (built from the dataclass's own field names)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
