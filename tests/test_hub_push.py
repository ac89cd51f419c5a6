"""Push to a Hub stand-in on loopback: one commit per push, unchanged pushes, failures, tokens."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

import _hub_util as u
from _hub_util import TOKEN, hub  # noqa: F401  (the fixture)

REPO = "org/interleavebench"

LOAD = """
import json, sys, datasets
from interleave_bench.hub.features import row_to_session
out = {}
for rev in sys.argv[1:] or %r:
    d = datasets.load_dataset(%r, "v0", revision=rev)
    out[rev] = {split: sorted((row_to_session(r) for r in d[split]), key=lambda s: s["session_id"]) for split in d}
print(json.dumps(out))
"""


def _load(hub, tmp_path, *revisions):
    script = LOAD % (list(revisions), REPO)
    return u.run_python(script, hub.env, cwd=tmp_path)


def _export(tmp_path, capsys, rows, name="interleavebench", **more):
    src = u.write_data(tmp_path / f"src-{name}", rows, u.manifest(n=len(rows)))
    out = tmp_path / name
    args = ["export", "--v0", str(src), "--out", str(out)]
    for k, v in more.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    code, _, err = u.cli(args, capsys)
    assert code == 0, err
    return out


def _by_split(rows):
    out = {}
    for r in rows:
        out.setdefault(r["split"], []).append(r)
    return {k: sorted(v, key=lambda s: s["session_id"]) for k, v in out.items()}


def _commit_posts(hub):
    return [entry for entry in hub.log if entry[0] == "POST" and "/commit/" in entry[1]]


def test_push_makes_one_commit_and_a_tag_and_loads_back_through_the_hub(hub, tmp_path, capsys):
    rows = u.sessions(7)
    folder = _export(tmp_path, capsys, rows)
    code, out, err = u.cli(["push", str(folder), "--repo", REPO, "--revision", "v1"], capsys)
    assert code == 0, err
    commits = hub.commits(REPO)
    assert len(commits) == 2  # the repo's creation commit, then exactly one push commit
    head = commits[-1].oid
    assert hub.tags(REPO) == {"v1": head}
    assert f"pushed {REPO}: commit {head}" in out
    assert f"{hub.url}/datasets/{REPO}/tree/v1" in out and f"/commit/{head}" in out
    assert set(hub.files(REPO, "v1")) == {".gitattributes", "README.md", "eval.yaml", "v0/dev-00000-of-00001.parquet",
                                          "v0/test-00000-of-00001.parquet"}

    loaded, logs = _load(hub, tmp_path, "v1")
    assert loaded["v1"] == _by_split(rows)

    # the token is in no file written (data, HF cache of the loading process) and in no output
    assert TOKEN not in out + err + logs
    assert u.files_containing(tmp_path, TOKEN) == []


def test_a_second_push_of_the_same_content_is_unchanged_and_makes_no_commit(hub, tmp_path, capsys):
    folder = _export(tmp_path, capsys, u.sessions(4))
    assert u.cli(["push", str(folder), "--repo", REPO, "--revision", "v1"], capsys)[0] == 0
    before = len(hub.commits(REPO))
    posts = len(_commit_posts(hub))
    # re-exporting the same data gives the same bytes, so the push sees nothing to do
    folder = _export(tmp_path, capsys, u.sessions(4))
    code, out, err = u.cli(["push", str(folder), "--repo", REPO, "--revision", "v1"], capsys)
    assert code == 0, err
    assert out.splitlines()[1].startswith(f"unchanged: {REPO} main already holds this content")
    assert "0 new commits" in err or "0 commits" in err
    assert len(hub.commits(REPO)) == before and len(_commit_posts(hub)) == posts
    # a new tag on unchanged content names the same commit
    code, out, _ = u.cli(["push", str(folder), "--repo", REPO, "--revision", "v1.0.1"], capsys)
    assert code == 0 and hub.tags(REPO)["v1.0.1"] == hub.tags(REPO)["v1"]
    assert len(hub.commits(REPO)) == before


def test_a_changed_push_uploads_the_difference_and_removes_stale_files(hub, tmp_path, capsys):
    cases = u.write_json(tmp_path / "cases.json", u.case_file())
    folder = _export(tmp_path, capsys, u.sessions(4), mid_reply=cases)
    assert u.cli(["push", str(folder), "--repo", REPO], capsys)[0] == 0
    assert "mid_reply/test-00000-of-00001.parquet" in hub.files(REPO)
    first_tag = next(iter(hub.tags(REPO)))
    assert first_tag.startswith("data-")  # no --revision: the tag is the content's fingerprint

    rows = u.sessions(4)
    rows[0]["turns"][0]["text"] = "a corrected message"
    folder = _export(tmp_path, capsys, rows)  # mid_reply no longer exported, and asked to go
    code, out, err = u.cli(["push", str(folder), "--repo", REPO, "--revision", "v2", "--delete-missing"], capsys)
    assert code == 0, err
    assert "1 deleted" in out
    files = hub.files(REPO, "v2")
    assert "mid_reply/test-00000-of-00001.parquet" not in files and ".gitattributes" in files
    assert len(hub.commits(REPO)) == 3
    assert "mid_reply/test-00000-of-00001.parquet" in hub.files(REPO, first_tag)  # history keeps it


def test_a_push_that_fails_on_the_server_leaves_the_earlier_revision_loadable(hub, tmp_path, capsys):
    rows = u.sessions(5)
    folder = _export(tmp_path, capsys, rows)
    assert u.cli(["push", str(folder), "--repo", REPO, "--revision", "v1"], capsys)[0] == 0
    head = hub.repo(REPO).branches["main"]

    changed = u.sessions(5)
    changed[2]["persona"] = "someone else"
    folder = _export(tmp_path, capsys, changed)
    hub.fail_next_commits(1, status=500)
    code, out, err = u.cli(["push", str(folder), "--repo", REPO, "--revision", "v2"], capsys)
    assert code == 2
    assert err.startswith(f"error: push to {REPO}: the Hub answered HTTP 500")
    assert f"the repo still holds revision {head[:12]}" in err and "Traceback" not in err
    assert hub.repo(REPO).branches["main"] == head and "v2" not in hub.tags(REPO)
    assert len(hub.commits(REPO)) == 2

    loaded, _ = _load(hub, tmp_path, "v1", "main")
    assert loaded["v1"] == loaded["main"] == _by_split(rows)

    # the same push again goes through once the server recovers
    assert u.cli(["push", str(folder), "--repo", REPO, "--revision", "v2"], capsys)[0] == 0
    assert len(hub.commits(REPO)) == 3 and hub.tags(REPO)["v2"] == hub.repo(REPO).branches["main"]


def test_invalid_data_is_refused_before_anything_is_sent(hub, tmp_path, capsys):
    folder = _export(tmp_path, capsys, u.sessions(3))
    path = folder / "v0" / "dev-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[1]["turns"][0]["gold"]["action"] = 9  # a ClassLabel index outside the five actions
    rows[0]["turns"][1]["judge"]["thread"] = "t7"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    code, out, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert f"error: {path}:1: turns[1].judge.thread: 't7' is not a thread of this session, 'none' or 'ambiguous'" in lines
    assert any(line.startswith(f"error: {path}:2: turns[0].gold.action: 9 is not one of") for line in lines), lines
    assert hub.log == [] and hub.repos == {}


def test_cross_file_defects_are_refused(hub, tmp_path, capsys):
    cases = u.write_json(tmp_path / "cases.json", u.case_file())
    folder = _export(tmp_path, capsys, u.sessions(5), mid_reply=cases)
    # a dev session copied into the test file: wrong split there, and its id twice in the config
    dev, test = folder / "v0" / "dev-00000-of-00001.parquet", folder / "v0" / "test-00000-of-00001.parquet"
    t = pq.read_table(test)
    pq.write_table(pa.concat_tables([t, pq.read_table(dev).slice(0, 1)]), test)
    # one case carries a catalog that differs from the others of its language
    mid = folder / "mid_reply" / "test-00000-of-00001.parquet"
    m = pq.read_table(mid).to_pylist()
    m[1]["catalog"][0]["title"] = "tampered"
    pq.write_table(pa.Table.from_pylist(m, schema=pq.read_table(mid).schema), mid)
    code, _, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 2
    assert f"error: {test}:2: split: 'dev' in a file of split 'test'" in err
    assert f"error: {folder / 'v0'}: session_id: session 'en-0000' appears 2 times" in err
    assert f"error: {mid}:2: catalog: differs from the first 'en' case's catalog" in err
    assert "num_examples: says 1, the files hold 2 rows" in err
    assert hub.log == []


def test_a_folder_with_foreign_features_is_refused(hub, tmp_path, capsys):
    folder = _export(tmp_path, capsys, u.sessions(3))
    readme = folder / "README.md"
    text = readme.read_text()
    assert "  - name: persona\n    dtype: string\n" in text
    readme.write_text(text.replace("  - name: persona\n    dtype: string\n", "", 1))
    code, _, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 2 and "dataset_info[v0].features: differ from interleave-bench" in err
    assert hub.log == []
    readme.write_text("---\nconfigs: [\n---\nbroken\n")
    code, _, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 2 and "YAML header: cannot be read" in err and len(err.strip().splitlines()) == 1


def test_an_existing_tag_is_never_moved(hub, tmp_path, capsys):
    assert u.cli(["push", str(_export(tmp_path, capsys, u.sessions(3))), "--repo", REPO, "--revision", "v1"], capsys)[0] == 0
    rows = u.sessions(3)
    rows[0]["lang"] = "de"
    code, _, err = u.cli(["push", str(_export(tmp_path, capsys, rows)), "--repo", REPO, "--revision", "v1"], capsys)
    assert code == 2 and "tag 'v1' already names commit" in err
    assert len(hub.commits(REPO)) == 2


def test_no_token_is_a_clear_error(hub, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    folder = _export(tmp_path, capsys, u.sessions(2))
    code, _, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 2 and "no Hugging Face token: set HF_TOKEN" in err
    assert hub.log == []


def test_a_wrong_token_is_reported_without_echoing_it(hub, tmp_path, capsys, monkeypatch):
    wrong = "hf_WRONGtoken_abcdefghijklmnop"
    monkeypatch.setenv("HF_TOKEN", wrong)
    folder = _export(tmp_path, capsys, u.sessions(2))
    code, out, err = u.cli(["push", str(folder), "--repo", REPO], capsys)
    assert code == 2 and "not authorized" in err
    assert wrong not in out + err


def test_private_creates_a_private_repo(hub, tmp_path, capsys):
    folder = _export(tmp_path, capsys, u.sessions(2))
    assert u.cli(["push", str(folder), "--repo", REPO, "--private"], capsys)[0] == 0
    assert hub.repo(REPO).private is True


def test_bad_repo_id_is_refused(hub, tmp_path, capsys):
    folder = _export(tmp_path, capsys, u.sessions(2))
    code, _, err = u.cli(["push", str(folder), "--repo", "no-slash"], capsys)
    assert code == 2 and "expected ORG/NAME" in err


def test_push_to_hub_script_wraps_the_command(hub, tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "push_to_hub.py"
    spec = importlib.util.spec_from_file_location("push_to_hub", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    folder = _export(tmp_path, capsys, u.sessions(2))
    assert mod.main([str(folder), "--repo", REPO, "--revision", "v1"]) == 0
    assert "v1" in hub.tags(REPO)
    assert json.dumps(hub.tags(REPO))


def test_a_login_token_the_hub_echoes_encoded_is_redacted(monkeypatch):
    """A token read from a login's file, not the environment: its URL-encoded form is redacted as
    the environment's keys are, and from then on in every text written."""
    from urllib.parse import quote

    import huggingface_hub

    from interleave_bench import redaction
    from interleave_bench.hub import client

    token = "hf_Login/Token+abcdefghij123"
    monkeypatch.setattr(redaction, "_GIVEN", set())
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: token)
    assert client.scrub(f"401 for ?t={quote(token, safe='')} and {token}") == "401 for ?t=[redacted] and [redacted]"
    assert redaction.redact_secrets(f"later {quote(token, safe='')}") == "later [redacted]"
