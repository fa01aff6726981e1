"""The Hooks dispatcher: order, awaiting, failures, selection and entry points."""

from __future__ import annotations

import inspect
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from forge_app.errors import HookFailed, PluginRejected, UnknownPlugin
from forge_app.runtime import _hookspecs as hookspecs
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._dispatch import Hooks, discover_plugins
from forge_app.runtime._events import EVENT_TYPES, EndEvent, StartEvent, TurnEndEvent
from forge_app.runtime._hookspecs import hookimpl
from forge_domain import Agent, Context, PluginSelection
from forge_domain.testing import pattern


def conversation_with(hooks: Hooks) -> Conversation:
    return Conversation(id="c1", agent=Agent(id="a"), context=pattern("su"), hooks=hooks)


class Recorder:
    """Appends ``(label, hook)`` to a shared list; sync or async."""

    def __init__(self, label: str, seen: list[str]) -> None:
        self.label = label
        self.seen = seen

    @hookimpl
    def forge_on_start(self) -> None:
        self.seen.append(f"{self.label}:start")

    @hookimpl
    async def forge_on_turn_end(self, turn: int) -> None:
        self.seen.append(f"{self.label}:turn_end:{turn}")


class First:
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    @hookimpl(tryfirst=True)
    def forge_on_start(self) -> None:
        self.seen.append("first:start")


class Last:
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    @hookimpl(trylast=True)
    def forge_on_start(self) -> None:
        self.seen.append("last:start")


class Exploding:
    @hookimpl
    async def forge_on_turn_end(self) -> None:
        raise RuntimeError("boom")


class Wrapping:
    @hookimpl(wrapper=True)
    def forge_on_start(self) -> object:
        return (yield)


class Misspelled:
    @hookimpl
    def forge_on_strat(self) -> None:
        pass


def test_event_fields_match_hook_specs():
    actual = {
        cls.hook: sorted(f for f in cls.__dataclass_fields__ if f != "hook") for cls in EVENT_TYPES
    }
    expected = {
        name: sorted(inspect.signature(getattr(hookspecs, name)).parameters)
        for name in dir(hookspecs)
        if name.startswith("forge_on_")
    }
    assert actual == expected


@pytest.mark.anyio
async def test_dispatch_calls_plugins_in_registration_order_and_awaits_coroutines():
    seen: list[str] = []
    hooks = Hooks(
        builtins=[("b1", Recorder("b1", seen))],
        plugins=[
            ("last", Last(seen)),
            ("p1", Recorder("p1", seen)),
            ("first", First(seen)),
            ("p2", Recorder("p2", seen)),
        ],
    )
    conversation = conversation_with(hooks)

    await hooks.dispatch(StartEvent(conversation=conversation))
    await hooks.dispatch(TurnEndEvent(conversation=conversation, turn=3))

    assert seen == [
        "first:start",
        "b1:start",
        "p1:start",
        "p2:start",
        "last:start",
        "b1:turn_end:3",
        "p1:turn_end:3",
        "p2:turn_end:3",
    ]


@pytest.mark.anyio
async def test_dispatch_failing_hook_names_the_plugin_and_is_logged():
    seen: list[str] = []
    hooks = Hooks(plugins=[("good", Recorder("good", seen)), ("exploding", Exploding())])
    conversation = conversation_with(hooks)

    with capture_logs() as logs, pytest.raises(HookFailed) as raised:
        await hooks.dispatch(TurnEndEvent(conversation=conversation, turn=1))

    actual = (raised.value.plugin, raised.value.hook, str(raised.value.error), seen, logs)
    expected = (
        "exploding",
        "forge_on_turn_end",
        "boom",
        ["good:turn_end:1"],
        [
            {
                "event": "hook_failed",
                "log_level": "error",
                "plugin": "exploding",
                "hook": "forge_on_turn_end",
                "conversation_id": "c1",
                "error": "RuntimeError: boom",
            }
        ],
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("plugin", "problem"),
    [
        (Wrapping(), "forge_on_start is a hook wrapper (unsupported)"),
        (Misspelled(), "unknown hook 'forge_on_strat'"),
    ],
    ids=["wrapper", "unknown-hook"],
)
def test_register_rejects_unsupported_plugins(plugin, problem):
    hooks = Hooks()

    with pytest.raises(PluginRejected) as raised:
        hooks.register(plugin, "odd")

    assert (raised.value.plugin, problem in raised.value.problem, hooks.names()) == (
        "odd",
        True,
        (),
    )


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (PluginSelection(), ("logging", "x", "y")),
        (PluginSelection(enable=("x",)), ("logging", "x")),
        (PluginSelection(disable=("y",)), ("logging", "x")),
        (PluginSelection(disable=("logging",)), ("x", "y")),
        (PluginSelection(enable=("x",), disable=("x",)), ("logging",)),
    ],
    ids=["all", "enable-x", "disable-y", "disable-builtin", "disable-wins"],
)
def test_hooks_selection_filters_plugins_by_name(selection, expected):
    seen: list[str] = []
    hooks = Hooks(
        builtins=[("logging", Recorder("logging", seen))],
        plugins=[("x", Recorder("x", seen)), ("y", Recorder("y", seen))],
        selection=selection,
    )

    assert hooks.names() == expected


@pytest.mark.parametrize(
    ("selection", "field", "unknown"),
    [
        (PluginSelection(disable=("loging",)), "disable", ("loging",)),
        (PluginSelection(enable=("x", "zz")), "enable", ("zz",)),
    ],
    ids=["disable-misspelt", "enable-missing"],
)
def test_hooks_selection_naming_no_plugin_is_refused(selection, field, unknown):
    with pytest.raises(UnknownPlugin) as raised:
        Hooks(
            builtins=[("logging", Recorder("logging", []))],
            plugins=[("x", Recorder("x", []))],
            selection=selection,
        )

    error = raised.value
    actual = (error.field, error.names, error.available, error.exit_code)
    assert actual == (field, unknown, ("logging", "x"), 2)


# -- entry points ------------------------------------------------------------------------


PLUGIN_SOURCE = '''
"""A third-party forge plugin, installed through entry-point metadata."""

import forge_app

SEEN = []


@forge_app.hookimpl
def forge_on_end(conversation, reason):
    SEEN.append((conversation.id, reason))
'''


@pytest.fixture
def installed_plugin(tmp_path: Path) -> Iterator[str]:
    """Install ``tiny_forge_plugin`` (module + dist-info with entry points) on sys.path."""
    (tmp_path / "tiny_forge_plugin.py").write_text(PLUGIN_SOURCE)
    dist_info = tmp_path / "tiny_forge_plugin-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tiny-forge-plugin\nVersion: 0.1\n"
    )
    (dist_info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [forge.hooks]
            tiny = tiny_forge_plugin
            """
        )
    )
    saved_path = list(sys.path)
    sys.path.insert(0, str(tmp_path))
    try:
        yield "tiny_forge_plugin"
    finally:
        sys.path[:] = saved_path
        sys.modules.pop("tiny_forge_plugin", None)


@pytest.mark.anyio
async def test_entry_point_plugin_is_discovered_and_its_hook_fires(installed_plugin):
    plugins = discover_plugins()
    hooks = Hooks(plugins=plugins)
    conversation = conversation_with(hooks)

    await hooks.dispatch(EndEvent(conversation=conversation, reason="final_answer"))

    module = sys.modules[installed_plugin]
    assert (dict(plugins)["tiny"] is module, module.SEEN) == (True, [("c1", "final_answer")])


def test_entry_point_plugin_can_be_disabled_by_the_agent(installed_plugin):
    hooks = Hooks(plugins=discover_plugins(), selection=PluginSelection(disable=("tiny",)))

    assert "tiny" not in hooks.names()


def test_conversation_replace_context_refuses_a_stale_swap():
    conversation = conversation_with(Hooks())
    stale = conversation.context
    conversation.append(*pattern("a"))

    actual = (conversation.replace_context(stale, Context()), len(conversation.context))

    assert actual == (False, 3)
