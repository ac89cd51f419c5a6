"""``evaluate_router`` on load_dataset rows: a ``datasets.Dataset`` (or a list of its rows as dicts)
of a session config is routed and scored as the data folder it was exported from; anything else
is one clear error."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

import _hub_util as u
import interleave_bench
from interleave_bench.errors import InputErrors, UsageError
from interleave_bench.route.base import Decision

from _route_util import write_data


class KeywordRouter:
    """docs/own_router.md's example router: a topic whose title the message names, else stay."""

    policy = "keyword"

    def route(self, view):
        words = set(view.pending_text().lower().split())
        scores = {t.label: len(words & set(t.title.lower().split())) for t in view.topics}
        best = max(scores, key=scores.get, default=None)
        if best is not None and scores[best] >= 1:
            return Decision.to_topic(best)
        if view.current:
            return Decision.to_topic(view.current)
        return Decision.to_topic(view.topics[0].label)


#: what differs between two runs of the same sessions and rows: where the files are, and when
PLACES = ("created", "data_file", "predictions_file")


def same_run(doc: dict) -> dict:
    return {**doc, "provenance": {k: v for k, v in doc["provenance"].items() if k not in PLACES}}


@pytest.fixture
def world(tmp_path, monkeypatch, capsys):
    """A data folder, its export, and the export loaded with ``datasets.load_dataset`` (v0)."""
    monkeypatch.setenv("INTERLEAVE_HUB_DATA", str(tmp_path / "hub-data"))
    data = write_data(tmp_path / "data")
    out = tmp_path / "interleavebench"
    assert u.cli(["export", "--v0", str(data), "--out", str(out)], capsys)[0] == 0
    monkeypatch.chdir(tmp_path)  # load_dataset(FOLDER, "v0") from the folder's parent, as a user would
    ds = datasets.load_dataset(out.name, "v0", cache_dir=str(tmp_path / "cache"))
    return {"data": data, "export": out, "ds": ds, "tmp": tmp_path}


def evaluate(data, out: Path, **kw) -> dict:
    """The run's score document, its predictions in ``out/closed-keyword.jsonl`` (one name: one system)."""
    out.mkdir(exist_ok=True)
    return interleave_bench.evaluate_router(KeywordRouter(), data, mode="closed", out=out / "closed-keyword.jsonl",
                                            bootstrap=100, **kw)


def test_dataset_rows_route_and_score_as_the_exported_folder(world):
    tmp, ds = world["tmp"], world["ds"]
    folder = evaluate(world["export"], tmp / "folder")
    assert folder["counts"]["sessions"] == 4 and folder["split"] == "dev"
    # every split's rows, in the export's order: the very sessions, rows and score document
    both = evaluate(datasets.concatenate_datasets([ds["dev"], ds["test"]]), tmp / "rows")
    assert same_run(both) == same_run(folder)
    assert (tmp / "rows" / "closed-keyword.jsonl").read_bytes() == (tmp / "folder" / "closed-keyword.jsonl").read_bytes()
    assert Path(both["provenance"]["data_file"]).parent.parent == tmp / "hub-data" / "rows"
    # the data folder the export was made from: the same figures, per session too
    source = evaluate(world["data"], tmp / "source")
    assert same_run(source)["metrics"] == folder["metrics"] and source["per_session"] == folder["per_session"]
    # the dev split alone (ds["dev"]), and its rows as a list of dicts: the dev figures
    for rows, name in ((ds["dev"], "dev"), (ds["dev"].to_list(), "dev-list")):
        doc = evaluate(rows, tmp / name)
        assert doc["metrics"] == folder["metrics"] and doc["intervals"] == folder["intervals"]
        assert doc["per_session"] == folder["per_session"]
        # the same counts, but the rows: the dev rows alone, none outside the dev split
        assert doc["counts"] == {**folder["counts"], "rows": folder["counts"]["rows_scored"], "rows_outside_split": 0}
        assert folder["counts"]["rows_outside_split"] > 0
    # the test split scored from the test rows
    test = evaluate(ds["test"], tmp / "test", split="test")
    assert test["counts"]["sessions"] == 1
    assert test["metrics"] == evaluate(world["export"], tmp / "folder-test", split="test")["metrics"]


def test_rows_without_out_go_under_the_rows_data_folder(world):
    doc = interleave_bench.evaluate_router(KeywordRouter(), world["ds"]["dev"], mode="closed", bootstrap=0)
    data_file = Path(doc["provenance"]["data_file"])
    assert Path(doc["provenance"]["predictions_file"]) == data_file.parent / "predictions" / "closed-keyword.jsonl"
    assert (data_file.parent / "predictions" / "closed-keyword.score.json").is_file()


@pytest.mark.parametrize("data, message", [
    (42, "data: expected a data folder or sessions file (a path), hub:ORG/NAME@REV, an exported folder, or "
         "load_dataset rows of a session config (a datasets.Dataset such as ds[\"dev\"], or a list of its rows as "
         "dicts); got int"),
    ([], "data: no rows: nothing to route"),
    ([{"session_id": "x"}, "en-0001"], "data: expected a data folder or sessions file (a path), hub:ORG/NAME@REV, an "
                                       "exported folder, or load_dataset rows of a session config (a datasets.Dataset "
                                       "such as ds[\"dev\"], or a list of its rows as dicts); got list of str"),
    ([{"session_id": "x", "turns": []}], "data: rows with the columns session_id, turns are no rows of a session "
                                          "config (v0, v1, irc_ubuntu, sgd: load_dataset(FOLDER, \"v0\"))"),
])
def test_anything_else_is_one_clear_error(world, data, message):
    with pytest.raises(UsageError) as refused:
        evaluate(data, world["tmp"] / "x")
    assert str(refused.value) == message


def test_a_dataset_dict_is_told_to_pass_one_split(world):
    with pytest.raises(UsageError, match=r"^data: a DatasetDict holds several splits: pass the rows to route, one split "
                                         r"\(ds\[\"dev\"\]\) or datasets.concatenate_datasets of several$"):
        evaluate(world["ds"], world["tmp"] / "x")


def test_rows_of_other_columns_than_the_first_are_refused(world):
    rows = world["ds"]["dev"].to_list()
    rows[2]["note"] = "a column no other row has"
    with pytest.raises(UsageError) as refused:
        evaluate(rows, world["tmp"] / "x")
    assert str(refused.value) == ("data: row 3 has other columns than row 1 (extra, lang, note, persona, session_id, "
                                  "split, threads, turns, version)")


def test_a_bad_row_is_named_by_row_and_field(world):
    rows = world["ds"]["dev"].to_list()
    rows[1]["turns"][0]["gold"]["action"] = 17  # no ClassLabel index of the five actions
    with pytest.raises(InputErrors) as refused:
        evaluate(rows, world["tmp"] / "x")
    (error,) = refused.value.errors
    assert (error.path, error.line, error.field) == ("<rows>/v0", 2, "turns[0].gold.action"), str(error)
    assert not (world["tmp"] / "x" / "closed-keyword.jsonl").exists()
