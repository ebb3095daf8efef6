"""Read-only copies of models, for the store's reads whose decoded objects are shared by
every reader of the same row (`list_jobs(read_only=True)`, `finished_jobs`): changing one
raises, so no reader can change what another reads. A copy to change is a plain read
(`list_jobs()`, `get_job`), or `copy.deepcopy` / `model_copy(deep=True)` of a shared one:
plain models, lists and dicts again."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

SHARED = ("is shared with every other reader of the store (a read_only read): read it "
          "with list_jobs() or get_job() to change it")


def _refuse(*_: object, **__: object) -> NoReturn:
    raise TypeError(f"this value {SHARED}")


class FrozenList(list):
    """A list whose every change raises; a copy of it is a plain list."""

    __slots__ = ()
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list:
        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


class FrozenDict(dict):
    """A dict whose every change raises; a copy of it is a plain dict."""

    __slots__ = ()
    clear = pop = popitem = setdefault = update = _refuse
    __setitem__ = __delitem__ = __ior__ = _refuse

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)


_THAWED: dict[type, type] = {}  # a frozen model class -> the class it freezes


def _same_model(self: BaseModel, other: object) -> bool:
    """Equal to a model of the same class, frozen or not, with equal fields."""
    if not isinstance(other, BaseModel):
        return NotImplemented
    mine, theirs = type(self), type(other)
    return _THAWED.get(mine, mine) is _THAWED.get(theirs, theirs) and \
        self.__dict__ == other.__dict__


def _refuse_attribute(self: BaseModel, name: str, *_: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__}.{name}: this {type(self).__name__} {SHARED}")


def _thawed_copy(self: BaseModel, memo: dict[int, Any] | None = None) -> BaseModel:
    """A deep copy that may be changed: of the class frozen, its fields deep copies."""
    values = {name: copy.deepcopy(v, memo) for name, v in self.__dict__.items()}
    return _constructed(_THAWED[type(self)], values, self.model_fields_set)


def _constructed(cls: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """`cls.model_construct(fields_set, **values)` where `values` holds every field by its
    name (a model's own `__dict__`, copied): nothing looked up by alias nor filled in by
    default, so set at once (a shared read of a job builds a dozen models)."""
    if cls.__pydantic_root_model__ or cls.__pydantic_post_init__ \
            or cls.model_config.get("extra") == "allow":
        return cls.model_construct(fields_set, **values)
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


@cache
def _frozen_class(cls: type[M]) -> type[M]:
    frozen = type(cls.__name__, (cls,), {
        "__module__": cls.__module__, "__doc__": f"A read-only {cls.__name__}.",
        "__setattr__": _refuse_attribute, "__delattr__": _refuse_attribute,
        "__eq__": _same_model, "__hash__": None, "__deepcopy__": _thawed_copy})
    _THAWED[frozen] = cls
    return frozen


def frozen(model: M) -> M:
    """A copy of `model` that raises on any change: its fields, and their models, lists and
    dicts, to any depth (a model frozen already is itself). Compares equal to the model."""
    if type(model) in _THAWED:
        return model
    values = {name: v if type(v) in _ATOMS else _frozen_value(v)
              for name, v in model.__dict__.items()}
    return _constructed(_frozen_class(type(model)), values, model.model_fields_set)


# values read-only already (most of a model's fields): kept as they are, at once
_ATOMS = frozenset({str, int, float, bool, type(None)})


def _frozen_value(value: Any) -> Any:
    if type(value) in _ATOMS:
        return value
    if isinstance(value, BaseModel):
        return frozen(value)
    if isinstance(value, list):
        return FrozenList(_frozen_value(v) for v in value)
    if isinstance(value, dict):
        return FrozenDict({k: _frozen_value(v) for k, v in value.items()})
    if isinstance(value, set):
        return frozenset(value)
    if isinstance(value, tuple):
        return tuple(_frozen_value(v) for v in value)
    return value
