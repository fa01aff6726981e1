"""Secrets are removed before text reaches a summarising model."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from forge_app.summary._redaction import REDACTED, redact

CASES = [
    (
        "env_assignment",
        "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz123",
        "export OPENAI_API_KEY=[REDACTED]",
    ),
    ("env_password", "DB_PASSWORD=s3cr3t ./run.sh", "DB_PASSWORD=[REDACTED] ./run.sh"),
    (
        "authorization_header",
        'curl -H "Authorization: Bearer abcdef123456789" https://api.example.com',
        'curl -H "Authorization: [REDACTED]" https://api.example.com',
    ),
    ("bearer_alone", "token is Bearer abcdefghijkl0987", "token is Bearer [REDACTED]"),
    (
        "url_password",
        "git clone https://bob:hunter2@github.com/x/y.git",
        "git clone https://bob:[REDACTED]@github.com/x/y.git",
    ),
    (
        "postgres_url",
        "DATABASE=postgres://app:pa55word@db:5432/main",
        "DATABASE=postgres://app:[REDACTED]@db:5432/main",
    ),
    ("sk_key", "use sk-proj-AbCdEfGhIjKlMnOpQrStUv in the call", "use [REDACTED] in the call"),
    ("aws_access_key", "key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED] here"),
    (
        "aws_secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED]",
    ),
    (
        "private_key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\nafter",
        "[REDACTED PRIVATE KEY]\nafter",
    ),
    ("github_token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", REDACTED),
    ("json_api_key", '{"api_key": "abc123def456"}', '{"api_key": "[REDACTED]"}'),
    ("yaml_password", "password: hunter2", "password: [REDACTED]"),
    ("yaml_token_like_key", "token: a1b2c3d4e5f6", "token: [REDACTED]"),
    ("quoted_password", 'password = "hunter2"', 'password = "[REDACTED]"'),
    ("token_counts_kept", "max_tokens=100 prompt_tokens: 5", "max_tokens=100 prompt_tokens: 5"),
    ("prose_kept", "the token: we need it", "the token: we need it"),
    ("author_kept", 'author = "Bob"', 'author = "Bob"'),
    ("variable_reference_kept", "GITHUB_TOKEN=$GITHUB_TOKEN", "GITHUB_TOKEN=$GITHUB_TOKEN"),
    ("plain_text_kept", "pytest -x tests/app", "pytest -x tests/app"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_redact_replaces_secrets(text, expected):
    actual = redact(text)

    assert actual == expected


_SECRET_CHARS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=20
)
_SHAPES = st.sampled_from(
    [
        "sk-{}",
        "export API_TOKEN={}",
        "Authorization: Bearer {}",
        "https://user:{}@example.com/",
        'client_secret = "{}"',
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
    ]
)


@given(shape=_SHAPES, secret=_SECRET_CHARS, before=st.text(max_size=30), after=st.text(max_size=30))
def test_redact_never_leaks_a_recognised_secret(shape, secret, before, after):
    assume(secret not in before and secret not in after)
    text = f"{before} {shape.format(secret)} {after}"

    actual = redact(text)

    assert secret not in actual


@given(st.text(max_size=200))
def test_redact_is_idempotent(text):
    once = redact(text)

    assert redact(once) == once
