"""The files a shell command writes or removes, read from its text (nothing is run).

Agents that have only a shell (mini-swe-agent, SWE-agent's ``bash``, Codex) edit files
with it. :func:`shell_file_changes` finds, per command line:

* output redirections: ``> f``, ``>> f``, ``&> f``, ``2> f`` (``cat > f <<EOF``,
  ``echo … > f``), never ``/dev/…``;
* ``sed -i`` / ``perl -i`` (the files after the script), ``tee [-a] f…``, ``touch f…``;
* ``cp … dst`` and ``mv … dst`` (the target; ``mv``'s sources are removals), ``rm f…``;
* ``git apply`` / ``patch`` fed a diff inline (here-document or ``echo``): the paths of
  its ``+++``/``---`` headers (``+++ /dev/null``: a removal);
* inline Python (``python -c …``, ``python - <<EOF``, or a script this command line
  wrote from a here-document and then runs): ``open(p, "w")`` and
  ``Path(p).write_text(…)`` with a literal path.

Relative paths after a literal ``cd dir &&`` are joined to ``dir``. A path that cannot be
known from the text (a variable, a glob, a command substitution, a patch read from a
file) is reported as :data:`UNKNOWN_PATH` rather than guessed. A line with a quote that
is never closed changes nothing: a shell refuses to run any of it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from forge_domain.tools._kinds import FileRemoveTool, FileUpdateTool

__all__ = ["UNKNOWN_PATH", "shell_file_changes"]

UNKNOWN_PATH = "(path not known)"
"""The path of a file a command writes when the command's text does not say which."""

FileChange = FileUpdateTool | FileRemoveTool

_WRITERS = frozenset({">", ">>", ">|", "&>", "&>>"})
_REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|>|<<<|<<-|<<|<&|<>|<)")
_SEPARATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
_WORD_END = frozenset(" \t\n;&|()<>")
_UNKNOWABLE = frozenset("*?[")
_PLAIN_RUN = re.compile(r"[^ \t\n;&|()<>'\"\\$`*?\[]+")
"""A run of a word's characters that the word keeps as they are, and that keep it literal."""
_QUOTED_RUN = re.compile(r'[^"\\$`]+')
"""A run of characters inside double quotes that the word keeps as they are."""
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?")
_OPEN_WRITE = re.compile(
    r"""open\(\s*(?P<path>[^,()]+?)\s*,\s*(?:mode\s*=\s*)?[rbu]*['"](?P<mode>[rwaxbt+]+)['"]"""
)
_PATH_WRITE = re.compile(r"""Path\(\s*(?P<path>[^()]+?)\s*\)\s*\.write_(?:text|bytes)\(""")
_PY_LITERAL = re.compile(r"""[rbu]*(['"])([^'"{}]+)\1""")
_DIFF_OLD = re.compile(r"^--- (?:a/)?(\S+)", re.MULTILINE)
_DIFF_NEW = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)
_DRY_RUN = frozenset({"--check", "--stat", "--numstat", "--summary", "--dry-run"})
_SED_ARGUMENT_FLAGS = frozenset("efl")
"""Short options of ``sed`` (and ``perl``) whose value follows: the rest of the cluster
or the next word."""


@dataclass(frozen=True, slots=True)
class _Word:
    """One shell word: its text without quotes, and whether it is known from the text alone."""

    text: str
    literal: bool


@dataclass(slots=True)
class _Simple:
    """One simple command: words, output targets and the here-documents fed to it."""

    words: list[_Word] = field(default_factory=list)
    targets: list[_Word] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    """Here-document bodies and here-strings."""
    source: _Word | None = None
    """The file its standard input is redirected from (``< fix.patch``)."""
    after_pipe: bool = False
    """It reads the output of the command before it (``… | git apply``)."""


class _Lexer:
    """Splits a command line into simple commands (quotes, here-documents, redirections)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.commands: list[_Simple] = [_Simple()]
        self.heredocs: list[tuple[str, bool, _Simple]] = []
        self.malformed = False
        """A quote is never closed: a shell would refuse the whole line."""

    def run(self) -> list[_Simple]:
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if char in " \t\\" and text.startswith(("\\\n", " ", "\t"), self.at):
                self.at += 2 if char == "\\" else 1
            elif char == "\n":
                self.at += 1
                self._end()
                self._read_heredocs()
            elif char == "#":
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            elif self._redirect():
                pass
            elif text.startswith(_SEPARATORS, self.at):
                separator = next(s for s in _SEPARATORS if text.startswith(s, self.at))
                self.at += len(separator)
                self._end()
                self.commands[-1].after_pipe = separator in ("|", "|&")
            else:
                self.commands[-1].words.append(self._word())
        return [command for command in self.commands if command.words or command.targets]

    def _end(self) -> None:
        if self.commands[-1].words or self.commands[-1].targets:
            self.commands.append(_Simple())

    def _redirect(self) -> bool:
        match = _REDIRECT.match(self.text, self.at)
        if match is None:
            return False
        operator = match.group(2)
        self.at = match.end()
        while self.text.startswith((" ", "\t"), self.at):
            self.at += 1
        if self.at >= len(self.text) or self.text[self.at] in "\n;&|()<>":
            return True
        target = self._word()
        command = self.commands[-1]
        if operator in _WRITERS:
            command.targets.append(target)
        elif operator in ("<<", "<<-"):
            self.heredocs.append((target.text, operator == "<<-", command))
        elif operator == "<<<":
            command.inputs.append(target.text)
        elif operator == "<":
            command.source = target
        return True

    def _read_heredocs(self) -> None:
        """Each pending here-document's body: the lines from here to the first that is its
        delimiter (after its leading tabs, for ``<<-``), or to the end of the text."""
        text = self.text
        for delimiter, strip_tabs, command in self.heredocs:
            found = _delimiter_line(text, self.at, delimiter, strip_tabs)
            if found is None:  # every line left is the body
                body = text[self.at :]
                command.inputs.append(body[:-1] if body.endswith("\n") else body)
                self.at = max(self.at, len(text))
            else:
                start, end = found
                command.inputs.append(text[self.at : start - 1] if start > self.at else "")
                self.at = end + 1
        self.heredocs = []

    def _word(self) -> _Word:
        text, at, parts, literal = self.text, self.at, [], True
        while at < len(text) and text[at] not in _WORD_END:
            plain = _PLAIN_RUN.match(text, at)  # characters that stand for themselves
            if plain is not None:
                parts.append(plain.group())
                at = plain.end()
                continue
            char = text[at]
            if char == "'":
                end = text.find("'", at + 1)
                if end < 0:
                    self.malformed, end = True, len(text)
                parts.append(text[at + 1 : end])
                at = end + 1
            elif char == '"':
                at += 1
                while at < len(text) and text[at] != '"':
                    quoted = _QUOTED_RUN.match(text, at)
                    if quoted is not None:
                        parts.append(quoted.group())
                        at = quoted.end()
                        continue
                    if text[at] == "\\" and at + 1 < len(text):
                        at += 1
                    elif text[at] in "$`":
                        literal = False
                    parts.append(text[at])
                    at += 1
                self.malformed = self.malformed or at >= len(text)
                at += 1
            elif char == "\\":
                parts.append(text[at + 1 : at + 2])
                at += 2
            elif char == "$" and text.startswith("$(", at):
                at = _balanced(text, at + 1)
                literal = False
            else:
                literal = literal and char not in _UNKNOWABLE and char not in "$`"
                parts.append(char)
                at += 1
        self.at = at
        return _Word("".join(parts), literal)


def _delimiter_line(text: str, at: int, delimiter: str, strip_tabs: bool) -> tuple[int, int] | None:
    """Where the first line from ``at`` (a line's start) that is ``delimiter`` (once its
    leading tabs are stripped, with ``strip_tabs``) starts and ends (at its newline or the
    text's end); None when no line is."""
    if "\n" in delimiter or (strip_tabs and delimiter.startswith("\t")):
        return None  # a line has no newline, and no leading tab once stripped
    tabs = "\t*" if strip_tabs else ""
    match = re.compile(f"^{tabs}{re.escape(delimiter)}$", re.MULTILINE).search(text, at)
    if match is None or match.start() >= len(text):  # (an empty line after the last one)
        return None
    return match.start(), match.end()


def _balanced(text: str, at: int) -> int:
    """The index after the parenthesis that closes the one at ``at``."""
    depth = 0
    while at < len(text):
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        at += 1
        if depth == 0:
            break
    return at


def _operands(words: list[_Word], takes_value: frozenset[str] = frozenset()) -> list[_Word]:
    """The words that are not options (nor values of ``takes_value`` options); all after ``--``."""
    operands: list[_Word] = []
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
        elif word.text == "--":
            return operands + words[index + 1 :]
        elif word.text.startswith("-") and len(word.text) > 1:
            skip = word.text in takes_value
        else:
            operands.append(word)
    return operands


def _in_place_files(words: list[_Word]) -> list[_Word] | None:
    """The files ``sed``/``perl`` edit in place, or None when no ``-i`` option is given."""
    in_place, has_script, files = False, False, []
    index = 0
    while index < len(words):
        word = words[index].text
        index += 1
        if word.startswith("--"):
            in_place = in_place or word.startswith("--in-place")
            if word in ("--expression", "--file"):
                has_script, index = True, index + 1
            has_script = has_script or word.startswith(("--expression=", "--file="))
        elif word.startswith("-") and len(word) > 1:
            for position, flag in enumerate(word[1:], start=1):
                if flag == "i":
                    in_place = True
                    break  # the rest of the cluster is a backup suffix
                if flag in _SED_ARGUMENT_FLAGS:
                    has_script = has_script or flag in "ef"
                    index += 0 if position + 1 < len(word) else 1
                    break
        elif not has_script:
            has_script = True  # the first operand is the script
        else:
            files.append(words[index - 1])
    return files if in_place else None


def _python_writes(code: str) -> Iterator[str]:
    """Paths inline Python opens for writing (``UNKNOWN_PATH`` for a computed one)."""
    for match in _OPEN_WRITE.finditer(code):
        if set(match.group("mode")) & set("wax+"):
            yield _python_path(match.group("path"))
    for match in _PATH_WRITE.finditer(code):
        yield _python_path(match.group("path"))


def _python_path(expression: str) -> str:
    literal = _PY_LITERAL.fullmatch(expression.strip())
    return literal.group(2) if literal is not None else UNKNOWN_PATH


def _diff_changes(diff: str) -> list[tuple[str, str]]:
    """(kind, path) per file a unified diff changes; ``+++ /dev/null`` removes the old one."""
    olds = _DIFF_OLD.findall(diff)
    changes: list[tuple[str, str]] = []
    for index, new in enumerate(_DIFF_NEW.findall(diff)):
        if new == "/dev/null" and index < len(olds):
            changes.append(("file_remove", olds[index]))
        elif new != "/dev/null":
            changes.append(("file_update", new))
    return changes


def _patch_input(command: _Simple, arguments: list[_Word], context: _Context) -> str | None:
    """The diff ``git apply``/``patch`` reads: inline, piped, or a file this command line
    wrote inline; None when it reads a diff the text does not hold."""
    inline = "\n".join(command.inputs) or (context.piped if command.after_pipe else "")
    if inline:
        return inline
    files = [word.text for word in _operands(arguments)]
    if command.source is not None:
        files.append(command.source.text)
    written = [context.written[name] for name in files if name in context.written]
    return "\n".join(written) if written else None


@dataclass(slots=True)
class _Context:
    """What the commands before one in the same command line left behind."""

    base: str | None = ""
    """The directory ``cd`` moved to ("" none yet, None one the text does not name)."""
    piped: str = ""
    """The words and inputs of the command before, for a command after a pipe."""
    written: dict[str, str] = field(default_factory=dict)
    """Files written from a here-document (``cat > fix.patch <<EOF``), by name: their text."""


def _command_changes(command: _Simple, context: _Context) -> Iterator[tuple[str, _Word | str]]:
    """(kind, path) per file one simple command changes."""
    for target in command.targets:
        yield "file_update", target
    words = command.words
    while words and ("=" in words[0].text.split("/")[0] or words[0].text == "sudo"):
        words = words[1:]  # VAR=value prefixes, sudo
    if not words:
        return
    program, arguments = words[0].text.rsplit("/", 1)[-1], words[1:]
    if program in ("sed", "perl"):
        for path in _in_place_files(arguments) or ():
            yield "file_update", path
    elif program in ("tee", "touch"):
        for path in _operands(arguments, frozenset({"-d", "-t", "-r"})):
            yield "file_update", path
    elif program == "rm":
        for path in _operands(arguments):
            yield "file_remove", path
    elif program in ("cp", "mv"):
        operands = _operands(arguments, frozenset({"-S"}))
        if len(operands) >= 2:
            yield "file_update", operands[-1]
            if program == "mv":
                for path in operands[:-1]:
                    yield "file_remove", path
    elif _PYTHON.fullmatch(program):
        code = "\n".join(command.inputs)
        scripts = [context.written.get(word.text) for word in _operands(arguments)[:1]]
        code = scripts[0] if scripts and scripts[0] is not None else code
        for index, word in enumerate(arguments[:-1]):
            if word.text == "-c":
                code = arguments[index + 1].text
        for written in _python_writes(code):
            yield "file_update", written
    elif program == "patch" or (program == "git" and arguments[:1] == [_Word("apply", True)]):
        if any(word.text in _DRY_RUN for word in arguments):
            return
        diff = _patch_input(command, arguments[1:] if program == "git" else arguments, context)
        changes = _diff_changes(diff) if diff is not None else []
        yield from changes or [("file_update", UNKNOWN_PATH)]


_WRITING_PROGRAM = re.compile(r"(?:sed|perl|tee|touch|rm|cp|mv|patch|git)(?=[ \t\n;&|()<>]|$)")
"""A program :func:`_command_changes` reads changes from, Python aside (it writes only
where its code holds ``open(`` or ``.write_``), when it is a word or a path's last part:
at the text's start or after one of :data:`_BEFORE_PROGRAM` (checked apart: the search
then skips ahead to the letters a name starts with, several times faster on a long text)."""
_BEFORE_PROGRAM = frozenset(" \t\n;&|()<>/")
_IN_PLACE_OPTION = re.compile(r"-[^ \t\n;&|()<>]*i")
"""An option word holding an ``i``: ``sed`` and ``perl`` change files only with one."""
_SILENT_REDIRECT = re.compile(
    r">&|&>>?[ \t]*/dev/null(?=[ \t\n;&|()<>]|$)|>>?[ \t]*/dev/null(?=[ \t\n;&|()<>]|$)"
)
"""``2>&1``, ``> /dev/null``: redirections that never name a file changed (``>&`` is not
read as a writer, ``/dev/`` is never a change)."""


def _may_change_files(command: str) -> bool:
    """False for a command whose text holds no ``>`` but in :data:`_SILENT_REDIRECT`
    (every output redirection has one), no :data:`_WRITING_PROGRAM` (``sed`` and ``perl``
    only with an :data:`_IN_PLACE_OPTION`), nor Python with ``open(`` or ``.write_``, even
    with its quotes and backslashes taken out (a word's text is its characters without
    them), nor a command substitution (``$(…)``, which a word's text leaves out, joining
    the letters around it): it changes no file."""
    if "$(" in command or (">" in command and ">" in _SILENT_REDIRECT.sub("", command)):
        return True
    bare = command.replace("'", "").replace('"', "").replace("\\", "")
    if "python" in bare and ("open(" in bare or ".write_" in bare):
        return True
    programs = {
        match.group()
        for match in _WRITING_PROGRAM.finditer(bare)
        if (start := match.start()) == 0 or bare[start - 1] in _BEFORE_PROGRAM
    }
    if not programs <= {"sed", "perl"}:
        return True
    return bool(programs) and _IN_PLACE_OPTION.search(bare) is not None


def shell_file_changes(command: str, cwd: str = "") -> tuple[FileChange, ...]:
    """The files ``command`` writes or removes, in order, each once (see the module doc);
    ``cwd`` is the directory it runs in, when the call names one."""
    if not _may_change_files(command):
        return ()  # most commands an agent runs: not lexed
    return _lexed_changes(command, cwd)


def _lexed_changes(command: str, cwd: str) -> tuple[FileChange, ...]:
    """:func:`shell_file_changes`, read from the command's words."""
    changes: dict[tuple[str, str], None] = {}
    context = _Context(base=cwd)
    lexer = _Lexer(command)
    simples = lexer.run()
    if lexer.malformed:
        return ()  # a shell runs none of a line it cannot parse
    for simple in simples:
        words = simple.words
        if words and words[0].text == "cd" and not simple.targets:
            context.base = _moved(context.base, words[1] if len(words) > 1 else None)
            continue
        for kind, path in _command_changes(simple, context):
            resolved = _resolved(path, context.base)
            if not resolved.startswith("/dev/"):
                changes[(kind, resolved)] = None
        if simple.inputs:
            for target in simple.targets:
                context.written[target.text] = "\n".join(simple.inputs)
        context.piped = "\n".join([*simple.inputs, *(word.text for word in words)])
    return tuple(
        FileUpdateTool(path=path) if kind == "file_update" else FileRemoveTool(path=path)
        for kind, path in changes
    )


def _moved(base: str | None, target: _Word | None) -> str | None:
    """The directory after ``cd target`` from ``base`` (None: one the text does not name)."""
    if target is None or not target.literal or target.text == "-":
        return None
    if target.text.startswith(("/", "~")):
        return target.text
    return None if base is None else posixpath.join(base, target.text)


def _resolved(path: _Word | str, base: str | None) -> str:
    """``path`` as the command's directory makes it (UNKNOWN_PATH when it is not literal)."""
    if isinstance(path, _Word):
        if not path.literal or not path.text:
            return UNKNOWN_PATH
        text = path.text
    else:
        text = path
    if text == UNKNOWN_PATH or text.startswith(("/", "~")) or not base:
        return text
    return posixpath.normpath(posixpath.join(base, text))
