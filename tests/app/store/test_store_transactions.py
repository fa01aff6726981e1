"""One write, one transaction: a driver error inside it is a typed error and leaves nothing."""

from __future__ import annotations

import pytest

from forge_app.errors import StoreError
from forge_app.store import open_store
from forge_app.store._backend import connect
from forge_app.store._url import parse_store_url

INSERT = (
    "INSERT {}INTO forge_conversations (id, agent, created_at, updated_at) VALUES (?, '', '', '')"
)
"""A conversation row written past the store (``{}``: an SQLite conflict clause)."""


@pytest.mark.parametrize("conflict", ["", "OR ROLLBACK "], ids=["plain", "sqlite-rolled-back"])
def test_store_error_inside_a_write_is_a_typed_error_and_rolled_back(store_url, conflict):
    """A driver error in a transaction's body (a duplicate key) comes out as a
    StoreError naming it, also when SQLite already rolled the transaction back, and
    nothing of the transaction stays."""
    if conflict and not store_url.startswith("sqlite"):
        pytest.skip("ON CONFLICT ROLLBACK is SQLite's")
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
    db = connect(parse_store_url(store_url))

    def insert_other_then_conv() -> None:
        with db.write() as cursor:
            cursor.run(INSERT.format(""), ("other",))
            cursor.run(INSERT.format(conflict), ("conv",))

    try:
        with pytest.raises(StoreError, match=r"(?i)unique|duplicate key"):
            insert_other_then_conv()
        with db.write() as cursor:
            left = cursor.run("SELECT id FROM forge_conversations ORDER BY id")
    finally:
        db.close()
    assert left == [("conv",)]
