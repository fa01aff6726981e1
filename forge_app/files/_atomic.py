"""Atomic writes: a file is replaced in one step or not at all, and no temporary file lingers.

The text goes to a temporary file in the destination's directory, which then replaces
the destination in one step, so a failed run never leaves a truncated output behind.
A run killed mid-write (``kill -9``) can still leave its temporary file; each temporary
file's name carries its writer's pid, and the first write of a process into a directory
removes the ones whose writer is gone or that are older than :data:`STALE_AFTER` seconds.

Inputs are never overwritten: :func:`check_outputs` refuses, before a command writes
anything, every output that is one of its inputs (the same path once resolved, a
symlink or a hard link to it, standard output redirected into it) and every output
that cannot be written (a missing directory, a directory, the same output twice).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from forge_app.errors import OutputIsInput, OutputNotWritten

__all__ = [
    "check_outputs",
    "check_writable",
    "ensure_not_an_input",
    "write_bytes_atomic",
    "write_text_atomic",
]

STDIO = "-"
"""The path that means standard input (reading) or standard output (writing)."""
STALE_AFTER = 15 * 60
"""Seconds after which a leftover temporary file is removed even if its writer's pid lives."""


_PathLike = Path | str
"""A file name as the command line gives it (``-``: standard input or output)."""


def ensure_not_an_input(
    outputs: Iterable[_PathLike | None], inputs: Iterable[_PathLike | None]
) -> None:
    """Refuse any output that is one of ``inputs``: the rule that inputs are never touched.

    An output is an input when both resolve to the same path (symlinks followed, ``.``
    and ``..`` collapsed) or name the same existing file (device and inode: a hard link,
    a bind mount). ``-`` stands for the process's standard input among ``inputs`` and
    its standard output among ``outputs``, compared by what they are open on (``compact
    - < t.json >> t.json``). None (an option not given) is skipped on either side.

    Raises:
        OutputIsInput: naming the first such output and its input; nothing was written.
    """
    by_path: dict[str, _PathLike] = {}
    by_inode: dict[tuple[int, int], _PathLike] = {}
    for source in inputs:
        if source is None:
            continue
        resolved, identity = _resolved(source), _identity(source, 0)
        if resolved is not None:
            by_path.setdefault(resolved, source)
        if identity is not None:
            by_inode.setdefault(identity, source)
    for output in outputs:
        if output is None:
            continue
        resolved, identity = _resolved(output), _identity(output, 1)
        source = by_path.get(resolved) if resolved is not None else None
        if source is None and identity is not None:
            source = by_inode.get(identity)
        if source is not None:
            raise OutputIsInput(output, source)


def check_outputs(
    outputs: Iterable[_PathLike | None], inputs: Iterable[_PathLike | None] = ()
) -> None:
    """Check every output of a command before it writes any of them.

    Each output must not be an input (:func:`ensure_not_an_input`), must be given once,
    must not be a directory, and must go into an existing directory. An existing device
    or FIFO (``/dev/null``) is always accepted. None outputs are skipped.

    Raises:
        OutputIsInput: an output is one of the inputs.
        OutputNotWritten: an output cannot be written (what is wrong, for the first one).
    """
    given = [output for output in outputs if output is not None]
    ensure_not_an_input(given, inputs)
    check_writable(given)


def check_writable(outputs: Iterable[_PathLike]) -> None:
    """The part of :func:`check_outputs` that does not look at the inputs: each output is
    given once, is not a directory, and goes into an existing, writable directory.

    Raises:
        OutputNotWritten: an output cannot be written (what is wrong, for the first one).
    """
    seen: set[str] = set()
    for output in outputs:
        if str(output) == STDIO:
            continue
        info = _stat_or_none(output, output)
        if info is not None and _is_special_mode(info.st_mode):
            continue
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise OutputNotWritten(output, "it is a directory")
        key = os.path.realpath(output)
        if key in seen:
            raise OutputNotWritten(output, "two outputs of this command would be this one file")
        seen.add(key)
        directory = Path(output).parent
        folder = _stat_or_none(directory, output)
        if folder is None or not stat.S_ISDIR(folder.st_mode):
            problem = "does not exist" if folder is None else "is not a directory"
            raise OutputNotWritten(output, f"directory {directory} {problem}")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise OutputNotWritten(output, f"directory {directory} is not writable")


def _stat_or_none(path: _PathLike, output: _PathLike) -> os.stat_result | None:
    """``os.stat(path)``; None when nothing is there.

    Raises:
        OutputNotWritten: for ``output``, when ``path`` cannot be examined (a name too
            long, a parent that is a file, no permission …).
    """
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError as exc:
        raise OutputNotWritten(output, "a parent of it is not a directory") from exc
    except OSError as exc:
        raise OutputNotWritten(output, exc.strerror or str(exc)) from exc
    except ValueError as exc:  # an embedded NUL: possible from code, not from a command line
        raise OutputNotWritten(output, f"not a file name: {exc}") from exc


def _resolved(path: _PathLike) -> str | None:
    """The absolute path with every symlink resolved; None for ``-`` or an unresolvable name."""
    if str(path) == STDIO:
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def _identity(path: _PathLike, stdio: int) -> tuple[int, int] | None:
    """Device and inode of the regular file ``path`` is (``-``: descriptor ``stdio``), if any."""
    try:
        info = os.fstat(stdio) if str(path) == STDIO else os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically, like :func:`write_bytes_atomic`.

    Raises:
        OutputNotWritten: as :func:`write_bytes_atomic`, or ``text`` holds a lone
            surrogate, which UTF-8 cannot encode (nothing is written).
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        problem = f"a lone surrogate {text[exc.start]!r} (character {exc.start}) is not UTF-8 text"
        raise OutputNotWritten(path, problem) from exc
    if str(path) == STDIO and getattr(sys.stdout, "buffer", None) is None:
        sys.stdout.write(text)  # a text stream put in place of stdout (tests, embedding)
        sys.stdout.flush()
        return
    write_bytes_atomic(path, data)


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (``-``: stdout).

    The temporary file sits in the target's directory, is flushed to disk, then
    replaces the target in one step; it is removed if anything fails. An existing
    device or FIFO (``/dev/null``) is written in place, never replaced; a symlink is
    written where it points (the link stays; a loop is refused).

    The temporary file is named ``.<name>.forge-<pid>-<random>.tmp``. Before the first
    write into a directory, this process removes the files of that pattern left there by
    killed writers: those whose pid is no longer running (on this machine) or that are
    older than :data:`STALE_AFTER`.

    Raises:
        OutputNotWritten: the directory is missing or not writable; nothing is left behind.
    """
    if str(path) == STDIO:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = _link_target(Path(path))
    if _is_special(target):
        _write_in_place(target, data)
        return
    directory = target.parent
    _remove_stale_temporaries(directory)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=directory, prefix=f".{target.name[:48]}.forge-{os.getpid()}-", suffix=".tmp"
        )
    except FileNotFoundError as exc:
        raise OutputNotWritten(path, f"directory {directory} does not exist") from exc
    except OSError as exc:
        raise OutputNotWritten(path, exc.strerror or str(exc)) from exc
    try:
        os.chmod(temporary, _mode_for(target))
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        raise OutputNotWritten(path, exc.strerror or str(exc)) from exc
    finally:
        Path(temporary).unlink(missing_ok=True)


_TEMPORARY = re.compile(r"\..*\.forge-(?P<pid>[1-9][0-9]{0,9})-[a-z0-9_]+\.tmp", re.DOTALL)
"""The names :func:`write_bytes_atomic` gives its temporary files."""
_SWEPT: set[str] = set()
"""The directories this process has removed stale temporary files from."""


def _remove_stale_temporaries(directory: Path) -> None:
    """Remove the temporary files killed writers left in ``directory`` (once per process).

    Best effort: a file that cannot be examined or removed is left alone.
    """
    key = os.path.abspath(directory)
    if key in _SWEPT:
        return
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return  # the write itself reports a missing or unreadable directory
    _SWEPT.add(key)
    now = time.time()
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None:
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and (
                now - info.st_mtime > STALE_AFTER or not _is_running(int(match["pid"]))
            ):
                os.unlink(entry.path)


def _is_running(pid: int) -> bool:
    """True unless no process ``pid`` exists on this machine (always True off POSIX)."""
    if os.name != "posix" or pid == os.getpid():
        return True  # on Windows, os.kill(pid, 0) would send CTRL_C_EVENT
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or no pid at all: leave it to the age rule
    return True


def _link_target(path: Path) -> Path:
    """Where a symlink ``path`` points (renaming over the link would replace the link).

    Raises:
        OutputNotWritten: the link is part of a loop.
    """
    if not path.is_symlink():
        return path
    resolved = Path(os.path.realpath(path))
    if resolved.is_symlink():  # realpath stops where a loop closes
        raise OutputNotWritten(path, "a symlink loop")
    return resolved


def _is_special(target: Path) -> bool:
    """True for an existing device, FIFO or socket (``/dev/null``, ``/dev/stdout`` …)."""
    try:
        mode = target.stat().st_mode
    except (OSError, ValueError):
        return False
    return _is_special_mode(mode)


def _is_special_mode(mode: int) -> bool:
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _write_in_place(target: Path, data: bytes) -> None:
    """Write to a special file directly: renaming over a device would replace the device."""
    try:
        with target.open("wb") as stream:
            stream.write(data)
    except OSError as exc:
        raise OutputNotWritten(target, exc.strerror or str(exc)) from exc


def _mode_for(target: Path) -> int:
    """The permission bits a new file gets (or the existing file's, when replacing it)."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
