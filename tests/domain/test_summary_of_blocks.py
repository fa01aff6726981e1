"""``ContextSummary.of_blocks`` against the plain reading: runs collected, then joined."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem


def _plain(blocks: list[SummaryBlock]) -> ContextSummary:
    """Empty blocks left out, each run of one role's blocks joined into one block."""
    runs: list[list[SummaryBlock]] = []
    for block in blocks:
        if not block.contents:
            continue
        if runs and runs[-1][0].role == block.role:
            runs[-1].append(block)
        else:
            runs.append([block])
    joined = [
        SummaryBlock(role=run[0].role, contents=tuple(i for b in run for i in b.contents))
        for run in runs
    ]
    return ContextSummary(blocks=tuple(joined))


_blocks = st.builds(
    lambda role, texts: SummaryBlock(
        role=role, contents=tuple(map(TextItem.model_validate, texts))
    ),
    st.sampled_from([Role.USER, Role.ASSISTANT]),
    st.lists(st.builds(dict, text=st.sampled_from(["a", "b", "c"])), max_size=3),
)


@given(blocks=st.lists(_blocks, max_size=12))
def test_of_blocks_joins_runs_as_the_plain_reading_does(blocks: list[SummaryBlock]) -> None:
    joined = ContextSummary.of_blocks(blocks)
    assert joined == _plain(blocks)
    lone = [b for b in blocks if b.contents]
    if all(a.role != b.role for a, b in pairwise(lone)):
        assert all(a is b for a, b in zip(joined.blocks, lone, strict=True))  # kept as they are
