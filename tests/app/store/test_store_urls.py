"""Store URLs as errors show them: every password hidden."""

from __future__ import annotations

import socket

import pytest

from forge_app.errors import InvalidStoreUrl, StoreUnavailable
from forge_app.store import open_store, parse_store_url, redact_url
from forge_app.summary._redaction import redact


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
        ("postgresql://:p@ss@h/db", "postgresql://:***@h/db"),
        (
            "postgresql://h/db?api_key=k1&auth_token=t2",
            "postgresql://h/db?api_key=***&auth_token=***",
        ),
    ],
    ids=[
        "user-info",
        "query",
        "both",
        "empty-and-path",
        "name-is-no-secret",
        "untouched",
        "no-user-at-in-password",
        "summary-secret-names",
    ],
)
def test_store_url_shown_hides_every_password(url, shown):
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:s3cret@[::1/db", "postgresql://u:***@[::1/db"),
        ("postgres://[fe80::1%eth0/db?password=s3cret", "postgres://[fe80::1%eth0/db"),
    ],
    ids=["unclosed-bracket", "unclosed-with-query"],
)
def test_store_malformed_ipv6_host_is_a_typed_error_without_the_password(url, shown):
    with pytest.raises(InvalidStoreUrl) as caught:
        parse_store_url(url)
    assert str(caught.value) == f"session store {shown}: malformed URL: Invalid IPv6 URL"


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("postgresql://u:s3cr3t@h/db", "s3cr3t"),
        ("postgresql://u:p@ss:w0rd@h/db", "ss:w0rd"),
        ("postgresql://h/db?sslmode=disable&password=s3cr3t", "s3cr3t"),
        ("postgresql://h/db?apikey=Zq8Lm3Nx7", "Zq8Lm3Nx7"),
        ("postgresql://h/db?client_secret=Zq8Lm3Nx7", "Zq8Lm3Nx7"),
    ],
    ids=["user-info", "at-in-password", "query", "api-key", "secret"],
)
def test_store_url_and_summary_hide_the_same_secrets(url, secret):
    actual = (secret in redact_url(url), secret in redact(url))

    assert actual == (False, False)
