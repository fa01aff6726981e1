"""The frameworks' own tests, run against forge-compact's adapters (see each folder's README).

As in the frameworks' own suites, blockbuster is on for every test: a blocking call on an
event loop (a file read, ``os.stat``) fails it. Tests of what forge-compact deliberately does
differently are marked ``xfail`` (strict) with the reason, from each folder's ``EXPECTED``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from importlib.util import find_spec

import pytest
from blockbuster import BlockBuster, blockbuster_ctx


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    """Blocking calls on an event loop raise ``BlockingError``, from any module."""
    with blockbuster_ctx() as detector:
        yield detector


def pytest_configure(config: pytest.Config) -> None:
    """LangChain's ``requires`` marker: the test needs these packages installed."""
    config.addinivalue_line("markers", "requires(*packages): skipped when one is missing")
    config.addinivalue_line("markers", "asyncio: pytest-asyncio's marker, run on anyio here")


def _expected(item: pytest.Item) -> dict[str, str]:
    module = getattr(item, "module", None)
    package = module.__name__.rsplit(".", 1)[0] if module is not None else ""
    try:
        expected = __import__(f"{package}.expected", fromlist=["EXPECTED"])
    except ModuleNotFoundError:
        return {}
    table: dict[str, str] = expected.EXPECTED
    return table


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Async tests run on anyio (their suites use pytest-asyncio): marked before anyio's own
    hook reads the marker, so that it runs them with the ``anyio_backend`` fixture."""
    if inspect.iscoroutinefunction(obj) and collector.istestfunction(obj, name):  # type: ignore[attr-defined]
        pytest.mark.anyio(obj)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that needs a package that is not installed is skipped (LangChain's ``requires``
    marker)."""
    for item in items:
        requires = item.get_closest_marker("requires")
        missing = [p for p in requires.args if find_spec(p) is None] if requires else []
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)} (not installed)"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Expected differences are strict xfails with their reason (set on the item that runs:
    anyio parametrizes async tests after collection)."""
    name = item.originalname if isinstance(item, pytest.Function) else item.name
    reason = _expected(item).get(name)
    if reason is not None:
        item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
