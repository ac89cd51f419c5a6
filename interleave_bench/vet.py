"""Vetting data before it is published: secrets and personal data in every text field.

Model-written data can carry what must never go public: a key pasted into a prompt, a real-looking
e-mail address or phone number, a card or bank account number, a URL with a password in it, a
local file path naming a user, an IP address. :func:`scan_text` finds them in one string;
:func:`vet_paths` (:mod:`.vetfiles`) walks every string of every JSON/JSONL file given (sessions of any version,
mid-reply case files, manifests; a folder stands for the JSON and JSONL files under it) and
returns one :class:`Finding` per match, naming file, line, field (a JSON path such as
``turns[3].text``) and kind, with the match masked. Nothing here ever prints or stores a match
unmasked.

Precision matters as much as recall: a vetting step that cries wolf on every date gets switched
off. So card numbers must pass the Luhn check and carry a card network's prefix, IBANs must pass
the mod-97 check, phone numbers must have a phone number's shape (a ``+`` country code, or the
grouping of a national number), and ids, dates, prices, times and version numbers are not
matched. Digests (file hashes, fingerprints, a run's conversation digests, git commits) are not
read at all (:func:`is_digest`). An allowlist (``vet-allow.txt``) accepts findings known to be
fakes, each with a reason.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Optional

from .errors import InputError, shown
from .redaction import API_KEY_PATTERNS, REDACTED, api_key_patterns
from .io import iter_json_lines

# --- kinds -------------------------------------------------------------------------------------------

API_KEY = "api-key"
HIGH_ENTROPY = "high-entropy"
EMAIL = "email"
PHONE = "phone"
IBAN = "iban"
CARD = "card"
URL_CREDENTIALS = "url-credentials"
LOCAL_PATH = "local-path"
IP_ADDRESS = "ip-address"
#: every kind of finding, in the order detectors run: where two match the same text, the earlier wins
#: (a key inside a URL is reported once, as the URL's credentials; a card number is not also a phone)
KINDS = (API_KEY, URL_CREDENTIALS, EMAIL, IBAN, CARD, IP_ADDRESS, PHONE, LOCAL_PATH, HIGH_ENTROPY)

#: the allowlist read by default, from the current folder, when it exists
DEFAULT_ALLOWLIST = "vet-allow.txt"
#: file types vetted inside a folder: the project's data is JSON Lines or JSON documents
VETTED_SUFFIXES = (".jsonl", ".json")

# --- detectors ---------------------------------------------------------------------------------------

# Boundaries are ASCII-only on purpose: in Python's Unicode regexes a Chinese character is a word
# character, so ``\b`` would hide "密钥是sk-..." or "手机13812345678" from every detector.
_NOT_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
_NOT_ALNUM_AFTER = r"(?![A-Za-z0-9])"
_NOT_DIGIT_BEFORE = r"(?<![0-9])"
_NOT_DIGIT_AFTER = r"(?![0-9])"

#: the text a local-path pattern needs (one of them)
LOCAL_PATH_TRIGGERS = ("/home/", "/Users/", "/root/", ":\\Users", ":/Users", ":\\Documents", ":/Documents", "\\\\")
_DIGIT = re.compile(r"[0-9]")

#: a long run of key-alphabet characters; :func:`_is_high_entropy` decides whether it is random
_TOKEN_RUN = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{%d,}" % 32)
#: shortest token the entropy test judges: shorter random strings are too few to tell from words
MIN_ENTROPY_LENGTH = 32
#: bits per character above which a mixed-case alphanumeric run is taken as random: 32 random
#: base62 characters score about 4.5, long identifiers and words stay under 4.1
MIN_ENTROPY_BITS = 4.2

_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}" + _NOT_ALNUM_AFTER)
#: domains reserved for examples and tests (RFC 2606, RFC 6761): addresses there reach no one
RESERVED_EMAIL_DOMAINS = ("example.com", "example.org", "example.net")
RESERVED_TLDS = ("example", "test", "invalid", "localhost")

# Every pattern below can start only where a run of its characters starts (a look-behind, or a
# literal first character), and its repetitions stop at a character that ends the run: so each
# character is read by a bounded number of match attempts and a scan is linear in the text
# (tests/test_vet_linear.py; benchmarks/vet_linear.py measures a 10 MB line).
#: a URL scheme, starting where a run of scheme characters starts
_URL_SCHEME = r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://"
#: a URL's scheme and ``USER:PASSWORD@`` (the password its group 1), a host's character after it;
#: a credential's finding runs on to the end of its run of URL characters (:func:`_userinfo_urls`)
_URL_USERINFO = re.compile(_URL_SCHEME + r"[^\s/@:\"'<>]+:([^\s/@\"'<>]+)@(?=[^\s\"'<>])")
#: a run of characters a URL may hold: a URL with a secret in its query is the whole run
_URL_RUN = re.compile(r"[^\s\"'<>]+")
_URL_SCHEME_IN_RUN = re.compile(_URL_SCHEME)
_URL_SECRET_PARAM = re.compile(
    r"(?i)[?&](?:access_token|api_key|apikey|token|key|password|secret|sig|signature)=([^\s&\"'<>]{8,})"
)

_IBAN = re.compile(_NOT_ALNUM_BEFORE + r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?" + _NOT_ALNUM_AFTER)
#: IBAN lengths (ISO 13616): the shortest country format has 15 characters, the longest 34
IBAN_LENGTHS = (15, 34)

_CARD = re.compile(_NOT_DIGIT_BEFORE + r"[0-9](?:[ -]?[0-9]){12,18}" + _NOT_DIGIT_AFTER)
#: issuer prefixes of the card networks (Visa, Mastercard, Amex, Discover, JCB, UnionPay, Diners):
#: a number that passes Luhn but starts otherwise is an order or tracking number, not a card
CARD_PREFIXES = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6011|64[4-9]|65|35|62|36|38|30[0-5])")

_IPV4 = re.compile(r"(?<![A-Za-z0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9]|\.[0-9])")
_IPV6 = re.compile(r"(?<![A-Za-z0-9:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![A-Za-z0-9:])")
#: address blocks reserved for documentation (RFC 5737, RFC 3849): known fakes by definition
DOCUMENTATION_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)

#: a phone number is not the tail or head of a longer run of digit groups ("12 000 000 000")
_NOT_IN_DIGIT_GROUPS_BEFORE = r"(?<![0-9])(?<![0-9][ .-])"
_NOT_IN_DIGIT_GROUPS_AFTER = r"(?![0-9])(?![ .-][0-9])"
_PHONE_PATTERNS = tuple(
    re.compile(_NOT_IN_DIGIT_GROUPS_BEFORE + p + _NOT_IN_DIGIT_GROUPS_AFTER)
    for p in (
        # international: a + country code, then groups (+86 138 0013 8000, +44 (0)20 7946 0958, +12025550143)
        r"\+[0-9]{1,3}(?:[ .-]?\(?[0-9]{1,4}\)?){1,5}[ .-]?[0-9]{2,}",
        # North American: (202) 555-0143, 202-555-0143, 202.555.0143
        r"(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}",
        # Chinese mobile numbers: 13800138000, 138-0013-8000, 138 0013 8000
        r"1[3-9][0-9](?:[ -]?[0-9]{4}){2}",
        # national numbers with a trunk 0: 020 7946 0958, 07700 900123, 010-62345678, 01 23 45 67 89
        r"0[0-9]{1,4}[ -][0-9]{3,4}[ -]?[0-9]{3,4}",
        r"0[1-9](?:[ .][0-9]{2}){4}",
    )
)
#: digits in a phone number (E.164 allows at most 15; no national format has fewer than 8)
PHONE_DIGITS = (8, 15)
#: a run of four digits: the North American and Chinese mobile patterns above end in one
_FOUR_DIGITS = re.compile(r"[0-9]{4}")
#: what each phone pattern needs besides a digit (``None``: nothing more), so a text without it is
#: not scanned for that pattern: a ``+``, a run of four digits
_PHONE_NEEDS = ("+", _FOUR_DIGITS, _FOUR_DIGITS, None, None)

_LOCAL_PATH = re.compile(
    r"(?:(?<![A-Za-z0-9_.~/-])/(?:home|Users|root)/|(?<![A-Za-z0-9])[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/]"
    r"|\\\\[A-Za-z0-9_.-]+\\[A-Za-z0-9_$.-]+\\)"
    r"[^\s\"'<>|,;，。；：、）)]*"
)


class Match(NamedTuple):
    """One detector hit in a string: its kind and the exact text (never shown unmasked). A tuple:
    a line of a million hits makes a million of them."""

    kind: str
    text: str
    start: int
    end: int


def luhn_ok(digits: str) -> bool:
    """True when a digit string passes the Luhn check that every payment card number satisfies."""
    total = 0
    for k, ch in enumerate(reversed(digits)):
        d = int(ch)
        if k % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(text: str) -> bool:
    """True when ``text`` (spaces allowed) is an IBAN whose mod-97 check gives 1 (ISO 13616)."""
    s = text.replace(" ", "").upper()
    if not (IBAN_LENGTHS[0] <= len(s) <= IBAN_LENGTHS[1]) or not re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]+", s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def shannon_bits(text: str) -> float:
    """Shannon entropy of the characters of ``text``, in bits per character."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _is_high_entropy(token: str) -> bool:
    core = token.strip("=-_")
    if len(core) < MIN_ENTROPY_LENGTH:
        return False
    # hex digests (git commits, file fingerprints) and UUIDs are lower case only: they identify
    # content, they open nothing; a random key mixes cases and digits
    if not (re.search(r"[a-z]", core) and re.search(r"[A-Z]", core) and re.search(r"[0-9]", core)):
        return False
    return shannon_bits(core) >= MIN_ENTROPY_BITS


#: how an address at a reserved domain or top-level domain ends: a matched address has one ``@``
#: and a dot in its domain, so the whole domain, a subdomain's suffix and the last label are each
#: one ending of the address, tested by one ``endswith``
_RESERVED_EMAIL_ENDINGS = (tuple("@" + d for d in RESERVED_EMAIL_DOMAINS) + tuple("." + d for d in RESERVED_EMAIL_DOMAINS)
                           + tuple("." + t for t in RESERVED_TLDS))


def _email_ok(text: str) -> bool:
    return not text.lower().endswith(_RESERVED_EMAIL_ENDINGS)


def _card_ok(text: str) -> bool:
    digits = re.sub(r"[ -]", "", text)
    if not 13 <= len(digits) <= 19 or not CARD_PREFIXES.match(digits):
        return False
    # separators, where present, sit between groups of at least three digits (4-4-4-4, 4-6-5):
    # "2024-05-14 1234" style runs of dates and counts are not card numbers
    groups = re.split(r"[ -]", text)
    if len(groups) > 1 and min(len(g) for g in groups) < 3:
        return False
    return luhn_ok(digits)


#: a dotted quad of one-digit parts ("1.2.3.4") reads as a version number far more often than as a
#: real address
_VERSION_LIKE = r"[0-9]\.[0-9]\.[0-9]\.[0-9]$"
_VERSION_LIKE_QUAD = re.compile("^" + _VERSION_LIKE)


#: a dotted quad ``ipaddress`` reads as an IPv4 address: four octets 0-255, no leading zeros
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4_EXACT = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}")
#: the IPv4 addresses no finding is made for: documentation blocks (RFC 5737), loopback, multicast
#: (224-239), unspecified; matched on the text, without an ``ipaddress`` object each
_IPV4_QUIET = r"192\.0\.2\.|198\.51\.100\.|203\.0\.113\.|127\.|2(?:2[4-9]|3[0-9])\.|0\.0\.0\.0$"
#: a dotted quad worth a finding, in one pattern: an address, not version-like, not quiet
_IPV4_REPORTED = re.compile(rf"(?!{_VERSION_LIKE})(?!{_IPV4_QUIET}){_IPV4_EXACT.pattern}")


def _ipv4_ok(text: str) -> bool:
    """:func:`_ip_ok` for a dotted quad, read by one pattern: a line of a million addresses costs
    one match each, not an ``ipaddress`` object each."""
    return _IPV4_REPORTED.fullmatch(text) is not None


def _ip_ok(text: str) -> bool:
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return False
    if addr.version == 4 and _VERSION_LIKE_QUAD.match(text):
        return False
    if addr.version == 6 and not re.search(r"[0-9]", text.replace(":", "")):
        return False  # "::" alone, or "a::b" written as C++ scope, is no address worth reporting
    if addr.is_loopback or addr.is_unspecified or addr.is_multicast:
        return False
    return not any(addr in net for net in DOCUMENTATION_NETWORKS)


def _phone_ok(text: str) -> bool:
    digits = re.sub(r"[^0-9]", "", text)
    if not PHONE_DIGITS[0] <= len(digits) <= PHONE_DIGITS[1]:
        return False
    # groups of exactly three digits after the first are an amount's thousands ("300 000 000")
    groups = re.split(r"[ .-]", text)
    return text.startswith("+") or len(groups) < 3 or any(len(g) != 3 for g in groups[1:])


#: what a match's end sheds: a sentence's punctuation after a URL, a path, an address
_TRAILING = ".,;:!?"
#: a NamedTuple built from a tuple by ``tuple.__new__``, in C: a line of a million hits makes a
#: million of them without a Python-level ``__new__`` call each
make_record = tuple.__new__


def _finditer(kind: str, pattern: re.Pattern[str], text: str, ok: Any = None, strip: bool = True) -> list[Match]:
    """The hits of ``pattern`` in ``text`` that ``ok`` (when given) accepts, trailing punctuation
    shed. ``strip=False`` for a pattern whose match cannot end in punctuation (it ends in a digit or
    a letter): its hits are judged as matched, one comprehension step each."""
    if not strip and ok is not None:
        return [make_record(Match, (kind, found, m.start(), m.end())) for m in pattern.finditer(text) if ok(found := m.group())]
    out: list[Match] = []
    for m in pattern.finditer(text):
        found = m.group().rstrip(_TRAILING)
        if ok is None or ok(found):
            start = m.start()
            out.append(make_record(Match, (kind, found, start, start + len(found))))
    return out


def _is_placeholder(secret: str) -> bool:
    """True when a URL's password or secret parameter value is the project's own redaction
    placeholder (:data:`~.redaction.REDACTED`, a sentence's punctuation after it aside): what the
    project wrote in place of a secret (a run record's ``--router`` URL), no credential."""
    return secret.rstrip(_TRAILING) == REDACTED


def _userinfo_urls(text: str) -> list[Match]:
    """URLs with a user name and password: from the scheme to the end of its run of URL characters,
    unless the password is the placeholder (``http://acme:[redacted]@host/``: a user name alone opens
    nothing). Each URL is judged on its own: after a placeholder's ``@`` the search goes on, so a
    real password in a URL further along the run (``...,https://u:PASS@host``, ``?next=https://...``)
    is still found; after a credential's finding it goes on past the run that finding holds."""
    out: list[Match] = []
    pos = 0
    while (m := _URL_USERINFO.search(text, pos)) is not None:
        if _is_placeholder(m.group(1)):
            pos = m.end()
            continue
        run = _URL_RUN.match(text, m.end())  # (never None: the pattern's look-ahead saw a character)
        end = run.end() if run is not None else m.end()
        found = text[m.start():end].rstrip(_TRAILING)
        out.append(make_record(Match, (URL_CREDENTIALS, found, m.start(), m.start() + len(found))))
        pos = end
    return out


def _secret_param_urls(text: str) -> Iterator[Match]:
    """URLs with a key, token or password in their query: from the first scheme of a run of URL
    characters to the run's end, when a secret parameter follows that scheme whose value is not the
    placeholder (:func:`_is_placeholder`). Each character is read once per step (the run, the
    scheme, the parameters), where one pattern spanning scheme to parameter would read the rest of
    the run again from every scheme in it."""
    for run in _URL_RUN.finditer(text):
        scheme = _URL_SCHEME_IN_RUN.search(text, run.start(), run.end())
        if scheme is not None and any(not _is_placeholder(p.group(1))
                                      for p in _URL_SECRET_PARAM.finditer(text, scheme.end(), run.end())):
            found = text[scheme.start():run.end()].rstrip(_TRAILING)
            yield make_record(Match, (URL_CREDENTIALS, found, scheme.start(), scheme.start() + len(found)))


def _candidates(text: str) -> Iterator[list[Match]]:
    """Each detector's hits in ``text`` (in order of position, none overlapping another of the
    same detector), detector by detector in :data:`KINDS` order. A detector whose pattern needs
    text the string does not hold (a digit, ``@``, ``://``, a key's prefix) is skipped."""
    for p in api_key_patterns(text):
        yield _finditer(API_KEY, p, text)
    if "://" in text:
        yield _userinfo_urls(text)
        yield list(_secret_param_urls(text))
    if "@" in text:
        yield _finditer(EMAIL, _EMAIL, text, _email_ok, strip=False)
    digits = _DIGIT.search(text) is not None
    if digits:
        yield _finditer(IBAN, _IBAN, text, iban_ok, strip=False)
        yield _finditer(CARD, _CARD, text, _card_ok, strip=False)
        if "." in text:
            yield _finditer(IP_ADDRESS, _IPV4, text, _ipv4_ok, strip=False)
    if ":" in text:
        yield _finditer(IP_ADDRESS, _IPV6, text, _ip_ok)
    if digits:
        four = None  # whether the text holds four digits in a row, searched for once, when asked
        for p, needs in zip(_PHONE_PATTERNS, _PHONE_NEEDS):
            if isinstance(needs, str) and needs not in text:
                continue
            if isinstance(needs, re.Pattern):
                four = needs.search(text) is not None if four is None else four
                if not four:
                    continue
            yield _finditer(PHONE, p, text, _phone_ok, strip=False)
    if any(t in text for t in LOCAL_PATH_TRIGGERS):
        yield _finditer(LOCAL_PATH, _LOCAL_PATH, text)
    if digits:  # a random key mixes digits and letters (see _is_high_entropy)
        yield _finditer(HIGH_ENTROPY, _TOKEN_RUN, text, _is_high_entropy, strip=False)


def keep_free(taken: list[Match], hits: list[Match]) -> tuple[list[Match], int]:
    """``taken`` (disjoint, by position) merged with the ``hits`` (by position) that overlap none of
    it; returns the merged list and the steps taken, which are at most ``len(taken) + len(hits)``:
    one pass over both, however many hits a text has."""
    out: list[Match] = []
    last_end = -1  # end of the last kept hit of this detector: its own hits may touch, never overlap
    if not taken:  # the first detector with hits: nothing to merge with, one step a hit
        for m in hits:
            if m.start < m.end and m.start >= last_end:
                out.append(m)
                last_end = m.end
        return out, len(hits)
    k = steps = 0
    for m in hits:
        while k < len(taken) and taken[k].end <= m.start:
            out.append(taken[k])
            k += 1
            steps += 1
        steps += 1
        if m.end <= m.start or m.start < last_end or (k < len(taken) and taken[k].start < m.end):
            continue
        out.append(m)
        last_end = m.end
    out.extend(taken[k:])
    return out, steps + len(taken) - k


def scan_text(text: str) -> list[Match]:
    """The findings in one string, in order of position; overlapping hits are reported once.

    The text is NFKC-normalised first, so full-width digits and letters ("１３８...") are read as
    their ASCII forms. Where hits overlap, the kind that comes first in :data:`KINDS` wins.
    """
    norm = unicodedata.normalize("NFKC", text)
    taken: list[Match] = []
    for hits in _candidates(norm):
        if hits:
            taken, _ = keep_free(taken, hits)
    return taken


# --- digests -----------------------------------------------------------------------------------------

#: a field that holds digests of content: a file's SHA-256 (``data_sha256``, ``sha256``), a data
#: fingerprint (``fingerprint``, ``data_fingerprints``), a run record's ``conversation_digests``, a
#: git commit (``git_commit``, ``data_commit``), a ``hash``; matched on the key's whole name, the
#: last ``_``-separated word naming the digest
DIGEST_FIELD = re.compile(r"(?:[a-z0-9]+_)*(?:sha256|digests?|fingerprints?|hash|commit)")
#: a string a program computed from content: lower-case hex, an algorithm's name before it where
#: one is written (``sha256:...``; a hash's name alone, so ``13800138000:deadbeef`` is read); a
#: letter among the digits, so no number is taken for one
_HEX_DIGEST = re.compile(r"(?:(?:sha256|sha1|sha512|md5|blake2b|git):)?(?=[0-9]*[a-f])[0-9a-f]{7,128}")
#: a digest that names itself, wherever it is written (a provenance's ``data``, a manifest's ``predictions``)
_SHA256_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def names_digests(key: str) -> bool:
    """True when an object's ``key`` names a field of digests (:data:`DIGEST_FIELD`): the hex
    strings in it and below it are digests (:func:`is_digest`)."""
    return DIGEST_FIELD.fullmatch(key) is not None


def is_digest(text: str, in_digest_field: bool) -> bool:
    """True when ``text`` is a digest, which vet does not read: no one wrote it, and the digits of a
    hex digest ("b13473509355efd6") can take a phone number's or a card's shape. A digest is a
    ``sha256:<64 hex>`` string anywhere, or a hex digest in a field named for digests
    (``in_digest_field``: the field or one holding it :func:`names_digests`). Anything else
    in such a field (a path, a sentence, a number without a letter) is vetted as usual."""
    return _SHA256_DIGEST.fullmatch(text) is not None or (in_digest_field and _HEX_DIGEST.fullmatch(text) is not None)


# --- masking -----------------------------------------------------------------------------------------

#: at most this many characters of a match are shown at each end; the rest become ``*``
MASK_KEEP = 3


def mask(text: str) -> str:
    """``text`` with all but a few characters at its ends replaced by ``*``.

    At most a quarter of the characters stay visible (none for a string under eight characters),
    so a masked key or number cannot be used or looked up.
    """
    n = len(text)
    keep = n // 8
    if keep > MASK_KEEP:
        keep = MASK_KEEP
    elif keep == 0:
        return "*" * n
    return text[:keep] + "*" * (n - 2 * keep) + text[n - keep:]


# --- allowlist ---------------------------------------------------------------------------------------


@dataclass
class AllowRule:
    """One allowlist line: findings (of ``kind``, or any kind) whose whole text matches ``pattern``."""

    pattern: re.Pattern[str]
    kind: Optional[str]
    reason: str
    path: str
    line: int
    used: int = 0

    def accepts(self, kind: str, text: str) -> bool:
        return (self.kind is None or self.kind == kind) and self.pattern.fullmatch(text) is not None


_ALLOW_LINE = re.compile(r"^(?:(?P<kind>[a-z0-9-]+):)?(?P<pattern>.*?)\s+#\s*(?P<reason>.*)$")


def read_allowlist(path: str | os.PathLike) -> list[AllowRule]:
    """The rules of an allowlist file: ``[KIND:]PATTERN  # REASON`` per line.

    ``PATTERN`` is a regular expression that must match a finding's whole (unmasked) text; a
    ``KIND:`` prefix limits it to one kind (:data:`KINDS`). Blank lines and lines starting with
    ``#`` are comments. Raises :class:`InputError` naming the line for a missing reason, an unknown
    kind or a pattern that does not compile.
    """
    name = str(path)
    rules: list[AllowRule] = []
    for line, raw in iter_json_lines(path):  # any UTF-8 text, line by line, blank lines skipped
        text = raw.strip()
        if text.startswith("#"):
            continue
        m = _ALLOW_LINE.match(text)
        if m is None or not m.group("reason").strip() or not m.group("pattern"):
            raise InputError(name, line, None, "expected `[KIND:]PATTERN  # REASON`: every accepted pattern needs a reason")
        kind = m.group("kind")
        if kind is not None and kind not in KINDS:
            raise InputError(name, line, "kind", f"{shown(kind)} is not one of {', '.join(KINDS)}")
        try:
            pattern = re.compile(m.group("pattern"))
        except (re.error, OverflowError, RecursionError) as exc:  # a repetition past the engine's limit, nesting too deep
            raise InputError(name, line, "pattern", f"not a regular expression: {exc}") from None
        rules.append(AllowRule(pattern, kind, m.group("reason").strip(), name, line))
    return rules


# --- walking files: interleave_bench/vetfiles.py --------------------------------------------------

#: what :mod:`.vetfiles` defines, read from here as before
_WALKING = ("Finding", "VetReport", "iter_strings", "iter_document_strings", "expand_paths", "vet_file", "vet_paths",
            "default_allowlist")


def __getattr__(name: str) -> Any:
    if name in _WALKING:
        from . import vetfiles

        return getattr(vetfiles, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
