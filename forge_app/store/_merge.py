"""Re-applying a compaction on a conversation another writer changed meanwhile (pure).

A writer compacts its own reading of the conversation: it keeps some messages,
changes some in place, replaces the rest with new ones (the summary). When the
conversation has changed since that reading (another writer appended turns or
compacted), the same edit is applied to the conversation as it is now, read in
the compaction's transaction:

- every message the edit replaces or changes must still be there, as it was
  (same message, same originals behind it); else the edit no longer applies
  (another writer compacted some of them) and :func:`reapply` gives None;
- messages the writer never saw (other writers' turns) stay where they are;
- the new messages go where they were in the writer's edit: right after the
  message that preceded them there (or first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge_domain import ContextMessage

__all__: list[str] = []


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of a stored context and the original messages it stands for."""

    message: ContextMessage
    """The message as in the context."""
    lineage: tuple[int, ...]
    """The seqs of the originals it stands for."""
    origin: int | None
    """Its seq when it is that original as it joined, else None."""


def _matches(mine: Sequence[Entry], fresh: Sequence[Entry]) -> dict[int, int]:
    """Index in ``fresh`` of each entry of ``mine`` still there (same message and originals)."""
    by_key: dict[tuple[int | None, tuple[int, ...]], list[int]] = {}
    for index, entry in enumerate(fresh):
        by_key.setdefault((entry.origin, entry.lineage), []).append(index)
    found: dict[int, int] = {}
    for index, entry in enumerate(mine):
        candidates = by_key.get((entry.origin, entry.lineage), [])
        at = next((j for j in candidates if fresh[j].message == entry.message), None)
        if at is not None:
            candidates.remove(at)
            found[index] = at
    return found


def reapply(
    mine: Sequence[Entry],
    edited: Sequence[tuple[Entry, int | None]],
    fresh: Sequence[Entry],
) -> list[Entry] | None:
    """The edit ``mine`` -> ``edited`` applied to ``fresh``; None when it no longer applies.

    ``edited`` is the writer's new context, each entry with the index in ``mine`` of
    the message it keeps or changes in place (None for a new message).
    """
    sources = {source for _, source in edited if source is not None}
    removed = [index for index in range(len(mine)) if index not in sources]
    changed = {s: entry for entry, s in edited if s is not None and entry != mine[s]}
    anchors = _anchors(edited)
    where = _matches(mine, fresh)
    needed = {*removed, *changed, *(anchor for anchor in anchors if anchor is not None)}
    if any(index not in where for index in needed):
        return None
    dropped = {where[index] for index in removed}
    replaced = {where[source]: entry for source, entry in changed.items()}
    inserted: dict[int | None, list[Entry]] = {}
    new = [entry for entry, source in edited if source is None]
    for entry, anchor in zip(new, anchors, strict=True):
        inserted.setdefault(None if anchor is None else where[anchor], []).append(entry)
    merged = list(inserted.get(None, []))
    for index, entry in enumerate(fresh):
        if index not in dropped:
            merged.append(replaced.get(index, entry))
        merged.extend(inserted.get(index, []))
    return merged


def _anchors(edited: Sequence[tuple[Entry, int | None]]) -> list[int | None]:
    """For each new entry of ``edited``, the ``mine`` index of the kept or changed entry
    before it (None when it comes first)."""
    anchors: list[int | None] = []
    last: int | None = None
    for _, source in edited:
        if source is None:
            anchors.append(last)
        else:
            last = source
    return anchors
