"""The one typed facade over pluggy: :class:`Hooks`.

Nothing else in the project touches ``pm.hook``. ``dispatch`` calls every
implementation of the event's hook itself, one at a time, so that it can

- await what an implementation returns (pluggy is synchronous; coroutine
  functions are welcome as hook implementations);
- keep a deterministic order: registration order, ``tryfirst`` before the rest,
  ``trylast`` after;
- name the plugin when one fails.

**Failure policy.** A hook that raises aborts the run: ``dispatch`` logs
``hook_failed`` with the plugin's name and raises :class:`HookFailed` (the
original exception is its ``__cause__``). A built-in plugin's own error
(``ForgeAppError``: the engine or the provider that failed) is raised as it is,
so the run ends naming the real cause rather than the ``compaction`` hook.
Hooks may replace the conversation's context, so carrying on after a half-run
hook could send something nobody checked. Plugins that must never stop a run
catch their own errors. Hook wrappers (``wrapper=True`` / ``hookwrapper=True``)
are rejected at registration.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from importlib.metadata import entry_points

import pluggy
import structlog

from forge_app.errors import ForgeAppError, HookFailed, PluginRejected, UnknownPlugin
from forge_app.runtime import _hookspecs as hookspecs
from forge_app.runtime._events import HookEvent
from forge_domain import PluginSelection

_log = structlog.get_logger("forge_app.runtime.plugins")

NamedPlugin = tuple[str, object]
"""A plugin and the name it is registered (and enabled or disabled) under."""


def _plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def discover_plugins(group: str = hookspecs.ENTRY_POINT_GROUP) -> tuple[NamedPlugin, ...]:
    """Load every plugin published under the entry-point ``group``.

    Uses pluggy's ``load_setuptools_entrypoints``; the result can be shared by
    many :class:`Hooks` (plugins from entry points should be stateless).
    """
    pm = _plugin_manager()
    pm.load_setuptools_entrypoints(group)
    return tuple((name, plugin) for name, plugin in pm.list_name_plugin() if plugin is not None)


def _installed(group: str = hookspecs.ENTRY_POINT_GROUP) -> set[str]:
    """The names of the plugins installed under ``group`` (read, not loaded)."""
    return {entry_point.name for entry_point in entry_points(group=group)}


def _rank(impl: pluggy.HookImpl) -> int:
    if impl.tryfirst:
        return 0
    return 2 if impl.trylast else 1


class Hooks:
    """The plugins of one conversation and the dispatcher of its events."""

    def __init__(
        self,
        *,
        builtins: Iterable[NamedPlugin] = (),
        plugins: Iterable[NamedPlugin] = (),
        selection: PluginSelection | None = None,
    ) -> None:
        """Register ``builtins`` and third-party ``plugins`` in that order.

        ``selection`` (an agent's ``plugins:`` block) filters them by name:
        ``disable`` removes any plugin, built-in or not; ``enable``, when not
        empty, keeps only the named third-party plugins (built-ins stay).

        Raises:
            UnknownPlugin: ``selection`` names a plugin that is not built in, not among
                ``plugins`` and not installed (a misspelt name would change nothing).
        """
        chosen = selection or PluginSelection()
        builtins, plugins = tuple(builtins), tuple(plugins)
        available = tuple(sorted({name for name, _ in (*builtins, *plugins)} | _installed()))
        for field, names in (("enable", chosen.enable), ("disable", chosen.disable)):
            unknown = tuple(name for name in names if name not in available)
            if unknown:
                raise UnknownPlugin(field, unknown, available)
        self._pm = _plugin_manager()
        self._builtins: set[str] = set()
        for name, plugin in builtins:
            if name not in chosen.disable:
                self.register(plugin, name)
                self._builtins.add(name)
        for name, plugin in plugins:
            if chosen.allows(name):
                self.register(plugin, name)

    def register(self, plugin: object, name: str) -> None:
        """Register ``plugin`` under ``name``.

        Raises:
            PluginRejected: the name is taken, a hook is unknown or has bad
                arguments, or a hook is a wrapper.
        """
        try:
            self._pm.register(plugin, name=name)
        except (ValueError, pluggy.PluginValidationError) as exc:
            raise PluginRejected(name, str(exc)) from exc
        try:
            self._pm.check_pending()
        except pluggy.PluginValidationError as exc:
            self._pm.unregister(plugin)
            raise PluginRejected(name, str(exc)) from exc
        for caller in self._pm.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper):
                    self._pm.unregister(plugin)
                    raise PluginRejected(name, f"{caller.name} is a hook wrapper (unsupported)")

    def names(self) -> tuple[str, ...]:
        """Names of the registered plugins, in registration order."""
        return tuple(name for name, _ in self._pm.list_name_plugin())

    def plugin(self, name: str) -> object | None:
        """The plugin registered under ``name``, if any."""
        return self._pm.get_plugin(name)

    def implementations(self, hook: str) -> Sequence[pluggy.HookImpl]:
        """The implementations of ``hook`` in the order :meth:`dispatch` calls them."""
        caller: pluggy.HookCaller = getattr(self._pm.hook, hook)
        return sorted(caller.get_hookimpls(), key=_rank)

    async def dispatch(self, event: HookEvent) -> None:
        """Call every implementation of ``event.hook``, awaiting awaitables.

        Raises:
            HookFailed: an implementation raised (after logging ``hook_failed``).
        """
        arguments = event.arguments()
        for impl in self.implementations(event.hook):
            kwargs = {name: arguments[name] for name in impl.argnames}
            try:
                outcome = impl.function(**kwargs)
                if inspect.isawaitable(outcome):
                    await outcome
            except HookFailed:
                raise
            except Exception as exc:  # third-party code: re-raised with the plugin's name
                if isinstance(exc, ForgeAppError) and impl.plugin_name in self._builtins:
                    raise  # a built-in's own error already names what failed (engine, provider)
                _log.error(
                    "hook_failed",
                    plugin=impl.plugin_name,
                    hook=event.hook,
                    conversation_id=event.conversation.id,
                    error=f"{type(exc).__name__}: {exc}",
                )
                raise HookFailed(impl.plugin_name, event.hook, exc) from exc
