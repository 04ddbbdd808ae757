"""Plain data for what the cache stores: nothing read back from disk can run code.

The cache folder may hold files someone else wrote (a CI cache restored from another
branch, a shared `IDEMLINT_CACHE_DIR`), so what is read from it is only data: tuples,
dicts, frozensets, strings, numbers, bytes, booleans and None, written with `marshal`.
A dataclass is stored as the tuple of its fields and rebuilt through its constructor
after every value has been checked against the field's declared type; a value of any
other shape, or a stored object of any other type (marshal can also hold code objects,
which are never wanted here), makes the whole entry `Corrupt`: the caller rebuilds it.
At worst, then, a writer of the cache folder makes idemlint recompute, or report what a
file's stored findings say while the file keeps the stat and hash it was stored with.
"""

from __future__ import annotations

import marshal
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")
Decoder = Callable[[Any], Any]

_LEAVES = (str, int, float, bytes, bool, type(None))


class Corrupt(ValueError):
    """A stored value that is not of the expected shape."""


def to_plain(value: Any) -> Any:
    """`value` as plain data: a dataclass as the tuple of its constructor's fields, sets as
    frozensets, mappings as dicts. Raises ValueError for anything else."""
    if isinstance(value, _LEAVES):
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return tuple(to_plain(getattr(value, f.name)) for f in fields(value) if f.init)
    if isinstance(value, (tuple, list)):
        return tuple(to_plain(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(to_plain(item) for item in value)
    if isinstance(value, Mapping):
        return {to_plain(key): to_plain(item) for key, item in value.items()}
    raise ValueError(f"not plain data: {type(value).__name__}")


def dumps(value: Any) -> bytes:
    return marshal.dumps(to_plain(value))


def loads(data: bytes, hint: Any, names: Mapping[str, Any] | None = None) -> Any:
    """The value of type `hint` stored in `data` by `dumps`; raises Corrupt. `names`: what the
    dataclasses' string annotations name that their modules import only for type checking."""
    try:
        value = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as error:
        raise Corrupt(str(error)) from None
    return decoder(hint, names)(value)


def decode(value: Any, hint: Any, names: Mapping[str, Any] | None = None) -> Any:
    """`value` (from `marshal.loads`) checked and rebuilt as `hint`; raises Corrupt."""
    return decoder(hint, names)(value)


_DECODERS: dict[tuple[Any, tuple[tuple[str, int], ...]], Decoder] = {}


def decoder(hint: Any, names: Mapping[str, Any] | None = None) -> Decoder:
    """A function checking and rebuilding plain values of type `hint` (made once per type)."""
    key = (hint, tuple(sorted((name, id(value)) for name, value in (names or {}).items())))
    found = _DECODERS.get(key)
    if found is None:
        found = _DECODERS[key] = _compile(hint, dict(names or {}), {})
    return found


def _compile(hint: Any, names: dict[str, Any], made: dict[Any, Decoder]) -> Decoder:
    if hint in made:  # a recursive type: the decoder being made
        return lambda value: made[hint](value)
    if hint is type(None) or hint is None:
        return _exactly(type(None))
    if hint in (str, bytes, bool):
        return _exactly(hint)
    if hint is int:
        return _exactly(int)
    if hint is float:
        return _number
    if isinstance(hint, type) and is_dataclass(hint):
        return _dataclass(hint, names, made)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _union([_compile(arg, names, made) for arg in args])
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(_compile(args[0], names, made))
        return _record(tuple(_compile(arg, names, made) for arg in args))
    if origin in (frozenset, set):
        item = _compile(args[0], names, made)
        return lambda value: frozenset(item(v) for v in _of(value, frozenset))
    if origin in (dict, Mapping):
        key, item = _compile(args[0], names, made), _compile(args[1], names, made)
        return lambda value: {key(k): item(v) for k, v in _of(value, dict).items()}
    if hint is Any:
        return _plain
    raise TypeError(f"no plain-data decoder for {hint!r}")


def _of(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise Corrupt(f"expected {kind.__name__}, found {type(value).__name__}")
    return value


def _exactly(kind: type) -> Decoder:
    return lambda value: _of(value, kind)


def _number(value: Any) -> float:
    if type(value) not in (int, float):
        raise Corrupt(f"expected a number, found {type(value).__name__}")
    return float(value)


def _plain(value: Any) -> Any:
    """Any plain value, checked all the way down (for fields typed `Any`)."""
    if isinstance(value, _LEAVES):
        return value
    if type(value) in (tuple, frozenset):
        return type(value)(_plain(item) for item in value)
    if type(value) is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise Corrupt(f"not plain data: {type(value).__name__}")


def _union(options: list[Decoder]) -> Decoder:
    def decode_union(value: Any) -> Any:
        for option in options:
            try:
                return option(value)
            except Corrupt:
                continue
        raise Corrupt(f"no alternative fits a {type(value).__name__}")

    return decode_union


def _sequence(item: Decoder) -> Decoder:
    return lambda value: tuple(item(v) for v in _of(value, tuple))


def _record(items: tuple[Decoder, ...]) -> Decoder:
    def decode_record(value: Any) -> tuple[Any, ...]:
        if len(_of(value, tuple)) != len(items):
            raise Corrupt(f"expected {len(items)} values, found {len(value)}")
        return tuple(item(v) for item, v in zip(items, value, strict=True))

    return decode_record


def _dataclass(cls: type[T], names: dict[str, Any], made: dict[Any, Decoder]) -> Decoder:
    hints = typing.get_type_hints(cls, localns=names)
    wanted = [f.name for f in fields(cls) if f.init]  # type: ignore[arg-type]
    made[cls] = lambda value: built(value)  # placeholder while the fields compile
    parts = _record(tuple(_compile(hints[name], names, made) for name in wanted))

    def built(value: Any) -> T:
        return cls(**dict(zip(wanted, parts(value), strict=True)))

    made[cls] = built
    return built
