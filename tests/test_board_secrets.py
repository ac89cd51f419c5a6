"""Nothing the leaderboard publishes holds a secret: not its rows, README, commit titles or tag
messages (docs/leaderboard.md#secrets). A system name holding one is refused; a model string holding
one is published redacted; a file that would still hold one is not sent."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

import _board_util as b
import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

BOARD = "org/secret-leaderboard"
OPENAI_KEY = "sk-BoardTestKey0123456789abc"
#: a model named by the address it was served from, its key in the query
KEYED_MODEL = f"gpt-4o@https://x.example/v1?api_key={OPENAI_KEY}"
SECRETS = (u.TOKEN, OPENAI_KEY)


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    return b.baselines(tmp_path / "data")


def _with_model(pred, out, model):
    """A copy of the predictions ``pred`` whose every row names ``model``."""
    rows = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
    return b.write(out, "".join(json.dumps({**r, "model": model}) + "\n" for r in rows))


def _leaks(hub, repo):
    """Every place the stand-in holds one of :data:`SECRETS` (in any form a file may hold it) for ``repo``:
    a commit's title or message, a tag's message, a file of any commit."""
    forms = {f for s in SECRETS for f in (s, quote(s, safe=""), json.dumps(s)[1:-1])}
    found = []
    for c in hub.commits(repo):
        found += [f"commit {c.oid[:8]} {what}" for what, text in (("title", c.title), ("message", c.message or ""))
                  if any(f in text for f in forms)]
        found += [f"commit {c.oid[:8]} {path}" for path, data in c.files.items()
                  if any(f.encode() in data for f in forms)]
    found += [f"tag {t}" for t, m in hub.repo(repo).tag_messages.items() if m and any(f in m for f in forms)]
    return found


def test_a_system_name_holding_a_secret_is_refused_and_nothing_is_published(hub, runs, capsys):
    data, preds = runs
    code, out, err = u.cli(["leaderboard", "add", str(preds["closed-bm25"]), "--data", str(data), "--repo", BOARD,
                            "--system", f"run-{u.TOKEN}"], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--system" in lines[0] and "holds a secret" in lines[0], err
    assert not any(s in out + err for s in SECRETS)
    assert ("dataset", BOARD) not in hub.repos  # refused before the board was touched


def test_a_model_holding_a_key_is_published_redacted_everywhere(hub, runs, tmp_path, capsys):
    data, preds = runs
    keyed = _with_model(preds["open-single"], tmp_path / "forge" / "keyed.jsonl", KEYED_MODEL)
    code, out, err = u.cli(["leaderboard", "add", keyed, "--data", str(data), "--repo", BOARD, "--system", "mine"], capsys)
    assert code == 0, err
    assert _leaks(hub, BOARD) == []
    import io

    import pyarrow.parquet as pq

    files = hub.files(BOARD)
    rows = pq.read_table(io.BytesIO(files["data/leaderboard.parquet"])).to_pylist()
    assert [r["model"] for r in rows] == ["gpt-4o@https://x.example/v1?api_key=[redacted]"]
    assert "gpt-4o@https://x.example/v1?api_key=[redacted]" in files["README.md"].decode()
    assert "[redacted]" in hub.commits(BOARD)[-1].title


def test_a_board_that_holds_a_secret_is_published_without_it_next_time(hub, runs, tmp_path, capsys, monkeypatch):
    """A board published before the board redacted its rows (here: with the redaction and the check
    switched off) holds the key; the next publication writes every row redacted, the old ones too."""
    from interleave_bench.hub import leaderboard as lb

    data, preds = runs
    keyed = _with_model(preds["open-single"], tmp_path / "forge" / "keyed.jsonl", KEYED_MODEL)
    with monkeypatch.context() as m:
        m.setattr(lb, "secret_free", lambda row: row)
        m.setattr(lb, "refuse_secret_files", lambda files: None)
        assert u.cli(["leaderboard", "add", keyed, "--data", str(data), "--repo", BOARD], capsys)[0] == 0
    assert _leaks(hub, BOARD)  # the old board, as it was published
    leaked = {c.oid for c in hub.commits(BOARD)}
    code, _, err = u.cli(["leaderboard", "add", str(preds["open-bm25"]), "--data", str(data), "--repo", BOARD], capsys)
    assert code == 0, err
    old = {f"commit {o[:8]}" for o in leaked} | {"tag board-1"}
    assert [x for x in _leaks(hub, BOARD) if not any(x.startswith(o) for o in old)] == []
    head = hub.files(BOARD)
    assert not any(s.encode() in v for s in SECRETS for v in head.values())


def test_a_file_that_would_still_hold_a_secret_is_not_sent(hub, runs, tmp_path, capsys, monkeypatch):
    """The guarantee is at the upload: a writer that forgets to redact (here the rows' redaction is
    switched off) gets a refusal in one line, and nothing is published."""
    from interleave_bench.hub import leaderboard as lb

    data, preds = runs
    keyed = _with_model(preds["open-single"], tmp_path / "forge" / "keyed.jsonl", KEYED_MODEL)
    monkeypatch.setattr(lb, "secret_free", lambda row: row)
    code, out, err = u.cli(["leaderboard", "add", keyed, "--data", str(data), "--repo", BOARD], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    # a line for each file that holds it, as push says it
    assert lines == [f"error: {name}: holds the value of OPENAI_API_KEY: a secret is never uploaded; take it out of the "
                     "file (nothing was sent)" for name in ("README.md", "data/leaderboard.parquet")], err
    assert not any(s in out + err for s in SECRETS)
    assert [c.title for c in hub.commits(BOARD)] == [hub.commits(BOARD)[0].title]  # the repo's creation only
    assert _leaks(hub, BOARD) == []


def test_a_file_named_with_a_secret_is_not_sent(hub, runs, capsys, monkeypatch):
    """The board's files are checked by their path in the repo too: a writer that named a file with
    a key (here one added to what the board writes) gets a refusal in one line, and nothing is published."""
    from interleave_bench.hub import leaderboard as lb

    data, preds = runs
    write = lb.write_board

    def with_named_file(folder, *args):
        (folder / f"notes-{OPENAI_KEY}.txt").write_text("hi\n", encoding="utf-8")
        return write(folder, *args) + [f"notes-{OPENAI_KEY}.txt"]

    monkeypatch.setattr(lb, "write_board", with_named_file)
    code, out, err = u.cli(["leaderboard", "add", str(preds["open-bm25"]), "--data", str(data), "--repo", BOARD], capsys)
    assert code == 2
    assert err.strip().splitlines() == ["error: notes-[redacted].txt: its path in the repo holds the value of "
                                        "OPENAI_API_KEY: a secret is never uploaded, not even in a name; rename it "
                                        "(nothing was sent)"], err
    assert not any(s in out + err for s in SECRETS)
    assert [c.title for c in hub.commits(BOARD)] == [hub.commits(BOARD)[0].title]  # the repo's creation only
    assert not any(s in p for p in hub.files(BOARD) for s in SECRETS)
