"""``release`` against the Hub stand-in: a tagged revision that loads, a planted key stops it, a rerun commits nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from interleave_bench.generate.runner import GENERATOR_VERSION

import _hub_util as u
from _hub_util import TOKEN, hub  # noqa: F401  (the fixture)

REPO = "org/interleavebench"
#: small and quick: the release's steps are the subject here, not the intervals
FAST = ["--bootstrap", "40"]

LOAD = """
import json, datasets
from interleave_bench.hub.features import row_to_session
d = datasets.load_dataset(%r, "v0", revision=%r)
out = {split: sorted((row_to_session(r) for r in d[split]), key=lambda s: s["session_id"]) for split in d}
m = datasets.load_dataset(%r, "mid_reply", revision=%r)
print(json.dumps({"v0": out, "mid_reply": len(m["test"])}))
"""


def _release(tmp_path, capsys, *args):
    return u.cli(["release", "--repo", REPO, "--work", str(tmp_path / "rel"), *FAST, *args], capsys)


def _source(path: Path) -> dict:
    out: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        out.setdefault(s["split"], []).append(s)
    return {k: sorted(v, key=lambda s: s["session_id"]) for k, v in out.items()}


def _writes(hub):
    return [e for e in hub.log if e[0] in ("POST", "PUT", "DELETE")]


def test_an_offline_release_ends_in_a_tagged_revision_that_loads(hub, tmp_path, capsys):
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--offline", "--sessions", "6")
    assert code == 0, err
    lines = out.splitlines()
    assert [ln.split(":")[0] for ln in lines[:7]] == [f"[{k}/7] {s}" for k, s in enumerate(
        ("data", "validate", "vet", "baselines", "export", "load", "push"), start=1)]
    commits = hub.commits(REPO)
    assert len(commits) == 2  # the repo's creation, then the release in one commit
    head = commits[-1].oid
    assert hub.tags(REPO) == {"v0.1": head}
    assert f"released {REPO} v0.1: commit {head}" in out
    assert f"url: {hub.url}/datasets/{REPO}/tree/v0.1" in out

    # the card records the release: fingerprint, writer and seed, vetting, the baseline table
    card = hub.files(REPO, "v0.1")["README.md"].decode()
    record = json.loads((tmp_path / "rel" / "release.json").read_text(encoding="utf-8"))
    assert f"| data fingerprint | `{record['data_fingerprint']}` |" in card
    assert f"writer `templates`, no model, generator {GENERATOR_VERSION}" in card and "seed 0" in card
    assert "0 findings, 0 allowed" in card
    assert "| closed-oracle | closed | 1.0000 [1.0000, 1.0000]" in card and "| open-bm25 | open |" in card

    script = LOAD % (REPO, "v0.1", REPO, "v0.1")
    loaded, logs = u.run_python(script, hub.env, cwd=tmp_path)
    assert loaded["v0"] == _source(tmp_path / "rel" / "data" / "v0" / "sessions.jsonl")
    assert loaded["mid_reply"] == 60
    assert TOKEN not in out + err + logs and u.files_containing(tmp_path / "rel", TOKEN) == []

    # a second run of the same release makes no commit and no write request
    writes = len(_writes(hub))
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--offline", "--sessions", "6")
    assert code == 0, err
    assert "[1/7] data: v0 reused" in out and "already names commit" in out and "no commit made" in out
    assert len(hub.commits(REPO)) == 2 and hub.tags(REPO) == {"v0.1": head}
    assert len(_writes(hub)) == writes
    assert "0 commits" in err


def test_a_planted_key_stops_the_release_at_vetting_with_nothing_pushed(hub, tmp_path, capsys):
    secret = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    rows = u.sessions(5)
    rows[3]["turns"][4]["text"] = f"我的令牌是{secret}，帮我看看"
    data = u.write_data(tmp_path / "data", rows, u.manifest(n=5))
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--v0", str(data))
    assert code == 1
    assert f"{data / 'sessions.jsonl'}:4: turns[4].text: api-key: hf_" in out
    assert err.strip().splitlines() == [
        "error: release stopped at step 3/7 (vet): 1 finding(s) (1 api-key) not in the allowlist; nothing was pushed"]
    assert "[4/7]" not in out and not (tmp_path / "rel" / "dataset").exists()
    assert hub.log == [] and REPO not in str(hub.repos)
    assert secret not in out + err

    # a key used as a field name stops it too: field names are published (the extra column)
    rows[3]["turns"][4]["text"] = "nothing to see"
    rows[2]["notes"] = {secret: "x"}
    data = u.write_data(tmp_path / "data2", rows, u.manifest(n=5))
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--v0", str(data))
    assert code == 1 and f"{data / 'sessions.jsonl'}:3: notes.hf_" in out and " (key): api-key: hf_" in out
    assert hub.log == [] and secret not in out + err
    rows[3]["turns"][4]["text"] = f"我的令牌是{secret}，帮我看看"
    del rows[2]["notes"]
    data = u.write_data(tmp_path / "data", rows, u.manifest(n=5))

    # a reasoned allowlist entry lets a known fake through
    allow = tmp_path / "vet-allow.txt"
    allow.write_text(f"api-key:{secret}  # a made-up token planted for this test\n", encoding="utf-8")
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--v0", str(data), "--allow", str(allow),
                              "--dry-run")
    assert code == 0, err
    assert "0 findings, 1 allowed" in out and hub.log == []


def test_a_dry_run_needs_no_token_and_sends_nothing(hub, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--offline", "--sessions", "3", "--dry-run",
                              "--split", "all", "--no-mid-reply")
    assert code == 0, err
    assert "[6/6] load: v0 " in out and "nothing was sent" in out
    assert hub.log == []


def test_data_folders_of_every_session_config_are_released_as_they_are(hub, tmp_path, capsys):
    v0 = u.write_data(tmp_path / "v0", u.sessions(5), u.manifest(n=5))
    v1 = u.write_data(tmp_path / "v1", u.sessions(5, version="interleave-v1"), u.manifest("interleave-v1", n=5))
    code, out, err = _release(tmp_path, capsys, "--revision", "v1.0", "--v0", str(v0), "--v1", str(v1), "--dry-run")
    assert code == 0, err
    assert "[4/6] baselines: v0 7 runs scored on 4 dev sessions; v1 7 runs scored on 4 dev sessions" in out
    assert "[6/6] load: v0 dev 4, test 1; v1 dev 4, test 1; mid_reply test 60: every record equals its source" in out
    card = (tmp_path / "rel" / "dataset" / "README.md").read_text(encoding="utf-8")
    assert "Model-free baselines on `v1`" in card and hub.log == []


def test_a_tag_holding_other_content_stops_the_release_and_keeps_the_repo(hub, tmp_path, capsys):
    assert _release(tmp_path, capsys, "--revision", "v0.1", "--offline", "--sessions", "4")[0] == 0
    head = hub.repo(REPO).branches["main"]
    code, out, err = u.cli(["release", "--repo", REPO, "--work", str(tmp_path / "rel2"), *FAST, "--revision", "v0.1",
                            "--offline", "--sessions", "4", "--seed", "9"], capsys)
    assert code == 2
    assert err.startswith("error: release stopped at step 7/7 (push): release v0.1 to org/interleavebench: tag 'v0.1' "
                          "already names commit")
    assert hub.repo(REPO).branches["main"] == head and len(hub.commits(REPO)) == 2


def test_bad_data_stops_at_validation_with_one_line(hub, tmp_path, capsys):
    rows = u.sessions(3)
    rows[1]["turns"][2]["gold"]["action"] = "wander"
    data = u.write_data(tmp_path / "data", rows)
    code, out, err = _release(tmp_path, capsys, "--revision", "v0.1", "--v0", str(data))
    assert code == 2
    assert err.startswith(f"error: release stopped at step 2/7 (validate): {data / 'sessions.jsonl'}:2: turns[2].gold.action:")
    assert len(err.strip().splitlines()) == 1 and hub.log == []


def test_the_script_is_the_command():
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "scripts" / "release.py"), "--help"], capture_output=True, text=True,
                          cwd=root, env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0 and "usage: interleave-bench release" in proc.stdout


def test_a_push_failing_on_the_server_stops_with_one_line_and_the_repo_keeps_its_revision(hub, tmp_path, capsys):
    assert _release(tmp_path, capsys, "--revision", "v0.1", "--offline", "--sessions", "4")[0] == 0
    head = hub.repo(REPO).branches["main"]
    hub.fail_next_commits(1, status=500)
    code, out, err = u.cli(["release", "--repo", REPO, "--work", str(tmp_path / "rel2"), *FAST, "--revision", "v0.2",
                            "--offline", "--sessions", "5"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error: release stopped at step 7/7 (push): push to org/interleavebench: the Hub answered HTTP 500")
    assert f"the repo still holds revision {head[:12]}" in err
    assert hub.repo(REPO).branches["main"] == head and set(hub.tags(REPO)) == {"v0.1"}


def test_rerunning_a_release_that_kept_another_config_makes_no_commit(hub, tmp_path, capsys):
    v0 = u.write_data(tmp_path / "v0", u.sessions(5), u.manifest(n=5))
    v1 = u.write_data(tmp_path / "v1", u.sessions(5, version="interleave-v1"), u.manifest("interleave-v1", n=5))
    assert _release(tmp_path, capsys, "--revision", "v0.1", "--v0", str(v0), "--v1", str(v1))[0] == 0
    # the next release carries v0 only: the push keeps v1 and declares it on the card
    args = ("--revision", "v0.2", "--v0", str(v0), "--work", str(tmp_path / "rel2"))
    code, out, err = _release(tmp_path, capsys, *args)
    assert code == 0, err
    assert "v1/" in " ".join(hub.files(REPO, "v0.2")) and "`v1`" in hub.files(REPO, "v0.2")["README.md"].decode()
    head, writes = hub.repo(REPO).branches["main"], len(_writes(hub))
    code, out, err = _release(tmp_path, capsys, *args)
    assert code == 0, err
    assert f"tag v0.2 already names commit {head[:12]} holding this content: no commit made" in out
    assert hub.repo(REPO).branches["main"] == head and len(_writes(hub)) == writes


def test_a_revision_holding_a_key_is_refused_before_any_step(hub, tmp_path, capsys, monkeypatch):
    """The revision names the release's folder and is written in its card: a key there reached
    ``releases/<revision>/dataset/README.md`` before the push refused it. Now nothing is written."""
    key = "sk-test-RELEASE-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    code, out, err = _release(tmp_path, capsys, "--revision", f"v1-{key}", "--offline", "--sessions", "3",
                              "--split", "all", "--no-mid-reply")
    assert code == 2 and err == ("error: --revision holds the value of OPENAI_API_KEY: it would be published on the "
                                 "Hub; give it without (nothing was sent)\n")
    assert key not in out and hub.log == [] and not (tmp_path / "rel").exists()
