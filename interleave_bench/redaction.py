"""Secrets kept out of every text the project writes or prints: which names are a secret's, which
values look like a key, the keys of the environment and those a run is given, and :func:`redact`,
which every writer and printer of text runs (through :mod:`.errors` for error lines).

This is the bottom layer: it imports nothing of the project.
"""

from __future__ import annotations

import os as _os
import re as _re
from functools import lru_cache
from typing import Optional


#: the words that make a name a secret's (an environment variable's, a ``--router-arg``'s, a URL
#: query parameter's): a name is a secret's when one of its words (:func:`name_words`), or two
#: neighbours joined (``pass_word``), is one of these, a plural ``s`` aside: ``OPENAI_API_KEY``,
#: ``HF_TOKEN``, ``api_key_2``, ``token_v2``, ``keys``, ``db_pwd``, ``userCredentials``,
#: ``client_secret``, ``private_key``, ``X-Amz-Signature``. A whole word only: ``monkey``,
#: ``keyword(s)``, ``tokenizer``, ``author`` or ``XAUTHORITY`` holds none
SECRET_WORDS = ("key", "apikey", "token", "secret", "password", "passwd", "pwd", "pw", "pass", "passphrase",
                "credential", "cred", "auth", "bearer", "signature", "sig", "cookie")
#: a last word that makes the name one of something about a secret, not of the secret itself: a
#: path (``key_file``, ``secrets_dir``), an address (``auth_url``, ``SSH_AUTH_SOCK``), a number
#: (``token_limit``), a label (``AWS_ACCESS_KEY_ID``, ``secret_name``, ``token_type``)
ABOUT_A_SECRET_WORDS = ("file", "path", "dir", "url", "uri", "host", "endpoint", "sock", "socket", "limit", "count",
                        "size", "len", "length", "id", "name", "type", "env", "var", "header", "format")
#: words that, just before a word ``key``, make it a key of the data, no secret: ``sort_key=session_id``,
#: ``ROUTER_SORT_KEY``, ``primary_key``. A secret's value is taken out of every text written, the data's
#: own words too (when it :func:`looks_like_key`)
DATA_KEY_WORDS = ("sort", "group", "join", "primary", "foreign", "partition", "hash", "range", "cache", "lookup",
                  "index", "order", "field", "column", "row", "dict", "map", "label", "id")
#: words that, anywhere before a word ``token``, make it a number of a model's tokens, no secret:
#: ``max_tokens``, ``max_new_tokens``, ``prompt_tokens``
TOKEN_COUNT_WORDS = ("max", "min", "num", "n", "total", "prompt", "completion", "input", "output", "reasoning")
NOT_SECRET_VARIABLES = ("PWD",)  #: secret-named variables holding none: the working folder, in every path
#: the last words of a setting whose value is a secret whatever it looks like (:func:`is_secret_setting`):
#: ``password``, ``auth_token``, ``client_secret``, ``credentials``; run together after any word too
#: (``authtoken``, ``clientsecret``). Stricter than :data:`SECRET_WORDS`: such a value is taken out of
#: every text written, so a name must say it holds the secret itself, not a count or a choice about one
#: (``token_budget``, ``tokens``, ``pass_threshold``, ``auth``, ``key_field``)
SETTING_SECRET_WORDS = ("token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "passcode", "passkey",
                        "apikey", "credential", "credentials", "bearer", "cookie", "signature", "sig")
#: the words that, just before ``key`` (or run together with it: ``openaikey``), say whose key a
#: setting holds, and so that it is a secret (``api_key``, ``secret_key``, ``OpenAIKey``): a bare
#: ``key`` or ``key_field`` names a key of the data
KEY_OWNER_WORDS = ("api", "ai", "openai", "hf", "anthropic", "deepseek", "groq", "mistral", "gemini", "google",
                   "azure", "aws", "github", "gh", "cohere", "together", "fireworks", "xai", "stripe", "slack",
                   "secret", "access", "private", "auth", "client", "signing", "encryption", "service", "master",
                   "app", "license", "account", "subscription", "ssh", "gpg", "pgp", "deploy")
#: words before ``token`` that name a model's special token, no secret: ``eos_token``, ``pad_token``
TOKEN_KIND_WORDS = ("eos", "bos", "pad", "unk", "mask", "sep", "cls", "stop", "start", "end", "special", "eot",
                    "sos", "im", "think", "tool", "image", "audio", "vision", "chat", "bot")
#: first words that make a setting a switch about a secret, not the secret (``use_cookie=1``)
FLAG_WORDS = ("use", "with", "enable", "enabled", "disable", "has", "need", "needs", "require", "requires",
              "send", "no", "skip", "allow")
#: last words that say a setting holds the value of what the word before names (``password_value``,
#: ``token_str``): the word before is read as the last
VALUE_WORDS = ("value", "val", "str", "string", "text", "plain", "raw")
#: a URL query parameter that holds a key whatever it looks like, though the setting ``key`` does
#: not (a dict's key): Google's and many other APIs' ``?key=...``
KEY_PARAMETERS = ("key",)
#: secrets shorter than this are not looked for: a value such as "1" or "dev" is no key, and
#: replacing it would maim ordinary text. It holds for a key in use too (:data:`KEY_VARIABLES`): a local
#: server takes "x", "sk", "EMPTY" or "test", which guard nothing, and taking "test" out of every text
#: written would rewrite every row's split
SECRET_MIN_CHARS = 8
#: the environment variables the project reads a key from (``llm/provider.py``; ``huggingface_hub``
#: for the Hub client): the key a run sends, kept out of every text written whatever its shape, where
#: another secret-named value is only when it :func:`looks_like_key`
KEY_VARIABLES = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
#: a value this long is a key whatever it holds; a shorter one (of SECRET_MIN_CHARS or more) only
#: with a digit in it: "database", "postgres" or "session_id" are words of the data, and taking them
#: out of every text written would change the data itself (a session's text, a row's field names)
SECRET_WORDLESS_CHARS = 20
#: what stands in a text where a secret was
REDACTED = "[redacted]"
#: secrets carried in text: a bearer token, an ``Authorization`` header's value, a provider key
#: pasted whole (group 1, where there is one, is what stays); a URL query parameter's is
#: :data:`_QUERY_PARAM`
_SECRET_SHAPES = (
    (_re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+|basic\s+|token\s+)?[^\s\"',;}]+"), r"\1" + REDACTED),
    (_re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + REDACTED),
    # HTTP Basic's user:password, base64 (``Basic dXNlcjpodW50ZXIy``), wherever it is written
    (_re.compile(r"(?i)(\bbasic\s+)(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2}"), r"\1" + REDACTED),
    (_re.compile(r"(?<![A-Za-z0-9])(?:sk|hf|ghp|gho|glpat|xox[abposr])[-_][A-Za-z0-9_-]{16,}"), REDACTED),
    (_PEM := _re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", _re.S),
     REDACTED),
)
#: a URL query parameter (``?api_key_2=...``, ``&token=...``), as text holds it: its value is a
#: secret when its name is a secret's (:func:`is_secret_name`); group 1 is what stays, and so does
#: what ends group 3 that ends a sentence's part (:func:`_query_value`)
_QUERY_PARAM = _re.compile(r"([?&]([^\s=&#\"'<>?]+)=)([^\s&#\"'<>]+)")
#: what may follow a URL in a sentence, not part of it when it ends the URL: ``...?token=T: it failed``
_AFTER_A_URL = ":,;.!?)"
URL_SCHEME_CHARS = 32  #: the longest URL scheme looked for: unbounded, a search was quadratic on "a.a.a...."
_URL = _re.compile(r"(?i)[a-z][a-z0-9+.-]{0,%d}://[^\s\"'<>]+" % (URL_SCHEME_CHARS - 1))
#: a URL's user name and password (``http://user:pass@host``), what :func:`~.urls.shown_url` hides: taken
#: out of every message by :func:`redact` (:func:`add_url_secrets` takes them for secrets apart)
_URL_USERINFO = _re.compile(r"(?i)([a-z][a-z0-9+.-]{0,%d}://)[^\s/?#@\"'<>]+@" % (URL_SCHEME_CHARS - 1))
#: the key and token formats of common providers and of the Hugging Face Hub: what ``vet`` reports
#: as an ``api-key`` and :func:`redact` takes out of a message, and a value given on the command
#: line is a secret by (:func:`add_shaped_secrets`)
API_KEY_PATTERNS = tuple(
    _re.compile(p)
    for p in (
        r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}",  # OpenAI, DeepSeek, Anthropic
        r"(?<![A-Za-z0-9])(?:hf|api_org)_[A-Za-z0-9]{30,}",  # Hugging Face user and org tokens
        r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
        r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained tokens
        r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}",  # GitLab personal tokens
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])",  # AWS access key ids
        r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}",  # Google API keys
        r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
        r"(?<![A-Za-z0-9])(?:sk|rk)_live_[A-Za-z0-9]{16,}",  # Stripe secret and restricted keys
        r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # JSON web tokens
        r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",  # PEM private keys
        r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}=*",  # an HTTP Authorization header pasted whole
    )
)
#: text each key pattern needs (one of them, in the text lower-cased for the last): a text without
#: it is not scanned for that pattern, so a long field costs a few substring searches, not a scan
#: per pattern
API_KEY_TRIGGERS = (
    ("sk-",), ("hf_", "api_org_"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ("github_pat_",), ("glpat-",),
    ("AKIA", "ASIA"), ("AIza",), ("xox",), ("sk_live_", "rk_live_"), ("eyJ",), ("-----BEGIN",), ("bearer",),
)


def api_key_patterns(text: str) -> "list[_re.Pattern[str]]":
    """The :data:`API_KEY_PATTERNS` worth running on ``text``: those whose :data:`API_KEY_TRIGGERS` it holds."""
    lower = text.lower()
    return [p for p, needs in zip(API_KEY_PATTERNS, API_KEY_TRIGGERS)
            if any(t in (lower if t == "bearer" else text) for t in needs)]


#: secrets this process was given other than in the environment (:func:`add_secret`)
_GIVEN: "set[str]" = set()


def name_words(name: str) -> "list[str]":
    """The words of a name, case-folded: split at ``_``, ``-``, ``.``, a digit, any other character
    that is no letter, and a camelCase word's start (``accessToken``: access, token; ``OpenAIKey``:
    open, ai, key; ``api_key_2``: api, key; ``token_v2``: token, v). Words run together in one case
    (``MYAPIKEY``) are one word."""
    spaced = _re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return [w for w in _re.split(r"[^a-z]+", spaced.casefold()) if w]


def _word_of(word: str, words: "tuple[str, ...]") -> Optional[str]:
    """The word of ``words`` that ``word`` is, a plural ``s`` aside (``keys``, ``secrets``), else None."""
    if word in words:
        return word
    return word[:-1] if word.endswith("s") and word[:-1] in words else None


@lru_cache(maxsize=4096)  # every write asks of every variable of the environment: names repeat
def is_secret_name(name: str) -> bool:
    """Whether a value named ``name`` is a secret: one of its words (:func:`name_words`), or two
    neighbours joined, is one of :data:`SECRET_WORDS` (a plural ``s`` aside), and the name is
    not of something about a secret (its last word one of :data:`ABOUT_A_SECRET_WORDS`), a key of
    the data (``key`` just after one of :data:`DATA_KEY_WORDS`) or a number of tokens (``token``
    after one of :data:`TOKEN_COUNT_WORDS`)."""
    words = name_words(name)
    if not words or _word_of(words[-1], ABOUT_A_SECRET_WORDS):
        return False
    for i, word in enumerate(words):
        found = _word_of(word, SECRET_WORDS) or (_word_of(words[i - 1] + word, SECRET_WORDS) if i else None)
        if found == "key" and i and words[i - 1] in DATA_KEY_WORDS:
            continue
        if found == "token" and any(w in TOKEN_COUNT_WORDS for w in words[:i]):
            continue
        if found is not None:
            return True
    return False


@lru_cache(maxsize=1024)
def is_secret_setting(name: str) -> bool:
    """Whether a setting called ``name`` (a ``--router-arg``, a key inside one's JSON value, a URL's
    query parameter) holds a secret whatever its value looks like: its last word (:func:`name_words`)
    is one of :data:`SETTING_SECRET_WORDS`, or ends in one run together (``authtoken``), or is ``key``
    after one of :data:`KEY_OWNER_WORDS` (or run together with one: ``openaikey``), a trailing
    :data:`VALUE_WORDS` word aside (``password_value``); not a number of tokens (``max_token``), a
    model's special token (``eos_token``: :data:`TOKEN_KIND_WORDS`) or a switch (``use_cookie``:
    :data:`FLAG_WORDS`). Such a value is taken out of every text written
    (:func:`add_named_secret`), so a name that does not say it holds the secret itself is not one:
    ``key=session_id``, ``token_field=messages``, ``tokens=256``, ``pass_threshold=0.5``. Stricter than
    :func:`is_secret_name`, which names the environment's secrets, taken out only when they
    :func:`looks_like_key`."""
    words = name_words(name)
    while len(words) > 1 and words[-1] in VALUE_WORDS:
        words = words[:-1]
    if not words:
        return False
    last, before = words[-1], words[:-1]
    if words[0] in FLAG_WORDS and len(words) > 1:  # use_cookie=1: a switch
        return False
    if before and before[-1] + last in SETTING_SECRET_WORDS:  # pass_phrase, pass_word
        return True
    if last == "pass" and before:  # db_pass (a bare pass, or pass_threshold, names no secret)
        return True
    if last in ("token", "tokens") and before and before[-1] in TOKEN_KIND_WORDS:  # eos_token='</s>'
        return False
    if last in ("key", "keys"):
        return bool(before) and before[-1] in KEY_OWNER_WORDS
    if last.endswith(("key", "keys")) and last.rstrip("s")[:-3].endswith(KEY_OWNER_WORDS):
        return True  # run together: openaikey, myapikey, userkeys
    if last in ("token", "tokens") and any(w in TOKEN_COUNT_WORDS for w in before):
        return False
    return last in SETTING_SECRET_WORDS or any(last.endswith(w) for w in SETTING_SECRET_WORDS)


def looks_like_key(value: str) -> bool:
    """Whether a secret-named value is a key to keep out of what is written: no blanks, and
    :data:`SECRET_WORDLESS_CHARS` characters or more, or :data:`SECRET_MIN_CHARS` or more with a digit."""
    return (len(value) >= SECRET_MIN_CHARS and not any(c.isspace() for c in value)
            and (len(value) >= SECRET_WORDLESS_CHARS or any(c.isdigit() for c in value)))


@lru_cache(maxsize=256)  # every write asks of every secret of the environment: values repeat
def _written_forms(value: str) -> "frozenset[str]":
    """``value`` and the forms a file or message may hold it in: JSON's (a ``"`` or ``\\`` escaped;
    ``\\uXXXX`` for what is not ASCII) and URL encoding's, in which a provider may echo a key
    (``%2B``, ``%2F`` or ``/``, ``+`` for a blank; ``%xx`` in upper or lower case)."""
    import json
    from urllib.parse import quote, quote_plus

    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    for encoded in (quote(value, safe=""), quote(value), quote_plus(value)):
        forms.update((encoded, _re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)))
    return frozenset(forms)


def add_secret(value: str) -> None:
    """Take ``value`` for a secret from now on in this process, as the environment's secrets are:
    a value found by its shape on the command line (a provider's key or a bearer token inside a
    ``--router-arg``, a URL's user name) is then redacted from every file, row and message as one
    from the environment is, when it :func:`looks_like_key`. A value given where only a secret
    goes is :func:`add_named_secret`'s."""
    value = value.strip()
    if looks_like_key(value):
        _GIVEN.update(_written_forms(value))


def add_named_secret(value: str) -> bool:
    """Take ``value``, given on the command line where only a secret goes, for a secret from now on
    whatever its shape, as a key in use is (:func:`is_key_in_use`): the value of a ``--router-arg``
    with a secret's name (:func:`is_secret_setting`), of a URL's query parameter with one
    (``?token=...``), a URL's password. Its name says it is a secret, so ``correcthorse`` or
    ``12345678`` is one, where :func:`add_secret` would take only what :func:`looks_like_key`.
    False, nothing taken, for a value of 1 to :data:`SECRET_MIN_CHARS` - 1 characters or a plain
    word (:data:`_PLAIN_WORD`), which the caller refuses (:func:`short_secret_refusal`): looked for
    in every text, it would take the same letters out of all of them (or the run's own field and file
    names), and not looked for, it would be written as given. An empty value holds no secret."""
    value = value.strip()
    if value and (not is_key_in_use(value) or _PLAIN_WORD.fullmatch(value)):
        return False
    add_key_in_use(value)  # (an empty value holds none: nothing taken)
    return True


#: a value :func:`add_named_secret` refuses besides a short one: a plain word (letters and ``_``
#: alone), which the run's own files may hold as a field's or a file's name (``messages``,
#: ``session_id``), and so which cannot be taken out of them
_PLAIN_WORD = _re.compile(r"[A-Za-z_]+")


def short_secret_refusal(what: str) -> str:
    """Why ``what`` (``--router-arg api_key``, ``--router URL: its password``), a value
    :func:`add_named_secret` did not take, is refused: one line, the value itself not shown."""
    return (f"{what} is a secret of under {SECRET_MIN_CHARS} characters or a plain word (letters and _ alone), "
            "which cannot be kept out of what is written (the same letters or word are in every text, and in "
            "the run's own field and file names): give one with a digit or a sign, or let your router read it "
            "from an environment variable")


def is_key_in_use(value: str) -> bool:
    """Whether ``value``, a key the project sends (:data:`KEY_VARIABLES`, a Hub login's token), is
    kept out of what is written: whatever its shape, once :data:`SECRET_MIN_CHARS` long."""
    return len(value) >= SECRET_MIN_CHARS


def add_key_in_use(value: str) -> None:
    """Take ``value``, a key the project sends that the environment does not hold (a Hub login's
    token), for a secret from now on, whatever its shape (:func:`is_key_in_use`)."""
    value = value.strip()
    if is_key_in_use(value):
        _GIVEN.update(_written_forms(value))


def _is_secret_variable(name: str, value: str) -> bool:
    """Whether the environment variable ``name``'s (stripped) ``value`` is a secret to keep out of
    what is written: a key the project reads (:func:`is_key_in_use`), or a value with a secret's
    name (:func:`is_secret_name`) that :func:`looks_like_key`."""
    if name in KEY_VARIABLES:
        return is_key_in_use(value)
    return is_secret_name(name) and name not in NOT_SECRET_VARIABLES and looks_like_key(value)


def add_shaped_secrets(text: str) -> Optional[str]:
    """:func:`add_secret` every secret ``text`` holds by its shape, whatever it is called: a
    provider's key (:data:`API_KEY_PATTERNS`, or one pasted whole), a bearer token, an
    ``Authorization`` header's value; and :func:`add_named_secret` those it holds by their place: a
    ``?token=``-like parameter's value, a URL's password (:func:`add_url_secrets`). The rest of
    ``text`` (a number, a path, a word) is no secret. Returns what holds a secret too short to keep
    out (``its parameter 'token'``), else None."""
    shapes = [p for p, _ in _SECRET_SHAPES] + api_key_patterns(text)
    for m in (m for p in shapes for m in p.finditer(text)):
        shown = m.group(0)[m.end(1) - m.start():] if m.re.groups else m.group(0)
        if m.re is _PEM:  # a private key's body: each of its lines
            for word in shown.split():
                add_secret(word)
        elif shown.split():
            add_secret(shown.split()[-1])  # past a scheme word ("Bearer ")
    short = None
    for m in _QUERY_PARAM.finditer(text):
        if not _take_parameter(m.group(2), _query_value(m.group(3))[0]):
            short = short or f"its parameter {m.group(2)!r}"
    for url in _URL.findall(text):
        short = add_url_secrets(url) or short
    return short


#: what :func:`secret_sources` calls the secrets this process was given other than in the environment
GIVEN_SECRET = "a secret given to this run"


def secret_sources(env: "dict[str, str] | None" = None) -> "list[tuple[str, frozenset[str]]]":
    """``(name, forms)`` of every secret kept out of what is written: each secret variable of the
    environment (:func:`_is_secret_variable`: the keys the project reads whatever their shape, others
    named as secrets when they :func:`looks_like_key`) by its name, sorted, with every form a file
    may hold its value in (JSON-escaped, URL-encoded); then, under :data:`GIVEN_SECRET`, those given
    to :func:`add_secret` and :func:`add_key_in_use` (a Hub login's token) that no variable holds. A
    refusal names a secret by its name here, never by its value."""
    env = _os.environ if env is None else env
    out = [(k, _written_forms(v.strip())) for k, v in sorted(env.items()) if _is_secret_variable(k, v.strip())]
    given = frozenset(_GIVEN.difference(*(forms for _, forms in out)))  # HF_TOKEN's is the Hub token given too
    return out + ([(GIVEN_SECRET, given)] if given else [])


def secret_values(env: "dict[str, str] | None" = None) -> "list[str]":
    """Every form of every secret of :func:`secret_sources`, longest first."""
    return sorted({form for _, forms in secret_sources(env) for form in forms}, key=len, reverse=True)


def secrets_named_in(text: str, env: "dict[str, str] | None" = None) -> "list[str]":
    """The names (:func:`secret_sources`) of the secrets ``text`` holds, in any of their forms; empty
    when it holds none."""
    return [name for name, forms in secret_sources(env) if any(form in text for form in forms)]


def add_url_secrets(url: str) -> Optional[str]:
    """Take every secret a URL carries for one from now on: its password and the values of its query
    parameters with a secret's name (``?token=...``, ``&api_key=...``, ``&sig=...``) whatever their
    shape (:func:`add_named_secret`), its user name when it :func:`looks_like_key` (a token may
    stand there), each both as written (``%2F``, ``+``) and decoded. Returns what holds a secret too
    short to keep out (``its password``, ``its parameter 'token'``), which the caller refuses, else None."""
    from urllib.parse import unquote, unquote_plus, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed host ("http://[::1/x"): its user-info as written is the secret
        start, at = url.find("://") + 3, url.rfind("@")
        if at > start:
            add_secret(url[start:at])
        return None
    short = []
    if parts.username:
        add_secret(parts.username)
        add_secret(unquote(parts.username))
    if parts.password and not all([add_named_secret(parts.password), add_named_secret(unquote(parts.password))]):
        short.append("its password")
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if not _take_parameter(unquote_plus(name), value, unquote_plus(value)):
            short.append(f"its parameter {unquote_plus(name)!r}")
    return short[0] if short else None


def _forces_parameter(name: str) -> bool:
    """Whether a URL query parameter called ``name`` holds a secret whatever its value looks like:
    a setting's name that says so (:func:`is_secret_setting`), or one of :data:`KEY_PARAMETERS`."""
    return is_secret_setting(name) or name.casefold() in KEY_PARAMETERS


def is_secret_parameter(name: str) -> bool:
    """Whether a URL query parameter called ``name`` may hold a secret: its value is taken whatever
    it looks like (:func:`_forces_parameter`), or when it :func:`looks_like_key` (a name near a
    secret's, :func:`is_secret_name`: ``?token_v2=``)."""
    return _forces_parameter(name) or is_secret_name(name)


def _take_parameter(name: str, *values: str) -> bool:
    """Take the value of the query parameter ``name`` (each of ``values``: as written, decoded) for a
    secret by its name (:func:`is_secret_parameter`); False when one that must be taken is too short
    or a plain word (:func:`add_named_secret`), which the caller refuses."""
    if _forces_parameter(name):
        return all([add_named_secret(v) for v in values])
    if is_secret_name(name):
        for v in values:
            add_secret(v)
    return True


def _query_value(matched: str) -> "tuple[str, str]":
    """A query parameter's value as :data:`_QUERY_PARAM` matched it, split into the value and the
    punctuation that ends it (:data:`_AFTER_A_URL`: the ``:`` of ``URL: why``), which is the
    sentence's; a value of nothing but such punctuation is kept whole."""
    value = matched.rstrip(_AFTER_A_URL)
    return (value, matched[len(value):]) if value else (matched, "")


def _redacted_query_param(m: "_re.Match[str]") -> str:
    """:data:`_QUERY_PARAM`'s match with its value :data:`REDACTED` when its name is a secret's."""
    if not is_secret_name(m.group(2)):
        return m.group(0)
    return m.group(1) + REDACTED + _query_value(m.group(3))[1]


def redact_secrets(text: str, env: "dict[str, str] | None" = None) -> str:
    """``text`` with every secret value of the environment replaced by :data:`REDACTED`; other text
    is unchanged (so data written through it stays the same bytes unless it held a key). A secret
    that does not :func:`looks_like_key` (a word given under a secret's name: ``api_key=messages``)
    is left where it is a whole JSON object's key (``"messages": 4``): the project's own field names,
    which taken out would make a row or a record another document, or no JSON at all."""
    for value in secret_values(env):
        if value in text:
            text = text.replace(value, REDACTED) if looks_like_key(value) else _outside_json_keys(text, value)
    return text


#: what follows a JSON object's key: its closing quote, then ``:``
_KEY_END = _re.compile(r'"[ \t\r\n]*:')


def _outside_json_keys(text: str, value: str) -> str:
    """``text`` with ``value`` replaced by :data:`REDACTED` wherever it is not a whole JSON object's
    key (``"value":``)."""
    parts, start, at = [], 0, text.find(value)
    while at != -1:
        end = at + len(value)
        if not (at and text[at - 1] == '"' and _KEY_END.match(text, end)):
            parts += (text[start:at], REDACTED)
            start = end
        at = text.find(value, end)
    return "".join(parts) + text[start:]


def redact(text: str, env: "dict[str, str] | None" = None) -> str:
    """An error text made safe to write or print: the environment's secret values, bearer tokens,
    ``Authorization`` header values, a URL's user name and password, key and token query parameters and provider keys
    (:data:`API_KEY_PATTERNS`, or pasted whole) are
    replaced by :data:`REDACTED`. Every error text the project writes (ERROR rows, mid-reply and
    facts rows, manifests, score files) or prints goes through it."""
    text = redact_secrets(str(text), env)
    for pattern, repl in _SECRET_SHAPES:
        text = pattern.sub(repl, text)
    text = _QUERY_PARAM.sub(_redacted_query_param, text)
    text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)
    for pattern in api_key_patterns(text):
        text = pattern.sub(REDACTED, text)
    return text
