"""A key given on the command line, not in the environment: a ``--router-arg`` named like one, and
a ``--router`` URL's token. Neither reaches a file (the run record, the rows, a score file) nor
anything printed, even when the router puts it in its own error; a rerun with it resumes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.redaction import REDACTED, add_url_secrets, is_secret_name, redact
from _route_util import write_data
from test_route_plugin import docs_server  # noqa: F401  (the fixture: the docs' HTTP router on loopback)

KEY = "abcdEFGH12345678zz"
TOKEN = "S3cretT0kenValue99"

#: a router that routes every message to the current topic, and fails, naming its key, on every fifth
KEY_ROUTER = '''
class KeyRouter:
    policy = "keyed"

    def __init__(self, api_key, depth=1):
        self.api_key = api_key
        self.calls = 0

    def route(self, view):
        self.calls += 1
        if self.calls % 5 == 0:
            raise RuntimeError(f"auth failed with key {self.api_key}")
        return {"kind": "topic", "label": view.current} if view.current else {"kind": "new", "title": "work"}
'''


def _run(args: list, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if KEY not in v and TOKEN not in v}
    return subprocess.run([sys.executable, "-m", "interleave_bench", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**env, "INTERLEAVE_NO_PROGRESS": "1"}, timeout=300)


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_a_router_arg_named_like_a_key_reaches_no_file_and_no_output(tmp_path):
    (tmp_path / "keyrouter.py").write_text(KEY_ROUTER, encoding="utf-8")
    data = write_data(tmp_path / "data")
    argv = ["route", data, "--mode", "open", "--router", "keyrouter:KeyRouter", "--router-arg", f"api_key={KEY}",
            "--router-arg", "depth=2", "--out", tmp_path / "k.jsonl"]
    first = _run(argv, tmp_path)
    assert "Traceback" not in first.stderr
    rows = (tmp_path / "k.jsonl").read_text(encoding="utf-8")
    assert '"pred":"ERROR"' in rows and f"auth failed with key {REDACTED}" in rows  # the router's own error, redacted
    record = (tmp_path / "k.run.json").read_text(encoding="utf-8")
    assert f"api_key={REDACTED}" in record and "depth=2" in record
    assert _files_holding(tmp_path, KEY) == [] and KEY not in first.stdout + first.stderr
    # the same command again resumes the file (the record holds the key redacted, and so compares)
    again = _run(argv, tmp_path)
    assert "other run" not in again.stderr and "options" not in again.stderr, again.stderr
    assert again.returncode == first.returncode
    assert (tmp_path / "k.jsonl").read_text(encoding="utf-8") == rows
    assert _files_holding(tmp_path, KEY) == [] and KEY not in again.stdout + again.stderr


def test_a_router_urls_token_reaches_no_file_and_no_output(tmp_path, docs_server):
    data = write_data(tmp_path / "data")
    argv = ["route", data, "--mode", "closed", "--router", f"{docs_server}?token={TOKEN}", "--out", tmp_path / "h.jsonl"]
    first = _run(argv, tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"?token={REDACTED}" in (tmp_path / "h.run.json").read_text(encoding="utf-8")
    assert _files_holding(tmp_path, TOKEN) == [] and TOKEN not in first.stdout + first.stderr
    again = _run(argv, tmp_path)
    assert again.returncode == 0 and "already done" in again.stderr, again.stderr
    assert _files_holding(tmp_path, TOKEN) == []
    score = _run(["score", data, tmp_path / "h.jsonl"], tmp_path)
    assert score.returncode == 0 and _files_holding(tmp_path, TOKEN) == []


@pytest.mark.parametrize("name, secret", [
    ("api_key", True), ("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("token", True), ("key", True),
    ("client-secret", True), ("db_password", True), ("access_key", True), ("auth", True), ("monkey", False),
    ("depth", False), ("tokens", True), ("keyword", False), ("sort_key", False), ("ROUTER_SORT_KEY", False),
    ("basic_auth", True), ("accessToken", True), ("apiKey", True), ("X-Amz-Signature", True), ("sig", True),
    ("openai_key", True), ("OpenAIKey", True), ("credential", True), ("userCredentials", True), ("pwd", True),
    ("DB_PWD", True), ("db.passwd", True), ("ssh_passphrase", True), ("primary_key", False), ("key_file", False),
    ("token_limit", False), ("auth_url", False), ("max_tokens", False), ("SSH_AUTH_SOCK", False),
    ("GIT_AUTHOR_EMAIL", False), ("XAUTHORITY", False), ("AWS_ACCESS_KEY_ID", False), ("hf", False),
])
def test_what_names_a_secret(name, secret):
    assert is_secret_name(name) is secret


def test_the_shells_working_folder_is_no_secret(monkeypatch):
    """``PWD`` reads as a password's name; its value, the working folder, stays in every path written."""
    from interleave_bench import redaction
    from interleave_bench.redaction import secret_values

    monkeypatch.setattr(redaction, "_GIVEN", set())
    folder = "/home/someone/projects/interleave-2"
    assert secret_values({"PWD": folder}) == [] and folder in secret_values({"DB_PWD": folder})


def test_a_urls_password_and_token_parameters_are_secrets_from_then_on(monkeypatch):
    from interleave_bench import redaction

    monkeypatch.setattr(redaction, "_GIVEN", set())
    add_url_secrets("https://me:pa55word-long@example.test/route?depth=3&sig=abcdefgh123&api_key=zyxwvut987"
                    "&token=Sec%2Fret%2BTok123&sort_key=session_id")
    assert redact("pa55word-long abcdefgh123 zyxwvut987 depth=3") == f"{REDACTED} {REDACTED} {REDACTED} depth=3"
    add_url_secrets("https://tok1234567890abc@example.test/route")  # a token as the user name
    assert redaction.redact_secrets("tok1234567890abc me") == f"{REDACTED} me"
    # a percent-encoded token, as written and as decoded; a parameter that is no secret untouched
    assert redaction.redact_secrets("Sec%2Fret%2BTok123 Sec/ret+Tok123 session_id") == f"{REDACTED} {REDACTED} session_id"


def test_a_router_arg_that_is_no_secret_leaves_the_data_alone(tmp_path):
    """``sort_key=session_id``: no key, so no word of the rows (``"session_id"``) is taken out."""
    (tmp_path / "sortrouter.py").write_text(
        "class SortRouter:\n    policy = 'sorted'\n\n    def __init__(self, sort_key='i'):\n        pass\n\n"
        "    def route(self, view):\n        return {'kind': 'topic', 'label': view.current} if view.current else "
        "{'kind': 'new', 'title': 'work'}\n", encoding="utf-8")
    data = write_data(tmp_path / "data")
    argv = ["route", data, "--mode", "open", "--router", "sortrouter:SortRouter", "--router-arg", "sort_key=session_id",
            "--out", tmp_path / "s.jsonl"]
    assert _run(argv, tmp_path).returncode == 0
    assert REDACTED not in (tmp_path / "s.jsonl").read_text(encoding="utf-8")
    assert _run(["score", data, tmp_path / "s.jsonl"], tmp_path).returncode == 0
    assert _run(argv, tmp_path).returncode == 0  # the rerun resumes its own file


def test_a_quoted_key_is_redacted_as_the_router_gets_it(tmp_path):
    (tmp_path / "keyrouter.py").write_text(KEY_ROUTER, encoding="utf-8")
    data = write_data(tmp_path / "data")
    argv = ["route", data, "--mode", "open", "--router", "keyrouter:KeyRouter", "--router-arg", f'api_key="{KEY}"',
            "--out", tmp_path / "q.jsonl"]
    done = _run(argv, tmp_path)
    assert f"auth failed with key {REDACTED}" in (tmp_path / "q.jsonl").read_text(encoding="utf-8")
    assert _files_holding(tmp_path, KEY) == [] and KEY not in done.stdout + done.stderr


@pytest.mark.parametrize("value, key", [
    ("abcdEFGH12345678zz", True), ("abc1234", False), ("database", False), ("session_id", False),
    ("postgres", False), ("correcthorsebatterystaple", True), ("two words9", False),
])
def test_what_value_is_a_key_to_keep_out(value, key):
    """A secret-named value is taken out of everything written only when it looks like a key: a
    word of the data ("database") would be taken out of the data itself."""
    from interleave_bench.redaction import looks_like_key

    assert looks_like_key(value) is key


def test_a_password_that_is_a_word_of_the_data_leaves_the_data_alone(tmp_path):
    """``DB_PASSWORD=database`` in the environment: the offline writer's sessions that say
    "database" are written as they are."""
    done = subprocess.run([sys.executable, "-m", "interleave_bench", "demo", "--out", str(tmp_path / "d"),
                           "--v1-sessions", "0", "--bootstrap", "0", "--sessions", "20"], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "DB_PASSWORD": "database", "INTERLEAVE_NO_PROGRESS": "1"},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "d" / "sessions.jsonl").read_text(encoding="utf-8")
    assert REDACTED not in text and "database" in text


def _key_router_run(tmp_path, key: str, out: str) -> list:
    """The command routing fresh data in ``tmp_path`` with the key router, its ``api_key`` ``key``."""
    (tmp_path / "keyrouter.py").write_text(KEY_ROUTER, encoding="utf-8")
    data = write_data(tmp_path / "data")
    return ["route", data, "--mode", "open", "--router", "keyrouter:KeyRouter", "--router-arg", f"api_key={key}",
            "--out", tmp_path / out]


def test_a_key_is_redacted_in_the_escaped_form_json_writes_it_in(tmp_path):
    key = 'abc"def\\ghijk9'
    argv = _key_router_run(tmp_path, key, "e.jsonl")
    done = _run(argv, tmp_path)
    for form in (key, 'abc\\"def\\\\ghijk9'):  # as given, and as JSON writes it
        assert _files_holding(tmp_path, form) == [] and form not in done.stdout + done.stderr
    assert f"auth failed with key {REDACTED}" in (tmp_path / "e.jsonl").read_text(encoding="utf-8")


#: a router that takes any keyword argument and stays on the current topic
ANY_ARGS_ROUTER = '''
class AnyArgs:
    policy = "anyargs"

    def __init__(self, **kw):
        pass

    def route(self, view):
        return {"kind": "topic", "label": view.current} if view.current else {"kind": "new", "title": "work"}
'''


def test_a_key_in_a_router_arg_of_any_name_reaches_no_file_and_no_output(tmp_path):
    """A value shaped like a provider's key is a secret whatever the argument is called; the
    ordinary values beside it (a number, a path, a word) stay readable in the run record."""
    (tmp_path / "anyargs.py").write_text(ANY_ARGS_ROUTER, encoding="utf-8")
    data = write_data(tmp_path / "data")
    keys = {"openai_key": "sk-" + KEY, "hf": "sk-TRIAL-SECRET-hf-1", "note": "hf_" + KEY * 2}
    argv = ["route", data, "--mode", "open", "--router", "anyargs:AnyArgs", "--out", tmp_path / "a.jsonl",
            "--router-arg", "limit=123456789", "--router-arg", "cache=/data/hf_cache/models2",
            "--router-arg", "style=conversational"]
    for name, key in keys.items():
        argv += ["--router-arg", f"{name}={key}" if name != "note" else f"{name}=see {key} here"]
    done = _run(argv, tmp_path)
    assert done.returncode == 0, done.stderr
    record = (tmp_path / "a.run.json").read_text(encoding="utf-8")
    assert f"openai_key={REDACTED}" in record and f"hf={REDACTED}" in record and f"note=see {REDACTED} here" in record
    assert "limit=123456789" in record and "cache=/data/hf_cache/models2" in record and "style=conversational" in record
    for key in keys.values():
        assert _files_holding(tmp_path, key) == [] and key not in done.stdout + done.stderr


def test_what_a_value_shows_of_a_secret(monkeypatch):
    from interleave_bench import redaction, vet

    assert vet.API_KEY_PATTERNS is redaction.API_KEY_PATTERNS  # one definition of a key's shape
    monkeypatch.setattr(redaction, "_GIVEN", set())
    for text in ("sk-proj-Abc123XyZ789defGHI456", "Authorization: Bearer tok3nValue123", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
                 "https://u:pa55word-long@example.test/x?sig=abcdefgh123", "12345678", "/home/me/models/run-2024",
                 "conversational", "https://example.test/v1?depth=30000000"):
        redaction.add_shaped_secrets(text)
    assert sorted(redaction._GIVEN) == ["AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "abcdefgh123", "pa55word-long",
                                     "sk-proj-Abc123XyZ789defGHI456", "tok3nValue123"]
    assert redact("a key AIzaSyA9b8C7d6E5f4G3h2I1j0KlMnOpQrStUvW here") == f"a key {REDACTED} here"


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "DEEPSEEK_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"])
def test_a_key_the_project_reads_is_a_secret_whatever_its_shape(monkeypatch, name):
    """The key a run sends is kept out of everything written though it does not look like a key
    (letters only, a blank); a value as short as ``test`` or ``x``, which a local server takes, is
    none (taking ``test`` out would rewrite every row's split)."""
    from interleave_bench import redaction

    monkeypatch.setattr(redaction, "_GIVEN", set())
    for key in ("correcthorsebattery", "database", "two words"):
        assert redaction.redact(f"key {key}.", {name: key}) == f"key {REDACTED}.", key
    for short in ("test", "x", "sk", "EMPTY"):
        assert redaction.secret_values({name: short}) == []
    assert redaction.secret_values({"DB_PASSWORD": "database"}) == []  # another secret's name: only a key's shape


def test_a_key_the_models_name_holds_is_refused_before_it_renames_the_model(tmp_path):
    """Keys are kept out of every file written: a key that is the model's name ("lm-studio", which
    such a server takes as any other) would write every row's model as [redacted]."""
    from interleave_bench.errors import UsageError
    from interleave_bench.llm.provider import resolve_provider

    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "lm-studio"}
    for model in ("lm-studio", "lm-studio-qwen"):
        with pytest.raises(UsageError, match=r"^OPENAI_API_KEY is part of the model's name \("):
            resolve_provider(model, env=env)
    assert resolve_provider("qwen2.5-7b", env=env).model == "qwen2.5-7b"
    with pytest.raises(UsageError, match="^DEEPSEEK_API_KEY is part of the model's name"):
        resolve_provider(None, env={"DEEPSEEK_API_KEY": "deepseek-chat"})
    data = write_data(tmp_path / "data")
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", "route", str(data), "--mode", "closed", "--policy",
                           "llm", "--model", "lm-studio", "--out", str(out)], capture_output=True, text=True,
                          env={**os.environ, **env, "INTERLEAVE_NO_PROGRESS": "1"}, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: OPENAI_API_KEY is part of the model's name") and not out.exists()


def test_a_router_arg_named_like_a_key_is_a_secret_whatever_it_looks_like(tmp_path):
    """``api_key=correct-horse``: no digit, no key's shape; its name says it is a key, so it
    reaches no file (the record, the rows holding the router's error naming it) and nothing
    printed, and the same command resumes."""
    word = "correct-horse"
    argv = _key_router_run(tmp_path, word, "w.jsonl")
    first = _run(argv, tmp_path)
    assert "Traceback" not in first.stderr
    assert f"api_key={REDACTED}" in (tmp_path / "w.run.json").read_text(encoding="utf-8")
    assert f"auth failed with key {REDACTED}" in (tmp_path / "w.jsonl").read_text(encoding="utf-8")
    again = _run(argv, tmp_path)
    assert again.returncode == first.returncode == 0, again.stderr
    assert "other run" not in again.stderr and "options" not in again.stderr, again.stderr  # resumed, not refused
    assert _files_holding(tmp_path, word) == [] and word not in first.stdout + first.stderr + again.stdout + again.stderr


@pytest.mark.parametrize("pair, secrets", [
    ("api_key=correct-horse", ["correct-horse"]),
    ("db_password=12345678", ["12345678"]),  # a number to JSON, the router gets 12345678
    ("token=two words here", ["two words here"]),
    ('secret="quoted-word"', ['"quoted-word"', "quoted-word"]),  # as written, and as the router gets it
    ('api_keys=["first-secret", {"spare": 87654321}]', ["first-secret", "87654321"]),
    ('config={"db": {"password": "correct-horse"}, "depth": 3}', ["correct-horse"]),  # a secret's key inside
    ("authtoken=correct-horse", ["correct-horse"]),  # run together
    ("deepseek_key=wrench.pliers", ["wrench.pliers"]), ("password_value=wrench.pliers", ["wrench.pliers"]),
    ("db_pass=wrench.pliers", ["wrench.pliers"]),
    # a fourth hostile trial's: names the rules missed, secrets inside a JSON value, a private key
    ("passkey=Zq7-rT2x-Lm9w-Kp4v", ["Zq7-rT2x-Lm9w-Kp4v"]),
    ("pass_phrase=correct horse battery staple", ["correct horse battery staple"]),
    ("subscription_key=a1b2 c3d4 e5f6", ["a1b2 c3d4 e5f6"]),
    ('headers={"Ocp-Apim-Subscription-Key": "0123456789abcdef0123456789abcdef"}', ["0123456789abcdef0123456789abcdef"]),
    ('config={"auth": "Zq7rT2xLm9w"}', ["Zq7rT2xLm9w"]),
    ("auth_header=Basic dXNlcjpodW50ZXIy", ["dXNlcjpodW50ZXIy"]),  # HTTP Basic's user:password, by its shape
    ("ssh_key=-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
     ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"]),
])
def test_what_a_secret_named_router_arg_takes_out(monkeypatch, pair, secrets):
    from interleave_bench import redaction
    from interleave_bench.route.plugin import parse_router_args

    monkeypatch.setattr(redaction, "_GIVEN", set())
    parse_router_args([pair, "depth=12345678"])
    for secret in secrets:
        assert redaction.redact_secrets(f"[{secret}] depth") == f"[{REDACTED}] depth", secret


@pytest.mark.parametrize("pair", ["use_auth=true", "token=null", "api_key=", "keys=[]", "sort_key=a", "depth=2",
                                  # settings about tokens, keys and passes, not secrets (a hostile trial's list)
                                  "token_overlap=0.3", "token_budget=500", "tokens=256", "context_tokens=2000",
                                  'stop_tokens=["x"]', "pass_threshold=0.5", "sig_level=0.05", "key_field=id",
                                  "key=title", "num_keys=3", "auth=none", "key=session_id",
                                  'token_field="messages"',
                                  # a model's special tokens and switches (a fourth hostile trial's)
                                  "eos_token=</s>", "pad_token=0", "bos_token=<s>", "use_cookie=1",
                                  "session_key=session_id"])
def test_a_router_arg_holding_no_secret_takes_nothing_out(monkeypatch, pair):
    """A flag, null, an empty value, or a name that is no secret's: nothing to keep out, nothing refused."""
    from interleave_bench import redaction
    from interleave_bench.route.plugin import parse_router_args

    monkeypatch.setattr(redaction, "_GIVEN", set())
    parse_router_args([pair])
    assert redaction._GIVEN == set()


@pytest.mark.parametrize("pair, named", [
    ("api_key=a", "api_key"), ("password=1234567", "password"), ('token="abc"', "token"),
    ("auth_token=basic", "auth_token"), ('api_keys=["long-enough-secret", "x"]', "api_keys"),
    ("access_token=0", "access_token"), ("endpoint=http://h/r?token=abc", "endpoint"),
    # a plain word, which the run's own files may hold as a field's or a file's name
    ("api_key=correcthorse", "api_key"), ("password=session_id", "password"), ("token=messages", "token"),
    ("url=http://me:pw@h/r", "url"),
])
def test_a_secret_too_short_to_keep_out_is_refused_in_one_line(tmp_path, pair, named):
    """Looked for in every text, ``a`` would take every "a" out of them; not looked for, it would be
    written as given: refused, one line naming the argument and not its value, exit 2, nothing written."""
    (tmp_path / "anyargs.py").write_text(ANY_ARGS_ROUTER, encoding="utf-8")
    data = write_data(tmp_path / "data")
    done = _run(["route", data, "--mode", "open", "--router", "anyargs:AnyArgs", "--router-arg", pair,
                 "--out", tmp_path / "r.jsonl"], tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"error: --router-arg {named}: ") and "under 8 characters or a plain word" in done.stderr
    value = pair.partition("=")[2].strip('"')
    assert value not in done.stderr.partition(f"--router-arg {named}")[2] or len(value) < 2
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize("text, shown", [
    ("--router http://h/route?token=abcdef123456: GET failed", f"--router http://h/route?token={REDACTED}: GET failed"),
    ("see (http://h/r?api_key=abcdef123456).", f"see (http://h/r?api_key={REDACTED})."),
    ("at http://h/r?sig=abc:def, then", f"at http://h/r?sig={REDACTED}, then"),  # a ":" inside the value is its own
    ("http://h/r?depth=3: fine", "http://h/r?depth=3: fine"),
])
def test_a_redacted_query_parameter_leaves_the_sentence_its_punctuation(monkeypatch, text, shown):
    from interleave_bench import redaction

    monkeypatch.setattr(redaction, "_GIVEN", set())
    assert redact(text) == shown


def test_a_routers_state_hashes_no_secret_it_holds(monkeypatch):
    """``router_state`` (kept in the run record) was the SHA-256 of a router's public settings, a
    weak ``api_key`` among them, which a guess against the hash recovers. A secret-named setting is
    hashed as a mark, and a key the environment holds is redacted wherever a setting has it."""
    import hashlib
    import json

    from interleave_bench.route.plugin import router_state

    class R:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    weak = router_state(R(api_key="correcthorse", min_score=1))  # (a router's own attribute: any value)
    plain = json.dumps({"api_key": "correcthorse", "min_score": 1}, sort_keys=True, separators=(",", ":"))
    assert weak != "sha256:" + hashlib.sha256(plain.encode("utf-8")).hexdigest()
    assert weak == router_state(R(api_key="another-pass", min_score=1))  # the key is no setting
    assert weak != router_state(R(api_key="correcthorse", min_score=2))  # the settings still are
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-0123456789abcdef")
    held = router_state(R(client={"headers": ["Bearer sk-test-SECRET-0123456789abcdef"]}))
    assert held == router_state(R(client={"headers": ["Bearer sk-test-SECRET-99999999999999"]}))


def test_a_key_shaped_value_under_a_parameter_near_a_secrets_name_is_a_secret(monkeypatch):
    """``?key=``, ``?token_v2=``, ``?auth=``: not settings that hold a secret whatever it looks like
    (a bare ``key`` is forced in a URL alone), but a value that looks like a key is one."""
    from interleave_bench import redaction

    monkeypatch.setattr(redaction, "_GIVEN", set())
    add_url_secrets("https://api.example/v1?key=abcd1234efgh5678ijkl&token_v2=zyx987wvu654&auth=Real5ecretValue"
                    "&sort=session_id")
    text = "abcd1234efgh5678ijkl zyx987wvu654 Real5ecretValue session_id"
    assert redaction.redact_secrets(text) == f"{REDACTED} {REDACTED} {REDACTED} session_id"


def test_a_weak_secret_near_a_secrets_name_is_not_hashed_into_the_state():
    """``db_pw="hunter22"`` is hashed as a mark; a list of stop ``tokens`` is a setting, hashed."""
    from interleave_bench.route.plugin import router_state

    class R:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    assert router_state(R(db_pw="hunter22", k=1)) == router_state(R(db_pw="other-one", k=1))
    assert router_state(R(tokens=["a"], k=1)) != router_state(R(tokens=["b"], k=1))
