"""``forge-compact history`` and ``--store`` on compact and replay, on both databases."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from tests.app.cli_process import forge
from tests.app.test_cli import SESSIONS

SESSION = SESSIONS / "msa-deepseek-django-15400.json"
needs_session = pytest.mark.skipif(not SESSION.is_file(), reason="shared sessions missing")


def _raw():
    data = json.loads(SESSION.read_text())
    return data if isinstance(data, list) else data["messages"]


def _only_conversation(url: str) -> str:
    from forge_app.store import open_store

    with open_store(url) as store:
        (conversation,) = store.conversations()
    return conversation.id


def _pruned(url: str, out) -> int:
    """Messages of the output that name a ``t`` ref (pruned in place)."""
    return len(re.findall(r"\[archived: ref t[0-9]+\]", out.read_text()))


@needs_session
def test_history_compact_with_store_archives_and_export_gives_the_input_back(store_url, tmp_path):
    out = tmp_path / "out.json"
    before = SESSION.read_bytes()
    compacted = forge("compact", SESSION, "--store", store_url, "-o", out)
    conversation = _only_conversation(store_url)
    exported = forge("history", "export", conversation, "--store", store_url, "-o", tmp_path / "x")
    refs = re.findall(r"\[archived: ref (c[0-9]+)", out.read_text())
    expanded = forge("history", "expand", conversation, refs[0], "--store", store_url)
    lines = (tmp_path / "x").read_text().splitlines()[1:-1]
    assert (compacted.returncode, exported.returncode, expanded.returncode) == (0, 0, 0)
    assert f"stored as conversation {conversation}" in compacted.stderr
    assert [line.strip().rstrip(",") for line in lines] == [
        json.dumps(m, ensure_ascii=False) for m in _raw()
    ]
    span = _raw()[2:134]  # the range the compaction reports (indices 2..133)
    output = {json.dumps(m) for m in json.loads(out.read_text())}
    kept = [m for m in span if json.dumps(m) in output]
    expanded_messages = json.loads(expanded.stdout)
    assert expanded_messages == [m for m in span if m not in kept and m in expanded_messages]
    assert len(expanded_messages) + len(kept) == len(span) - _pruned(store_url, out)
    assert SESSION.read_bytes() == before


@needs_session
def test_history_replay_with_store_then_list_show_search(store_url):
    replayed = forge("replay", SESSION, "--store", store_url)
    conversation = _only_conversation(store_url)
    listed = forge("history", "list", "--store", store_url, fresh=True)
    shown = forge("history", "show", conversation, "--store", store_url)
    searched = forge(
        "history", "search", "SimpleLazyObject radd", "--store", store_url, "-c", conversation
    )
    assert [r.returncode for r in (replayed, listed, shown, searched)] == [0, 0, 0, 0]
    assert conversation in listed.stdout.split("\t")
    assert "150 original messages" in shown.stderr
    assert re.search(r"\bt1\b.*message", shown.stderr)
    assert "SimpleLazyObject" in searched.stderr


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("history", "expand", "nope", "c1"), "no conversation 'nope'"),
        (("history", "export", "nope"), "no conversation 'nope'"),
        (("history", "search", "x", "-c", "nope"), "no conversation 'nope'"),
        (("history", "show", "nope"), "no conversation 'nope'"),
    ],
    ids=["expand", "export", "search", "show"],
)
def test_history_unknown_conversation_exits_2_with_one_line(store_url, args, problem):
    from forge_app.store import open_store

    open_store(store_url).close()  # history reads a store, never creates one
    result = forge(*args, "--store", store_url)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert problem in result.stderr


@needs_session
def test_history_unknown_ref_exits_2_and_keeps_the_store(store_url, tmp_path):
    forge("compact", SESSION, "--store", store_url, "-o", tmp_path / "o.json")
    conversation = _only_conversation(store_url)
    bad = forge("history", "expand", conversation, "c42", "--store", store_url)
    malformed = forge("history", "expand", conversation, "chunk", "--store", store_url)
    good = forge("history", "expand", conversation, "c1", "--store", store_url)
    assert (bad.returncode, malformed.returncode, good.returncode) == (2, 2, 0)
    assert f"conversation '{conversation}' has no archive ref 'c42'" in bad.stderr
    assert "is not an archive ref" in malformed.stderr


def test_history_bad_stores_exit_2_naming_the_problem(tmp_path):
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 1000)
    cases = {
        "mysql://h/db": "unsupported scheme 'mysql'",
        str(corrupt): "not a readable SQLite session store",
        str(tmp_path / "missing" / "s.db"): "does not exist",
    }
    results = {url: forge("history", "list", "--store", url) for url in cases}
    assert {url: r.returncode for url, r in results.items()} == dict.fromkeys(cases, 2)
    for url, problem in cases.items():
        assert problem in results[url].stderr
    assert corrupt.read_bytes() == b"garbage" * 1000


def test_history_default_store_comes_from_the_environment(tmp_path):
    from forge_app.store import open_store

    url = f"sqlite:///{tmp_path / 'env.db'}"
    open_store(url).close()  # history reads a store, never creates one
    listed = forge("history", "list", env={"FORGE_COMPACT_STORE": url})
    assert listed.returncode == 0
    assert f"0 conversations in {url}" in listed.stderr
    assert (tmp_path / "env.db").is_file()


RUN_AGENT = """\
agents:
  - id: runner
    model: fake-model
    context_length: 4000
"""


def _run_session():
    """Twelve tool-calling turns, then the answer (counted by requests: compaction folds
    earlier assistant messages away)."""
    from tests.app.fake_openai_server import Reply

    served = []

    def respond(body):
        served.append(body)
        if len(served) <= 12:
            return Reply.calls((f"call_{len(served)}", "read", "{}"), content="Reading. " * 150)
        return Reply.text("forty-two")

    return respond


def test_history_run_with_store_keeps_the_live_conversation(store_url, tmp_path):
    from tests.app.fake_openai_server import FakeOpenAIServer

    agent = tmp_path / "agent.yaml"
    agent.write_text(RUN_AGENT)
    with FakeOpenAIServer(_run_session()) as server:
        result = forge(
            "run", agent, "Read every file.", "--store", store_url,
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"},
        )  # fmt: skip
        offered = [t["function"]["name"] for t in server.requests[0].get("tools", [])]
    conversation = _only_conversation(store_url)
    exported = forge("history", "export", conversation, "--store", store_url)
    shown = forge("history", "show", conversation, "--store", store_url)
    messages = json.loads(exported.stdout)
    assert (result.returncode, result.stdout.strip()) == (0, "forty-two")
    assert f"stored as conversation {conversation}" in result.stderr
    assert offered == ["recall_search", "recall_expand"]
    assert [m["role"] for m in messages[:2]] == ["user", "assistant"]
    assert (messages[-1]["role"], messages[-1]["content"]) == ("assistant", "forty-two")
    assert len(messages) == 2 + 12 * 2
    assert re.search(r"\bc1\b.*span", shown.stderr)


def _compacted_then_appended(url: str) -> int:
    """A conversation of five originals, three under a summary, then one more; the size of
    its loaded context."""
    from forge_app.store import ConversationRecorder, open_store
    from forge_domain import Context, TextMessage

    texts = ("build it", "running make", "make failed", "fix the Makefile")
    before = Context([TextMessage.system("You build."), *map(TextMessage.user, texts)])
    summary = before[1].model_copy(update={"content": "Summary: make failed."})
    with open_store(url) as store:
        recorder = ConversationRecorder.start(store, "conv", "coder")
        after = recorder.compacted(
            before, Context([before[0], summary, before[4]]), engine="frame", reason="manual",
            result=None,
        )  # fmt: skip
        recorder.sync(Context([*after, TextMessage.user("and test it")]))
        return len(store.load("conv").messages)


def _garble_messages(url: str) -> None:
    sql = "UPDATE forge_messages SET model = 'not a message', body = 'not json'"
    if url.startswith("sqlite"):
        database = sqlite3.connect(url.removeprefix("sqlite:///"))
        database.execute(sql)
        database.commit()
        database.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as server:
        server.execute(sql)


def test_history_show_counts_the_context_without_parsing_its_messages(store_url: str) -> None:
    in_context = _compacted_then_appended(store_url)
    _garble_messages(store_url)
    shown = forge("history", "show", "conv", "--store", store_url)
    assert (shown.returncode, in_context, shown.stderr.splitlines()[0]) == (
        0,
        4,
        "conversation conv (agent coder): 6 original messages, 4 in the current context, "
        "1 archive refs",
    )


def test_history_prints_stored_text_queries_and_ids_as_text_not_markup(store_url):
    from forge_app.store import open_store
    from forge_domain import TextMessage

    text = "[INST] fix it [/INST] No module named 'functional' [/bold] :smile:"
    with open_store(store_url) as store:
        store.ensure_conversation("[/bold]conv")
        store.append("[/bold]conv", [TextMessage.user(text)])
    searched = forge("history", "search", "[/INST] functional", "--store", store_url)
    listed = forge("history", "list", "--store", store_url)
    shown = forge("history", "show", "[/bold]conv", "--store", store_url)
    assert [r.returncode for r in (searched, listed, shown)] == [0, 0, 0]
    assert text in searched.stderr
    assert "1 match(es) for '[/INST] functional'" in searched.stderr
    assert "[/bold]conv" in listed.stdout  # the list is the output (a pipe: one line each)
    assert "conversation [/bold]conv" in shown.stderr


def test_history_search_partial_hits_are_labelled_partial(store_url):
    from forge_app.store import open_store
    from forge_domain import TextMessage

    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", [TextMessage.user("PersonName.encode is unused")])
    exact = forge("history", "search", "PersonName.decode", "--store", store_url)
    some = forge("history", "search", "PersonName zebra", "--store", store_url)
    assert (exact.returncode, some.returncode) == (0, 0)
    assert "0 match(es) for 'PersonName.decode'" in exact.stderr
    assert "no message holds every word of 'PersonName zebra'; 1 partial match" in some.stderr


def test_history_search_query_over_the_bounds_is_one_line_and_exit_2(store_url):
    from forge_app.store import open_store

    open_store(store_url).close()  # history commands only read: the store must exist
    query = " ".join(["word"] * 20_000)
    searched = forge("history", "search", query, "--store", store_url)
    assert searched.returncode == 2
    assert searched.stderr.count("\n") == 1
    assert "search query too long: 99,999 characters (at most 1,000)" in searched.stderr
