"""Summary transformers against forge's vectors; rows we change on purpose say why in their id."""

from __future__ import annotations

import pytest

from forge_app.summary.transformers import (
    DedupeRole,
    DropRole,
    KeepLastOperation,
    RedactSecrets,
    StripWorkingDir,
    SummaryTransformer,
)
from forge_app.summary.transformers._keep_last_operation import aggregate_operations, operation_key
from forge_app.summary.transformers._strip_working_dir import strip_dir
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.tools import (
    FetchTool,
    FileReadTool,
    FileUpdateTool,
    FollowupTool,
    GenericTool,
    McpTool,
    PlanTool,
    SearchTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SkillTool,
    TaskTool,
    TodoReadTool,
    TodoWriteTool,
)
from tests.vectors import context_from_forge, load_vectors, vector_id

ROLES = {"System": Role.SYSTEM, "User": Role.USER, "Assistant": Role.ASSISTANT}


def _summary(blocks) -> ContextSummary:
    return ContextSummary.from_forge_json(blocks)


def _rows(key: str, overrides: dict[int, tuple[str, object]]) -> list[pytest.param]:
    """Each vector as (entry, expected); an override replaces the expected value and the id."""
    rows = []
    for index, entry in enumerate(load_vectors(key)):
        if index in overrides:
            why, expected = overrides[index]
            rows.append(pytest.param(entry, expected, id=f"{index}-ours-{why}"))
        else:
            rows.append(pytest.param(entry, entry["expected"], id=vector_id(entry, index)))
    return rows


@pytest.mark.parametrize(("entry", "expected"), _rows("transform_drop_role", {}))
def test_drop_role_matches_forge(entry, expected):
    fixture = _summary(entry["input"]["blocks"])
    actual = DropRole(ROLES[entry["input"]["role"]])(fixture).to_forge_json()
    assert actual == expected


DEDUPE_OVERRIDES = {
    7: (
        "keeps-every-distinct-ask",
        [
            {"role": "User", "contents": [{"text": "first"}, {"text": "second"}]},
            {"role": "Assistant", "contents": [{"text": "x"}]},
            {"role": "User", "contents": [{"text": "third"}]},
        ],
    ),
}


@pytest.mark.parametrize(("entry", "expected"), _rows("transform_dedupe_role", DEDUPE_OVERRIDES))
def test_dedupe_role_matches_forge_except_distinct_asks(entry, expected):
    fixture = _summary(entry["input"]["blocks"])
    actual = DedupeRole(ROLES[entry["input"]["role"]])(fixture).to_forge_json()
    assert actual == expected


def test_dedupe_role_folds_a_run_and_keeps_distinct_items_in_order():
    fixture = _summary(
        [
            {"role": "User", "contents": [{"text": "fix the bug"}, {"text": "fix the bug"}]},
            {"role": "User", "contents": [{"text": "also add a test"}, {"text": "fix the bug"}]},
            {"role": "Assistant", "contents": [{"text": "ok"}]},
        ]
    )
    actual = DedupeRole(Role.USER)(fixture).to_forge_json()
    expected = [
        {"role": "User", "contents": [{"text": "fix the bug"}, {"text": "also add a test"}]},
        {"role": "Assistant", "contents": [{"text": "ok"}]},
    ]
    assert actual == expected


def _kept(entry, indices: list[int]) -> list[object]:
    """forge's single input block keeping only the items at ``indices``."""
    (block,) = entry["input"]["blocks"]
    return [{"role": block["role"], "contents": [block["contents"][i] for i in indices]}]


TRIM_OVERRIDES: dict[int, tuple[str, list[int]]] = {
    3: ("read-and-update-of-a-path-are-different-operations", [3, 4, 5, 6]),
    4: ("a-failure-keeps-the-earlier-success", [2, 3, 4, 5, 6]),
    8: ("last-per-command-across-the-block", [1, 2]),
    9: ("last-per-resource-across-the-block", [1, 2, 3, 4]),
    10: ("last-per-resource-across-the-block", [1, 3, 4]),
    11: ("todo-history-is-kept", [0, 1]),
    12: ("todo-read-and-write-are-different", [0, 1]),
    14: ("text-does-not-shield-a-superseded-read", [1, 2]),
    16: ("undo-and-remove-are-different-operations", [0, 1]),
}


def _trim_rows() -> list[pytest.param]:
    rows = []
    for index, entry in enumerate(load_vectors("transform_trim_context_summary")):
        if index in TRIM_OVERRIDES:
            why, indices = TRIM_OVERRIDES[index]
            rows.append(pytest.param(entry, _kept(entry, indices), id=f"{index}-ours-{why}"))
        else:
            rows.append(pytest.param(entry, entry["expected"], id=vector_id(entry, index)))
    return rows


@pytest.mark.parametrize(("entry", "expected"), _trim_rows())
def test_keep_last_operation_against_forge_trim(entry, expected):
    fixture = _summary(entry["input"]["blocks"])
    actual = KeepLastOperation()(fixture).to_forge_json()
    assert actual == expected


def _call(tool: dict, success: bool) -> dict:
    return {"tool_call": {"id": None, "tool": tool, "is_success": success}}


def test_keep_last_operation_keeps_last_success_and_final_failure_only():
    update = {"file_update": {"path": "a.py"}}
    fixture = _summary(
        [
            {
                "role": "Assistant",
                "contents": [
                    _call(update, True),
                    _call(update, True),
                    _call(update, False),
                    _call(update, False),
                ],
            }
        ]
    )
    actual = KeepLastOperation()(fixture).to_forge_json()
    expected = [{"role": "Assistant", "contents": [_call(update, True), _call(update, False)]}]
    assert actual == expected


def test_keep_last_operation_never_merges_todo_writes():
    first = {"todo_write": {"changes": []}}
    fixture = _summary(
        [{"role": "Assistant", "contents": [_call(first, True), _call(first, True)]}]
    )
    actual = KeepLastOperation()(fixture)
    assert actual == fixture


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(e, id=vector_id(e, i))
        for i, e in enumerate(load_vectors("transform_strip_working_dir"))
    ],
)
def test_strip_working_dir_matches_forge(entry):
    fixture = _summary(entry["input"]["blocks"])
    actual = StripWorkingDir(entry["input"]["working_dir"])(fixture).to_forge_json()
    assert actual == entry["expected"]


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("/home/u/p/src/a.rs", "/home/u/p", "src/a.rs"),
        ("/home/u/p/src/a.rs", "/home/u/p/", "src/a.rs"),
        ("/home/u/p", "/home/u/p", ""),
        ("/home/u/p/", "/home/u/p", ""),
        ("/home/u/project2/x", "/home/u/project", "/home/u/project2/x"),
        ("src/a.rs", "/home/u/p", "src/a.rs"),
        ("/home/u/p//src/a.rs", "/home/u/p", "src/a.rs"),
        ("/x", "", "/x"),
    ],
    ids=[
        "under",
        "trailing-slash",
        "equal",
        "equal-trailing",
        "sibling",
        "relative",
        "double-slash",
        "empty-cwd",
    ],
)
def test_strip_dir(path, cwd, expected):
    assert strip_dir(path, cwd) == expected


def test_summary_transformer_pipeline_vector_with_our_improvements():
    (entry,) = load_vectors("summary_pipeline")
    fixture = ContextSummary.from_messages(list(context_from_forge(entry["input"]["messages"])))
    actual = SummaryTransformer(entry["input"]["working_dir"])(fixture).to_forge_json()
    read = {"file_read": {"path": "a.rs"}}
    expected = [
        # forge drops "attached" (the second user message of the run); we keep every distinct ask.
        {"role": "User", "contents": [{"text": "first"}, {"text": "attached"}]},
        {
            "role": "Assistant",
            "contents": [
                {"text": "reading"},
                # forge keeps only the last (failed) read; we keep the success it would hide.
                {"tool_call": {"id": "c1", "tool": read, "is_success": True}},
                {"tool_call": {"id": "c2", "tool": read, "is_success": False}},
                {
                    "tool_call": {
                        "id": "c3",
                        "tool": {"shell": {"command": "cargo test"}},
                        "is_success": True,
                    }
                },
            ],
        },
        {"role": "User", "contents": [{"text": "thanks"}]},
    ]
    assert actual == expected


def test_summary_transformer_without_cwd_keeps_paths():
    fixture = _summary(
        [{"role": "Assistant", "contents": [_call({"file_read": {"path": "/p/a"}}, True)]}]
    )
    actual = SummaryTransformer()(fixture)
    assert actual == fixture


def test_summary_transformer_steps_are_forge_order_then_redaction():
    actual = SummaryTransformer("/p").pipeline.steps
    expected = (
        DropRole(Role.SYSTEM),
        DedupeRole(Role.USER),
        KeepLastOperation(),
        StripWorkingDir("/p"),
        RedactSecrets(),
    )
    assert actual == expected


OPERATION_KEYS = [
    (FileReadTool(path="a"), ("file_read", "a")),
    (FileUpdateTool(path="a"), ("file_update", "a")),
    (ShellTool(command="ls"), ("shell", "ls")),
    (SearchTool(pattern="p"), ("search", "p")),
    (
        SemSearchTool(queries=(SemanticQuery(query="q", use_case="u"),)),
        ("sem_search", (SemanticQuery(query="q", use_case="u"),)),
    ),
    (FetchTool(url="u"), ("fetch", "u")),
    (FollowupTool(question="q"), ("followup", "q")),
    (PlanTool(plan_name="p"), ("plan", "p")),
    (SkillTool(name="s"), ("skill", "s")),
    (TaskTool(agent_id="a"), ("task", "a")),
    (McpTool(name="m"), ("mcp", "m")),
    (GenericTool(name="g", arguments="x"), ("generic", "g", "x")),
    (TodoReadTool(), ("todo_read",)),
    (TodoWriteTool(changes=()), None),
]


@pytest.mark.parametrize(
    ("tool", "expected"), OPERATION_KEYS, ids=[t.kind for t, _ in OPERATION_KEYS]
)
def test_operation_key(tool, expected):
    assert operation_key(tool) == expected


def _item(tool, success: bool = True, earlier: int = 0, earlier_failures: int = 0):
    return ToolCallItem(
        id=None, tool=tool, is_success=success, earlier=earlier, earlier_failures=earlier_failures
    )


def _assistant(*contents) -> SummaryBlock:
    return SummaryBlock(role=Role.ASSISTANT, contents=contents)


def _user(*texts: str) -> SummaryBlock:
    return SummaryBlock(role=Role.USER, contents=tuple(TextItem(text=t) for t in texts))


def test_keep_last_operation_counts_what_it_supersedes():
    update = FileUpdateTool(path="a.py")
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    _item(update, False),
                    _item(update, True),
                    _item(update, True),
                    _item(update, False),
                    _item(update, False),
                ),
            ),
        )
    )
    actual = KeepLastOperation()(fixture)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(_item(update, True, 2, 1), _item(update, False, 1, 1)),
            ),
        )
    )
    assert actual == expected


READ = FileReadTool(path="a.py")
PYTEST = ShellTool(command="pytest")
TODO = TodoWriteTool(changes=())

AGGREGATE_CASES = [
    pytest.param(
        [_assistant(_item(READ)), _user("u"), _assistant(_item(READ)), _assistant(_item(READ))],
        [_user("u"), _assistant(_item(READ, True, 2))],
        id="reads-x3-across-blocks",
    ),
    pytest.param(
        [
            _assistant(
                _item(PYTEST, False),
                _item(READ),
                _item(PYTEST, True),
                _item(PYTEST, False),
                _item(PYTEST, True),
            )
        ],
        [_assistant(_item(READ), _item(PYTEST, True, 3, 2))],
        id="identical-commands-mixed-statuses",
    ),
    pytest.param(
        [_assistant(_item(PYTEST, False, 2, 1)), _assistant(_item(PYTEST, False))],
        [_assistant(_item(PYTEST, False, 3, 2))],
        id="fold-of-an-aggregated-line",
    ),
    pytest.param(
        [_assistant(_item(PYTEST, True, 1, 0), _item(READ)), _assistant(_item(PYTEST, True, 4, 3))],
        [_assistant(_item(READ), _item(PYTEST, True, 6, 3))],
        id="two-aggregated-lines-and-the-run-joined",
    ),
    pytest.param(
        [_assistant(_item(READ), _item(FileUpdateTool(path="a.py")), _item(READ, False))],
        [_assistant(_item(FileUpdateTool(path="a.py")), _item(READ, False, 1, 0))],
        id="read-and-update-are-different-lines",
    ),
    pytest.param(
        [_assistant(_item(TODO), TextItem(text="x"), _item(TODO), TextItem(text="x"))],
        [_assistant(_item(TODO), TextItem(text="x"), _item(TODO), TextItem(text="x"))],
        id="todo-writes-and-texts-never-merge",
    ),
    pytest.param(
        [_user("a"), _assistant(_item(READ)), _user("b"), _assistant(_item(READ))],
        [_user("a", "b"), _assistant(_item(READ, True, 1))],
        id="emptied-block-joins-its-neighbours",
    ),
]


@pytest.mark.parametrize(("blocks", "expected"), AGGREGATE_CASES)
def test_aggregate_operations(blocks, expected):
    actual = aggregate_operations(ContextSummary(blocks=tuple(blocks)))
    assert actual == ContextSummary(blocks=tuple(expected))


def test_aggregate_operations_without_repeats_is_identity():
    fixture = ContextSummary(blocks=(_assistant(_item(READ), _item(PYTEST)),))
    assert aggregate_operations(fixture) is fixture
