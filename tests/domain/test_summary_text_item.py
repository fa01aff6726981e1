"""``text_item``: a summary's text item built without validation equals the validated one.

What pydantic builds for ``TextItem(text=...)`` and what :func:`text_item` builds agree in
every way a reader meets them: equality and hash, fields, fields set, dumps, copies (a
copy's fields set is its own: the shared one never changes), and the dict of its fields.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forge_domain.summary import TextItem
from forge_domain.summary._summary import _TEXT_ITEM_SET, text_item


@given(st.text(), st.text())
def test_text_item_agrees_with_the_validated_item(text: str, other: str) -> None:
    validated = TextItem(text=text)

    built = text_item(text)

    assert (built, hash(built), built.__dict__, built.model_fields_set) == (
        validated,
        hash(validated),
        validated.__dict__,
        validated.model_fields_set,
    )
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert repr(built) == repr(validated)
    assert built.model_copy(update={"text": other}) == validated.model_copy(update={"text": other})
    assert (built == TextItem(text=other)) is (text == other)


def test_a_copy_of_a_built_item_has_its_own_fields_set() -> None:
    copied = text_item("a").model_copy(update={"omitted": (("ask", 1),)})

    assert (copied.model_fields_set, _TEXT_ITEM_SET) == ({"text", "omitted"}, {"text"})


def test_a_built_item_is_frozen_and_read_as_a_text_item() -> None:
    built = text_item("hello")

    assert (type(built), built.is_omission) == (TextItem, False)
    assert TextItem.model_validate(built.model_dump()) == built
