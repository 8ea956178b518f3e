"""A cloned repository is untrusted, its ``knoxidx.toml`` too: it may not choose where code and
the user's Voyage key are sent. Driven through the real CLI against a fake Voyage server on
127.0.0.1 that records every request and its headers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_voyage import FakeVoyage

from knoxidx.cli import main
from knoxidx.core.config import ConfigError, load_settings
from tests.helpers import run_cli, write_tree

pytest.importorskip("voyageai")

KEY = "pa-the-users-own-voyage-key"
FILES = {
    "app/__init__.py": "",
    "app/billing.py": '''\
        def charge_customer(customer, amount):
            """Charge the customer's card for the amount due."""
            return customer.card.charge(amount)
        ''',
}


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's own settings file (empty until a test writes it), the key in the
    environment as a user would set it."""
    path = tmp_path / "home" / "knoxidx.toml"
    path.parent.mkdir()
    path.write_text("", encoding="utf-8")
    monkeypatch.setenv("KNOXIDX_CONFIG", str(path))
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    monkeypatch.delenv("KNOXIDX_EMBEDDER", raising=False)
    monkeypatch.delenv("KNOXIDX_OFFLINE", raising=False)
    return path


@pytest.fixture
def hostile(tmp_path: Path, fake: FakeVoyage) -> Path:
    """A cloned repository whose own settings point Voyage at the attacker's server."""
    root = write_tree(tmp_path / "cloned", FILES)
    (root / "knoxidx.toml").write_text(
        f'embedder = "voyage"\nreranker = "voyage"\n[voyage]\nbase_url = "{fake.base_url}"\n'
        '[egress]\nmask_secrets = false\nnever_send = ["!*.env", "docs/**"]\n'
        '[local]\nview = "full"\n',
        encoding="utf-8")
    return root


def run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_repository_config_sends_nothing_to_its_server(
    hostile: Path, fake: FakeVoyage, user_config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from starlette.testclient import TestClient

    from knoxidx.api.http import create_app

    with caplog.at_level(logging.WARNING):
        run(["index", "--embed", "--jobs", "1", str(hostile)])
        found = json.loads(run(["search", "charge the card", str(hostile), "--json"]))
        run(["context", "charge the customer", str(hostile), "--max-tokens", "300"])
        with TestClient(create_app(hostile), base_url="http://127.0.0.1") as client:
            assert client.get("/search", params={"q": "charge the card"}).status_code == 200
            egress = client.get("/status").json()["egress"]
    assert fake.requests == [] and fake.headers == []
    assert found["results"][0]["path"] == "app/billing.py"  # the local model answered
    assert found["mode"] == "hybrid" and "vector" in found["results"][0]["sources"]
    assert egress["embedder"] == "local" and egress["last_30_days"]["requests"] == 0
    warnings = {r.getMessage() for r in caplog.records if "ignoring" in r.getMessage()}
    assert len(warnings) == 1, warnings
    (warning,) = warnings
    for key in ("embedder", "reranker", "voyage.base_url", "egress.mask_secrets", "!*.env"):
        assert key in warning


def test_the_warning_is_one_line_on_stderr(hostile: Path, fake: FakeVoyage,
                                           user_config: Path) -> None:
    code, _, err = run_cli("index", "--jobs", "1", str(hostile))
    assert code == 0, err
    code, out, err = run_cli("search", "charge the card", str(hostile))
    assert code == 0, err
    assert "charge_customer" in out
    lines = [line for line in err.splitlines() if "ignoring" in line]
    assert len(lines) == 1 and "knoxidx.toml" in lines[0] and "voyage.base_url" in lines[0]
    assert fake.requests == []


def test_the_users_own_config_still_reaches_voyage(
    tmp_path: Path, fake: FakeVoyage, user_config: Path
) -> None:
    root = write_tree(tmp_path / "mine", FILES)
    user_config.write_text(
        f'embedder = "voyage"\n[voyage]\nbase_url = "{fake.base_url}"\n', encoding="utf-8")
    run(["index", "--embed", "--jobs", "1", str(root)])
    found = json.loads(run(["search", "charge the card", str(root), "--json"]))
    assert found["results"][0]["path"] == "app/billing.py"
    assert {path for path, _ in fake.requests} == {"/v1/embeddings", "/v1/rerank"}
    assert {h.get("Authorization") for h in fake.headers} == {f"Bearer {KEY}"}


def test_harmless_repository_settings_keep_working(hostile: Path, user_config: Path) -> None:
    user_config.write_text(
        'embedder = "voyage"\n[voyage]\nbase_url = "https://voyage.example/v1"\n'
        '[egress]\nnever_send = ["!app/secret_santa.py"]\n', encoding="utf-8")
    settings = load_settings(hostile, env={"KNOXIDX_CONFIG": str(user_config)})
    assert settings.embedder == "voyage"  # the user's choice; the repository's is ignored
    assert settings.reranker is None
    assert settings.voyage_base_url == "https://voyage.example/v1"
    assert settings.mask_secrets is True
    assert settings.local_view == "full"
    # the repository may add never-send patterns, not re-allow files ("!")
    assert settings.never_send == ("docs/**", "!app/secret_santa.py")
    (hostile / "knoxidx.toml").write_text('embedder = "local"\nreranker = "none"\n'
                                          '[egress]\nmask_secrets = true\n')
    narrowed = load_settings(hostile, env={"KNOXIDX_CONFIG": str(user_config)})
    # choices that keep code on the machine are the project's to make
    assert (narrowed.embedder, narrowed.reranker, narrowed.mask_secrets) == ("local", "none",
                                                                            True)


@pytest.mark.parametrize("url", [
    "http://api.voyageai.com/v1", "http://10.0.0.7:8080/v1", "http://127.0.0.1.nip.io/v1",
    "http://localhost.example.com/v1", "ftp://127.0.0.1/v1", "https:///v1", "api.voyageai.com",
])
def test_plain_http_to_another_host_is_refused(tmp_path: Path, user_config: Path,
                                               url: str) -> None:
    user_config.write_text(f'[voyage]\nbase_url = "{url}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="https://") as info:
        load_settings(tmp_path, env={"KNOXIDX_CONFIG": str(user_config)})
    assert str(user_config) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("url", [
    "https://api.voyageai.com/v1", "http://127.0.0.1:8080/v1", "http://127.3.4.5/v1",
    "http://[::1]:9/v1", "http://localhost:9/v1", "http://LOCALHOST/v1",
])
def test_https_and_loopback_http_are_accepted(tmp_path: Path, user_config: Path,
                                              url: str) -> None:
    user_config.write_text(f'[voyage]\nbase_url = "{url}"\n', encoding="utf-8")
    assert load_settings(tmp_path, env={"KNOXIDX_CONFIG": str(user_config)}
                         ).voyage_base_url == url


def test_the_voyage_client_refuses_plain_http_to_another_host() -> None:
    from knoxidx.retrieval.errors import EmbeddingConfigError
    from knoxidx.retrieval.voyage import VoyageEmbedder, VoyageReranker

    with pytest.raises(EmbeddingConfigError, match="https://"):
        VoyageEmbedder(api_key="k", base_url="http://192.0.2.1/v1")
    with pytest.raises(EmbeddingConfigError, match="https://"):
        VoyageReranker(api_key="k", base_url="http://192.0.2.1/v1")


def test_the_users_config_is_checked_like_the_repositorys(tmp_path: Path,
                                                         user_config: Path) -> None:
    user_config.write_text('embeder = "voyage"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown setting 'embeder'"):
        load_settings(tmp_path, env={"KNOXIDX_CONFIG": str(user_config)})


def test_a_named_user_config_that_is_missing_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "typo.toml"
    with pytest.raises(ConfigError, match="KNOXIDX_CONFIG.*no such file"):
        load_settings(tmp_path, env={"KNOXIDX_CONFIG": str(missing)})
    # the default place may simply have no file
    assert load_settings(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path)}).user_source is None


@pytest.mark.parametrize("target", ["outside", ".git/config"])
def test_a_repository_config_that_links_out_is_not_read(tmp_path: Path, user_config: Path,
                                                        target: str) -> None:
    """A knoxidx.toml linking out of the repository (a file of the user's, /proc/self/environ)
    or into .git: its values would be quoted in errors as the repository's settings."""
    user_config.write_text('embedder = "voyage"\n', encoding="utf-8")
    root = write_tree(tmp_path / "cloned", {**FILES, ".git/config": 'embedder = "local"\n'})
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('embedder = "pa-a-secret-from-elsewhere"\n', encoding="utf-8")
    (root / ".knoxidx.toml").symlink_to(outside if target == "outside" else root / target)
    with pytest.raises(ConfigError, match="a link that leads") as info:
        load_settings(root)
    assert "pa-a-secret" not in str(info.value)
    (root / ".knoxidx.toml").unlink()
    (root / ".knoxidx.toml").symlink_to("app/settings.toml")  # a link inside is fine
    (root / "app" / "settings.toml").write_text('[local]\nview = "full"\n', encoding="utf-8")
    assert load_settings(root).local_view == "full"


def test_a_model_name_is_a_name(tmp_path: Path, user_config: Path) -> None:
    """A repository's settings may choose the model: its name goes into logs and answers, so
    an escape in it (TOML's \\u001b) or a path is refused."""
    for model in ("m\u001b]0;x\u0007", "../../x", "https://evil.example/m", ""):
        root = write_tree(tmp_path / "r", {**FILES, "knoxidx.toml": "[voyage]\nmodel = "
                                           + json.dumps(model) + "\n"})
        with pytest.raises(ConfigError, match="voyage.model must be a model name"):
            load_settings(root)
    (root / "knoxidx.toml").write_text('[voyage]\nmodel = "voyage-3.5-lite"\n', encoding="utf-8")
    assert load_settings(root).voyage_model == "voyage-3.5-lite"
