"""The ``local`` weights file read back: a broken one is refused in one line naming the file and
the field (exit 2 from the CLI), never used with a NaN weight or read into an internal error."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from interleave_bench.errors import InputError
from interleave_bench.route import local
from interleave_bench.route.local import FEATURES, LocalWeights, read_weights, shipped_weights

from _cli_util import run_cli
from _route_util import write_data


@pytest.fixture(scope="module")
def good() -> dict:
    """A weights document as :meth:`LocalWeights.to_json` writes it (the shipped weights' own)."""
    return shipped_weights().to_json()


def written(tmp_path: Path, doc: dict, name: str = "weights.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")  # NaN as json writes it: NaN
    return path


def refused(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read_weights(path)
    line = caught.value.format()
    assert "\n" not in line and line.startswith(f"{path}")
    return line


def test_a_good_file_reads_back_the_same_weights(tmp_path, good):
    back = read_weights(written(tmp_path, good))
    assert back.fingerprint() == shipped_weights().fingerprint()


FIRST = FEATURES[0]


@pytest.mark.parametrize("value, said", [
    (math.nan, "NaN is not a JSON number"),
    (math.inf, "Infinity is not a JSON number"),
    ("0.5", "must be a number from -1e+06 to 1e+06, got '0.5'"),
    (None, "must be a number from -1e+06 to 1e+06, got null"),
    (True, "must be a number from -1e+06 to 1e+06, got True"),
    # finite, yet a score past a float's range: every candidate inf, the first one chosen, as NaN did
    (1e308, "must be a number from -1e+06 to 1e+06, got 1e+308"),
    (-2e6, "must be a number from -1e+06 to 1e+06, got -2000000.0"),
])
def test_a_weight_that_is_no_finite_number_is_refused(tmp_path, good, value, said):
    doc = json.loads(json.dumps(good))
    doc["modes"]["closed"]["weights"][FIRST] = value
    line = refused(written(tmp_path, doc))
    assert f"modes.closed.weights.{FIRST}" in line and said in line


def test_a_file_cut_short_names_the_file_and_line(tmp_path, good):
    path = tmp_path / "weights.json"
    path.write_bytes(json.dumps(good, indent=1).encode("utf-8")[:5000])
    line = refused(path)
    assert "invalid JSON" in line and line.startswith(f"{path}:")


def test_a_missing_file_is_named(tmp_path):
    assert "no such file" in refused(tmp_path / "weights.json")


def calibration(doc: dict) -> dict:
    return doc["modes"]["open"]["calibration_by_chat"]["plain"]


@pytest.mark.parametrize("change, field, said", [
    (lambda c: c["x"].__setitem__(2, c["x"][1] - 0.01), "calibration_by_chat.plain.x[2]", "must not be below"),
    (lambda c: c["y"].__setitem__(2, c["y"][1] - 0.01), "calibration_by_chat.plain.y[2]", "must not be below"),
    (lambda c: c["x"].__setitem__(0, -0.1), "calibration_by_chat.plain.x[0]", "must be a number in [0, 1]"),
    (lambda c: c["y"].__setitem__(-1, 1.5), "calibration_by_chat.plain.y[", "must be a number in [0, 1], got 1.5"),
    (lambda c: c["y"].__setitem__(0, "0.3"), "calibration_by_chat.plain.y[0]", "must be a number in [0, 1]"),
    (lambda c: c["y"].pop(), "calibration_by_chat.plain:", "one y per x"),
    (lambda c: c.__setitem__("x", None), "calibration_by_chat.plain.x", "must be a list of numbers"),
])
def test_a_calibration_map_the_class_cannot_take_is_refused(tmp_path, good, change, field, said):
    doc = json.loads(json.dumps(good))
    change(calibration(doc))
    line = refused(written(tmp_path, doc))
    assert f"modes.open.{field}" in line and said in line


def test_knots_the_file_s_decimals_tie_read_as_a_step(tmp_path, good):
    # the fit keeps knots 1e-9 apart; written to 6 decimals two of them can share an x
    doc = json.loads(json.dumps(good))
    c = calibration(doc)
    c["x"][2] = c["x"][1]
    mw = read_weights(written(tmp_path, doc)).modes["open"]
    at = c["x"][1]
    assert mw.confidence(at, "plain") == c["y"][2]
    assert mw.confidence(at - 1e-9, "plain") <= c["y"][1] + 1e-9 <= mw.confidence(at, "plain")


def test_the_overall_calibration_is_checked_too(tmp_path, good):
    doc = json.loads(json.dumps(good))
    doc["modes"]["closed"]["calibration"] = [0.1, 0.2]
    assert "modes.closed.calibration: must be an object, got list" in refused(written(tmp_path, doc))
    del doc["modes"]["closed"]["calibration"]
    assert "modes.closed.calibration: must be an object" in refused(written(tmp_path, doc))


@pytest.mark.parametrize("change, said", [
    (lambda d: d.__setitem__("background", []), "background: must be an object"),
    (lambda d: d["background"].__setitem__("tokens", ["thanks"]), "background.tokens: must be an object"),
    (lambda d: d["background"]["tokens"].__setitem__("thanks", "low"), "background.tokens.thanks: must be a number in (0, 1]"),
    (lambda d: d["background"].__setitem__("messages", -1), "background.messages: must be a count"),
    (lambda d: d["background"]["absent"].__setitem__("klingon", 0.5), "background.absent: has unknown kind 'klingon'"),
    (lambda d: d.__setitem__("modes", []), "modes: must be an object"),
    (lambda d: d["modes"].__setitem__("open", 3), "modes.open: must be an object"),
    (lambda d: d.__setitem__("fit", "dev"), "fit: must be an object"),
    (lambda d: d.__setitem__("format", "interleave-local-1"), "format: must be"),
])
def test_a_malformed_section_is_refused(tmp_path, good, change, said):
    doc = json.loads(json.dumps(good))
    change(doc)
    assert said in refused(written(tmp_path, doc))


def test_a_document_that_is_no_object_is_refused(tmp_path):
    assert "must be an object, got list" in refused(written(tmp_path, [1, 2]))


@pytest.fixture
def broken_install(tmp_path, monkeypatch, good):
    """The package's weights resource pointed at a package of the test's own whose weights file has
    a NaN weight: what ``route`` meets when the installed file is damaged."""
    name = "damaged_" + "".join(ch if ch.isalnum() else "_" for ch in tmp_path.name)  # one per test: imported once
    package = tmp_path / "site" / name
    (package / "data" / "local").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    doc = json.loads(json.dumps(good))
    doc["modes"]["closed"]["weights"][FIRST] = math.nan
    path = written(package / "data" / "local", doc)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(local, "WEIGHTS_RESOURCE", (name, "data/local/weights.json"))
    shipped_weights.cache_clear()
    yield path
    shipped_weights.cache_clear()


@pytest.mark.parametrize("argv", [["--policy", "local"], ["--policy", "hybrid", "--threshold", "0.9", "--dry-run"]])
def test_route_with_a_damaged_installed_file_exits_2_naming_it(tmp_path, broken_install, capsys, argv):
    data = write_data(tmp_path / "data")
    code, out, err = run_cli(capsys, "route", data, "--mode", "closed", *argv)
    assert code == 2 and "internal error" not in err
    assert err.strip().splitlines() == [
        f"error: {broken_install}: modes.closed.weights.{FIRST}: NaN is not a JSON number (NaN and Infinity are refused)"]
    assert not (data / "predictions").exists() or not any((data / "predictions").glob("*.jsonl"))
