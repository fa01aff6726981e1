"""Secrets are removed before text reaches a summarising model."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from forge_app.summary._redaction import REDACTED, RULE_NAMES, redact
from tests.app.secret_fakes import SECRET_FAKES

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


R = REDACTED

FORMS: dict[str, list[tuple[str, str]]] = {
    # rule: [(text, expected)], positive rows first; a negative row expects its text unchanged.
    "private_key": [
        (
            "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
            f"{R[:-1]} PRIVATE KEY]",
        ),
        ("-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----", ""),
    ],
    "authorization_header": [
        ("Authorization: token ghx1234567890", f"Authorization: {R}"),
        ("the authorization flow is documented", ""),
    ],
    "bearer_token": [
        ("sent Bearer Zq8Lm3Nx7Pv2Tc9W", f"sent Bearer {R}"),
        ("a bearer of bad news", ""),
    ],
    "url_password": [
        ("redis://default:Zq8Lm3Nx@cache:6379/0", f"redis://default:{R}@cache:6379/0"),
        ("postgres://app:p@ss@db/main", f"postgres://app:{R}@db/main"),
        ("redis://:Zq8Lm3Nx@cache:6379/0", f"redis://:{R}@cache:6379/0"),
        ("HTTPS://bob:Zq8Lm3Nx@example.com/", f"HTTPS://bob:{R}@example.com/"),
        ("https://bob:pw@host.io/?to=a@b.io", f"https://bob:{R}@host.io/?to=a@b.io"),
        ("see https://example.com:8080/path and mailto:bob@example.com", ""),
    ],
    "openai_key": [
        ("OPENAI=sk-proj-4fG7hK2mN9pQ1rS5tU8v", f"OPENAI={R}"),
        ("run task-runner --sk-mode", ""),
    ],
    "stripe_key": [
        ("charge sk_live_51HzQ8mLp3Nx7Pv2Tc9Wb4Yd6Hf now", f"charge {R} now"),
        ("rk_test_51HzQ8mLp3Nx7Pv2 set", f"{R} set"),
        ("whsec_Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk", R),
        ("pk_live_51HzQ8mLp3Nx7Pv2Tc9Wb4Yd6Hf is public", ""),
        ("the sk_live_ prefix", ""),
        ("disk_live_total=3", ""),
    ],
    "registry_token": [
        ("npm_Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5Gs0Rt2QwE4", R),
        ("pypi-AgEIcHlwaS5vcmcCJDk5ZjQ2YTQ2LTk", R),
        ("glpat-Zq8Lm3Nx7Pv2Tc9Wb4Yd", R),
        ("hf_Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5Gs0Rt2Qw", R),
        ("npm_config_cache=/tmp/npm", ""),
        ("hf_hub_download(repo_id)", ""),
        ("pypi-simple index", ""),
    ],
    "webhook_url": [
        (
            "https://hooks.slack.com/services/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",
            f"https://hooks.slack.com/services/{R}",
        ),
        (
            "https://discord.com/api/webhooks/123456/AbCdEf-gh_ij",
            f"https://discord.com/api/webhooks/{R}",
        ),
        ("see https://api.slack.com/messaging/webhooks", ""),
        ("https://hooks.slack.com/", ""),
    ],
    "connection_string_key": [
        (
            "AccountName=acme;AccountKey=Zq8Lm3Nx7Pv2+Tc9==;EndpointSuffix=core.windows.net",
            f"AccountName=acme;AccountKey={R};EndpointSuffix=core.windows.net",
        ),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zq8=",
            f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={R}",
        ),
        (
            "https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=Zq8Lm3Nx%2F7Pv2Tc9%3D",
            f"https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig={R}",
        ),
        ("def verify(sig=None):", ""),
        ("AccountName=acme;", ""),
    ],
    "aws_access_key": [("AKIAZ7Q3M9L2P8R4T6V1", R), ("AKIA is the prefix", "")],
    "github_token": [("gho_Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5", R), ("ghp_short", "")],
    "slack_token": [("xoxp-2048-4096-Zq8Lm3Nx7Pv2", R), ("xox-rated", "")],
    "google_key": [("AIzaSyB3x7Q9mL2pN8rT4vW6yZ1aC5dE0fG3hJk", R), ("AIza is Google's prefix", "")],
    "jwt": [
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r", R),
        ("eyJ alone", ""),
    ],
    "assignment": [
        ("DB_PASSWORD=s3cr3t ./run.sh", f"DB_PASSWORD={R} ./run.sh"),
        ("max_tokens=100", ""),
    ],
    "password_flag": [
        (
            "pip install --index-url x --password Zq8Lm3Nx7 pkg",
            f"pip install --index-url x --password {R} pkg",
        ),
        (
            "twine upload --pypi-token 'Zq8Lm3Nx7Pv2' dist/*",
            f"twine upload --pypi-token '{R}' dist/*",
        ),
        ("vault write --client-secret Zq8Lm3Nx7Pv2", f"vault write --client-secret {R}"),
        ("docker login -u bob --password-stdin", ""),
        ("vllm serve --max-token 512", ""),
        ("gh auth login --with-token < token.txt", ""),
        ("tool --token-file ~/.token", ""),
        ("psql --no-password db.internal", ""),
        ("app --password $DB_PASSWORD", ""),
        ("docker buildx build --secret id=npmrc,src=.npmrc .", ""),
    ],
    "mysql_password": [
        ("mysqldump -h db -uroot -p'S3cr3t!' shop", f"mysqldump -h db -uroot -p'{R}' shop"),
        ("/usr/bin/mysql -pS3cretPass", f"/usr/bin/mysql -p{R}"),
        ("mysql -u root -p shop", ""),
        ("mysql -h db -P 3306 shop", ""),
        ("mysql -u root shop; ssh -p 2222 host", ""),
    ],
    "sshpass_password": [
        ("sshpass -pHunt3r2pw scp f host:", f"sshpass -p{R} scp f host:"),
        ("sshpass -e ssh -p 2222 host", ""),
        ("sshpass -f ~/.pw ssh -p 2222 host", ""),
    ],
    "registry_login_password": [
        ("podman login -u bob -p Dck3rPassw0rd quay.io", f"podman login -u bob -p {R} quay.io"),
        ("docker login -u bob -pDck3rPassw0rd", f"docker login -u bob -p{R}"),
        ("docker run -p 8080:80 nginx", ""),
        ("docker login ghcr.io && docker run -p 5000:5000 app", ""),
    ],
    "redis_password": [
        ("redis-cli -h cache -p 6379 -a Zq8Lm3Nx7 ping", f"redis-cli -h cache -p 6379 -a {R} ping"),
        ("redis-cli --pass Zq8Lm3Nx7 ping", f"redis-cli --pass {R} ping"),
        ("redis-cli -p 6379 ping", ""),
        ("redis-cli -a $REDIS_PASSWORD ping", ""),
    ],
    "curl_user_password": [
        ("curl -u bob:Zq8Lm3Nx7 https://api.example.io", f"curl -u bob:{R} https://api.example.io"),
        ("curl --user 'bob:Zq8Lm3Nx7' https://x.io", f"curl --user 'bob:{R}' https://x.io"),
        ("curl -u bob https://api.example.io", ""),
        ("curl -u bob:$TOKEN https://x.io", ""),
    ],
    "openssl_password": [
        (
            "openssl pkcs12 -in a.p12 -passin pass:Zq8Lm3Nx7 -nodes",
            f"openssl pkcs12 -in a.p12 -passin pass:{R} -nodes",
        ),
        ("openssl rsa -in k.pem -passin env:KEY_PASS", ""),
    ],
}
"""Per rule of the redactor, the texts it must redact and the look-alikes it must leave."""

PORT_AND_FLAG_LOOKALIKES = [
    "ssh -p 2222 deploy@host",
    "psql -h db -p 5432 app",
    "mkdir -p build/out",
    "pytest -p no:cacheprovider -x",
    "git add -p",
    "cp -p a b",
    "python -m http.server -p 8000",
    "kubectl port-forward svc/api 8080:80 -n prod",
]
"""``-p`` of commands other than the password-taking ones: never redacted."""

FORM_ROWS = [
    pytest.param(text, expected or text, id=f"{rule}-{'redacted' if expected else 'kept'}-{n}")
    for rule, rows in FORMS.items()
    for n, (text, expected) in enumerate(rows)
] + [
    pytest.param(text, text, id=f"lookalike-{n}") for n, text in enumerate(PORT_AND_FLAG_LOOKALIKES)
]


def test_redaction_forms_table_covers_every_rule_both_ways():
    actual = {
        rule: (any(expected for _, expected in rows), any(not expected for _, expected in rows))
        for rule, rows in FORMS.items()
    }
    assert actual == dict.fromkeys(RULE_NAMES, (True, True))


@pytest.mark.parametrize(("text", "expected"), FORM_ROWS)
def test_redact_each_form(text, expected):
    actual = redact(text)

    assert actual == expected


@pytest.mark.parametrize(
    ("text", "secret"), [f[1:] for f in SECRET_FAKES], ids=[f[0] for f in SECRET_FAKES]
)
def test_redact_removes_every_realistic_fake(text, secret):
    actual = redact(text)

    assert (secret in actual, "[REDACTED" in actual) == (False, True)


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
        "sk_live_{}",
        "npm_{0}{0}",
        "https://hooks.slack.com/services/T0A1/B0A2/{}",
        "AccountName=a;AccountKey={};EndpointSuffix=core.windows.net",
        "mysql -u root -p{} shop",
        "sshpass -p {} ssh host",
        "docker login -u bob -p {} ghcr.io",
        "tool --password {} --verbose",
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
