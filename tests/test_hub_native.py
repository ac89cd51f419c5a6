"""The project as a native Hub benchmark, against the loopback stand-in: metrics published as Spaces
load with ``evaluate.load("ORG/<module>")``; scoring straight from a Hub revision equals scoring the
local JSONL (same fingerprint, on the records); a push keeps configs it does not carry; the data
repo carries ``eval.yaml`` and a model gets its ``.eval_results/`` from the board."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

ORG = "org"

LOAD_METRIC = """
import json, evaluate
routing = evaluate.load("org/interleave_routing")
gold = [{"gold": {"thread": "t1", "action": "new"}}, {"gold": {"thread": "t2", "action": "new"}},
        {"gold": {"thread": "t1", "action": "switch"}}, {"gold": {"thread": None, "action": "oneoff"}}]
r = routing.compute(predictions=[["t1", "t2", "t2", "t1"]], references=[gold])
b3 = evaluate.load("org/interleave_bcubed").compute(predictions=["x", "x", "x"], references=["a", "a", "b"])
print(json.dumps({"accuracy": r["accuracy"], "weighted_error": r["weighted_error"], "b3": b3}))
"""


def _env(hub, tmp_path):
    env = dict(hub.env)
    env.update({"HF_MODULES_CACHE": str(tmp_path / "hf-modules"), "HF_EVALUATE_CACHE": str(tmp_path / "hf-evaluate")})
    return env


def test_push_metrics_makes_one_commit_per_module_and_evaluate_loads_them_by_name(hub, tmp_path, capsys):
    code, out, err = u.cli(["push-metrics", "--org", ORG], capsys)
    assert code == 0, err
    for name in ("interleave_routing", "interleave_bcubed", "interleave_mid_reply"):
        commits = hub.commits(f"{ORG}/{name}", "space")
        assert len(commits) == 2  # creation, then the module in one commit
        files = hub.files(f"{ORG}/{name}", repo_type="space")
        assert {f"{name}.py", "README.md", "app.py", "requirements.txt"} <= set(files)
        assert b"interleave-bench==" in files["requirements.txt"]
    got, _ = u.run_python(LOAD_METRIC, _env(hub, tmp_path), cwd=tmp_path)
    assert got == {"accuracy": 0.6667, "weighted_error": 1.0, "b3": {"precision": 0.5556, "recall": 1.0, "f1": 0.7143}}

    # a second push changes nothing and commits nothing
    code, out, err = u.cli(["push-metrics", "--org", ORG, "--metric", "interleave_routing"], capsys)
    assert code == 0, err
    assert "unchanged" in out and len(hub.commits(f"{ORG}/interleave_routing", "space")) == 2


def test_push_metrics_refuses_an_unknown_module_in_one_line(hub, capsys):
    code, out, err = u.cli(["push-metrics", "--org", ORG, "--metric", "nope"], capsys)
    assert code == 2 and err.count("\n") == 1 and "interleave_routing" in err


# --- score straight from a Hub revision ---------------------------------------------------------------

DATA_REPO = "org/interleavebench"


def publish_v0(tmp_path, capsys, rows, revision="v0.1", name="src", mid_reply=False):
    """Export ``rows`` as v0 (and the mid-reply cases when asked) and push them tagged ``revision``."""
    src = u.write_data(tmp_path / name, rows, u.manifest(n=len(rows)))
    out = tmp_path / f"export-{name}"
    args = ["export", "--v0", str(src), "--out", str(out)]
    if mid_reply:
        args += ["--mid-reply", u.write_json(tmp_path / f"cases-{name}.json", u.case_file())]
    code, _, err = u.cli(args, capsys)
    assert code == 0, err
    code, _, err = u.cli(["push", str(out), "--repo", DATA_REPO, "--revision", revision], capsys)
    assert code == 0, err
    return src


def test_score_from_a_hub_revision_equals_the_local_jsonl_and_fingerprints_match(hub, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("INTERLEAVE_HUB_DATA", str(tmp_path / "hub-data"))
    rows = u.sessions(10)
    src = publish_v0(tmp_path, capsys, rows)
    # predictions made on the Hub copy (baselines read hub: too), scored on both copies
    code, out, err = u.cli(["baselines", f"hub:{DATA_REPO}@v0.1"], capsys)
    assert code == 0, err
    preds = sorted((tmp_path / "hub-data").glob("org__interleavebench/v0@*/predictions/closed-bm25.jsonl"))
    assert len(preds) == 1
    # a router of one's own says which data it routed, as the built-in policies do
    (tmp_path / "first_topic.py").write_text(
        "from interleave_bench.route.base import Decision\n"
        "class First:\n"
        "    policy = 'first-topic'\n"
        "    def route(self, view):\n"
        "        return Decision.to_topic(view.topics[0].label)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for how in (["--policy", "stay"], ["--router", "first_topic:First"]):
        code, out, err = u.cli(["route", f"hub:{DATA_REPO}@v0.1", "--mode", "closed", *how], capsys)
        assert code == 0, err
        assert out.startswith(f"data: {DATA_REPO}@v0.1 (commit {hub.tags(DATA_REPO)['v0.1']}) in "), out
    docs = {}
    for data in (str(src), f"hub:{DATA_REPO}@v0.1"):
        code, out, err = u.cli(["score", data, str(preds[0]), "--json", "--bootstrap", "40", "--split", "all"], capsys)
        assert code == 0, err
        docs[data] = json.loads(out)
    local, remote = docs[str(src)], docs[f"hub:{DATA_REPO}@v0.1"]
    for key in ("metrics", "intervals", "counts", "outcomes", "breakdowns"):
        assert remote[key] == local[key], key
    assert remote["provenance"]["data_sha256"] == local["provenance"]["data_sha256"]
    commit = hub.tags(DATA_REPO)["v0.1"]
    assert {k: remote["provenance"][k] for k in ("data_repo", "data_revision", "data_commit", "data_config")} == {
        "data_repo": DATA_REPO, "data_revision": "v0.1", "data_commit": commit, "data_config": "v0"}
    # and the card's YAML carries the same fingerprint
    readme = hub.files(DATA_REPO, "v0.1")["README.md"].decode()
    assert local["provenance"]["data_sha256"] in readme.split("\n---\n", 1)[0]


def test_a_missing_hub_revision_is_one_line(hub, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("INTERLEAVE_HUB_DATA", str(tmp_path / "hub-data"))
    publish_v0(tmp_path, capsys, u.sessions(5))
    code, out, err = u.cli(["score", f"hub:{DATA_REPO}@nope", str(tmp_path / "x.jsonl")], capsys)
    assert code == 2 and err.count("\n") == 1 and "nope" in err
    code, out, err = u.cli(["score", "hub:justaname", str(tmp_path / "x.jsonl")], capsys)
    assert code == 2 and err.count("\n") == 1 and "hub:ORG/NAME@REVISION" in err


# --- safe pushes ---------------------------------------------------------------------------------------------

LOAD_CONFIGS = """
import json, datasets
out = {}
for config in ("v0", "mid_reply"):
    try:
        d = datasets.load_dataset("org/interleavebench", config)
        out[config] = {split: len(d[split]) for split in d}
    except Exception as exc:
        out[config] = type(exc).__name__
print(json.dumps(out))
"""


def _card_configs(readme: str) -> tuple[list[str], list[str]]:
    """The configs a README declares in its YAML and lists in its configs table."""
    from huggingface_hub import DatasetCard

    card = DatasetCard(readme)
    declared = [c["config_name"] for c in card.data.to_dict()["configs"]]
    table = [line.split("`")[1] for line in card.text.splitlines() if line.startswith("| `") and "sessions" in line
             or line.startswith("| `mid_reply` | messages sent")]
    return declared, table


def test_a_v0_only_push_keeps_mid_reply_unless_delete_missing(hub, tmp_path, capsys):
    publish_v0(tmp_path, capsys, u.sessions(6), revision="r1", name="both", mid_reply=True)
    src = u.write_data(tmp_path / "v0-only", u.sessions(8), u.manifest(n=8))
    out = tmp_path / "export-v0-only"
    assert u.cli(["export", "--v0", str(src), "--out", str(out)], capsys)[0] == 0
    code, stdout, err = u.cli(["push", str(out), "--repo", DATA_REPO, "--revision", "r2"], capsys)
    assert code == 0, err
    assert "kept on the Hub: mid_reply" in stdout
    files = hub.files(DATA_REPO, "r2")
    assert any(p.startswith("mid_reply/") for p in files)
    assert _card_configs(files["README.md"].decode()) == (["v0", "mid_reply"], ["v0", "mid_reply"])
    loaded, _ = u.run_python(LOAD_CONFIGS, hub.env, cwd=tmp_path)
    assert loaded == {"v0": {"dev": 7, "test": 1}, "mid_reply": {"test": 3}}

    code, stdout, err = u.cli(["push", str(out), "--repo", DATA_REPO, "--revision", "r3", "--delete-missing"], capsys)
    assert code == 0, err
    files = hub.files(DATA_REPO, "r3")
    assert not any(p.startswith("mid_reply/") for p in files)
    assert _card_configs(files["README.md"].decode()) == (["v0"], ["v0"])


# --- Eval Results ------------------------------------------------------------------------------------------

def test_the_dataset_carries_eval_yaml_and_a_model_gets_its_eval_results_from_the_board(hub, tmp_path, capsys):
    import yaml

    from interleave_bench.fingerprints import records_fingerprint
    from interleave_bench.schema import Session

    rows = u.sessions(6)
    publish_v0(tmp_path, capsys, rows, revision="v0.1", mid_reply=True)
    tasks = yaml.safe_load(hub.files(DATA_REPO, "v0.1")["eval.yaml"])
    assert tasks["evaluation_framework"] == "interleave-bench"
    assert tasks["tasks"] == [{"id": "v0-closed", "config": "v0", "split": "test"},
                              {"id": "v0-open", "config": "v0", "split": "test"},
                              {"id": "mid-reply", "config": "mid_reply", "split": "test"}]

    from interleave_bench.route.standard import write_baselines
    from interleave_bench.score.run import score_files

    src = tmp_path / "src"
    made = {r.path.name: r.path for r in write_baselines(src / "sessions.jsonl", "all", out_dir=tmp_path / "preds")}
    pred = made["closed-stay.jsonl"]
    model = "org/router-7b"
    # the board scores the runs on the published revision, on the test split (a task) and on dev (none;
    # another run: bm25 is right on every strict message of these sessions, which is the oracle's place)
    for split, run in (("test", pred), ("dev", made["open-single.jsonl"])):
        code, out, err = u.cli(["leaderboard", "add", str(run), "--data", str(src), "--split", split, "--system",
                                f"stay-{split}", "--model", model, "--repo", "org/board", "--data-repo", DATA_REPO,
                                "--data-revision", "v0.1"], capsys)
        assert code == 0, err
    test = score_files(src, [pred], split="test", write=False)[0].result
    # the task's row was published by the first add (board-1), the board is now at board-2: the
    # source names and links the row's own publication
    out_dir = tmp_path / "evalres"
    code, out, err = u.cli(["leaderboard", "export-eval-results", "--repo", "org/board", "--model", model,
                            "--out", str(out_dir)], capsys)
    assert code == 0, err
    [entry] = yaml.safe_load((out_dir / ".eval_results" / "interleavebench-v0-closed.yaml").read_text(encoding="utf-8"))
    assert entry["value"] == test["metrics"]["accuracy"]
    assert entry["source"]["name"] == "InterleaveBench leaderboard board-1"
    assert entry["source"]["url"].endswith("/tree/board-1"), entry["source"]
    code, out, err = u.cli(["leaderboard", "export-eval-results", "--repo", "org/board", "--model", "other/model"], capsys)
    assert code == 2 and err.count("\n") == 1


def test_a_mid_reply_summary_is_checked_against_the_published_cases(hub, tmp_path, capsys, monkeypatch):
    publish_v0(tmp_path, capsys, u.sessions(5), revision="v0.1", mid_reply=True)
    out = tmp_path / "mid" / "rule.jsonl"
    assert u.cli(["mid-reply", str(tmp_path / "cases-src.json"), "--rule-only", "--out", str(out)], capsys)[0] == 0
    summary = tmp_path / "mid" / "rule.score.json"
    doc = json.loads(summary.read_text(encoding="utf-8"))

    args = ["--repo", "org/board", "--data-repo", DATA_REPO, "--data-revision", "v0.1"]
    code, _, err = u.cli(["leaderboard", "add", str(summary), *args], capsys)
    assert code == 0, err
    # a run on other cases (one case's text changed), claimed on the revision that holds these
    cases = u.case_file()
    cases["cases"][0]["text"] = "add Sintra and Cascais"
    other_cases = u.write_json(tmp_path / "cases-other.json", cases)
    out = tmp_path / "mid" / "other.jsonl"
    assert u.cli(["mid-reply", other_cases, "--rule-only", "--out", str(out)], capsys)[0] == 0
    code, _, err = u.cli(["leaderboard", "add", str(tmp_path / "mid" / "other.score.json"), *args], capsys)
    assert code == 2 and err.count("\n") == 1 and "holds mid_reply sha256:" in err, err
    # the first run's rows, said to be scored on other cases: its own case file says otherwise
    doc["provenance"]["data_sha256"] = "sha256:" + "9" * 64
    forged = u.write_json(tmp_path / "mid" / "forged.score.json", doc)
    code, _, err = u.cli(["leaderboard", "add", forged, *args], capsys)
    assert code == 2 and err.count("\n") == 1 and "provenance.data_sha256: says sha256:999" in err, err


# --- the data fingerprint is on the records -------------------------------------------------------------------


def _reordered(obj, reverse):
    """The same JSON value with every object's keys in reverse order (when ``reverse``)."""
    if isinstance(obj, dict):
        items = list(obj.items())
        return {k: _reordered(v, reverse) for k, v in (items[::-1] if reverse else items)}
    if isinstance(obj, list):
        return [_reordered(v, reverse) for v in obj]
    return obj


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(6))), st.booleans(), st.sampled_from([None, 1, 4]), st.integers(0, 5))
def test_the_fingerprint_ignores_order_and_formatting_but_not_content(order, reverse, indent, changed):
    from interleave_bench.fingerprints import records_fingerprint
    from interleave_bench.schema import Session

    rows = u.sessions(6)
    base = records_fingerprint(Session.model_validate(r) for r in rows)
    # another file of the same data: sessions in another order, keys of declared fields reordered,
    # other whitespace; read back through JSON text as a reader would
    again = [Session.model_validate_json(json.dumps(_reordered(rows[k], reverse), indent=indent)) for k in order]
    assert records_fingerprint(again) == base
    edited = u.clone(rows)
    edited[changed]["turns"][0]["text"] += "!"
    assert records_fingerprint(Session.model_validate(r) for r in edited) != base
