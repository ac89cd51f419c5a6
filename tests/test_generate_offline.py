"""Offline generation: valid data, the properties of the template writer, splits, resume, the CLI."""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict

import pytest

from interleave_bench.cli import main
from interleave_bench.errors import UsageError
from interleave_bench.generate import GenerateConfig, generate, generate_offline, packs
from interleave_bench.generate.leak import leak_hits
from interleave_bench.generate.offline_writer import SHORT_FORM_P, stated_label, takes_short_form, write_offline
from interleave_bench.generate.plan import PlanOptions, derive_seed, draw_shape, plan_session
from interleave_bench.generate.reader import RuleReader, content_words
from interleave_bench.generate.runner import WORK_FILE
from interleave_bench.generate.text import contains
from interleave_bench.generate.threads import offline_threads
from interleave_bench.io import read_manifest, read_sessions
from interleave_bench.fingerprints import sha256_file
from interleave_bench.route.text import seems_to_go_on
from interleave_bench.schema import Thread

N_SESSIONS = 40
SEED = 3
#: "no single phrasing covers more than a few percent of the messages of its style": every style has
#: 25 or more frames drawn uniformly (an expected top share of about 4%); 7% leaves room for chance
MAX_FRAME_SHARE = 0.07
#: explicit messages may carry their thread's full title in at most this share (people rarely do)
MAX_TITLE_SHARE = 0.10
#: the independent reading disputes about as many messages as a model's reading does (13.6%)
AMBIGUOUS_RANGE = (0.07, 0.22)
#: sessions rendered to measure phrasing shares (about 400 one-offs per language, the rarest style)
FRAME_SAMPLE = 400


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("offline")
    path = generate_offline(N_SESSIONS, out, seed=SEED, langs=("en", "zh"))
    sessions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return path, sessions


def rebuild(index: int, lang: str, seed: int = SEED):
    """The offline pipeline of one session, step by step (with the writer's frame ids)."""
    shape = draw_shape(derive_seed(seed, index, "shape"), PlanOptions())
    ts = offline_threads(shape, lang, random.Random(derive_seed(seed, index, "threads")))
    rows = plan_session(ts.threads, shape.n_turns, derive_seed(seed, index, "plan"))
    written = write_offline(rows, ts, lang, random.Random(derive_seed(seed, index, "write")))
    return ts, rows, written


def test_output_is_valid_and_matches_the_manifest(data, capsys):
    path, sessions = data
    assert len(read_sessions(path)) == N_SESSIONS  # schema and cross-field checks
    assert main(["validate", str(path), str(path.parent / "manifest.json")]) == 0
    m = read_manifest(path.parent / "manifest.json")
    assert m.version == "interleave-v0" and m.writer == "templates" and m.model is None and m.seed == SEED
    assert m.counts.sessions == N_SESSIONS and m.counts.failed == 0 and m.failed == []
    assert m.counts.messages == sum(len(s["turns"]) for s in sessions)
    assert m.counts.ambiguous == sum(t["ambiguous"] for s in sessions for t in s["turns"])
    assert m.counts.leaks == sum("leak" in t["tags"] for s in sessions for t in s["turns"])
    assert m.provenance["sessions_sha256"] == sha256_file(path)
    assert m.options["config"]["plan"]["oneoff_p"] == 0.05 and m.options["config"]["seed"] == SEED
    assert m.usage.calls == 0
    assert not (path.parent / WORK_FILE).exists()


def test_ids_languages_and_splits(data):
    _, sessions = data
    for k, s in enumerate(sessions):
        lang = ("en", "zh")[k % 2]
        assert s["session_id"] == f"{lang}-{k + 1:04d}" and s["lang"] == lang
        assert s["split"] == ("test" if k % 5 == 4 else "dev")
        assert s["version"] == "interleave-v0" and s["persona"]
        assert 40 <= len(s["turns"]) <= 60 and 3 <= len(s["threads"]) <= 6
        domains = Counter(t["domain"] for t in s["threads"])
        twins = [t for t in s["threads"] if "twinOf" in t]
        assert len(twins) == sum(c - 1 for c in domains.values()) <= 1
        for t in twins:
            orig = next(x for x in s["threads"] if x["id"] == t["twinOf"])
            assert orig["domain"] == t["domain"] and orig["title"] != t["title"]
        for th in s["threads"]:
            assert len(th["facts"]) == 3 and all("update" in f for f in th["facts"]) and len(th["constraints"]) >= 2
    assert {s["split"] for s in sessions} == {"dev", "test"}
    assert 0 < sum(1 for s in sessions if any("twinOf" in t for t in s["threads"])) < N_SESSIONS


def test_the_file_is_the_pipeline_run_step_by_step(data):
    _, sessions = data
    for k in (0, 1, 7):
        _, rows, written = rebuild(k, sessions[k]["lang"])
        assert [w.text for w in written] == [t["text"] for t in sessions[k]["turns"]]
        assert [r.action for r in rows] == [t["gold"]["action"] for t in sessions[k]["turns"]]


def test_vague_messages_name_neither_title_nor_distinctive_words(data):
    _, sessions = data
    checked = 0
    for k, s in enumerate(sessions):
        ts, rows, _ = rebuild(k, s["lang"])
        by_id = {t.id: t for t in ts.threads}
        for row, turn in zip(rows, s["turns"]):
            if turn["style"] not in ("pronoun", "implicit"):
                continue
            checked += 1
            thread = by_id[row.thread]
            assert not contains(turn["text"], thread.title, s["lang"]), turn["text"]
            # distinctive words may only appear inside the fact the message itself states
            assert leak_hits(turn["text"], row, thread, s["lang"], ts.keywords[row.thread],
                             allowed=stated_label(row, s["lang"])) == [], turn["text"]
            assert "leak" not in turn["tags"]
    assert checked > 500


def test_cue_and_explicit_and_fact_messages_carry_what_they_must(data):
    _, sessions = data
    n_cue = n_explicit = titled = 0
    for s in sessions:
        threads = {t["id"]: t for t in s["threads"]}
        for turn in s["turns"]:
            th = threads.get(turn["gold"]["thread"])
            if turn["style"] == "cue":
                n_cue += 1
                values = [v for f in th["facts"] for v in (f["value"], f["update"]) if v]
                assert any(contains(turn["text"], v, s["lang"]) for v in values), turn["text"]
                assert not contains(turn["text"], th["title"], s["lang"]), turn["text"]
            if turn["style"] == "explicit":
                # named as people do: rarely by the title, else by words of its own card
                n_explicit += 1
                titled += contains(turn["text"], th["title"], s["lang"])
                card = set(content_words(f"{th['title']} {th['goal']} {th['description']}", s["lang"]))
                assert card & set(content_words(turn["text"], s["lang"])), turn["text"]
            if "fact" in turn:
                f = next(f for f in th["facts"] if f["key"] == turn["fact"]["key"])
                value = f["update"] if turn["fact"]["kind"] == "update" else f["value"]
                assert contains(turn["text"], value, s["lang"]), turn["text"]
            if turn["style"] == "oneoff":
                assert all(not contains(turn["text"], t["title"], s["lang"]) for t in s["threads"])
    assert n_cue > 50
    assert 0 < titled / n_explicit <= MAX_TITLE_SHARE, (titled, n_explicit)


def test_variety_distinct_texts_and_phrasing_shares(data):
    _, sessions = data
    texts = [t["text"] for s in sessions for t in s["turns"]]
    assert len(set(texts)) >= 0.9 * len(texts)
    # phrasing shares need more messages than the data set above to be measured well
    frames: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for k in range(FRAME_SAMPLE):
        lang = ("en", "zh")[k % 2]
        _, rows, written = rebuild(k, lang, seed=77)
        for row, w in zip(rows, written):
            frames[(lang, row.style)][w.frame] += 1
    assert len(frames) == 10  # every style in both languages
    for (lang, style), c in frames.items():
        total = sum(c.values())
        top, n = c.most_common(1)[0]
        assert total >= 400 and n / total <= MAX_FRAME_SHARE, (lang, style, top, n, total)


def test_rule_reader_agrees_where_the_text_decides(data):
    _, sessions = data
    agree: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in sessions:
        for t in s["turns"]:
            a = agree[t["style"]]
            a[0] += not t["ambiguous"]
            a[1] += 1
            assert t["ambiguous"] == (t["judge"]["thread"] != (t["gold"]["thread"] or "none"))
            if t["judge"]["thread"] == "ambiguous":
                assert len(t["judge"]["candidates"]) >= 2
            else:
                assert "candidates" not in t["judge"]
    # a fact value decides the reading; "that one" may not, nor may the card words of an explicit
    # message where two cards share them (twins) or another card has them too, nor a general
    # question with a word some card holds ("miles" beside a cycling plan)
    assert agree["cue"][0] / agree["cue"][1] >= 0.97, agree["cue"]
    assert agree["oneoff"][0] / agree["oneoff"][1] >= 0.95, agree["oneoff"]
    assert agree["explicit"][0] / agree["explicit"][1] >= 0.88, agree["explicit"]
    total = sum(a[1] for a in agree.values())
    assert AMBIGUOUS_RANGE[0] <= sum(a[1] - a[0] for a in agree.values()) / total <= AMBIGUOUS_RANGE[1]


def test_packs_cover_the_plan_domains_in_every_language():
    for lang in packs.LANGS:
        t = packs.templates(lang)
        assert len(t.implicit) >= 30 and len(t.cue) >= 25 and len(t.oneoff_frames) >= 25
        for d in PlanOptions().domains:
            pack = packs.domain_pack(d, lang)
            assert len(pack.variants) >= 4 and len(pack.requests) >= 10
            for v in pack.variants:
                assert len(v.facts) >= 3 and all(len(s.values) >= 3 for s in v.facts)
                # generic phrasing never contains a variant's title or distinctive words
                generic = " ".join(t.vague + t.implicit + t.pronoun["continue"] + t.pronoun["move"] + t.tail
                                   + t.short["implicit"] + t.short["pronoun"])
                for w in (v.title, *v.keywords):
                    assert not contains(generic, w, lang), (lang, w)
                # a cue message carries a domain request and must not name its thread's title
                assert not any(contains(r, v.title, lang) for r in pack.requests), (lang, v.title)
    assert len(packs.domain_names()) >= 9


def test_short_forms_seem_to_go_on_and_read_as_continuing():
    # The point of a short form: the adaptive merge waits after it, and a reader who knows the
    # current thread still places it there.
    for lang in packs.LANGS:
        t = packs.templates(lang)
        a, b = Thread(id="t1", title="Alpha Plan", domain="x"), Thread(id="t2", title="Beta Plan", domain="x")
        for style in ("implicit", "pronoun"):
            assert len(set(t.short[style])) == len(t.short[style]) >= packs.MIN_SHORT_FORMS
            for text in t.short[style]:
                assert seems_to_go_on(text), (lang, text)
                reader = RuleReader([a, b], lang)
                reader.observe("t2"), reader.observe("t1")
                assert reader.read(text).thread == "t1", (lang, text)


def test_short_forms_only_where_nothing_must_be_carried(data):
    _, sessions = data
    eligible = short = 0
    for k, s in enumerate(sessions):
        T = packs.templates(s["lang"])
        forms = set(T.short["implicit"]) | set(T.short["pronoun"])
        _, rows, written = rebuild(k, s["lang"])
        for row, w in zip(rows, written):
            is_short = ":short:" in w.frame
            assert is_short == (w.text in forms), w
            if is_short:
                assert takes_short_form(row) and w.text in T.short[row.style], (row, w)
            eligible += takes_short_form(row)
            short += is_short
    # repeats within a session are drawn again, so the share runs a little under SHORT_FORM_P
    assert eligible > 400 and SHORT_FORM_P - 0.06 <= short / eligible <= SHORT_FORM_P + 0.04, (short, eligible)


def test_cross_clauses_mark_their_mention_as_a_reference():
    # The rule reader must not take the thread a message draws on for its subject.
    for lang in packs.LANGS:
        t = packs.templates(lang)
        a = Thread(id="t1", title="Alpha Plan" if lang == "en" else "甲计划", domain="x",
                   facts=[{"key": "k", "value": "VAL-111" if lang == "en" else "甲值111"}])
        b = Thread(id="t2", title="Beta Plan" if lang == "en" else "乙计划", domain="x",
                   facts=[{"key": "k", "value": "VAL-222" if lang == "en" else "乙值222"}])
        for clause in t.cross_named + t.cross_vague:
            text = t.implicit[0].format(vague=t.vague[0], topic=t.vague[1]) + clause.format(
                ref_title=b.title, ref_value=b.facts[0].value, ref_label="k")
            reader = RuleReader([a, b], lang)
            reader.observe("t2"), reader.observe("t1")  # t2 is the other recent thread
            assert reader.read(text).thread == "t1", text
            assert not any(contains(clause, m, lang) for m in t.lexicon.switch_markers), clause


def test_same_seed_same_bytes_other_seed_other_data(tmp_path):
    a = generate_offline(4, tmp_path / "a", seed=9)
    b = generate_offline(4, tmp_path / "b", seed=9)
    c = generate_offline(4, tmp_path / "c", seed=10)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_resume_extend_and_options_mismatch(tmp_path):
    ref = generate_offline(8, tmp_path / "ref", seed=2).read_bytes()
    out = tmp_path / "run"
    generate_offline(5, out, seed=2)
    cfg = GenerateConfig(seed=2)
    result = generate(8, out, config=cfg)
    assert result.resumed == 5
    assert (out / "sessions.jsonl").read_bytes() == ref
    with pytest.raises(UsageError, match="seed: 2 now 3"):
        generate_offline(8, out, seed=3)
    generate_offline(8, out, seed=3, overwrite=True)
    assert (out / "sessions.jsonl").read_bytes() != ref


class _Stop(Exception):
    pass


def _stop_after_three(ident, ok):
    """Stops a run once its third session (index 2) is written to the work file."""
    if ident.index == 2:
        raise _Stop


def test_stopped_run_resumes_to_the_same_bytes(tmp_path):
    ref = generate_offline(7, tmp_path / "ref", seed=4).read_bytes()
    out = tmp_path / "run"

    with pytest.raises(_Stop):
        generate(7, out, config=GenerateConfig(seed=4), after_session=_stop_after_three)
    work = (out / WORK_FILE).read_text(encoding="utf-8").splitlines()
    assert len(work) == 1 + 3 and not (out / "sessions.jsonl").exists()
    # a crash mid-write leaves half a line: it is cut off and that session is made again
    with open(out / WORK_FILE, "a", encoding="utf-8") as fh:
        fh.write('{"index": 3, "session": {"sess')
    result = generate(7, out, config=GenerateConfig(seed=4))
    assert result.resumed == 3
    assert (out / "sessions.jsonl").read_bytes() == ref
    assert not (out / WORK_FILE).exists()


def test_cli_offline_default_folder_and_output(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--offline", "--sessions", "3", "--langs", "zh"]) == 0
    out, err = capsys.readouterr()
    path = tmp_path / "data" / "interleave-v0-offline" / "sessions.jsonl"
    assert path.exists() and "wrote data/interleave-v0-offline/sessions.jsonl" in out
    assert "done: generate: 3 sessions" in err
    assert [s.session_id for s in read_sessions(path)] == ["zh-0001", "zh-0002", "zh-0003"]
    turns = [t for s in read_sessions(path) for t in s.turns]  # every message marked, over every message
    marked = sum(t.ambiguous for t in turns)
    assert f", {marked:,} ambiguous ({marked / len(turns):.1%} of messages), " in out  # not the ambiguous share
    # --plan changes the plan and is recorded; a rerun with other options is refused
    assert main(["generate", "--offline", "--sessions", "3", "--langs", "zh", "--out", "p", "--plan", "oneoff_p=0.5"]) == 0
    m = read_manifest(tmp_path / "p" / "manifest.json")
    assert m.options["config"]["plan"]["oneoff_p"] == 0.5
    oneoffs = sum(t.gold.action == "oneoff" for s in read_sessions(tmp_path / "p" / "sessions.jsonl") for t in s.turns)
    assert oneoffs > 30


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sessions", "0"], "--sessions must be at least 1"),
        # a typo'd count is refused before any plan is made (it once filled 24 GiB and was killed)
        (["--sessions", "9999999999"], "--sessions must be at most 1,000,000, got 9,999,999,999"),
        # a number no file holds is refused as it is read, naming the option
        (["--sessions", "99999999999999999999"], "argument --sessions: the integer 99999999999999999999 is outside 64 bits"),
        (["--seed", "18446744073709551616"], "argument --seed: the integer 18446744073709551616 is outside 64 bits"),
        (["--plan", "return_gap=18446744073709551616"],
         "--plan 'return_gap=18446744073709551616': return_gap: the integer 18446744073709551616 is outside 64 bits"),
        (["--plan", "continue_styles=implicit:nan,pronoun:1"], "continue_styles: weights must be finite, non-negative"),
        (["--plan", "move_styles=explicit:inf,cue:0,pronoun:0"], "move_styles: weights must be finite, non-negative"),
        (["--sessions", "many"], "argument --sessions: must be a whole number, got 'many'"),
        (["--langs", "en,fr"], "no templates or prompts for language 'fr'"),
        (["--dry-run"], "--offline and --dry-run exclude each other"),
        (["--model", "x"], "--offline uses no model"),
        (["--plan", "bogus=1"], "expected NAME=VALUE"),
        (["--plan", "cross_p=2"], "cross_p: must be between 0 and 1"),
        (["--dataset", "v9"], "invalid choice"),
        (["--plan", "domains=code,travel,home,study,cooking"], "no offline domain pack for 'cooking'"),
    ],
)
def test_cli_bad_options_one_line_exit_2(tmp_path, capsys, args, message):
    try:
        code = main(["generate", "--offline", "--out", str(tmp_path / "x"), *args])
    except SystemExit as exc:  # argparse-level errors
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


def test_cli_refuses_a_folder_of_other_options(tmp_path, capsys):
    out = str(tmp_path / "d")
    assert main(["generate", "--offline", "--sessions", "2", "--out", out]) == 0
    capsys.readouterr()
    assert main(["generate", "--offline", "--sessions", "2", "--out", out, "--seed", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "manifest.json: options.config" in err[0] and "--overwrite" in err[0]
    assert main(["generate", "--offline", "--sessions", "2", "--out", out, "--seed", "5", "--overwrite"]) == 0


def test_a_broken_habits_section_is_one_error_naming_file_and_field(tmp_path, monkeypatch):
    import shutil

    from interleave_bench.errors import InputError

    root = tmp_path / "offline"
    shutil.copytree(packs.OFFLINE_DIR, root)
    path = root / "templates" / "en.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["habits"]["typo_p"] = 1.5
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(packs, "OFFLINE_DIR", root)
    packs.templates.cache_clear()
    try:
        with pytest.raises(InputError, match="habits.typo_p: expected a chance between 0 and 1") as err:
            packs.templates("en")
        assert str(path) in str(err.value)
    finally:
        packs.templates.cache_clear()


def test_more_facts_a_thread_than_the_packs_hold_is_refused_offline_but_not_in_the_plan(tmp_path):
    """The offline writer (and the fake model) draw a thread's facts from its domain pack, whose
    variants hold at most ``packs.most_facts`` of them; a model writes as many as asked, so the
    plan itself takes more."""
    most = packs.most_facts(PlanOptions().domains)
    assert most == 4
    plan = PlanOptions.from_overrides([f"facts_per_thread={most + 1}"])  # a model run may ask for them
    with pytest.raises(UsageError, match=rf"--plan facts_per_thread: at most {most} with --offline: .* got {most + 1}"):
        generate_offline(2, tmp_path / "d", plan=plan)
    assert not (tmp_path / "d").exists()
    assert generate_offline(2, tmp_path / "e", plan=PlanOptions.from_overrides([f"facts_per_thread={most}"])).exists()


def test_fewer_sessions_than_the_folder_holds_is_refused(tmp_path, capsys):
    """A run asking for fewer sessions than the folder holds would write only the first ones and
    lose the rest: it is refused, finished or stopped, and the folder is left as it was."""
    out = tmp_path / "d"
    assert main(["generate", "--offline", "--sessions", "4", "--out", str(out)]) == 0
    before = (out / "sessions.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["generate", "--offline", "--sessions", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds 2 sessions of these options past the first 2" in err[0], err
    assert "--sessions 4 or more" in err[0] and "--overwrite" in err[0]
    assert (out / "sessions.jsonl").read_bytes() == before
    assert main(["generate", "--offline", "--sessions", "4", "--out", str(out)]) == 0
    assert (out / "sessions.jsonl").read_bytes() == before
    assert main(["generate", "--offline", "--sessions", "2", "--out", str(out), "--overwrite"]) == 0
    assert len((out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()) == 2

    # an unfinished run's work file counts too
    stopped = tmp_path / "s"

    with pytest.raises(_Stop):
        generate(5, stopped, config=GenerateConfig(seed=4), after_session=_stop_after_three)
    with pytest.raises(UsageError, match="holds 1 session of these options past the first 2"):
        generate(2, stopped, config=GenerateConfig(seed=4))
    assert len((stopped / WORK_FILE).read_text(encoding="utf-8").splitlines()) == 1 + 3



def _edit_lines(path, edit):
    """A JSONL file's lines, parsed, changed by ``edit`` (a function of their list) and written back."""
    objs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    edit(objs)
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs), encoding="utf-8")


def _set(key, value, session=False, k=1):
    """An edit setting ``key`` of line ``k`` (of its ``session`` with ``session``) to ``value``."""
    return lambda objs: (objs[k]["session"] if session else objs[k]).__setitem__(key, value)


@pytest.mark.parametrize("edit, message", [
    # -1 once wrote session 0 twice (13 sessions of 12, duplicate id, exit 0)
    (_set("index", -1), r":2: index: -1 is not a session index \(0 to 999,999\); delete the file to start over$"),
    # true was read as index 1
    (_set("index", True), ":2: index: expected an integer, got true; delete the file to start over$"),
    (_set("index", 1.0), ":2: index: expected an integer, got 1.0; delete the file"),
    (lambda objs: objs.append(objs[2]), r":5: index: session index 1 \(zh-0002\) is also on line 3; delete the file"),
    # a session that is not the one its index gives was taken as it was
    (_set("session_id", "en-0099", session=True),
     r":2: session.session_id: 'en-0099' is not the session_id of session index 0 \(that is 'en-0001'\)"),
    (_set("lang", "zh", session=True), r":2: session.lang: 'zh' is not the lang of session index 0"),
    (_set("split", "test", session=True), r":2: session.split: 'test' is not the split of session index 0"),
    (_set("version", "interleave-v1", session=True), r":2: session.version: 'interleave-v1' is not the version"),
    (_set("turns", [], session=True), ":2: session.turns: List should have at least 1 item"),
    (_set("session", "x"), r":2: session: expected a JSON object \(a session\); delete the file"),
], ids=["negative", "true", "float", "twice", "session_id", "lang", "split", "version", "turns", "session"])
def test_a_work_line_that_cannot_be_trusted_is_refused(tmp_path, capsys, edit, message):
    """A resumed run checks each line of the work file as strictly as it wrote it, so it never writes
    a data set its own ``validate`` refuses: a bad line is one line naming the file, line and field."""
    out = tmp_path / "run"
    with pytest.raises(_Stop):
        generate(6, out, config=GenerateConfig(seed=4), after_session=_stop_after_three)
    work = out / WORK_FILE
    _edit_lines(work, edit)
    before = work.read_bytes()
    capsys.readouterr()
    assert main(["generate", "--offline", "--sessions", "6", "--seed", "4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {work}:") and re.search(message, err[0]), err
    assert work.read_bytes() == before and not (out / "sessions.jsonl").exists()


@pytest.mark.parametrize("edit, message", [
    (_set("session_id", "zh-0001", k=0), r":1: session_id: 'zh-0001' is not the session_id of session index 0 \(that is 'en-0001'\)"),
    (lambda objs: objs.__setitem__(1, objs[0]), r":2: session_id: session index 0 \(en-0001\) is also on line 1"),
], ids=["session_id", "twice"])
def test_a_finished_line_that_is_not_its_sessions_is_refused(tmp_path, capsys, edit, message):
    """The sessions of a finished ``sessions.jsonl`` that a longer run keeps are checked the same way."""
    out = tmp_path / "d"
    assert main(["generate", "--offline", "--sessions", "3", "--out", str(out)]) == 0
    path = out / "sessions.jsonl"
    _edit_lines(path, edit)
    capsys.readouterr()
    assert main(["generate", "--offline", "--sessions", "4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}:") and re.search(message, err[0]), err
    assert err[0].endswith("; use --overwrite to replace it or --out for another folder")
