"""What names a secret (:func:`~interleave_bench.redaction.is_secret_name`): every decoration of a
secret word (a prefix, a number, a version, a plural, any case and separator) does; an ordinary
name (``model``, ``top_k``, ``monkey``, ``keyword``) does not; and a ``--router-arg`` so named
reaches no file a run or its score writes."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.redaction import (ABOUT_A_SECRET_WORDS, DATA_KEY_WORDS, REDACTED, SECRET_WORDS,
                                        SETTING_SECRET_WORDS, TOKEN_COUNT_WORDS, is_secret_name, is_secret_setting,
                                        name_words)
from _route_util import write_data
from test_secrets_given import _files_holding, _run

#: words put before or after a secret word: none of them makes the name one of something else
PREFIXES = ("openai", "my", "db", "user", "x", "amz", "client", "private", "hf", "router", "service", "ssh")
SUFFIXES = ("2", "v2", "prod", "old", "new", "backup", "main", "b", "x")
SEPARATORS = ("_", "-", ".")
#: ordinary names and words: no name made of them is a secret's
ORDINARY = ("model", "threshold", "top", "k", "monkey", "keyword", "keywords", "depth", "min", "score",
            "temperature", "max", "tokens", "sort", "key", "author", "tokenizer", "passage", "session", "id")


def test_the_word_lists_do_not_overlap():
    decorations = set(PREFIXES) | set(SUFFIXES)
    assert not decorations & (set(ABOUT_A_SECRET_WORDS) | set(DATA_KEY_WORDS) | set(TOKEN_COUNT_WORDS) | set(SECRET_WORDS))


@st.composite
def decorated(draw) -> str:
    """A secret word with decorations: words before, words or numbers after, a plural, any case."""
    word = draw(st.sampled_from(SECRET_WORDS))
    if draw(st.booleans()) and not word.endswith("s"):
        word += "s"
    words = draw(st.lists(st.sampled_from(PREFIXES), max_size=2)) + [word]
    words += draw(st.lists(st.sampled_from(SUFFIXES), max_size=2))
    style = draw(st.sampled_from(("lower", "upper", "title", "camel")))
    if style == "camel":  # a case change parts the words: openaiApiKey2
        return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    cased = [getattr(w, style)() for w in words]
    return "".join(w + (draw(st.sampled_from(SEPARATORS)) if i < len(cased) - 1 else "") for i, w in enumerate(cased))


@settings(max_examples=400, deadline=None)
@given(decorated())
def test_every_decoration_of_a_secret_word_names_a_secret(name):
    assert is_secret_name(name), (name, name_words(name))


@st.composite
def ordinary(draw) -> str:
    words = draw(st.lists(st.sampled_from(ORDINARY), min_size=1, max_size=3))
    # a key that is not the data's (after sort, say) is a secret's name: each becomes an ordinary
    # word (sort_key is ordinary, sort_key_key and key_sort are not)
    words = [w if w != "key" or (i and words[i - 1] in DATA_KEY_WORDS) else "keyword" for i, w in enumerate(words)]
    if "tokens" in words and not any(w in TOKEN_COUNT_WORDS for w in words[:words.index("tokens")]):
        words = ["max"] + words  # (tokens alone is; max_tokens is not)
    sep = draw(st.sampled_from(SEPARATORS + ("",))) if len(words) > 1 else ""
    if sep == "":
        return words[0] + "".join(w.title() for w in words[1:])
    name = sep.join(words)
    return draw(st.sampled_from((name, name.upper())))


@settings(max_examples=300, deadline=None)
@given(ordinary())
def test_an_ordinary_name_is_no_secrets(name):
    assert not is_secret_name(name), (name, name_words(name))


def test_whole_words_only():
    """A secret word inside another word says nothing: monkey, keyword(s), XAUTHORITY, author."""
    for name in ("monkey", "keyword", "keywords", "KEYWORDS", "XAUTHORITY", "GIT_AUTHOR_EMAIL", "tokenizer", "passage",
                 "bypass", "model", "threshold", "top_k", "min_score"):
        assert not is_secret_name(name), name
    assert name_words("openaiApiKey_2") == ["openai", "api", "key"]
    assert name_words("token_v2") == ["token", "v"]


#: router arguments with secret names (numbered, plural, run together) and key-shaped values
GIVEN = {"api_key_2": "Hunter22Hunter", "keys": "Orange7Tulip3", "apikey": "Zebra4Lamp9Quiet", "token_v2": "Maple5Stone8",
         "secrets": "Cobalt9River2", "passwd": "Violet3Anchor7", "auth": "Falcon6Meadow1", "bearer": "Quartz2Ember5",
         "credentials": "Harbor8Willow4", "private_key": "Cedar1Rocket6", "client_secret": "Nimbus7Pepper3"}

ANY_ROUTER = '''
class KR:
    policy = "kr"

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def route(self, view):
        return {"kind": "topic", "label": view.current} if view.current else {"kind": "new", "title": "work"}
'''


def test_no_file_the_run_writes_holds_a_secret_named_router_arg(tmp_path: Path):
    (tmp_path / "kr.py").write_text(ANY_ROUTER, encoding="utf-8")
    data = write_data(tmp_path / "data")
    argv = ["route", data, "--mode", "open", "--router", "kr:KR", "--out", tmp_path / "p.jsonl"]
    for name, value in GIVEN.items():
        argv += ["--router-arg", f"{name}={value}"]
    argv += ["--router-arg", "depth=2"]
    first = _run(argv, tmp_path)
    assert first.returncode == 0, first.stderr
    record = (tmp_path / "p.run.json").read_text(encoding="utf-8")
    assert all(f"{name}={REDACTED}" in record for name in GIVEN) and "depth=2" in record
    again = _run(argv, tmp_path)  # the same options resume: the record's redacted ones compare equal
    assert again.returncode == 0 and "other run" not in again.stderr, again.stderr
    scored = _run(["score", data, tmp_path / "p.jsonl", "--bootstrap", "0"], tmp_path)
    assert scored.returncode == 0, scored.stderr
    printed = first.stdout + first.stderr + again.stdout + again.stderr + scored.stdout + scored.stderr
    for value in GIVEN.values():
        assert _files_holding(tmp_path, value) == [] and value not in printed, value


# --- settings whose value is a secret whatever it looks like (is_secret_setting) -------------------


@given(st.sampled_from(SETTING_SECRET_WORDS + ("api_key", "secret_key", "private_key", "openaikey")),
       st.lists(st.sampled_from(PREFIXES), max_size=2), st.sampled_from(SEPARATORS + ("",)))
def test_a_setting_ending_in_a_secret_word_holds_a_secret(word, before, sep):
    """``db_password``, ``client.secret``, ``authtoken``: the last word says the value is the secret."""
    sep = sep or ("_" if "_" in word else "")  # (a word of two run together only where it is one: openaikey)
    name = sep.join(before + [word])
    assert is_secret_setting(name), name


@given(st.sampled_from([w for w in ORDINARY + ABOUT_A_SECRET_WORDS if w != "key"]),  # (secret_key is one)
       st.lists(st.sampled_from(SETTING_SECRET_WORDS), max_size=2))
def test_a_setting_about_a_secret_word_holds_none(last, before):
    """``token_budget``, ``password_file``, ``tokens``, ``key``: the last word names a count, a choice or a path."""
    name = "_".join(before + [last])
    assert not is_secret_setting(name), name


def test_a_key_equal_to_a_field_name_is_left_where_it_is_a_json_key():
    """A key the project sends is taken out of every text whatever its shape (``OPENAI_API_KEY``
    set to ``session_id`` for a local server), but not where it is a whole JSON key: a row keeps its
    ``session_id`` field, a record its ``messages`` count; every other place is redacted."""
    from interleave_bench.redaction import redact_secrets

    env = {"OPENAI_API_KEY": "session_id", "DEEPSEEK_API_KEY": "messages"}
    row = '{"session_id": "en-0001", "i": 0, "error": "no session_id for messages"}'
    assert json.loads(redact_secrets(row, env)) == {"session_id": "en-0001", "i": 0,
                                                    "error": f"no {REDACTED} for {REDACTED}"}
    record = '{\n  "counts": {\n    "messages" : 3\n  },\n  "note": "session_id"\n}'
    assert json.loads(redact_secrets(record, env)) == {"counts": {"messages": 3}, "note": REDACTED}
