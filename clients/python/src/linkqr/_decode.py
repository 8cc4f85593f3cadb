"""Turns JSON values into the dataclasses of _models, checking every field's
type on the way so that a response the models do not describe fails loudly
here, not later in the caller's code."""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from ._errors import LinkqrError

T = TypeVar("T")

# Python keywords renamed in the models: the JSON name → the field name.
_RENAMED = {"from": "from_", "if": "if_"}
_FIELD_TO_JSON = {v: k for k, v in _RENAMED.items()}

_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$"
)


class DecodeError(LinkqrError):
    """The API answered JSON that the models do not describe."""


def json_name(field: str) -> str:
    """The JSON name of a model field (``from_`` → ``from``)."""
    return _FIELD_TO_JSON.get(field, field)


def parse_timestamp(s: str) -> datetime:
    """Parses an RFC 3339 timestamp (any number of fractional digits) into an aware datetime."""
    m = _TIMESTAMP.match(s)
    if m is None:
        raise DecodeError(f"not an RFC 3339 timestamp: {s!r}")
    y, mo, d, h, mi, se, frac, z, sign, oh, om = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    tz = timezone.utc
    if z is None:
        off = timedelta(hours=int(oh), minutes=int(om))
        tz = timezone(off if sign == "+" else -off)
    dt = datetime(int(y), int(mo), int(d), int(h), int(mi), int(se), micro, tzinfo=tz)
    return dt.astimezone(timezone.utc)


def format_timestamp(dt: datetime) -> str:
    """Formats a datetime as RFC 3339 in UTC; a naive one is taken to be UTC."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def encode(v: Any) -> Any:
    """A JSON value of a model (or of plain values holding models): fields by
    their JSON names, timestamps in RFC 3339, defaulted fields left at their
    empty default left out."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(v):
            x = getattr(v, f.name)
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            if has_default and x in (None, []):
                continue
            out[json_name(f.name)] = encode(x)
        return out
    if isinstance(v, datetime):
        return format_timestamp(v)
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    return v


def decode(cls: type[T], value: Any) -> T:
    """Builds a model dataclass from a decoded JSON object."""
    return typing.cast(T, _value(cls, value, cls.__name__))


def _value(tp: Any, v: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _object(tp, v, where)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if v is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _value(rest[0], v, where)
        raise DecodeError(f"{where}: unsupported union {tp}")
    if origin is typing.Literal:
        if v not in typing.get_args(tp):
            raise DecodeError(f"{where}: {v!r} is not one of {typing.get_args(tp)}")
        return v
    if origin is list:
        if not isinstance(v, list):
            raise DecodeError(f"{where}: expected an array, got {type(v).__name__}")
        (item,) = typing.get_args(tp)
        return [_value(item, x, f"{where}[{i}]") for i, x in enumerate(v)]
    if origin is dict or tp is Any:
        if origin is dict and not isinstance(v, dict):
            raise DecodeError(f"{where}: expected an object, got {type(v).__name__}")
        return v
    if tp is datetime:
        if not isinstance(v, str):
            raise DecodeError(f"{where}: expected a timestamp, got {v!r}")
        return parse_timestamp(v)
    if tp is bool:
        if not isinstance(v, bool):
            raise DecodeError(f"{where}: expected a boolean, got {v!r}")
        return v
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise DecodeError(f"{where}: expected an integer, got {v!r}")
        return v
    if tp is str:
        if not isinstance(v, str):
            raise DecodeError(f"{where}: expected a string, got {v!r}")
        return v
    raise DecodeError(f"{where}: unsupported type {tp}")


def _object(cls: type, v: Any, where: str) -> Any:
    if not isinstance(v, dict):
        raise DecodeError(f"{where}: expected an object, got {type(v).__name__}")
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        name = json_name(f.name)
        if name not in v:
            # Fields the document does not require have a default in the model.
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                continue
            raise DecodeError(f"{where}: field {name!r} is missing")
        kwargs[f.name] = _value(hints[f.name], v[name], f"{where}.{name}")
    # Fields the models do not know (a newer server) are ignored.
    return cls(**kwargs)
