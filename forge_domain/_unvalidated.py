"""Pydantic models built without their validation, for readers that checked the values.

Two readers build many models of a few shapes whose values they have checked themselves:
the plain OpenAI reader (:mod:`forge_domain.formats._openai_plain`: a message per entry of
a transcript) and the summary's build (a text item per user ask). :func:`built` sets a
model's slots directly; :func:`key_sharing` gives a shape's fields as a dict whose copies
share one key table. Each user has a test that what it builds equals what validation builds.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__: list[str] = []  # internal: built, key_sharing

_Model = TypeVar("_Model", bound=BaseModel)
_new = object.__new__
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
"""The setters of a model's four slots, called directly: a third faster than
``object.__setattr__``, which looks each name up first (plans/008-performance.md, round 7a)."""


def key_sharing(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` (a model's fields, then what else its reader stores) as a dict whose
    copies share one key table and hold only their values (a "split" dict, PEP 412): on
    CPython 3.11 a copy of a text message's 15 keys takes 192 bytes instead of 464, a tool
    result's 8 keys 136 and a call's 6 keys 120 instead of 272: 26 MiB less for the 100,000
    messages of a chat (plans/008-performance.md, round 8c). Equal, with its keys in the
    same order, to the plain dict; a key added to a copy makes that copy a plain dict; on a
    Python without split dicts the copies are plain dicts."""

    class _Keys:
        """Its instances' dicts share one key table (the class's), filled in order below."""

    holder = _Keys()
    for name, value in fields.items():
        setattr(holder, name, value)
    for _ in range(_SHARED_KEYS_MAX):
        _Keys()  # each new instance takes one slot of room from the table, down to one
    return vars(holder)


_SHARED_KEYS_MAX = 30
"""The keys a class's shared table may hold (CPython's ``SHARED_KEYS_MAX_SIZE``). A copy of a
split dict holds a value slot for each key of the table and each slot of room left; every
instance of the class made takes one slot of room (down to one), so once as many have been
made, a copy holds one slot more than its keys instead of 30 (192 bytes instead of 296 for
15 keys)."""


def built(model: type[_Model], fields: dict[str, Any], fields_set: set[str]) -> _Model:
    """What ``model(**{name: fields[name] for name in fields_set})`` builds, without its
    validation: ``fields`` holds every field, of the types the model declares (checked by
    the caller), and may hold more after them (the plain reader's token estimate);
    ``fields_set`` may be shared by every model of a shape: nothing changes a frozen
    model's fields set in place (pydantic's copies take a copy of it)."""
    model_built = _new(model)
    _set_dict(model_built, fields)
    _set_fields_set(model_built, fields_set)
    _set_extra(model_built, None)
    _set_private(model_built, None)
    return model_built
