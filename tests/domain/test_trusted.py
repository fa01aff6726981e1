"""``trusted_builder`` builds exactly what ``model_construct`` builds."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from forge_domain._trusted import trusted_builder
from forge_domain.messages import Role
from forge_domain.summary import SummaryBlock, TextItem, ToolCallItem
from forge_domain.summary_tools import FileReadTool, GenericTool, ShellTool


def _state(model: BaseModel) -> tuple[object, ...]:
    return (
        type(model),
        list(model.__dict__.items()),
        model.model_fields_set,
        model.__pydantic_extra__,
        model.__pydantic_private__,
    )


class _WithFactory(BaseModel):
    model_config = ConfigDict(frozen=True)

    items: list[str] = Field(default_factory=list)


def test_trusted_builder_rejects_models_with_default_factories() -> None:
    with pytest.raises(TypeError, match="default factory"):
        trusted_builder(_WithFactory)


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        (TextItem, {"text": "hello"}),
        (FileReadTool, {"path": "src/a.py"}),
        (ShellTool, {"command": "ls"}),
        (GenericTool, {"name": "edit", "arguments": "{}"}),
        (GenericTool, {"name": "edit"}),
        (GenericTool, {"arguments": "{}", "name": "edit"}),
        (ToolCallItem, {"id": "c1", "tool": ShellTool(command="ls"), "is_success": True}),
        (ToolCallItem, {"id": None, "tool": ShellTool(command="ls"), "is_success": False}),
        (SummaryBlock, {"role": Role.USER, "contents": (TextItem(text="x"),)}),
    ],
    ids=[
        "text",
        "read",
        "shell",
        "generic",
        "generic-default",
        "generic-reordered",
        "call",
        "call-without-id",
        "block",
    ],
)
def test_trusted_builder_builds_what_model_construct_builds(
    cls: type[BaseModel], values: dict[str, object]
) -> None:
    build = trusted_builder(cls, *values)
    first, second = build(*values.values()), build(*values.values())
    assert _state(first) == _state(cls.model_construct(**values))
    assert first.model_fields_set is not second.model_fields_set  # never shared


def test_trusted_builder_checks_names_once() -> None:
    with pytest.raises(TypeError, match="missing"):
        trusted_builder(ToolCallItem, "id", "tool")
    with pytest.raises(TypeError, match="repeated"):
        trusted_builder(TextItem, "text", "text")
    with pytest.raises(TypeError, match="unknown"):
        trusted_builder(TextItem, "colour")
    with pytest.raises(TypeError, match="unknown"):
        trusted_builder(TextItem, "text", "colour")
    with pytest.raises(TypeError, match="missing"):
        trusted_builder(TextItem)
    with pytest.raises(TypeError, match="positional argument"):
        trusted_builder(TextItem, "text")("a", "b")


def test_summary_block_of_items_is_what_model_construct_builds() -> None:
    contents = (
        TextItem(text="x"),
        ToolCallItem(id="c", tool=ShellTool(command="ls"), is_success=True),
    )
    actual = _state(SummaryBlock.of_items(Role.ASSISTANT, contents))
    expected = _state(SummaryBlock.model_construct(role=Role.ASSISTANT, contents=contents))
    assert actual == expected
