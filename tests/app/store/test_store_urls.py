"""Store URLs as errors show them: every password hidden."""

from __future__ import annotations

import socket

import pytest

from forge_app.errors import StoreUnavailable
from forge_app.store import open_store, redact_url


def test_store_password_in_the_query_is_hidden_too():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://127.0.0.1:{port}/db?user=forge&password=s3cretpw&sslmode=disable"
    with pytest.raises(StoreUnavailable, match="refused") as caught:
        open_store(url, connect_timeout=2)
    assert "s3cretpw" not in str(caught.value)
    assert "?user=forge&password=***&sslmode=disable" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
        ("postgresql://h/db?sslpassword=abc&pwd=x1", "postgresql://h/db?sslpassword=***&pwd=***"),
        ("postgresql://u:pw@h/db?Passwd=a%26b#x", "postgresql://u:***@h/db?Passwd=***#x"),
        ("postgresql://h/db?password=&passfile=/p", "postgresql://h/db?password=&passfile=/p"),
        ("postgresql://h/db?application_name=pwd", "postgresql://h/db?application_name=pwd"),
        ("postgres://h/db?", "postgres://h/db?"),
    ],
    ids=["user-info", "query", "both", "empty-and-path", "name-is-no-secret", "untouched"],
)
def test_store_url_shown_hides_every_password(url, shown):
    assert redact_url(url) == shown
