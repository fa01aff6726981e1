"""Pages of ``recall_expand``: bounded, and nothing lost between them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.store._recall import CONTINUED, paginate

TEXT = st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=900)


@given(blocks=st.lists(TEXT, max_size=12), page_chars=st.integers(min_value=120, max_value=700))
def test_recall_pages_never_exceed_the_page_and_lose_nothing(blocks, page_chars):
    pages = paginate(blocks, page_chars)
    assert max(len(page) for page in pages) <= page_chars
    assert "".join(pages).replace(CONTINUED, "") == "".join(b + "\n" for b in blocks)


def test_recall_pages_refuse_a_page_too_small_for_a_piece():
    with pytest.raises(ValueError, match="too small"):
        paginate(["x" * 50], 60)
