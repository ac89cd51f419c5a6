"""The per-session evaluate modules read ``load_dataset`` turns (``ds["dev"]["turns"]``) by the very
checks that read JSONL turns: a cell of another shape than its column's (text where an object or a
list belongs), and an ``extra`` cell that is no JSON text of an object a file could hold, are one
``ValueError`` line naming the argument, session, message and field; never an internal error, never
evaluate's multi-line format dump, never taken silently."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import interleave_bench
from test_midreply_metrics import evaluate_caches  # noqa: F401 - the fixture

METRICS = Path(__file__).resolve().parents[1] / "interleave_bench" / "metrics"
NOT_JSON = "is not a JSON number (NaN and Infinity are refused)"


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    """The packaged example's dev split, as ``load_dataset`` gives it (ClassLabel indices, extra cells)."""
    ds = interleave_bench.load("v0", data_dir=interleave_bench.data_path("examples/v0"),
                               cache_dir=str(tmp_path_factory.mktemp("cache")))
    return ds["dev"]


@pytest.fixture
def load(evaluate_caches):  # noqa: F811
    import evaluate

    return lambda name: evaluate.load(str(METRICS / name))


def inputs(dev, field: str, value) -> dict:
    """The dev split's inputs with the first turn's ``field`` set to ``value``."""
    turns = copy.deepcopy([list(t) for t in dev["turns"]])
    turns[0][0][field] = value
    stay = [[s["threads"][0]["id"]] * len(s["turns"]) for s in dev]
    return dict(predictions=stay, references=turns, threads=dev["threads"])


#: (field, value, what the row form says); the ones a JSONL turn can hold say the same there
CELLS = [
    ("gold", "x", "references[0][0].gold: expected an object, got str 'x'"),
    ("gold", 3, "references[0][0].gold: expected an object, got int 3"),
    ("judge", "x", "references[0][0].judge: expected an object, got str 'x'"),
    ("judge", 3, "references[0][0].judge: expected an object, got int 3"),
    ("judge", ["a"], "references[0][0].judge: expected an object, got list ['a']"),
    ("tags", 3, "references[0][0].tags: expected a list, got 3"),
    ("tags", "abc", "references[0][0].tags: expected a list, got 'abc'"),
    ("text", 0, "references[0][0].text: expected a string, got 0"),
]

#: (extra cell, what is said of it): read as a JSONL line is read (json_text.parse_json)
EXTRAS = [
    (3, "references[0][0].extra: expected JSON text, got int 3"),
    (1.5, "references[0][0].extra: expected JSON text, got float 1.5"),
    ({"a": 1}, "references[0][0].extra: expected JSON text, got dict {'a': 1}"),
    ("{not json", "references[0][0].extra: invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
    ("[1]", "references[0][0].extra: expected a JSON object, got list '[1]'"),
    ('{"a": 1e400}', "references[0][0].extra.a: the number 1e400 is outside the finite range of a float"),
    ('{"a": 1, "a": 2}', "references[0][0].extra.a: the key 'a' appears twice in one object"),
    ('{"a": 99999999999999999999999}',
     "references[0][0].extra.a: the integer 99999999999999999999... (23 characters) is outside 64 bits"),
    ('{"a": NaN}', f"references[0][0].extra.a: NaN {NOT_JSON}"),
]


@pytest.mark.parametrize("field, value, message", CELLS, ids=[f"{c[0]}={c[1]!r}" for c in CELLS])
def test_a_row_cell_of_another_shape_is_refused_as_the_jsonl_turn_is(load, dev, field, value, message):
    routing = load("interleave_routing")
    with pytest.raises(ValueError) as refused:
        routing.compute(**inputs(dev, field, value))
    assert str(refused.value) == message
    # the same value in a JSONL turn: the same line (one set of checks)
    jsonl = [{"gold": {"thread": "t1", "action": "new"}, field: value}, {"gold": {"thread": "t2", "action": "new"}}]
    if field == "gold":
        jsonl[0] = {"gold": value}
    with pytest.raises(ValueError) as refused:
        routing.compute(predictions=[["t1", "t2"]], references=[jsonl])
    assert str(refused.value) == message


@pytest.mark.parametrize("cell, message", EXTRAS, ids=[repr(e[0]) for e in EXTRAS])
def test_an_extra_cell_is_read_as_strictly_as_a_jsonl_line(load, dev, cell, message):
    for name in ("interleave_routing", "interleave_bcubed"):
        with pytest.raises(ValueError) as refused:
            load(name).compute(**inputs(dev, "extra", cell))
        assert str(refused.value) == message, name


def test_a_nested_extra_is_named_by_its_field(load, dev):
    assert load("interleave_routing").compute(**inputs(dev, "extra", '{"note": "kept"}'))["accuracy"] == 0.5741
    bad = inputs(dev, "extra", None)
    bad["references"][1][2]["gold"]["extra"] = '{"x": 1e999}'
    with pytest.raises(ValueError) as refused:
        load("interleave_routing").compute(**bad)
    assert str(refused.value) == "references[1][2].gold.extra.x: the number 1e999 is outside the finite range of a float"



def test_routing_inputs_read_a_row_extra_as_strictly(dev):
    rows = dev.to_list()
    rows[0]["turns"][1]["extra"] = '{"a": 1e400}'
    labels = [{"session_id": r["session_id"], "i": t["i"], "pred": "t1"} for r in rows for t in r["turns"]]
    with pytest.raises(ValueError) as refused:
        interleave_bench.routing_inputs(labels, rows)
    assert str(refused.value) == "sessions[0].turns[1].extra.a: the number 1e400 is outside the finite range of a float"
