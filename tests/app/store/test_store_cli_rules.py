"""The store's smaller promises on the command line and in the library.

- a conversation exists only with its first messages (a run that fails first leaves none);
- read-only ``history`` commands never create a store;
- ``history list`` gives whole ids in a pipe, and JSON with ``--json``;
- one rule names new conversations (``<stem>-<8 hex>``), one numbers messages (from 1).
"""

from __future__ import annotations

import json
import re

import pytest

from forge_app.errors import StoreError
from forge_app.store import ConversationRecorder, open_store
from forge_domain import Context, TextMessage
from tests.app.cli_process import forge
from tests.app.test_cli import SESSIONS

SMALL = SESSIONS / "sweagent-gpt4o-testrepo.json"
DJANGO = SESSIONS / "msa-deepseek-django-15400.json"
needs_session = pytest.mark.skipif(not DJANGO.is_file(), reason="shared sessions missing")
NAMED = r"[A-Za-z0-9._-]+-[0-9a-f]{8}"


def test_store_new_conversation_exists_only_with_its_first_messages(store_url):
    with open_store(store_url) as store:
        recorder = ConversationRecorder.start(store, "conv", "agent")
        before = store.conversations()
        recorder.sync(Context([TextMessage.user("hello")]))
        after = [(c.id, c.agent, c.messages) for c in store.conversations()]
        with pytest.raises(StoreError, match="already exists; resume it"):
            ConversationRecorder.start(store, "conv")
    assert (before, after) == ([], [("conv", "agent", 1)])


def test_store_two_new_recorders_of_one_id_store_it_once(store_url):
    """Both started before either stored anything: the second's first write is refused."""
    with open_store(store_url) as store:
        first = ConversationRecorder.start(store, "conv")
        second = ConversationRecorder.start(store, "conv")
        first.sync(Context([TextMessage.user("first")]))
        with pytest.raises(StoreError, match="already exists"):
            second.sync(Context([TextMessage.user("second")]))
        texts = [m.openai()["content"] for m in store.originals("conv")]
    assert texts == ["first"]


def test_cli_compact_that_fails_leaves_no_conversation(tmp_path):
    """The transcript parses but is not provider-valid: refused after the store opened."""
    session = tmp_path / "t.json"
    session.write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ]
        )
    )
    url = f"sqlite:///{tmp_path / 's.db'}"
    done = forge("compact", session, "--store", url, "--force")
    with open_store(url) as store:
        left = store.conversations()
    assert (done.returncode, left) == (2, [])


def test_cli_history_without_a_store_creates_none(tmp_path):
    """The README's `history export` without --store: one line, exit 2, nothing created."""
    home = tmp_path / "data"
    done = forge("history", "export", "some-id", env={"XDG_DATA_HOME": str(home)})
    assert (done.returncode, len(done.stderr.splitlines())) == (2, 1), done.stderr
    assert "no session store there" in done.stderr
    assert not home.exists()


def test_cli_history_on_an_empty_postgres_database_creates_nothing(postgres_server):
    from tests.app.store.conftest import fresh_postgres_database

    url = fresh_postgres_database(postgres_server)
    done = forge("history", "list", "--store", url)
    import psycopg

    with psycopg.connect(url) as connection:
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert (done.returncode, tables) == (2, [])


def test_cli_history_list_in_a_pipe_and_as_json_gives_whole_ids(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    long_id = "a-conversation-with-a-rather-long-name-" + "x" * 60
    with open_store(url) as store:
        ConversationRecorder.start(store, long_id, "default").sync(
            Context([TextMessage.user("hello")])
        )
    plain = forge("history", "list", "--store", url, env={"COLUMNS": "80"})
    as_json = forge("history", "list", "--store", url, "--json", env={"COLUMNS": "80"})
    fields = plain.stdout.rstrip("\n").split("\t")
    items = json.loads(as_json.stdout)
    assert (plain.returncode, as_json.returncode) == (0, 0)
    assert fields[:4] == [long_id, "default", "1", "0"]
    assert [(i["id"], i["agent"], i["messages"], i["archives"]) for i in items] == [
        (long_id, "default", 1, 0)
    ]


@needs_session
def test_cli_compact_and_replay_name_conversations_by_one_rule(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    compacted = forge("compact", SMALL, "--store", url, "--force", "-o", tmp_path / "c.json")
    replayed = forge("replay", SMALL, "--store", url)
    names = re.findall(r"stored as conversation (\S+)", compacted.stderr + replayed.stderr)
    assert (compacted.returncode, replayed.returncode) == (0, 0)
    assert [re.fullmatch(f"{SMALL.stem}-[0-9a-f]{{8}}", name) is not None for name in names] == [
        True,
        True,
    ]


@needs_session
def test_cli_compact_numbers_messages_from_1_as_history_does(tmp_path):
    """The range `compact` reports names the same messages as `history show` (seqs from 1)."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    metrics = tmp_path / "m.json"
    done = forge(
        "compact",
        DJANGO,
        "--store",
        url,
        "--force",
        "-o",
        tmp_path / "c.json",
        "--json-metrics",
        metrics,
    )
    start, end = json.loads(metrics.read_text())["summarised_range"]
    shown = re.search(r"summarised:\s*(\d+)\.\.(\d+)", done.stdout + done.stderr)
    with open_store(url) as store:
        (conversation,) = store.conversations()
        (span,) = [a for a in store.archives(conversation.id) if a.kind == "span"]
    assert shown is not None, done.stderr
    first, last = int(shown.group(1)), int(shown.group(2))
    assert (first, last) == (start + 1, end + 1)
    assert (first <= span.seqs[0][0], span.seqs[-1][1] <= last) == (True, True)
