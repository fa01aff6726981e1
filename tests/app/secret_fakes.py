"""Realistic fake secrets, as they show up in agent sessions, and ``redact``'s plain form
(shared by the redaction tests).

Each row is ``(form, text, secret)``: ``text`` is a command line or a sentence holding
``secret``, which must never reach a summarising model nor a written summary.
"""

from __future__ import annotations

from forge_app.summary._redaction import _RULES

SECRET_FAKES: tuple[tuple[str, str, str], ...] = (
    (
        "openai_env",
        "export OPENAI_API_KEY=sk-proj-4fG7hK2mN9pQ1rS5tU8vW3xY6zA0bC",
        "sk-proj-4fG7hK2mN9pQ1rS5tU8vW3xY6zA0bC",
    ),
    (
        "anthropic_key",
        "the key is sk-ant-api03-Xy7Qm2Lp9Rt4Vw8Zb3Nc6Hd1Jf5Kg0",
        "sk-ant-api03-Xy7Qm2Lp9Rt4Vw8Zb3Nc6Hd1Jf5Kg0",
    ),
    (
        "aws_access_key_id",
        "aws configure set aws_access_key_id AKIAZ7Q3M9L2P8R4T6V1",
        "AKIAZ7Q3M9L2P8R4T6V1",
    ),
    (
        "aws_secret",
        "aws_secret_access_key = q8Zr2Lm5Nx7Pv4Tc1Wb9Yd3Hf6Jk0Gs2Mn5Qr8",
        "q8Zr2Lm5Nx7Pv4Tc1Wb9Yd3Hf6Jk0Gs2Mn5Qr8",
    ),
    (
        "github_pat_in_url",
        "git remote set-url origin https://ghp_R4nD0mT0k3nV4lu3F0rT3st1ngAbCdEf12@github.com/o/r",
        "ghp_R4nD0mT0k3nV4lu3F0rT3st1ngAbCdEf12",
    ),
    (
        "github_fine_grained",
        "GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF gh pr list",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    ),
    (
        "slack_bot_token",
        "curl -d token=xoxb-2048-4096-Zq8Lm3Nx7Pv2Tc https://slack.com/api/chat.postMessage",
        "xoxb-2048-4096-Zq8Lm3Nx7Pv2Tc",
    ),
    (
        "slack_webhook",
        "curl -X POST https://hooks.slack.com/services/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"
        ' -d \'{"text": "deployed"}\'',
        "q9W8e7R6t5Y4u3I2o1P0aSdF",
    ),
    (
        "stripe_live_key",
        "python charge.py --amount 100 sk_live_51HzQ8mLp3Nx7Pv2Tc9Wb4Yd6Hf",
        "sk_live_51HzQ8mLp3Nx7Pv2Tc9Wb4Yd6Hf",
    ),
    (
        "npm_token",
        "NPM_TOKEN_VALUE=1 npm publish --registry https://registry.npmjs.org"
        " npm_Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5Gs0Rt2QwE4",
        "npm_Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5Gs0Rt2QwE4",
    ),
    (
        "google_api_key",
        "maps key AIzaSyB3x7Q9mL2pN8rT4vW6yZ1aC5dE0fG3hJk in the config",
        "AIzaSyB3x7Q9mL2pN8rT4vW6yZ1aC5dE0fG3hJk",
    ),
    (
        "jwt",
        "session cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        ".dBjftJeZ4CVPmB92K27uhbUJU1p1r",
        "dBjftJeZ4CVPmB92K27uhbUJU1p1r",
    ),
    (
        "private_key",
        "cat > id_ed25519 <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----\nEOF",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    (
        "bearer_header",
        'curl -H "Authorization: Bearer Zq8Lm3Nx7Pv2Tc9Wb4Yd" https://api.example.io/v1/me',
        "Zq8Lm3Nx7Pv2Tc9Wb4Yd",
    ),
    (
        "url_password",
        "psql postgres://app:Tr0ub4dor3x@db.internal:5432/prod -c 'select 1'",
        "Tr0ub4dor3x",
    ),
    (
        "azure_connection_string",
        'export AZURE_STORAGE="DefaultEndpointsProtocol=https;AccountName=acme;'
        'AccountKey=Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5Gs0Rt2Qw+AbCd==;EndpointSuffix=core.windows.net"',
        "Zq8Lm3Nx7Pv2Tc9Wb4Yd6Hf1Jk5Gs0Rt2Qw+AbCd==",
    ),
    ("mysql_p", "mysql -u root -pS3cretPass prod < dump.sql", "S3cretPass"),
    ("mysql_password", "mysql -u root --password=S3cretPass2 prod -e 'show tables'", "S3cretPass2"),
    ("sshpass", "sshpass -p 'Hunt3r2pw' ssh -p 2222 deploy@10.0.0.5 uptime", "Hunt3r2pw"),
    (
        "docker_login_p",
        "docker login -u bob -p Dck3rPassw0rd registry.example.com",
        "Dck3rPassw0rd",
    ),
    (
        "docker_login_password",
        "docker login --username bob --password Dck3rPass2 ghcr.io",
        "Dck3rPass2",
    ),
    (
        "client_secret_json",
        '{"client_id": "app", "client_secret": "cs_9fG7hK2mN9pQ1rS5"}',
        "cs_9fG7hK2mN9pQ1rS5",
    ),
)
"""22 fakes of the forms secrets take in coding sessions."""

BARE_SECRET_FAKES: tuple[tuple[str, str, str], ...] = (
    (
        "aws_secret_unlabelled",
        "deploy with AKIAZ7Q3M9L2P8R4T6V2 and wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE9Q",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE9Q",
    ),
    (
        "openssh_key_body",
        "paste the key body b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD",
        "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD",
    ),
)
"""Values with no label at all (the task says "use this"): what a summarising model is
kept from too (``redact_for_model``), 24 fakes with :data:`SECRET_FAKES`."""


def redacted_by_every_rule(text: str) -> str:
    """``redact`` without its shortcuts (one search for any hint, a rule's ``needs`` and
    gate): each rule whose hint the text holds, in order."""
    folded = text.lower()
    for rule in _RULES:
        if any(hint in folded for hint in rule.hints):
            text = rule.pattern.sub(rule.replace, text)
    return text
