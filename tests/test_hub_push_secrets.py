"""What push and push-metrics send, against the Hub stand-in: no file, commit message or tag holding
a secret of the environment, each refused in one line before any request."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import _hub_util as u
from _hub_util import TOKEN, hub  # noqa: F401  (the fixture)

from interleave_bench import redaction

REPO = "org/interleavebench"
OPENAI = "sk-OPENAIsecret987654321zyx"
#: what no output may show
BOTH = (TOKEN, OPENAI)


@pytest.fixture(autouse=True)
def _own_secrets(monkeypatch):
    """A key besides the Hub token in the environment, and no secret left given by another test."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    monkeypatch.setattr(redaction, "_GIVEN", set())


def test_every_file_holding_a_secret_is_refused_by_the_variable_s_name(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    (folder / "extra.txt").write_text(f"token={TOKEN}\n", encoding="utf-8")
    (folder / "notes").mkdir()
    (folder / "notes" / "keys.json").write_text(f'{{"a": "{OPENAI}", "b": "{TOKEN}"}}', encoding="utf-8")
    tail = "a secret is never uploaded; take it out of the file (nothing was sent)"
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO],
             f"{folder / 'extra.txt'}: holds the value of HF_TOKEN: {tail}",
             f"{folder / 'notes' / 'keys.json'}: holds the values of HF_TOKEN, OPENAI_API_KEY: {tail}", secrets=BOTH)


def test_a_secret_in_a_compressed_parquet_value_is_refused(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    path = folder / "v0" / "dev-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["persona"] = f"a developer whose key is {OPENAI} " + "and who repeats it " * 20
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path, compression="gzip",
                   write_statistics=False)  # statistics would hold the value as it is
    assert OPENAI.encode() not in path.read_bytes()  # only its values hold it
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO],
             f"{path}: holds the value of OPENAI_API_KEY: a secret is never uploaded; take it out of the file "
             "(nothing was sent)", secrets=BOTH)


def test_a_login_token_not_in_the_environment_is_refused_in_a_file(hub, tmp_path, capsys, monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.delenv("HF_TOKEN")
    os.makedirs(os.path.dirname(hc.HF_TOKEN_PATH), exist_ok=True)
    with open(hc.HF_TOKEN_PATH, "w", encoding="utf-8") as fh:
        fh.write(TOKEN)
    folder = u.exported(tmp_path, capsys)
    (folder / "extra.txt").write_text(f"token={TOKEN}\n", encoding="utf-8")
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO],
             f"{folder / 'extra.txt'}: holds the value of the Hub token or a key this run was given: a secret is "
             "never uploaded; take it out of the file (nothing was sent)", secrets=BOTH)


@pytest.mark.parametrize("option, value, what", [
    ("--message", f"upload {TOKEN} {OPENAI}", "the values of HF_TOKEN, OPENAI_API_KEY"),
    ("--message", "upload sk-somebodyELSES0123456789abc", "what looks like a key or a password"),
    ("--revision", f"v1-{OPENAI}", "the value of OPENAI_API_KEY"),
    ("--repo", f"org/data-{OPENAI}", "the value of OPENAI_API_KEY"),
])
def test_an_option_published_holding_a_secret_is_refused(hub, tmp_path, capsys, option, value, what):
    folder = u.exported(tmp_path, capsys)
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO, option, value],
             f"{option} holds {what}: it would be published on the Hub; give it without (nothing was sent)", secrets=BOTH)


def test_a_message_without_a_secret_is_the_commit_s_title(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    code, _, err = u.cli(["push", str(folder), "--repo", REPO, "--message", "first data"], capsys)
    assert code == 0, err
    assert hub.commits(REPO)[-1].title == "first data"


def test_push_metrics_refuses_a_module_file_holding_a_secret_before_any_space(hub, tmp_path, capsys, monkeypatch):
    from interleave_bench import metric_names, metric_path
    from interleave_bench.hub import spaces

    last = metric_names()[-1]  # the Spaces before it are not published either
    copy = tmp_path / last
    shutil.copytree(metric_path(last), copy)
    with open(copy / "app.py", "a", encoding="utf-8") as fh:
        fh.write(f'\nKEY = "{OPENAI}"\n')
    monkeypatch.setattr(spaces, "metric_path", lambda name: str(copy) if name == last else metric_path(name))
    u.refused_before_sending(hub, capsys, ["push-metrics", "--org", "org"],
             f"{copy}/app.py: holds the value of OPENAI_API_KEY: a secret is never uploaded; take it out of the file "
             "(nothing was sent)", secrets=BOTH)


def test_push_metrics_refuses_a_file_named_with_a_secret_before_any_space(hub, capsys, monkeypatch):
    from interleave_bench import metric_names, metric_path
    from interleave_bench.hub import spaces

    last = metric_names()[-1]
    shipped = spaces.space_files
    monkeypatch.setattr(spaces, "space_files",
                        lambda name: {**shipped(name), **({f"{TOKEN}/x.md": b"hi"} if name == last else {})})
    u.refused_before_sending(hub, capsys, ["push-metrics", "--org", "org"],
             f"{metric_path(last)}/[redacted]/x.md: its path in the repo holds the value of HF_TOKEN: a secret is "
             "never uploaded, not even in a name; rename it (nothing was sent)", secrets=BOTH)

def test_push_metrics_refuses_an_org_holding_a_secret(hub, capsys):
    u.refused_before_sending(hub, capsys, ["push-metrics", "--org", f"org-{OPENAI}"],
             "--org holds the value of OPENAI_API_KEY: it would be published on the Hub; give it without (nothing was sent)", secrets=BOTH)


def test_a_file_or_folder_named_with_a_secret_is_refused_by_the_variable_s_name(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    (folder / TOKEN).mkdir()
    shutil.copy(folder / "README.md", folder / TOKEN / "x.md")
    (folder / f"notes-{OPENAI}.txt").write_text("hi\n", encoding="utf-8")
    tail = "a secret is never uploaded, not even in a name; rename it (nothing was sent)"
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO],
             f"{folder / '[redacted]' / 'x.md'}: its path in the repo holds the value of HF_TOKEN: {tail}",
             f"{folder / 'notes-[redacted].txt'}: its path in the repo holds the value of OPENAI_API_KEY: {tail}",
             secrets=BOTH)


def test_a_file_whose_name_and_content_hold_a_secret_is_refused_in_one_line(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    (folder / f"notes-{OPENAI}.txt").write_text(f"token={TOKEN}\n", encoding="utf-8")
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO],
             f"{folder / 'notes-[redacted].txt'}: its path in the repo holds the value of OPENAI_API_KEY, and it "
             "holds the value of HF_TOKEN: a secret is never uploaded, not even in a name; rename it and take it "
             "out of the file (nothing was sent)", secrets=BOTH)


def test_a_secret_in_the_folder_s_own_path_is_not_sent_and_not_refused(hub, tmp_path, capsys):
    """Only the path in the repo is published: the local folder's own name holding a key sends nothing."""
    folder = u.exported(tmp_path / f"work-{OPENAI}", capsys)
    code, out, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 0, err
    assert not any(s in out + err for s in BOTH)
    assert not any(s in p for p in hub.files(REPO) for s in BOTH)



@pytest.mark.parametrize("message", [
    "Fix bearer tokenizer_config handling",
    "Document the Authorization: header and ?token=abc option",
])
def test_a_message_that_only_names_a_secret_s_place_is_the_commit_s_title(hub, tmp_path, capsys, message):
    folder = u.exported(tmp_path, capsys)
    code, _, err = u.cli(["push", str(folder), "--repo", REPO, "--message", message], capsys)
    assert code == 0, err
    assert hub.commits(REPO)[-1].title == message


@pytest.mark.parametrize("message", [
    "mirror of https://someone:hunter2pass@git.example.org/data",
    "token ghp_0123456789abcdefghijABCDEFGHIJ0123 was revoked",
])
def test_a_message_holding_a_password_or_another_s_key_by_its_shape_is_refused(hub, tmp_path, capsys, message):
    folder = u.exported(tmp_path, capsys)
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO, "--message", message],
             "--message holds what looks like a key or a password: it would be published on the Hub; give it "
             "without (nothing was sent)", secrets=BOTH)


@pytest.mark.parametrize("text, holds", [
    ("Fix bearer tokenizer_config handling", False), ("Document the Authorization: header and ?token=abc option", False),
    ("Bearer baseline router", False), ("Authorization: none", False), ("bm25 ?key=v2", False),
    ("curl -H 'Authorization: Basic ZGVwbG95OlJlYWxQYXNzdzByZA=='", True),
    ("https://app.example/cb?client_secret=RealS3cretValue99", True), ("see ...?auth=RealS3cretValue99", True),
    (f"upload {OPENAI}", True), ("deploy https://deploy:RealPassw0rd@db.example/x", True),
    ("password=hunter2hunter2", True), ('token="hunter2hunter2"', True), ("secret: hunter2hunter2", True),
    ("sig=abcdefgh12", True), ("seed=12345678", False), ("max_tokens=12345678", False),
    ("model: gpt-4o-2024-08-06", False),
])
def test_what_a_published_text_holds_of_a_secret(text, holds):
    """The one rule push's options and the board's names are refused by: a key it holds, by the
    environment or by its shape, or a value redaction takes out that looks like a key; not prose."""
    from interleave_bench.hub.outgoing import published_secret

    assert (published_secret(text) is not None) == holds, text
