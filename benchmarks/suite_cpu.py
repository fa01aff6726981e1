"""CPU time of a command's whole process tree, the processes it orphans included.

``/usr/bin/time`` counts a process and the descendants that were waited for; a process
whose parent exits first (a ``multiprocessing`` fork server, a daemon) is re-parented
and its CPU is lost. This runner makes itself the sub-reaper of the command's tree
(``PR_SET_CHILD_SUBREAPER``), so orphans come back to it and are waited for; it then
prints the tree's user and system CPU, the wall time and the load average before and
after (Linux only)::

    python -m benchmarks.suite_cpu -- python -m pytest -n 2 --dist loadfile
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ORPHAN_GRACE = 60.0
"""Seconds to wait, after the command ends, for the processes it left running."""


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print(__doc__, file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    load_before = _load()
    started = time.monotonic()
    status = subprocess.run(command, check=False).returncode
    wall = time.monotonic() - started
    deadline = time.monotonic() + ORPHAN_GRACE
    left = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                left = 1
                break
            time.sleep(0.05)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"suite_cpu: user {usage.ru_utime:.1f} s, system {usage.ru_stime:.1f} s, "
        f"total {usage.ru_utime + usage.ru_stime:.1f} s, wall {wall:.1f} s, exit {status}, "
        f"load before {load_before}, after {_load()}"
        + (", processes still running after the grace period" if left else ""),
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
