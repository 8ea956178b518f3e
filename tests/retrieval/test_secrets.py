"""Secret masking: fabricated credentials of the real shapes are masked (value only, lines
kept); hashes, UUIDs, base64 data, identifiers and placeholders are not."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from knoxidx.retrieval.secrets import entropy, find_secrets, mask_secrets, secret_name

REPO = Path(__file__).resolve().parents[2]
_rng = random.Random(20261130)


def fake(prefix: str, length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """A fabricated credential: the prefix of the real format and random characters (built at
    run time, so that no scanner mistakes this file for a leak)."""
    return prefix + "".join(_rng.choice(alphabet) for _ in range(length))


UPPER_DIGITS = string.ascii_uppercase + string.digits
URLSAFE = string.ascii_letters + string.digits + "-_"

SHAPES = {
    "aws-access-key": fake("AKIA", 16, UPPER_DIGITS),
    "github-token": fake("ghp_", 36),
    "gitlab-token": fake("glpat-", 20, URLSAFE),
    "slack-token": "xoxb-" + fake("", 12, string.digits) + "-" + fake("", 13, string.digits)
    + "-" + fake("", 24),
    "anthropic-key": fake("sk-ant-api03-", 93, URLSAFE),
    "openai-key": fake("sk-proj-", 120, URLSAFE),
    "stripe-key": fake("sk_live_", 24),
    "google-api-key": fake("AIza", 35, URLSAFE),
    "google-oauth": fake("GOCSPX-", 28, URLSAFE),
    "npm-token": fake("npm_", 36),
    "huggingface-token": fake("hf_", 34),
    "jwt": fake("eyJ", 30, URLSAFE) + "." + fake("eyJ", 40, URLSAFE) + "." + fake("", 43, URLSAFE),
}


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_each_credential_shape_is_masked_wherever_it_is(kind: str) -> None:
    value = SHAPES[kind]
    # assigned to an ordinary name, inside a call, in a comment: the shape alone decides
    for template in ('value = "{}"\n', "client.login({!r})\n", "// see {} for access\n"):
        text = template.format(value)
        masked, counts = mask_secrets(text)
        assert value not in masked
        assert masked == template.format(f"«secret:{kind}»"), masked
        assert counts == {kind: 1}


def test_legacy_openai_key_and_stripe_webhook_secret() -> None:
    legacy = fake("sk-", 20) + "T3BlbkFJ" + fake("", 20)
    webhook = fake("whsec_", 32)
    masked, counts = mask_secrets(f'OPENAI = "{legacy}"\nHOOK = "{webhook}"\n')
    assert legacy not in masked and webhook not in masked
    assert counts == {"openai-key": 1, "stripe-key": 1}


@pytest.mark.parametrize("line", [
    'password = "{v}"',                                   # Python
    'db_password: str = "{v}"',                           # annotated
    "const apiKey = '{v}';",                              # JavaScript
    'clientSecret := "{v}"',                              # Go
    'private static final String DB_PASSWORD = "{v}";',   # Java
    'const API_TOKEN: &str = "{v}";',                     # Rust
    '{{"secret": "{v}"}}',                                # JSON
    'connect(host="db", passwd="{v}")',                   # keyword argument
    'self.aws_secret_access_key = "{v}"',                 # attribute
    'headers: {{ authToken: "{v}" }}',                    # object literal
])
def test_random_values_assigned_to_secret_names_are_masked(line: str) -> None:
    value = fake("", 28, string.ascii_letters + string.digits + "+/")
    text = line.format(v=value)
    masked, counts = mask_secrets(text)
    assert masked == line.format(v="«secret:assigned-secret»")
    assert counts == {"assigned-secret": 1}


def test_password_in_a_url_is_masked_but_not_the_user_or_host() -> None:
    masked, counts = mask_secrets('DSN = "postgres://app:Xk9#mQ2v!pL@db.internal:5432/app"\n')
    assert masked == 'DSN = "postgres://app:«secret:url-password»@db.internal:5432/app"\n'
    assert counts == {"url-password": 1}


@pytest.mark.parametrize("text", [
    'sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    'request_id = "550e8400-e29b-41d4-a716-446655440000"',
    'PNG_HEADER = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"',
    'commit = "9fceb02d0ae598e95dc970b74767f19372d61af8"',
    'tokenizer = "bert-base-uncased-v2"',                  # not a secret name
    'TOKEN_URL = "https://oauth2.googleapis.com/token"',   # last word: url
    'secret_name = "prod-db-credentials-2"',                # last word: name
    'password = "${DB_PASSWORD}"',                          # template
    'api_key = "<your-api-key-here>"',                      # placeholder
    'password = "changeme"',
    'token = "x" * 40',
    'error = "invalid password for user 42"',
    'SESSION_KEY = "_auth_user_id"',                        # an identifier, not a secret
    'CSRF_TOKEN_HEADER = "X-CSRF-Token"',
    'key_path = "/etc/ssl/private/server.key"',
    'engine = create_engine("postgresql://scott:tiger@localhost/test")',
    'url = "https://user:${PASSWORD}@example.com"',
    'cache_key = "user:1234:profile"',
])
def test_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
    assert mask_secrets(text) == (text, {})


PEM_BODY = [fake("", 64, string.ascii_letters + string.digits + "+/") for _ in range(5)]


def test_private_key_in_a_python_string_keeps_its_lines_and_markers() -> None:
    text = ('KEY = """-----BEGIN RSA PRIVATE KEY-----\n' + "\n".join(PEM_BODY)
            + "\n-----END RSA PRIVATE KEY-----\"\"\"\nnext_line = 1\n")
    masked, counts = mask_secrets(text)
    assert counts == {"private-key": 1}
    assert masked.count("\n") == text.count("\n")
    lines = masked.splitlines()
    assert lines[0] == 'KEY = """-----BEGIN RSA PRIVATE KEY-----'
    assert lines[1:6] == ["«secret:private-key»"] * 5
    assert lines[6:] == ['-----END RSA PRIVATE KEY-----"""', "next_line = 1"]
    assert not any(part in masked for part in PEM_BODY)


def test_private_key_split_into_concatenated_literals() -> None:
    text = ('String pem = "-----BEGIN PRIVATE KEY-----\\n" +\n'
            + "".join(f'    "{line}\\n" +\n' for line in PEM_BODY)
            + '    "-----END PRIVATE KEY-----";\n')
    masked, counts = mask_secrets(text)
    assert counts == {"private-key": 1}
    assert masked.count("\n") == text.count("\n")
    assert masked.splitlines()[1] == '    "«secret:private-key»\\n" +'


def test_private_key_cut_by_a_chunk_boundary_is_masked_on_both_sides() -> None:
    head = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(PEM_BODY[:3]) + "\n"
    tail = "\n".join(PEM_BODY[3:]) + "\n-----END OPENSSH PRIVATE KEY-----\n"
    for part in (head, tail):
        masked, counts = mask_secrets(part)
        assert counts == {"private-key": 1}
        assert not any(line in masked for line in PEM_BODY)
        assert masked.count("\n") == part.count("\n")


def test_code_that_parses_pem_is_not_masked() -> None:
    text = ('if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n'
            '    return parse_pkcs1(lines)\n'
            'FOOTER = "-----END RSA PRIVATE KEY-----"\n')
    assert mask_secrets(text) == (text, {})


def test_masking_keeps_every_other_line_unchanged() -> None:
    lines = [f"x{i} = compute({i})" for i in range(40)]
    lines[7] = f'AWS_KEY = "{SHAPES["aws-access-key"]}"'
    lines[21] = f'GITHUB = "{SHAPES["github-token"]}"  # {SHAPES["jwt"]}'
    text = "\n".join(lines) + "\n"
    masked, counts = mask_secrets(text)
    out = masked.splitlines()
    assert len(out) == len(lines)
    assert [i for i, (a, b) in enumerate(zip(lines, out, strict=True)) if a != b] == [7, 21]
    assert out[21] == 'GITHUB = "«secret:github-token»"  # «secret:jwt»'
    assert counts == {"aws-access-key": 1, "github-token": 1, "jwt": 1}


def test_secret_names() -> None:
    for name in ("password", "DB_PASSWORD", "apiKey", "api_key", "clientSecret", "GITHUB_TOKEN",
                 "self.access_token", "AWS_SECRET_ACCESS_KEY", "signingKey", "smtp_pass"):
        assert secret_name(name), name
    for name in ("tokenizer", "secret_name", "TOKEN_URL", "cache_key", "key", "passthrough",
                 "author", "bypass", "primary_key"):
        assert not secret_name(name), name


def test_entropy() -> None:
    assert entropy("aaaaaaaa") == 0.0
    assert entropy("abcdefgh") == pytest.approx(3.0)


def test_the_projects_own_fixtures_have_no_false_positives() -> None:
    """Every fixture file of every language: real code with no secrets in it."""
    files = [p for p in (REPO / "fixtures").rglob("*") if p.is_file()]
    assert len(files) > 30
    flagged = {str(p.relative_to(REPO)): find_secrets(p.read_text("utf-8", errors="replace"))
               for p in files}
    assert {p: f for p, f in flagged.items() if f} == {}


@pytest.mark.slow
def test_false_positive_rate_on_the_real_corpus() -> None:
    """The measurement of ``python -m bench.egress_masking`` as a guard: on 13 real projects
    (50 MB) masks stay rare and digests, UUIDs and base64 data are essentially never masked."""
    from bench.egress_masking import DEFAULT_CORPUS, measure

    if not (DEFAULT_CORPUS / "MANIFEST.loc").is_file():
        pytest.skip(f"no corpus at {DEFAULT_CORPUS}")
    result = measure(DEFAULT_CORPUS, quick=False, samples=0)
    assert result["files"] > 5000
    assert result["files_with_masks"] <= result["files"] // 500
    rates = {name: r["rate"] for name, r in result["random_literals"].items()}
    assert rates["hex-digest"] <= 0.001 and rates["uuid"] <= 0.02 and rates["base64"] <= 0.02
