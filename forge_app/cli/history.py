"""``forge-compact history``: the conversations in a session store, and the way back.

``list`` the stored conversations, ``show`` one with its archive refs, ``search``
the originals (all conversations, or one), ``expand`` a ref into the original
messages it replaced, and ``export`` a conversation's original transcript (every
message byte for byte as it joined, the "uncompact").

The store is ``--store URL``, else ``$FORGE_COMPACT_STORE``, else the SQLite file
``$XDG_DATA_HOME/forge-compact/sessions.db`` (``~/.local/share`` by default).
``compact``, ``replay`` and ``run`` write to a store only when given ``--store``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from forge_app.cli.console import err, out
from forge_app.cli.options import StoreOption
from forge_app.errors import StoreError
from forge_app.files._atomic import STDIO, check_outputs, write_text_atomic

if TYPE_CHECKING:  # the store is imported only by a command given one (start-up time)
    from forge_app.store import ConversationRecorder, SessionStore, StoredMessage
    from forge_domain import Agent

STORE_ENV = "FORGE_COMPACT_STORE"
"""The store ``history`` uses when ``--store`` is not given."""
DEADLINE_ENV = "FORGE_COMPACT_STORE_DEADLINE"
"""Seconds each store operation may take in all (default ``OPERATION_DEADLINE``, 60)."""

app = typer.Typer(
    name="history",
    help="Stored conversations: list, show, search, expand a ref, export the original.",
    no_args_is_help=True,
)


def default_store_url(environ: dict[str, str] | None = None) -> str:
    """``$FORGE_COMPACT_STORE``, else ``sqlite:///`` the data-home ``sessions.db``."""
    env = os.environ if environ is None else environ
    if env.get(STORE_ENV):
        return env[STORE_ENV]
    home = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{home / 'forge-compact' / 'sessions.db'}"


def store_file(url: str | None) -> str | None:
    """The file a SQLite store URL names (None for no store or a PostgreSQL URL).

    Commands pass it to ``check_outputs``: an output written over the store, or a store
    opened on the command's input transcript, would destroy one of them.
    """
    if url is None:
        return None
    from forge_app.store import parse_store_url

    parsed = parse_store_url(url)
    return parsed.target if parsed.dialect == "sqlite" else None


def _open(url: str, *, create: bool = True) -> SessionStore:
    """``open_store`` with the deadline ``$FORGE_COMPACT_STORE_DEADLINE`` sets, if any.

    Raises:
        StoreError: the variable is not a positive number of seconds.
    """
    from forge_app.store import open_store, redact_url

    text = os.environ.get(DEADLINE_ENV, "").strip()
    if not text:
        return open_store(url, create=create)
    try:
        deadline = float(text)
    except ValueError:
        deadline = -1.0
    if not 0 < deadline < float("inf"):
        raise StoreError(
            redact_url(url),
            f"{DEADLINE_ENV} must be a positive number of seconds, got {text!r:.40}",
        )
    return open_store(url, deadline=deadline, create=create)


@contextmanager
def opened_store(url: str | None) -> Iterator[SessionStore | None]:
    """The store ``url`` names, closed at the end (None when ``url`` is None)."""
    if url is None:
        yield None
        return
    with _open(url) as store:
        yield store


def source_stem(source: str | Path) -> str:
    """The stem a conversation stored from the transcript ``source`` is named after."""
    return Path(source).stem if str(source) != STDIO else "stdin"


@contextmanager
def stored_conversation(
    url: str | None, source: str, agent: Agent
) -> Iterator[ConversationRecorder | None]:
    """A new stored conversation for the transcript ``source`` (None without a store)."""
    with opened_store(url) as store:
        if store is None:
            yield None
            return
        from forge_app.store import ConversationRecorder, new_conversation_id

        named = new_conversation_id(source_stem(source))
        recorder = ConversationRecorder.start(store, named, agent.id)
        yield recorder
        err.print(f"stored as conversation {recorder.conversation_id} in {store.url}")


def _history_store(url: str | None) -> SessionStore:
    """The store a read-only ``history`` command reads: never created by it."""
    return _open(url or default_store_url(), create=False)


def _write_messages(output: str, messages: list[StoredMessage]) -> None:
    """A JSON list whose items are the stored messages, byte for byte."""
    body = ",\n".join(f"  {m.body}" for m in messages)
    write_text_atomic(output, f"[\n{body}\n]\n" if messages else "[]\n")


Output = Annotated[
    str, typer.Option("--output", "-o", help="Where to write the JSON (- = stdout).")
]


_LIST_COLUMNS = ("id", "agent", "messages", "archives", "updated")


@app.command("list")
def list_command(
    store: StoreOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per conversation, as a JSON list.")
    ] = False,
) -> None:
    """List the stored conversations, most recent first.

    On a terminal a table (ids are never cut); in a pipe one tab-separated line per
    conversation (id, agent, messages, archives, updated); with --json a JSON list.
    """
    with _history_store(store) as opened:
        conversations = opened.conversations()
        err.print(f"{len(conversations)} conversations in {opened.url}", soft_wrap=True)
    rows = [(c.id, c.agent, c.messages, c.archives, c.updated_at) for c in conversations]
    if as_json:
        items = [dict(zip(_LIST_COLUMNS, row, strict=True)) for row in rows]
        typer.echo(json.dumps(items, ensure_ascii=False, indent=2))
        return
    if not out.is_terminal:
        for row in rows:
            typer.echo("\t".join(str(field).replace("\t", " ") for field in row))
        return
    table = Table()
    for column in _LIST_COLUMNS:
        numeric = column in ("messages", "archives")
        table.add_column(
            column, justify="right" if numeric else "left", overflow="fold", no_wrap=numeric
        )
    for c in conversations:
        table.add_row(c.id, c.agent, f"{c.messages:,}", str(c.archives), c.updated_at)
    out.print(table)


@app.command("show")
def show_command(
    conversation: Annotated[str, typer.Argument(metavar="ID", show_default=False)],
    store: StoreOption = None,
) -> None:
    """Show a conversation: its size and every archive ref with what it replaced."""
    with _history_store(store) as opened:
        info = opened.conversation(conversation)
        archives = opened.archives(conversation)
        in_context = opened.context_size(conversation)
        runtime = opened.runtime(conversation)
    err.print(
        f"conversation {info.id} (agent {info.agent or '?'}): {info.messages:,} original "
        f"messages, {in_context:,} in the current context, {len(archives)} archive refs"
    )
    uses = runtime.get("engine")
    if isinstance(uses, dict) and uses.get("recall_uses"):
        err.print(f"recall tool uses: {uses['recall_uses']}")
    table = Table(title_justify="left")
    for column in ("ref", "kind", "originals", "messages", "engine", "reason", "created"):
        table.add_column(column)
    for a in archives:
        ranges = ", ".join(f"{lo}-{hi}" if lo != hi else str(lo) for lo, hi in a.seqs)
        table.add_row(
            a.ref, a.kind, str(a.original_count()), ranges, a.engine, a.reason, a.created_at
        )
    err.print(table)


@app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(metavar="QUERY", show_default=False)],
    conversation: Annotated[
        str | None, typer.Option("--conversation", "-c", help="Search this conversation only.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=50)] = 10,
    store: StoreOption = None,
) -> None:
    """Search the original messages (every conversation unless --conversation).

    Each word is matched as typed, a dotted name or path as its parts in order;
    messages holding the whole query as a phrase come first, then those holding every
    word (newest first). When none holds every word, the messages holding some are
    shown as partial matches.
    """
    with _history_store(store) as opened:
        if conversation is not None:
            opened.conversation(conversation)
        hits = opened.search(query, conversation_id=conversation, limit=limit)
    if hits and hits[0].partial:
        title = (
            f"no message holds every word of {query!r}; {len(hits)} partial match(es), "
            "holding some of the words"
        )
    else:
        title = f"{len(hits)} match(es) for {query!r}"
    table = Table(title=title, title_justify="left")
    for column in ("conversation", "message", "role", "ref", "snippet"):
        table.add_column(column)
    for hit in hits:
        table.add_row(
            hit.conversation_id, str(hit.seq), hit.role, hit.ref or "(in context)", hit.snippet
        )
    err.print(table)


@app.command("expand")
def expand_command(
    conversation: Annotated[str, typer.Argument(metavar="ID", show_default=False)],
    ref: Annotated[str, typer.Argument(metavar="REF", show_default=False)],
    output: Output = STDIO,
    store: StoreOption = None,
) -> None:
    """Write the original messages behind REF (c3, t12 …) as a JSON list."""
    check_outputs([output], inputs=[store_file(store or default_store_url())])
    with _history_store(store) as opened:
        messages = opened.expand(conversation, ref)
    _write_messages(output, messages)
    err.print(f"{ref}: {len(messages)} original message(s)")


@app.command("export")
def export_command(
    conversation: Annotated[str, typer.Argument(metavar="ID", show_default=False)],
    output: Output = STDIO,
    store: StoreOption = None,
) -> None:
    """Write the conversation's original transcript (nothing compacted) as a JSON list."""
    check_outputs([output], inputs=[store_file(store or default_store_url())])
    with _history_store(store) as opened:
        messages = opened.originals(conversation)
    _write_messages(output, messages)
    err.print(f"{conversation}: {len(messages)} original message(s)")
