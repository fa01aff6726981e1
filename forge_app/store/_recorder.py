"""``ConversationRecorder``: keeps one conversation's store in step with its context.

It knows the context as last stored and, for every message of it, the original
messages (``seq`` numbers) it stands for: itself for a message as it joined, the
whole replaced span for a summary, the original output for a pruned one. So
however many compactions fold into each other, an archive always points at the
originals, and ``expand`` of the newest ref gives them back byte for byte.

- :meth:`sync` stores what was appended since the last call (and archives a
  change it did not see happen, such as a cut to fit the window);
- :meth:`compacted` archives a compaction and names the refs in the new context:
  the summary gets a line ``[archived: ref c3 …]``, each pruned or cut message a
  ``[archived: ref t7]`` suffix. The archives and the new snapshot are one
  transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog

from forge_app.errors import StoreError
from forge_app.store._align import Alignment, align
from forge_app.store._records import ArchiveKind, NewArchive, to_ranges
from forge_app.store._snapshot import SavedConversation, Snapshot
from forge_app.store._store import SessionStore
from forge_domain import (
    CompactionResult,
    Context,
    ContextMessage,
    JsonObject,
    TextPart,
    note_archived,
)

__all__: list[str] = []

_log = structlog.get_logger("forge_app")


def span_note(ref: str, count: int) -> str:
    """The line a summary gets: which ref holds the originals it replaced."""
    noun = "message" if count == 1 else "messages"
    return f"[archived: ref {ref}, {count} original {noun} — recall_expand shows them]"


def message_note(ref: str) -> str:
    """The suffix of a message changed in place (pruned or cut)."""
    return f"[archived: ref {ref}]"


def _with_note(message: ContextMessage, note: str, separator: str) -> ContextMessage:
    content = message.content
    if content is None or isinstance(content, str):
        text = content or ""
        return message.model_copy(update={"content": f"{text}{separator}{note}" if text else note})
    return message.model_copy(update={"content": (*content, TextPart(text=note))})


def _in_synced_terms(
    before: Sequence[ContextMessage],
    synced: Sequence[ContextMessage],
    after: Sequence[ContextMessage],
) -> list[ContextMessage]:
    """``after`` with every ``before`` message that a sync renamed replaced by its synced version.

    :meth:`ConversationRecorder.sync` returns ``before`` message for message, except
    that a change it archived carries its ref; the engine compacted ``before``, so a
    message it kept still lacks that ref.
    """
    renamed = [(old, new) for old, new in zip(before, synced, strict=True) if old is not new]
    if not renamed:
        return list(after)
    by_id = {id(old): new for old, new in renamed}

    def synced_version(message: ContextMessage) -> ContextMessage:
        if id(message) in by_id:
            return by_id[id(message)]
        return next((new for old, new in renamed if old == message), message)

    return [synced_version(message) for message in after]


@dataclass
class ConversationRecorder:
    """The stored state of one conversation (see the module docstring)."""

    store: SessionStore
    """Where it is stored."""
    conversation_id: str
    """Its id."""
    known: list[ContextMessage] = field(default_factory=list)
    """The context as last stored."""
    lineage: list[tuple[int, ...]] = field(default_factory=list)
    """For each known message, the original seqs it stands for."""
    origin: list[int | None] = field(default_factory=list)
    """For each known message, its seq when it is that original unchanged, else None."""
    last_seq: int = 0
    """The newest original message stored."""
    engine_state: Callable[[], JsonObject] | None = None
    """Gives the engine's state to save with each turn (set by the archiving engine)."""

    @classmethod
    def start(
        cls, store: SessionStore, conversation_id: str, agent: str = ""
    ) -> ConversationRecorder:
        """A recorder for a new conversation.

        Raises:
            StoreError: the store already holds a conversation with this id (resume it).
        """
        if not store.ensure_conversation(conversation_id, agent):
            raise StoreError(
                store.url, f"conversation {conversation_id!r} already exists; resume it instead"
            )
        return cls(store, conversation_id)

    @classmethod
    def resume(cls, store: SessionStore, saved: SavedConversation) -> ConversationRecorder:
        """A recorder for a conversation loaded with :meth:`SessionStore.load`."""
        return cls(
            store,
            saved.info.id,
            known=list(saved.messages),
            lineage=list(saved.lineage),
            origin=list(saved.origin),
            last_seq=saved.last_seq,
        )

    # -- appends ---------------------------------------------------------------------

    def _extends(self, context: Sequence[ContextMessage] | Context) -> bool:
        known = self.known
        if len(context) < len(known):
            return False
        return all(a is b or a == b for a, b in zip(known, context, strict=False))

    def _is_prefix(self, context: Sequence[ContextMessage] | Context) -> bool:
        return len(context) <= len(self.known) and all(
            a is b or a == b for a, b in zip(context, self.known, strict=False)
        )

    def sync(self, context: Context, runtime: JsonObject | None = None) -> Context:
        """Store what joined ``context`` since the last call; return the context to use.

        That is ``context`` itself, unless it was changed in a way the recorder did not
        see (a message cut to fit the window): then the change is archived and the
        returned context names its refs. ``runtime`` is saved in the same transaction.
        """
        state = self._runtime(runtime)
        if self._extends(context):
            self._append(list(context)[len(self.known) :], state)
            return context
        if self._is_prefix(context):
            if state is not None:
                self.store.save_runtime(self.conversation_id, state)
            return context
        messages = list(context)
        alignment = align(self.known, messages)
        last = max((i for i, s in enumerate(alignment.source) if s is not None), default=-1)
        head = messages[: last + 1]
        appended = messages[last + 1 :]
        annotated = self._archive(
            self.known,
            head,
            align(self.known, head),
            engine="unknown",
            reason="changed",
            result=None,
        )
        self._append(appended, state)
        return Context([*annotated, *appended], usage_floor=context.usage_floor)

    def _runtime(self, runtime: JsonObject | None) -> str | None:
        if runtime is None:
            return None
        state = dict(runtime)
        if self.engine_state is not None:
            state["engine"] = self.engine_state()
        return json.dumps(state)

    def _append(self, messages: Sequence[ContextMessage], runtime: str | None) -> None:
        if not messages:
            if runtime is not None:
                self.store.save_runtime(self.conversation_id, runtime)
            return
        seqs = self.store.append(self.conversation_id, messages, runtime)
        self.known.extend(messages)
        self.lineage.extend((seq,) for seq in seqs)
        self.origin.extend(seqs)
        self.last_seq = max(self.last_seq, seqs[-1])

    # -- compactions -----------------------------------------------------------------

    def compacted(
        self,
        before: Context,
        after: Context,
        *,
        engine: str,
        reason: str,
        result: CompactionResult | None,
    ) -> Context:
        """Archive the compaction of ``before`` into ``after``; ``after`` with refs named.

        ``before`` is the context the engine was given: the stored context, or a
        prefix of it (a trailing call whose results are pending stays out).
        """
        synced = list(self.sync(before))
        messages = _in_synced_terms(list(before), synced, list(after))
        annotated = self._archive(
            synced,
            messages,
            align(synced, messages),
            engine=engine,
            reason=reason,
            result=result,
        )
        return Context(annotated, usage_floor=after.usage_floor)

    def _archive(
        self,
        before: Sequence[ContextMessage],
        after: Sequence[ContextMessage],
        alignment: Alignment,
        *,
        engine: str,
        reason: str,
        result: CompactionResult | None,
    ) -> list[ContextMessage]:
        lineage = self.lineage[: len(before)]
        tail = len(before)
        summary = alignment.summary_index(after)
        replaced_seqs = sorted({s for i in alignment.replaced for s in lineage[i]})
        kinds: list[ArchiveKind] = []
        if replaced_seqs:
            kinds.append("span")
        kinds.extend("message" for _ in alignment.altered)
        if not kinds:
            return list(after)
        annotated = list(after)
        new_lineage: list[tuple[int, ...]] = []
        new_origin: list[int | None] = []

        def build(refs: tuple[str, ...]) -> tuple[list[NewArchive], Snapshot]:
            archives: list[NewArchive] = []
            refs_left = list(refs)
            if replaced_seqs:
                ref = refs_left.pop(0)
                if summary is not None:
                    annotated[summary] = _with_note(
                        after[summary], span_note(ref, len(replaced_seqs)), "\n\n"
                    )
                else:
                    _log.warning("archive_unnamed", conversation_id=self.conversation_id, ref=ref)
                archives.append(
                    NewArchive(
                        kind="span",
                        seqs=to_ranges(replaced_seqs),
                        replaced=tuple(before[i] for i in alignment.replaced),
                        replacement=tuple(annotated[i] for i in alignment.new),
                        engine=engine,
                        reason=reason,
                        result=None if result is None else result.model_dump(mode="json"),
                    )
                )
            for index in alignment.altered:
                ref = refs_left.pop(0)
                source = alignment.source[index]
                assert source is not None
                annotated[index] = _with_note(after[index], message_note(ref), " ")
                archives.append(
                    NewArchive(
                        kind="message",
                        seqs=to_ranges(lineage[source]),
                        replaced=(before[source],),
                        replacement=(annotated[index],),
                        engine=engine,
                        reason=reason,
                    )
                )
            new_lineage.clear()
            new_origin.clear()
            for index, source in enumerate(alignment.source):
                if source is not None:
                    new_lineage.append(lineage[source])
                    kept = index not in alignment.altered
                    new_origin.append(self.origin[source] if kept else None)
                elif index == summary:
                    new_lineage.append(tuple(replaced_seqs))
                    new_origin.append(None)
                else:
                    new_lineage.append(())
                    new_origin.append(None)
            entries: list[int | tuple[ContextMessage, tuple[tuple[int, int], ...]]] = []
            rest = self.known[tail:]
            for message, seqs, origin in zip(
                [*annotated, *rest],
                [*new_lineage, *self.lineage[tail:]],
                [*new_origin, *self.origin[tail:]],
                strict=True,
            ):
                entries.append(origin if origin is not None else (message, to_ranges(seqs)))
            snapshot = Snapshot(tuple(entries), self.last_seq, len(annotated) + len(rest))
            return archives, snapshot

        note_archived(self.store.record(self.conversation_id, kinds, build))
        rest_known = self.known[tail:]
        self.known = [*annotated, *rest_known]
        self.lineage = [*new_lineage, *self.lineage[tail:]]
        self.origin = [*new_origin, *self.origin[tail:]]
        return annotated
