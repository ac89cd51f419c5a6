"""The IRC disentanglement corpus: import, open-only routing, scoring and export back to its formats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cli_util import run_cli
from interleave_bench.io import read_manifest, read_sessions
from interleave_bench.irc import import_irc
from interleave_bench.irc.corpus import UnionFind, log_pairs, read_session

HAND = Path(__file__).parent / "data" / "irc"
NAME = "2000-01-01_00.annotation.txt"


@pytest.fixture
def imported(tmp_path):
    out = tmp_path / "irc"
    import_irc(HAND, out)
    return out


def test_hand_checked_file_gives_its_connected_components(imported):
    [s] = read_sessions(imported / "sessions.jsonl")
    assert s.session_id == "irc-2000-01-01_00" and s.split == "dev" and s.lang == "en"
    # every annotated message once, in log order; context lines are not turns
    assert [t.model_extra["line"] for t in s.turns] == [3, 4, 5, 6, 7, 8, 9]
    assert [t.i for t in s.turns] == list(range(7))
    by_line = {t.model_extra["line"]: t.gold.thread for t in s.turns}
    components = {}
    for line, thread in by_line.items():
        components.setdefault(thread, set()).add(line)
    # checked by hand: 3-6-9 joined through context line 0, 4-7 through context line 1
    assert sorted(map(sorted, components.values())) == [[3, 6, 9], [4, 7], [5], [8]]
    assert s.thread_ids() == ["c1", "c2", "c3", "c4"]
    assert [t.gold.action for t in s.turns] == ["new", "new", "new", "switch", "switch", "new", "switch"]
    assert s.turns[0].text == "<dave> alice: boot the live cd and run grub-install"
    assert s.turns[2].text.startswith("=== eve") and s.turns[2].tags == ["system"]
    assert all(t.judge.thread == t.gold.thread and t.ambiguous is False for t in s.turns)
    assert s.turns[3].gold.model_extra["links"] == [3]
    extra = s.model_extra
    assert [c["line"] for c in extra["context"]] == [0, 1, 2]
    assert extra["context"][0]["text"] == "<alice> anyone know how to reinstall grub?"
    assert extra["source_file"] == NAME and extra["open_only"] is True
    m = read_manifest(imported / "manifest.json")
    assert m.writer == "irc-disentanglement" and m.counts.sessions == 1 and m.counts.messages == 7


def test_continue_when_the_previous_message_is_in_the_same_conversation(tmp_path):
    d = tmp_path / "test"
    d.mkdir()
    (d / "x.ascii.txt").write_text("[1:00] <a> one\n[1:00] <a> two\n[1:01] <b> three\n")
    (d / "x.annotation.txt").write_text("0 0 -\n0 1 -\n2 2 -\n")
    [pair] = log_pairs(d)
    s = read_session(pair)
    assert pair.split == "test" and s["context"] == []
    assert [t["gold"]["action"] for t in s["turns"]] == ["new", "continue", "new"]


def test_long_log_streams_in_one_pass(tmp_path):
    # 5,000 annotated messages in two long conversations: union-find, no pairwise comparisons
    d = tmp_path / "dev"
    d.mkdir()
    n = 5000
    (d / "long.ascii.txt").write_text("".join(f"[1:00] <u{k % 2}> message {k}\n" for k in range(n)))
    links = ["0 0 -", "1 1 -"] + [f"{k - 2} {k} -" for k in range(2, n)]
    (d / "long.annotation.txt").write_text("\n".join(links) + "\n")
    result = import_irc(d, tmp_path / "out")
    assert result.messages == n and result.conversations == 2


def test_union_find_joins_transitively():
    uf = UnionFind()
    uf.union(1, 2)
    uf.union(3, 4)
    uf.union(2, 4)
    assert uf.find(1) == uf.find(3) != uf.find(5)


@pytest.mark.parametrize("annotation, expect", [
    ("0 3\n", ":1: link: expected 'A B -'"),
    ("0 x -\n", ":1: B: expected a message number, got 'x'"),
    ("3 3 -\n0 99 -\n", ":2: B: message 99 is past the end of the log (10 lines)"),
])
def test_bad_annotation_is_one_line_naming_file_line_and_field(tmp_path, capsys, annotation, expect):
    d = tmp_path / "corpus" / "dev"
    shutil.copytree(HAND / "dev", d)
    (d / NAME).write_text(annotation)
    code, out, err = run_cli(capsys, "import", "irc", tmp_path / "corpus", "--out", tmp_path / "out")
    assert code == 2
    assert err.count("\n") == 1 and NAME + expect in err, err
    assert not (tmp_path / "out" / "sessions.jsonl").exists()


def test_folder_without_annotations_is_refused(tmp_path, capsys):
    (tmp_path / "corpus").mkdir()
    code, _, err = run_cli(capsys, "import", "irc", tmp_path / "corpus", "--out", tmp_path / "out")
    assert code == 2 and "no *.annotation.txt files" in err and err.count("\n") == 1


def test_open_only_data_refuses_closed_mode_and_runs_open(tmp_path, capsys, imported):
    code, _, err = run_cli(capsys, "route", imported, "--mode", "closed", "--policy", "stay")
    assert code == 2 and "open-only" in err and "--mode open" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "baselines", imported)
    assert code == 2 and "open-only" in err and err.count("\n") == 1
    assert not (imported / "predictions").exists() or not list((imported / "predictions").glob("closed-*"))

    code, out, err = run_cli(capsys, "baselines", imported, "--mode", "open")
    assert code == 0, err
    preds = sorted((imported / "predictions").glob("open-*.jsonl"))
    assert [p.stem for p in preds] == ["open-always_new", "open-bm25", "open-oracle", "open-single"]
    code, out, err = run_cli(capsys, "score", imported, *preds, "--bootstrap", 40)
    assert code == 0, err
    assert "| 1-1 |" in out and "Shen F1" in out
    oracle = json.loads((imported / "predictions" / "open-oracle.score.json").read_text())
    assert oracle["metrics"]["accuracy"] == 1.0
    assert set(oracle["cluster"]["metrics"].values()) == {1.0}
    assert oracle["cluster"]["counts"] == {"messages": 7, "gold_conversations": 4, "predicted_conversations": 4,
                                           "gold_multi": 2, "predicted_multi": 2}
    single = json.loads((imported / "predictions" / "open-single.score.json").read_text())
    # one topic for all seven: 1-1 covers the largest conversation (3 of 7)
    assert single["cluster"]["metrics"]["one_to_one"] == round(3 / 7, 4)
    assert single["cluster"]["metrics"]["exact_precision"] == 0.0


def test_export_irc_writes_the_corpus_formats(tmp_path, capsys, imported):
    assert run_cli(capsys, "baselines", imported, "--mode", "open")[0] == 0
    out = tmp_path / "export"
    code, stdout, err = run_cli(capsys, "export-irc", imported / "predictions" / "open-oracle.jsonl", "--out", out)
    assert code == 0, err
    assert (out / "clusters.txt").read_text().splitlines() == [
        f"{NAME}:3 6 9", f"{NAME}:4 7", f"{NAME}:5", f"{NAME}:8"]
    assert (out / "links.txt").read_text().splitlines() == [
        f"{NAME}:3 3 -", f"{NAME}:6 3 -", f"{NAME}:9 6 -", f"{NAME}:4 4 -", f"{NAME}:7 4 -", f"{NAME}:5 5 -",
        f"{NAME}:8 8 -"]
    code, _, _ = run_cli(capsys, "export-irc", imported / "predictions" / "open-always_new.jsonl", "--out", out)
    assert code == 0
    assert len((out / "clusters.txt").read_text().splitlines()) == 7
    # a file of the user's under one of its names, or a data folder, is refused and left as it was
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "links.txt").write_text("my notes\n")
    code, _, err = run_cli(capsys, "export-irc", imported / "predictions" / "open-oracle.jsonl", "--out", mine)
    assert code == 2 and err == (f"error: export-irc: --out {mine / 'links.txt'} is already there and is not a file "
                                 "export-irc wrote: writing would replace it; choose another path (or remove that file)\n")
    assert (mine / "links.txt").read_text() == "my notes\n" and not (mine / "clusters.txt").exists()
    # one export to a folder at a time: with the links file's lock held elsewhere, neither file changes
    from _lock_util import Holder
    clusters = (out / "clusters.txt").read_text()
    with Holder(out / "links.txt") as h:
        code, _, err = run_cli(capsys, "export-irc", imported / "predictions" / "open-oracle.jsonl", "--out", out)
        assert code == 2 and f"another run is writing it (pid {h.proc.pid}: holder)" in err, err
    assert (out / "clusters.txt").read_text() == clusters and len(clusters.splitlines()) == 7
    before = sorted(p.name for p in imported.iterdir())
    code, _, err = run_cli(capsys, "export-irc", imported / "predictions" / "open-oracle.jsonl", "--out", imported)
    assert code == 2 and "holds a data set (sessions.jsonl)" in err and sorted(p.name for p in imported.iterdir()) == before


def test_export_irc_refuses_data_not_imported_from_the_corpus(tmp_path, capsys):
    from _score_util import many_sessions, oracle_rows, write_jsonl

    ss = many_sessions(2)
    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "data" / "predictions" / "open-oracle.jsonl", oracle_rows(ss, "open"))
    code, _, err = run_cli(capsys, "export-irc", pred, "--out", tmp_path / "x", "--data", data)
    assert code == 2 and "source_file" in err and err.count("\n") == 1


def test_export_irc_refuses_other_data_under_an_irc_run(tmp_path, capsys, imported):
    """An IRC run's predictions with --data naming another data set (none of the run's sessions in
    it): refused in one line; before, it wrote two empty files and exit 0."""
    from _score_util import many_sessions, write_jsonl

    assert run_cli(capsys, "baselines", imported, "--mode", "open")[0] == 0
    pred = imported / "predictions" / "open-oracle.jsonl"
    other = write_jsonl(tmp_path / "other" / "sessions.jsonl", many_sessions(2))
    code, _, err = run_cli(capsys, "export-irc", pred, "--out", tmp_path / "x", "--data", other)
    assert code == 2 and "the run routed other data" in err and err.count("\n") == 1
    assert not (tmp_path / "x" / "clusters.txt").exists()
    renamed = tmp_path / "renamed" / "sessions.jsonl"
    renamed.parent.mkdir()
    renamed.write_text((imported / "sessions.jsonl").read_text().replace('"session_id":"', '"session_id":"other-')
                       .replace('"session_id": "', '"session_id": "other-'), encoding="utf-8")
    code, _, err = run_cli(capsys, "export-irc", pred, "--out", tmp_path / "y", "--data", renamed)
    assert code == 2 and "the run routed other data" in err and err.count("\n") == 1


def test_hub_export_has_the_irc_config_with_the_corpus_licence_and_citation(tmp_path, capsys, imported):
    import pyarrow.parquet as pq

    from interleave_bench.hub.features import row_to_session
    from interleave_bench.schema import Session

    out = tmp_path / "interleavebench"
    code, stdout, err = run_cli(capsys, "export", "--irc", imported, "--out", out)
    assert code == 0, err
    rows = pq.read_table(out / "irc_ubuntu" / "dev-00000-of-00001.parquet").to_pylist()
    source = json.loads((imported / "sessions.jsonl").read_text().splitlines()[0])
    # the same session once parsed: context, log lines and links kept in the extra columns
    assert [Session.model_validate(row_to_session(r, "irc_ubuntu")) for r in rows] == [Session.model_validate(source)]
    card = (out / "README.md").read_text()
    head = card.split("---")[1]
    assert "- cc-by-4.0" in head and "config_name: irc_ubuntu" in head
    assert "Creative Commons Attribution 4.0" in card and "doi       = {10.18653/v1/P19-1374}" in card


def test_hub_export_refuses_other_sessions_as_irc(tmp_path, capsys):
    from _score_util import many_sessions, write_jsonl

    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", many_sessions(2))
    code, _, err = run_cli(capsys, "export", "--irc", data, "--out", tmp_path / "hub")
    assert code == 2 and "import irc" in err and err.count("\n") == 1


@pytest.mark.parametrize("importer", ["irc", "sgd"])
def test_an_import_replaces_its_own_data_but_refuses_another_data_set(tmp_path, capsys, importer):
    from interleave_bench.generate.runner import generate_offline

    source = HAND if importer == "irc" else Path(__file__).parent / "data" / "sgd"
    out = tmp_path / "corpus"
    assert run_cli(capsys, "import", importer, source, "--out", out)[0] == 0
    assert run_cli(capsys, "import", importer, source, "--out", out)[0] == 0  # its own data: rewritten in place
    other = generate_offline(2, tmp_path / "gen").parent  # a generated data set, with runs beside it perhaps
    nameless = tmp_path / "nameless"
    nameless.mkdir()
    (nameless / "sessions.jsonl").write_text((other / "sessions.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    for folder, what in ((other, "a data set written by 'templates'"),
                         (nameless, "a sessions.jsonl with no manifest.json (written by no importer)")):
        before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        code, _, err = run_cli(capsys, "import", importer, source, "--out", folder)
        assert code == 2 and err == (f"error: import {importer}: --out {folder} holds {what}: importing would replace "
                                     "it; choose another folder (or remove it)\n"), err
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_export_irc_given_a_sessions_file_as_the_run_says_so(imported, tmp_path, capsys):
    code, _, err = run_cli(capsys, "export-irc", imported / "sessions.jsonl", "--out", tmp_path / "x")
    assert code == 2 and err == (f"error: {imported / 'sessions.jsonl'}: a sessions file (lines with turns and threads), "
                                 "given as predictions: it is the data, given with --data (or found beside the run)\n")


@pytest.mark.parametrize("importer", ["irc", "sgd"])
def test_an_import_never_writes_into_its_corpus_nor_over_a_file(tmp_path, capsys, importer):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(HAND if importer == "irc" else Path(__file__).parent / "data" / "sgd", corpus)
    before = sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*"))
    split = sorted(p for p in corpus.iterdir() if p.is_dir())[0]
    for source, out, where in ((corpus, corpus / "dev", f"inside the corpus folder {corpus}"),
                               (corpus, corpus, "the corpus folder"), (split, split, "the corpus folder"),
                               (split, split / "data", f"inside the corpus folder {split}")):
        code, _, err = run_cli(capsys, "import", importer, source, "--out", out)
        assert code == 2 and err == (f"error: import {importer}: --out {out} is {where}: an import writes its data set "
                                     "apart from the corpus it reads; choose another folder\n"), err
    assert sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*")) == before
    a_file = tmp_path / "d" / "sessions.jsonl"
    a_file.parent.mkdir()
    a_file.write_text("{}\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "import", importer, corpus, "--out", a_file)
    assert code == 2 and err == (f"error: import {importer}: --out {a_file} is a file: --out names the data folder "
                                 "that sessions.jsonl and manifest.json are written into\n"), err
    assert a_file.read_text(encoding="utf-8") == "{}\n"


def test_export_irc_refuses_a_closed_mode_run_of_open_only_data(tmp_path, capsys, imported):
    assert run_cli(capsys, "baselines", imported, "--mode", "open")[0] == 0
    opened = imported / "predictions" / "open-oracle.jsonl"
    closed = imported / "predictions" / "closed-forged.jsonl"
    closed.write_text(opened.read_text().replace('"mode":"open"', '"mode":"closed"'))
    assert '"mode":"closed"' in closed.read_text()
    code, out, err = run_cli(capsys, "export-irc", closed, "--out", tmp_path / "x")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {imported / 'sessions.jsonl'}: session 'irc-2000-01-01_00' is open-only")
    assert "closed mode does not apply" in err and not (tmp_path / "x").exists()


@pytest.mark.parametrize("where", ["the corpus folder", "its split folder"])
def test_export_irc_refuses_the_corpus_folder_as_import_does(tmp_path, capsys, where):
    corpus = tmp_path / "corpus"
    shutil.copytree(HAND, corpus)
    data = tmp_path / "irc"
    import_irc(corpus, data)
    assert run_cli(capsys, "baselines", data, "--mode", "open")[0] == 0
    out = corpus if where == "the corpus folder" else corpus / "dev"
    before = sorted(p.name for p in out.iterdir())
    code, _, err = run_cli(capsys, "import", "irc", corpus, "--out", out)  # import's own refusal
    assert code == 2 and f"--out {out} is {'the corpus folder' if out == corpus else 'inside the corpus folder'}" in err
    code, _, err = run_cli(capsys, "export-irc", data / "predictions" / "open-oracle.jsonl", "--out", out)
    said = "the corpus folder" if out == corpus else f"inside the corpus folder {corpus}"
    assert code == 2 and err == (f"error: export-irc: --out {out} is {said}: export-irc writes clusters.txt and "
                                 "links.txt apart from the corpus the data was imported from; choose another folder\n")
    assert sorted(p.name for p in out.iterdir()) == before
