"""A run of the ``local`` weights scored on data their fit read is marked in-sample: in the score
document, the tables, ``compare`` and one warning line (docs/score.md#in-sample)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from interleave_bench.generate.runner import generate_offline
from interleave_bench.io import read_json
from interleave_bench.irc import import_irc
from interleave_bench.route.local import shipped_weights
from interleave_bench.route.local_sample import corpus_read, fit_corpora, fit_sample
from interleave_bench.sgd import import_sgd

from _cli_util import run_cli

TESTS = Path(__file__).parent
IRC, SGD = TESTS / "data" / "irc", TESTS / "data" / "sgd"
WARNING = "warning: in-sample: scored on data the local weights were fitted on"

# --- what the fit read, matched to a manifest ---------------------------------------------------------------

#: a fit record as scripts/fit_local.py writes one (its corpora, as the shipped file's hold them)
FIT = {
    "split": "dev",
    "corpora": {
        "offline": {"sessions": 240, "data": "generated", "dataset": "v0", "seed": 1, "generator": 2},
        "sgd": {"sessions": 1262, "sessions_sha256": "sha256:aaa"},
        "irc": {"sessions": 10, "sessions_sha256": "sha256:bbb"},
    },
}


def manifest(writer: str, sha: str = "sha256:other", seed: int | None = None, **options) -> dict:
    return {"writer": writer, "seed": seed, "options": options, "provenance": {"sessions_sha256": sha}}


def test_the_fit_s_corpora_are_the_ones_it_can_tell():
    assert set(fit_corpora()) == set(shipped_weights().fit["corpora"]) == set(FIT["corpora"])
    script = (TESTS.parent / "scripts" / "fit_local.py").read_text(encoding="utf-8")
    assert 'IMPORTERS = {"irc": import_irc, "sgd": import_sgd}' in script and 'Corpus("offline"' in script


@pytest.mark.parametrize("data, read", [
    (manifest(fit_corpora()["irc"]), "irc"),  # an import listing no splits (an older one): may hold the fit's
    (manifest(fit_corpora()["irc"], corpus_splits=["dev"]), "irc"),
    (manifest(fit_corpora()["irc"], corpus_splits=["dev", "test"]), "irc"),
    (manifest(fit_corpora()["irc"], corpus_splits=["test"]), None),  # the test logs: never read by the fit
    (manifest(fit_corpora()["sgd"], corpus_splits=["dev"]), "sgd"),
    (manifest(fit_corpora()["sgd"], corpus_splits=["train", "dev"]), "sgd"),
    (manifest(fit_corpora()["sgd"], corpus_splits=["train"]), None),  # SGD's train, imported as dev: unseen
    (manifest(fit_corpora()["sgd"]), "sgd"),
    (manifest("templates", seed=1, config={"dataset": "v0", "seed": 1}), "offline"),
    (manifest("templates", seed=0, config={"dataset": "v0", "seed": 0}), None),  # the demo's seed
    (manifest("templates", seed=1, config={"dataset": "v1", "seed": 1}), None),  # v1 words its messages otherwise
    (manifest("model:some-model", seed=1, config={"dataset": "v0", "seed": 1}), None),
    (manifest("someone-else", sha="sha256:bbb"), "irc"),  # the very file the fit read, whoever says they wrote it
    ({"writer": fit_corpora()["irc"]}, "irc"),
    ({}, None),
])
def test_a_manifest_is_matched_to_the_corpus_the_fit_read(data, read):
    assert corpus_read(data, FIT) == read


def test_offline_data_the_fit_was_given_is_matched_by_its_file_alone():
    fit = {**FIT, "corpora": {"offline": {"data": "given", "sessions_sha256": "sha256:ccc"}}}
    assert corpus_read(manifest("templates", seed=1, config={"dataset": "v0"}), fit) is None
    assert corpus_read(manifest("templates", sha="sha256:ccc"), fit) == "offline"


def test_the_shipped_fit_reads_the_imports_of_its_corpora(tmp_path):
    import_irc(IRC, tmp_path / "irc")
    import_sgd(SGD, tmp_path / "sgd")
    irc = fit_sample(tmp_path / "irc" / "sessions.jsonl", "dev")
    assert (irc.corpus, irc.split, irc.seed, irc.weights) == ("irc", "dev", None, shipped_weights().fingerprint())
    assert fit_sample(tmp_path / "sgd" / "sessions.jsonl", "all").corpus == "sgd"
    assert fit_sample(tmp_path / "sgd" / "sessions.jsonl", "test") is None  # the fit never reads test
    shutil.copytree(IRC / "dev", tmp_path / "corpus" / "test")  # logs of the corpus's test split, as it holds them
    import_irc(tmp_path / "corpus", tmp_path / "irc-test")
    assert fit_sample(tmp_path / "irc-test" / "sessions.jsonl", "all") is None
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "sessions.jsonl").write_bytes((tmp_path / "irc" / "sessions.jsonl").read_bytes())
    assert fit_sample(tmp_path / "bare" / "sessions.jsonl", "dev") is None  # no manifest: not recognised
    (tmp_path / "bare" / "manifest.json").write_text("{broken", encoding="utf-8")
    assert fit_sample(tmp_path / "bare" / "sessions.jsonl", "dev") is None


# --- the score, the tables, compare ------------------------------------------------------------------------


def routed(capsys, data: Path, *policies: str, mode: str = "open") -> Path:
    for policy in policies:
        code, _, err = run_cli(capsys, "route", data, "--mode", mode, "--policy", policy, "--split", "all")
        assert code == 0, err
    return data / "predictions"


def score(capsys, data: Path, *argv) -> tuple[str, str, dict[str, dict]]:
    code, out, err = run_cli(capsys, "score", data, data / "predictions", "--bootstrap", "0", *argv)
    assert code == 0, err
    docs = {p.name.split(".")[0]: json.loads(p.read_text(encoding="utf-8"))
            for p in (data / "predictions").glob("*.score.json")}
    return out, err, docs


def test_local_on_the_irc_logs_it_was_fitted_on_is_marked(tmp_path, capsys):
    data = tmp_path / "irc"
    import_irc(IRC, data)
    routed(capsys, data, "local", "bm25")
    out, err, docs = score(capsys, data)
    mark = {"corpus": "irc", "split": "dev", "seed": None, "weights": shipped_weights().fingerprint()}
    assert docs["open-local"]["in_sample"] == mark and docs["open-bm25"]["in_sample"] is None
    rows = [line for line in out.splitlines() if line.startswith("| open-")]
    assert rows[0].startswith("| open-bm25 | open |") and rows[1].startswith("| open-local (in-sample) | open |")
    assert "(in-sample) scored on data the local weights were fitted on: open-local (the irc dev sessions)" in out
    assert [line for line in err.splitlines() if "in-sample" in line] == [
        f"{WARNING}: open-local (the irc dev sessions); accuracy and calibration there are in-sample, not figures "
        "for chat the fit never saw (docs/score.md#in-sample)"]

    code, out, err = run_cli(capsys, "compare", data, data / "predictions" / "open-bm25.jsonl",
                             data / "predictions" / "open-local.jsonl", "--bootstrap", "0", "--show", "0")
    assert code == 0
    assert out.startswith("compare: A = open-bm25 (open) vs B = open-local (in-sample) (open)")
    assert WARNING in err
    code, out, _ = run_cli(capsys, "compare", data, data / "predictions" / "open-bm25.jsonl",
                           data / "predictions" / "open-local.jsonl", "--bootstrap", "0", "--json")
    doc = json.loads(out)
    assert doc["a"]["in_sample"] is None and doc["b"]["in_sample"] == mark


def test_local_on_the_offline_writer_s_fit_seed_is_marked_and_other_seeds_are_not(tmp_path, capsys):
    for seed in (1, 0):
        data = tmp_path / f"seed{seed}"
        generate_offline(5, data, seed=seed)
        routed(capsys, data, "local", mode="closed")
        out, err, docs = score(capsys, data, "--split", "all")
        if seed == 1:
            assert docs["closed-local"]["in_sample"]["corpus"] == "offline"
            assert docs["closed-local"]["in_sample"]["seed"] == 1
            assert "closed-local (in-sample)" in out and "the offline dev sessions of seed 1" in err
        else:
            assert docs["closed-local"]["in_sample"] is None
            assert "in-sample" not in out + err
    # the test split of the fit's seed is no part of the fit
    out, err, _ = score(capsys, tmp_path / "seed1", "--split", "test")
    assert "in-sample" not in out + err


def test_a_run_is_matched_by_the_weights_its_record_names(tmp_path, capsys):
    data = tmp_path / "irc"
    import_irc(IRC, data)
    preds = routed(capsys, data, "local")
    record = preds / "open-local.run.json"
    doc = json.loads(record.read_text(encoding="utf-8"))
    # routed with other weights (a refit): which data their fit read is not known here
    doc["options"]["local_weights"] = "sha256:" + "0" * 64
    record.write_text(json.dumps(doc), encoding="utf-8")
    assert score(capsys, data)[2]["open-local"]["in_sample"] is None
    # no record: the rows say local decided them
    record.unlink()
    assert score(capsys, data)[2]["open-local"]["in_sample"]["corpus"] == "irc"


# --- your own router built on local ----------------------------------------------------------------------

#: routers of your own, run by ``--router own_routers:<Class>``: those holding local decide with the shipped weights
OWN_ROUTERS = '''
from interleave_bench.route.bm25 import Bm25Router
from interleave_bench.route.local import LocalRouter


class Wrap:  # holds local privately, as the report's wrapper did
    policy = "wraplocal"

    def __init__(self):
        self._inner = LocalRouter()

    async def route(self, view):
        return await self._inner.route(view)


class Fast:  # holds local in a public attribute
    policy = "fastlocal"

    def __init__(self):
        self.fast = LocalRouter()

    async def route(self, view):
        return await self.fast.route(view)


class Sub(LocalRouter):
    policy = "sublocal"


class Box:
    pass


def box(**held):
    b = Box()
    b.__dict__.update(held)
    return b


class InList:  # local in a list attribute
    policy = "listlocal"

    def __init__(self):
        self.routers = [Bm25Router(), LocalRouter()]

    async def route(self, view):
        return await self.routers[1].route(view)


class TwoDown:  # local in an object the router holds
    policy = "deeplocal"

    def __init__(self):
        self.box = box(r=LocalRouter())

    async def route(self, view):
        return await self.box.r.route(view)


class InClass:  # local as a class attribute
    policy = "classlocal"
    inner = LocalRouter()

    async def route(self, view):
        return await self.inner.route(view)


class Bound:  # local's bound method
    policy = "boundlocal"

    def __init__(self):
        self._decide = LocalRouter().route

    async def route(self, view):
        return await self._decide(view)


class Bm25List:  # a list of routers, none of them local
    policy = "bm25list"

    def __init__(self):
        self.routers = [Bm25Router()]

    async def route(self, view):
        return await self.routers[0].route(view)


class Cycle:  # plain objects that hold each other, and no local
    policy = "cycle"

    def __init__(self):
        a, b = box(), box()
        a.other, b.other, a.me, b.routers = b, a, self, {"bm25": Bm25Router()}
        self.a = a

    async def route(self, view):
        return await self.a.other.routers["bm25"].route(view)


class Bm25Wrap:  # holds a router, but not local
    policy = "bm25wrap"

    def __init__(self):
        self._inner = Bm25Router()

    async def route(self, view):
        return await self._inner.route(view)
'''


def test_your_own_router_built_on_local_is_marked_on_the_data_its_weights_were_fitted_on(tmp_path, capsys,
                                                                                         monkeypatch):
    from _route_util import module_at

    data = tmp_path / "seed1"
    generate_offline(5, data, seed=1)
    with module_at(tmp_path / "mods", "own_routers", OWN_ROUTERS, monkeypatch):
        for cls in ("Wrap", "Fast", "Sub", "Bm25Wrap"):
            code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--split", "dev",
                                   "--router", f"own_routers:{cls}")
            assert code == 0, err
    records = {p.name.split(".")[0]: read_json(p) for p in (data / "predictions").glob("*.run.json")}
    weights = shipped_weights().fingerprint()
    assert {name: r["options"].get("local_weights") for name, r in records.items()} == {
        "closed-wraplocal": weights, "closed-fastlocal": weights, "closed-sublocal": weights,
        "closed-bm25wrap": None}
    out, err, docs = score(capsys, data, "--split", "dev")
    for name in ("closed-wraplocal", "closed-fastlocal", "closed-sublocal"):
        assert docs[name]["in_sample"] == {"corpus": "offline", "split": "dev", "seed": 1, "weights": weights}
        assert f"| {name} (in-sample) | closed |" in out and f"{name} (the offline dev sessions of seed 1)" in err
    assert docs["closed-bm25wrap"]["in_sample"] is None
    assert "closed-bm25wrap (in-sample)" not in out + err and "| closed-bm25wrap | closed |" in out


def test_your_own_router_holding_local_further_down_is_marked_too(tmp_path, capsys, monkeypatch):
    # in a list, two levels down, as a class attribute, as a bound method; none in a list or a cycle
    from _route_util import module_at

    data = tmp_path / "seed1"
    generate_offline(5, data, seed=1)
    held = ("InList", "TwoDown", "InClass", "Bound")
    with module_at(tmp_path / "mods", "own_routers", OWN_ROUTERS, monkeypatch):
        for cls in (*held, "Bm25List", "Cycle"):
            code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--split", "dev",
                                   "--router", f"own_routers:{cls}")
            assert code == 0, err
    records = {p.name.split(".")[0]: read_json(p) for p in (data / "predictions").glob("*.run.json")}
    weights = shipped_weights().fingerprint()
    marked = ("closed-listlocal", "closed-deeplocal", "closed-classlocal", "closed-boundlocal")
    assert {name: r["options"].get("local_weights") for name, r in records.items()} == {
        **{name: weights for name in marked}, "closed-bm25list": None, "closed-cycle": None}
    out, err, docs = score(capsys, data, "--split", "dev")
    for name in marked:
        assert docs[name]["in_sample"] == {"corpus": "offline", "split": "dev", "seed": 1, "weights": weights}
        assert f"| {name} (in-sample) | closed |" in out
    for name in ("closed-bm25list", "closed-cycle"):
        assert docs[name]["in_sample"] is None
        assert f"{name} (in-sample)" not in out + err and f"| {name} | closed |" in out


def test_the_search_for_local_is_bounded():
    from types import SimpleNamespace as Obj

    from interleave_bench.route.local import LocalRouter
    from interleave_bench.route.local_sample import SEARCH_DEPTH, SEARCH_ITEMS, local_weights_of

    weights = LocalRouter().weights.fingerprint()
    assert local_weights_of(Obj(by_mode={"closed": Obj(fast=LocalRouter())})) == weights
    # a cycle ends; a dict holding itself too
    a, b = Obj(), Obj()
    a.b, b.a, b.d = b, a, {}
    b.d["self"] = b.d
    assert local_weights_of(a) is None
    # deeper than SEARCH_DEPTH, or past SEARCH_ITEMS items of a container: not found
    deep = LocalRouter()
    for _ in range(SEARCH_DEPTH):
        deep = Obj(x=deep)
    assert local_weights_of(deep) == weights and local_weights_of(Obj(x=deep)) is None
    assert local_weights_of(Obj(many=[Obj() for _ in range(SEARCH_ITEMS)] + [LocalRouter()])) is None
    assert local_weights_of(Obj(many=[Obj() for _ in range(SEARCH_ITEMS - 1)] + [LocalRouter()])) == weights
    # a wide tree is looked at no further than SEARCH_OBJECTS objects, and the search ends
    wide = Obj(kids=[Obj(kids=[Obj(kids=[Obj() for _ in range(SEARCH_ITEMS)]) for _ in range(SEARCH_ITEMS)])
                     for _ in range(SEARCH_ITEMS)])
    assert local_weights_of(wide) is None
    # made inside route() or held in a module's global: not seen before the run
    assert local_weights_of(Obj(route=lambda view: LocalRouter().route(view))) is None


def test_local_in_a_deque_or_a_partial_is_found():
    """A fourth hostile trial's forms: ``deque([LocalRouter()])``, ``partial(LocalRouter().route)``."""
    import collections
    import functools
    from types import SimpleNamespace as Obj

    from interleave_bench.route.local import LocalRouter
    from interleave_bench.route.local_sample import local_weights_of

    weights = LocalRouter().weights.fingerprint()
    assert local_weights_of(Obj(rs=collections.deque([LocalRouter()]))) == weights
    assert local_weights_of(Obj(f=functools.partial(LocalRouter().route))) == weights
    assert local_weights_of(Obj(f=functools.partial(print, "x"), rs=collections.deque([1]))) is None
