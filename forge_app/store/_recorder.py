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

from forge_app.errors import ConversationChanged, ConversationNotFound, StoreError
from forge_app.store._align import Alignment, align
from forge_app.store._merge import Entry, reapply
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
from forge_domain.formats import find_violations

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
    version: int = 0
    """The conversation's version ``known`` was read or written at."""
    stale: bool = False
    """True when a write showed that another writer changed the conversation since:
    :meth:`sync` then reads it again and hands the fresh context back."""
    engine_state: Callable[[], JsonObject] | None = None
    """Gives the engine's state to save with each turn (set by the archiving engine)."""
    created: bool = True
    """False for a new conversation until its first messages are stored: the conversation
    is created with them, in one transaction (a run that fails or is killed before it
    leaves no empty conversation behind)."""
    agent: str = ""
    """The agent id a new conversation is created with."""

    @classmethod
    def start(
        cls, store: SessionStore, conversation_id: str, agent: str = ""
    ) -> ConversationRecorder:
        """A recorder for a new conversation, created in the store with its first messages.

        Raises:
            StoreError: the store already holds a conversation with this id (resume it).
        """
        try:
            store.conversation(conversation_id)
        except ConversationNotFound:
            return cls(store, conversation_id, created=False, agent=agent)
        raise StoreError(
            store.url, f"conversation {conversation_id!r} already exists; resume it instead"
        )

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
            version=saved.version,
        )

    def _reread(self) -> Context:
        """Take the conversation as stored now (another writer changed it); its context."""
        saved = self.store.load(self.conversation_id)
        self.known = list(saved.messages)
        self.lineage = list(saved.lineage)
        self.origin = list(saved.origin)
        self.last_seq = saved.last_seq
        self.version = saved.version
        self.stale = False
        _log.info(
            "conversation_reread", conversation_id=self.conversation_id, version=saved.version
        )
        return Context(self.known, usage_floor=len(self.known))

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
        returned context names its refs; or unless another writer changed the stored
        conversation meanwhile: then it is read again (with what this call stored) and
        returned. ``runtime`` is saved in the same transaction.
        """
        synced = self._sync(context, runtime)
        return self._reread() if self.stale else synced

    def _sync(self, context: Context, runtime: JsonObject | None = None) -> Context:
        """:meth:`sync` without reading the conversation again (a compaction reads it in
        its own transaction)."""
        state = self._runtime(runtime)
        if self._extends(context):
            self._append(list(context)[len(self.known) :], state)
            return context
        if self._is_prefix(context):
            if state is not None and self.created:
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
        if annotated is None:
            return Context(self.known, usage_floor=len(self.known))
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
            if runtime is not None and self.created:
                self.store.save_runtime(self.conversation_id, runtime)
            return
        appended = self.store.append_versioned(
            self.conversation_id,
            messages,
            runtime,
            create_for=None if self.created else self.agent,
        )
        self.created = True
        seqs = appended.seqs
        self.known.extend(messages)
        self.lineage.extend((seq,) for seq in seqs)
        self.origin.extend(seqs)
        self.last_seq = max(self.last_seq, seqs[-1])
        if appended.version == self.version + 1:
            self.version = appended.version
        else:
            self.stale = True

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
        synced = list(self._sync(before))
        messages = _in_synced_terms(list(before), synced, list(after))
        annotated = self._archive(
            synced,
            messages,
            align(synced, messages),
            engine=engine,
            reason=reason,
            result=result,
        )
        if annotated is None:
            return Context(self.known, usage_floor=len(self.known))
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
    ) -> list[ContextMessage] | None:
        """Archive the edit ``before`` -> ``after``; ``after`` with refs named, or None when
        another writer had changed the conversation and the edit was re-applied on it (the
        context is then :attr:`known`)."""
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
        mine = self._entries()
        written: list[Entry] = []
        fresh_seq: list[int] = []

        def build(
            refs: tuple[str, ...], fresh: SavedConversation | None
        ) -> tuple[list[NewArchive], Snapshot]:
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
            edited: list[tuple[Entry, int | None]] = []
            for index, source in enumerate(alignment.source):
                if source is not None:
                    kept = index not in alignment.altered
                    origin = self.origin[source] if kept else None
                    edited.append((Entry(annotated[index], lineage[source], origin), source))
                else:
                    seqs = tuple(replaced_seqs) if index == summary else ()
                    edited.append((Entry(annotated[index], seqs, None), None))
            edited.extend((mine[k], k) for k in range(tail, len(mine)))
            if fresh is None:
                written[:] = [entry for entry, _ in edited]
            else:
                written[:] = self._on_fresh(mine, edited, fresh, pending=tail < len(mine))
                fresh_seq[:] = [fresh.last_seq]
            return archives, _snapshot(written, fresh_seq[0] if fresh_seq else self.last_seq)

        try:
            refs, self.version = self.store.record(self.conversation_id, kinds, build, self.version)
        except ConversationChanged:
            self.stale = True
            raise
        note_archived(refs)
        self.known = [entry.message for entry in written]
        self.lineage = [entry.lineage for entry in written]
        self.origin = [entry.origin for entry in written]
        self.last_seq = max([self.last_seq, *fresh_seq])
        self.stale = False  # the view is now the conversation as stored
        return None if fresh_seq else annotated

    def _entries(self) -> list[Entry]:
        return [
            Entry(message, seqs, origin)
            for message, seqs, origin in zip(self.known, self.lineage, self.origin, strict=True)
        ]

    def _on_fresh(
        self,
        mine: list[Entry],
        edited: list[tuple[Entry, int | None]],
        fresh: SavedConversation,
        *,
        pending: bool,
    ) -> list[Entry]:
        """The edit re-applied on the conversation as another writer left it.

        Raises:
            ConversationChanged: it no longer applies (nothing is written).
        """
        now = [
            Entry(message, seqs, origin)
            for message, seqs, origin in zip(
                fresh.messages, fresh.lineage, fresh.origin, strict=True
            )
        ]
        merged = None if pending else reapply(mine, edited, now)
        problem = "another writer compacted some of the same messages"
        if merged is not None and find_violations(Context([entry.message for entry in merged])):
            merged, problem = None, "re-applied, the context would not be valid"
        if merged is None:
            raise ConversationChanged(self.store.url, self.conversation_id, problem)
        _log.info(
            "compaction_reapplied",
            conversation_id=self.conversation_id,
            version=fresh.version,
            messages=len(merged),
        )
        return merged


def _snapshot(entries: Sequence[Entry], base_seq: int) -> Snapshot:
    """The snapshot of a context made of ``entries`` (later originals follow ``base_seq``)."""
    return Snapshot(
        tuple(
            entry.origin if entry.origin is not None else (entry.message, to_ranges(entry.lineage))
            for entry in entries
        ),
        base_seq,
        len(entries),
    )
