"""Errors raised by ``forge_app``.

::

    ForgeAppError
    ├── TemplateNotFound      the summary template (or its directory) is missing
    ├── CompactionFailed      a compaction could not complete; the input is untouched
    │   └── EngineFailed          an engine raised an error of its own (a plugin's bug); ends a run
    ├── TranscriptError       a transcript file cannot be used (path at fault)
    │   ├── TranscriptNotFound    the file does not exist or cannot be read
    │   ├── MalformedJson         the file is not JSON / JSONL (line and column)
    │   └── NotATranscript        the JSON is not a valid transcript (OpenAI, Anthropic, Responses)
    ├── OutputNotWritten      an output file could not be written; nothing was left behind
    │   └── OutputIsInput         an output is one of the inputs (path, link or inode)
    ├── ChartFormatUnsupported  a chart file name asks for neither SVG nor PNG
    ├── EndpointNotConfigured  ``run`` has no provider endpoint or model to call
    ├── ContextDoesNotFit     a request would exceed the model's window even after compaction
    ├── HookFailed            a plugin's hook raised; names the plugin and the hook
    ├── PluginRejected        a plugin cannot be registered (hook wrappers, bad hooks)
    ├── UnknownPlugin         an agent's ``plugins: {enable, disable}`` names no plugin
    ├── ModelCallFailed       the provider refused a request (not worth retrying)
    │   ├── ProviderUnavailable   429, 5xx, timeout or connection error (retried)
    │   ├── ContextLengthExceeded the request was over the model's window
    │   ├── TurnDeadlineExceeded  no answer within a turn's total deadline (retries included)
    │   └── SummaryAuthFailed     the summary model refused the credentials (401/403)
    ├── ToolFailed            raised by a tool to report a failure to the model
    ├── InvalidAgentFile      an agent file is malformed (path, line, field)
    ├── AgentNotFound         no agent with that id in the file
    ├── UnknownEngine         ``compact.engine`` names no built-in or installed engine
    ├── EngineUnavailable     an engine cannot be built from the agent (missing model …)
    ├── StoreError            a session store cannot be used (``url`` at fault, password hidden)
    │   ├── InvalidStoreUrl       the URL names no supported store (sqlite:///…, postgresql://…)
    │   ├── StoreUnavailable      the store does not answer (bounded connect timeout) or cannot open
    │   │   └── StoreTimeout          a store call passed its deadline (hung server, held lock)
    │   ├── StoreCorrupt          the file or database is not a readable session store
    │   ├── StoreSchemaTooNew     the store was written by a newer version (schema version)
    │   ├── ConversationNotFound  no conversation with that id in the store
    │   ├── ConversationChanged   another writer changed the conversation; re-read it
    │   └── UnknownRef            no archive with that ref in the conversation
    ├── InvalidSearchQuery    a search query is too long (characters or words)
    ├── AdapterUnavailable    a framework adapter's extra is not installed (names the extra)
    ├── UnsupportedHistory    a framework history holds an item an adapter cannot read (index, type)
    ├── TelemetryUnavailable  telemetry is enabled but OpenTelemetry is not installed (``otel``)
    └── (more leaves are added by the engines and CLI modules)

Each class carries ``exit_code``, the status ``forge-compact`` exits with when
the error ends a command: ``1`` when the job ran and could not complete
(``CompactionFailed``, ``ModelCallFailed`` and its leaves), ``2`` for bad input
or configuration (everything else).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

BAD_INPUT = 2
"""Exit status of bad input or configuration: a file, an agent, an option."""
JOB_FAILED = 1
"""Exit status of a job that ran and could not complete."""


class ForgeAppError(Exception):
    """Root of every error raised by ``forge_app``."""

    exit_code: ClassVar[int] = BAD_INPUT
    """The command line's exit status when this error ends a command."""


class TemplateNotFound(ForgeAppError, FileNotFoundError):
    """The summary template could not be found."""

    def __init__(self, path: Path | str, name: str) -> None:
        self.path = Path(path)
        self.name = name
        super().__init__(f"summary template {name!r} not found in {self.path}")


class CompactionFailed(ForgeAppError):
    """A compaction could not complete; the conversation is unchanged.

    ``stage`` names the step that failed (``summary``, ``render``, ``validate`` …).
    """

    exit_code = JOB_FAILED

    def __init__(self, stage: str, problem: str) -> None:
        self.stage = stage
        self.problem = problem
        super().__init__(f"compaction failed during {stage}: {problem}")


class EngineFailed(CompactionFailed):
    """The engine ``engine`` raised ``error``, an exception outside the error tree.

    That is a bug in the engine (usually a plugin's), not a failure a later
    compaction could avoid, so it ends a live run as well as a command.
    """

    def __init__(self, engine: str, error: BaseException) -> None:
        self.engine = engine
        self.error = error
        self.stage = f"engine {engine!r}"
        self.problem = f"{type(error).__name__}: {error}"
        ForgeAppError.__init__(self, f"engine {engine!r} failed: {self.problem}")


class TranscriptError(ForgeAppError):
    """A transcript file cannot be used; ``path`` is the file at fault."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class TranscriptNotFound(TranscriptError, FileNotFoundError):
    """The transcript file does not exist or cannot be read."""


class MalformedJson(TranscriptError, ValueError):
    """The transcript is not valid JSON (or JSONL); ``line`` and ``column`` are 1-based."""

    def __init__(self, path: Path | str, line: int, column: int, problem: str) -> None:
        self.line = line
        self.column = column
        super().__init__(path, f"line {line} column {column}: invalid JSON: {problem}")


class NotATranscript(TranscriptError, ValueError):
    """The JSON is not a transcript of a known format; ``index`` names the bad entry if any."""

    def __init__(self, path: Path | str, problem: str, index: int | None = None) -> None:
        self.index = index
        super().__init__(path, problem)


class OutputNotWritten(ForgeAppError, OSError):
    """An output file could not be written; no partial file was left behind."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"cannot write {path}: {problem}")


class OutputIsInput(OutputNotWritten):
    """An output would replace an input (same path, a link to it, or the same inode).

    Raised before anything is written: ``path`` is the output, ``source`` the input.
    """

    def __init__(self, path: Path | str, source: Path | str) -> None:
        self.source = Path(source)
        shown = "(the file on standard input)" if str(source) == "-" else str(source)
        if str(path) == "-":
            problem = f"standard output is the input {shown}"
        elif str(path) == str(source):
            problem = "it is the input"
        else:
            problem = f"it is the same file as the input {shown}"
        super().__init__(path, f"{problem}; inputs are never overwritten")


class HookFailed(ForgeAppError):
    """A plugin's hook implementation raised; the run is aborted.

    ``plugin`` is the plugin's registered name, ``hook`` the hook's name and
    ``error`` the original exception (also the ``__cause__``).
    """

    def __init__(self, plugin: str, hook: str, error: BaseException) -> None:
        self.plugin = plugin
        self.hook = hook
        self.error = error
        super().__init__(f"plugin {plugin!r} failed in {hook}: {type(error).__name__}: {error}")


class PluginRejected(ForgeAppError):
    """A plugin cannot be registered; ``plugin`` names it."""

    def __init__(self, plugin: str, problem: str) -> None:
        self.plugin = plugin
        self.problem = problem
        super().__init__(f"plugin {plugin!r} rejected: {problem}")


class UnknownPlugin(ForgeAppError, LookupError):
    """``plugins.<field>`` of an agent names plugins that do not exist (a misspelt name
    would otherwise disable nothing); ``available`` lists the names that do."""

    def __init__(self, field: str, names: tuple[str, ...], available: tuple[str, ...]) -> None:
        self.field = field
        self.names = names
        self.available = available
        unknown = ", ".join(repr(name) for name in names)
        super().__init__(
            f"plugins.{field} names no plugin: {unknown} (plugins: {', '.join(available)})"
        )


class ModelCallFailed(ForgeAppError):
    """The provider answered a request with an error that retrying will not fix.

    ``model`` is the model id, ``status`` the HTTP status when there was one.
    """

    exit_code = JOB_FAILED

    def __init__(self, model: str | None, problem: str, status: int | None = None) -> None:
        self.model = model
        self.problem = problem
        self.status = status
        where = f" ({status})" if status is not None else ""
        super().__init__(f"call to model {model!r} failed{where}: {problem}")


class ProviderUnavailable(ModelCallFailed):
    """A transient failure (rate limit, server error, timeout): retry with backoff."""


class ContextLengthExceeded(ModelCallFailed):
    """The request did not fit in the model's context window: compact, then retry."""


class TurnDeadlineExceeded(ModelCallFailed):
    """The provider gave no answer within the turn's total deadline, retries included.

    ``seconds`` is the deadline. Not retried: the deadline already covers the retries.
    """

    def __init__(self, model: str | None, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(model, f"no answer within the turn's deadline of {seconds:g} s")


class ContextDoesNotFit(ForgeAppError):
    """A request would exceed the model's window and no compaction can make it fit.

    Raised before the request is sent (never a silent oversize request);
    ``parts`` names what could not be shrunk.
    """

    def __init__(self, tokens: int, window: int, parts: str) -> None:
        self.tokens = tokens
        self.window = window
        self.parts = parts
        super().__init__(
            f"the context holds ~{tokens:,} tokens, over the model's window of {window:,}, "
            f"and cannot be compacted further ({parts or 'nothing left to cut'})"
        )


class ToolFailed(ForgeAppError):
    """Raised by a tool to hand the model an error result instead of aborting the run."""


class InvalidAgentFile(ForgeAppError, ValueError):
    """An agent file (YAML or Markdown front matter) is malformed.

    ``line`` is 1-based (None when unknown) and ``field`` the dotted path of the
    value at fault (``agents[1].compact.eviction_window``).
    """

    def __init__(self, path: Path | str, line: int | None, field: str, problem: str) -> None:
        self.path = Path(path)
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{path}:{line}" if line is not None else f"{path}"
        subject = f"{field}: " if field else ""
        super().__init__(f"{where}: {subject}{problem}")


class AgentNotFound(ForgeAppError, LookupError):
    """No agent with ``agent_id`` is defined in ``path``."""

    def __init__(self, path: Path | str, agent_id: str, known: tuple[str, ...]) -> None:
        self.path = Path(path)
        self.agent_id = agent_id
        self.known = known
        super().__init__(f"{path}: no agent {agent_id!r} (defined: {', '.join(known) or 'none'})")


class SummaryAuthFailed(ModelCallFailed):
    """The summarising model refused the credentials (401/403, or no API key).

    The compaction is aborted and the conversation is unchanged: falling back
    would hide a configuration error that every later compaction would hit too.
    """


class UnknownEngine(ForgeAppError, LookupError):
    """``compact.engine`` names no engine; ``available`` lists the names that exist."""

    def __init__(self, name: str, available: tuple[str, ...]) -> None:
        self.name = name
        self.available = available
        super().__init__(
            f"unknown context engine {name!r} (available: {', '.join(available) or 'none'})"
        )


class EngineUnavailable(ForgeAppError):
    """The engine ``engine`` cannot be built for this agent (``problem`` says why)."""

    def __init__(self, engine: str, problem: str) -> None:
        self.engine = engine
        self.problem = problem
        super().__init__(f"context engine {engine!r} cannot be used: {problem}")


class ChartFormatUnsupported(ForgeAppError, ValueError):
    """A chart cannot be written in the format its file name asks for; ``path`` names it."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        super().__init__(
            f"{path}: unsupported chart format {self.path.suffix or '(no suffix)'!r}; "
            "use a .svg or .png file name"
        )


class EndpointNotConfigured(ForgeAppError):
    """No provider endpoint (or no model) is configured for a live run; ``setting`` names it."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        self.problem = problem
        super().__init__(problem)


class StoreError(ForgeAppError):
    """A session store cannot be used; ``url`` names it (its password replaced by ``***``)."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"session store {url}: {problem}")


class InvalidStoreUrl(StoreError, ValueError):
    """The URL names no supported store (``sqlite:///PATH`` or ``postgresql://…``)."""


class StoreUnavailable(StoreError):
    """The store does not answer within the connect timeout, or its file cannot be opened."""


class StoreCorrupt(StoreError):
    """The file or database is not a readable session store (nothing was changed)."""


class StoreSchemaTooNew(StoreError):
    """The store's schema is newer than this version understands; ``found`` and ``supported``."""

    def __init__(self, url: str, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            url,
            f"schema version {found} is newer than this forge-compact supports ({supported}); "
            "upgrade forge-compact",
        )


class ConversationNotFound(StoreError, LookupError):
    """No conversation with ``conversation_id`` in the store."""

    def __init__(self, url: str, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(url, f"no conversation {conversation_id!r}")


class ConversationChanged(StoreError):
    """Another writer changed conversation ``conversation_id`` since this one read it, in a way
    a compaction cannot be re-applied on (it replaced some of the same messages); nothing was
    written. The recorder re-reads the conversation at its next sync."""

    def __init__(self, url: str, conversation_id: str, problem: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(url, f"conversation {conversation_id!r} changed meanwhile: {problem}")


class StoreTimeout(StoreUnavailable):
    """A store call did not finish within its deadline (``seconds``); its transaction was
    rolled back, nothing of it was written."""

    def __init__(self, url: str, seconds: float, problem: str) -> None:
        self.seconds = seconds
        super().__init__(url, f"no answer within {seconds:g}s ({problem})")


class UnknownRef(StoreError, LookupError):
    """No archive ``ref`` in conversation ``conversation_id`` (refs look like ``c3``, ``t12``)."""

    def __init__(self, url: str, conversation_id: str, ref: str, problem: str = "") -> None:
        self.conversation_id = conversation_id
        self.ref = ref
        super().__init__(
            url, problem or f"conversation {conversation_id!r} has no archive ref {ref!r}"
        )


class InvalidSearchQuery(ForgeAppError, ValueError):
    """A search query over the bounds (characters, words); ``problem`` says which."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"search query too long: {problem}")


class AdapterUnavailable(ForgeAppError, ImportError):
    """The framework an adapter needs is not installed; ``extra`` is the extra that installs it."""

    def __init__(self, framework: str, extra: str) -> None:
        self.framework = framework
        self.extra = extra
        super().__init__(
            f"the {framework} adapter needs {framework}: pip install 'forge-compact[{extra}]'"
        )


class TelemetryUnavailable(ForgeAppError, ImportError):
    """Telemetry is enabled but ``package`` is not installed; ``install`` installs it."""

    def __init__(self, package: str, install: str = "pip install 'forge-compact[otel]'") -> None:
        self.package = package
        self.install = install
        super().__init__(f"telemetry needs OpenTelemetry ({package} is missing): {install}")


class UnsupportedHistory(ForgeAppError, ValueError):
    """A framework's history holds an item an adapter cannot convert (``index``, ``kind``)."""

    def __init__(self, framework: str, index: int, kind: str) -> None:
        self.framework = framework
        self.index = index
        self.kind = kind
        super().__init__(f"{framework} history[{index}]: cannot convert a {kind}")
