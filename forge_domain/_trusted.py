"""Build a pydantic model from values already known to be valid, cheaper than ``model_construct``.

Summaries of long sessions are made of thousands of small frozen models whose field
values come straight from validated messages. ``model_construct`` skips validation but
still walks every field's aliases and defaults on each call; :func:`trusted` does that
walk once per class and then only fills a dict (about half the cost per instance).

The instance is the one ``model_construct`` would build: same ``__dict__`` (fields in
declaration order, defaults filled in), same ``model_fields_set`` (the names passed).
Only models without aliases, default factories, private attributes or a
``model_post_init`` are accepted, so there is nothing else ``model_construct`` would do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

__all__ = [
    "trusted",
    "trusted_builder",
]

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__


@dataclass(frozen=True)
class _Plan:
    """What ``model_construct`` would do for one class, worked out once."""

    template: dict[str, object]
    """Every field in declaration order, with its default (required ones: a placeholder)."""
    required: frozenset[str]
    """The fields without a default."""


_PLANS: dict[type[BaseModel], _Plan] = {}


def _plan(cls: type[BaseModel]) -> _Plan:
    if cls.__private_attributes__ or cls.__pydantic_post_init__ or cls.__pydantic_root_model__:
        raise TypeError(f"{cls.__name__} has private attributes, a post-init or a root")
    template: dict[str, object] = {}
    for name, field in cls.__pydantic_fields__.items():
        if field.alias is not None or field.validation_alias is not None:
            raise TypeError(f"{cls.__name__}.{name} has an alias")
        if field.default_factory is not None:
            raise TypeError(f"{cls.__name__}.{name} has a default factory")
        template[name] = None if field.is_required() else field.default
    required = frozenset(n for n, f in cls.__pydantic_fields__.items() if f.is_required())
    return _PLANS.setdefault(cls, _Plan(template, required))


def trusted(cls: type[M], /, **values: object) -> M:
    """``cls.model_construct(**values)`` for values of the right types, at a lower cost.

    Raises:
        TypeError: ``cls`` needs more than ``model_construct``'s plain path, or a value
            names no field, or a required field is missing.
    """
    plan = _PLANS.get(cls) or _plan(cls)
    fields = plan.template | values
    if len(fields) != len(plan.template) or not plan.required <= values.keys():
        raise TypeError(f"{cls.__name__}: unknown or missing fields in {sorted(values)}")
    instance = cls.__new__(cls)
    _set(instance, "__dict__", fields)
    _set(instance, "__pydantic_fields_set__", set(values))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


def trusted_builder(cls: type[M], /, *names: str) -> Callable[..., M]:
    """A fast ``trusted(cls, **dict(zip(names, values)))``, called as ``build(*values)``.

    For the hot loops that build thousands of one model: the plan, the checks and the
    keyword dict are done once here, so a call only copies the defaults and fills them.

    Raises:
        TypeError: as :func:`trusted`, for ``cls`` or for ``names``.
    """
    plan = _PLANS.get(cls) or _plan(cls)
    given = set(names)
    if len(given) != len(names) or not given <= plan.template.keys() or not plan.required <= given:
        raise TypeError(f"{cls.__name__}: unknown, repeated or missing fields in {list(names)}")
    template = plan.template
    new = cls.__new__

    def build(*values: object) -> M:
        fields = template.copy()
        fields.update(zip(names, values, strict=True))
        instance = new(cls)
        _set(instance, "__dict__", fields)
        _set(instance, "__pydantic_fields_set__", given.copy())
        _set(instance, "__pydantic_extra__", None)
        _set(instance, "__pydantic_private__", None)
        return instance

    build.__name__ = f"build_{cls.__name__}"
    return build
