"""vet reads a field in time linear in its length: by structure and by counting steps, never by timing.

benchmarks/vet_linear.py measures it (a 10 MB line per hostile shape). Here: overlaps are resolved
in one pass (steps counted, equal to the pairwise rule); the URL finder split into linear steps
finds what the one pattern spanning scheme to parameter found; every detector starts only where a
run of its characters starts; and inputs no reader agrees on are one-line errors.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench import vet
from interleave_bench.cli import main
from interleave_bench.vet import Match, keep_free, scan_text
from interleave_bench.vetfiles import vet_paths


def pairwise(groups: list[list[Match]]) -> list[Match]:
    """The rule as first written: a hit is kept unless it overlaps one kept before it (quadratic)."""
    kept: list[Match] = []
    for hits in groups:
        for m in hits:
            if m.end > m.start and not any(m.start < k.end and k.start < m.end for k in kept):
                kept.append(m)
    return sorted(kept, key=lambda m: m.start)


def runs(draw_spans: list[tuple[int, int]]) -> list[Match]:
    """Non-overlapping hits by position, as one detector's ``finditer`` gives them."""
    out, at = [], 0
    for gap, length in draw_spans:
        start = at + gap
        out.append(Match("k", "x" * length, start, start + length))
        at = start + length
    return out


spans = st.lists(st.tuples(st.integers(0, 5), st.integers(1, 6)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.lists(spans, max_size=6))
def test_overlaps_are_resolved_in_one_pass_as_the_pairwise_rule_resolves_them(groups):
    detectors = [runs(g) for g in groups]
    taken: list[Match] = []
    for hits in detectors:
        before = len(taken)
        taken, steps = keep_free(taken, hits)
        assert steps <= before + len(hits)  # linear: one pass over what is kept and what is new
    assert taken == pairwise(detectors)


_ONE_PATTERN = re.compile(
    vet._URL_SCHEME + r"[^\s\"'<>]*[?&](?:access_token|api_key|apikey|token|key|password|secret|sig|signature)="
    r"[^\s&\"'<>]{8,}[^\s\"'<>]*"
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "x", "1", ":", "//", "?", "&", "key=", "token=", "abcdefgh", " ", ".", "-", '"']),
                max_size=25).map("".join))
def test_the_linear_url_finder_finds_what_the_one_pattern_found(text):
    one = [(m.start(), m.group(0).rstrip(".,;:!?")) for m in _ONE_PATTERN.finditer(text)]
    split = [(m.start, m.text) for m in vet._secret_param_urls(text)]
    assert split == [(s, t) for s, t in one if t]


def test_every_detector_starts_only_where_a_run_of_its_characters_starts():
    # a pattern that can start anywhere inside a long run re-reads the run from every start:
    # each must open with a look-behind or a literal that ends the previous run
    patterns = [*vet.API_KEY_PATTERNS, vet._URL_USERINFO, vet._URL_SCHEME_IN_RUN, vet._URL_SECRET_PARAM, vet._EMAIL,
                vet._IBAN, vet._CARD, vet._IPV4, vet._IPV6, *vet._PHONE_PATTERNS, vet._TOKEN_RUN]
    for p in patterns:
        src = p.pattern.removeprefix("(?i)")
        assert src.startswith(("(?<!", "-----BEGIN", "(?i:bearer)", "[?&]")), src
    # the local-path pattern's three branches: /home/..., C:\Users\..., \\server\share
    src = vet._LOCAL_PATH.pattern
    assert src.startswith("(?:(?<!") and "|(?<![A-Za-z0-9])[A-Za-z]:" in src and "|\\\\\\\\[" in src


def test_detectors_needing_text_a_field_lacks_are_skipped_and_find_the_same():
    text = "mail ann@mail.de, call +44 20 7946 0958, key sk-" + "A1b2C3d4" * 4 + " at 81.2.69.160"
    kinds = [m.kind for m in scan_text(text)]
    assert kinds == [vet.EMAIL, vet.PHONE, vet.API_KEY, vet.IP_ADDRESS]
    assert scan_text("a" * 100_000) == []


def test_ipv4_read_by_octets_agrees_with_ipaddress():
    quads = [f"{a}.{b}.{c}.{d}" for a in (0, 1, 8, 10, 127, 192, 198, 203, 224, 239, 240, 255, 256)
             for b in (0, 2, 51, 168) for c in (0, 2, 100, 113) for d in (0, 1, 9, 160)]
    quads += ["01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.04"]
    assert [vet._ipv4_ok(q) for q in quads] == [vet._ip_ok(q) for q in quads]


def test_a_long_line_of_many_findings_is_read_whole(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_text(json.dumps({"text": "ann@mail.de " * 20_000}) + "\n", encoding="utf-8")
    report = vet_paths([path])
    assert len(report.findings) == 20_000 and not report.errors


def _vet_exit(tmp_path, capsys, text: str, suffix: str = ".jsonl") -> tuple[int, list[str]]:
    path = tmp_path / f"in{suffix}"
    path.write_text(text, encoding="utf-8")
    code = main(["vet", str(path)])
    return code, [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]


def test_numbers_and_nesting_no_reader_agrees_on_make_the_file_unreadable(tmp_path, capsys):
    cases = [
        ('{"a": %s}\n' % ("7" * 5000), "a: the integer 77777777777777777777... (5000 characters) is outside 64 bits"),
        ('{"a": [1, 1e400]}\n', "a[1]: the number 1e400 is outside the finite range"),
        ('{"a": 1, "a": 2}\n', "a: the key 'a' appears twice"),
        ("[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ]
    for text, words in cases:
        for suffix in (".jsonl", ".json"):
            code, err = _vet_exit(tmp_path, capsys, text, suffix)
            assert code == 2 and len(err) == 1 and words in err[0], (suffix, text[:30], err)


#: the detectors whose hits are taken as matched (``strip=False``): each ends in a letter or digit
UNSTRIPPED = [(vet._EMAIL, vet._email_ok), (vet._IBAN, vet.iban_ok), (vet._CARD, vet._card_ok),
              (vet._IPV4, vet._ipv4_ok), *((p, vet._phone_ok) for p in vet._PHONE_PATTERNS),
              (vet._TOKEN_RUN, vet._is_high_entropy)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["ann@mail.de", "81.2.69.160", "+44 20 7946 0958", "4111 1111 1111 1111", "1", "a",
                                 "DE89 3704 0044 0532 0130 00", "AbC9xYz" * 6, ".", ",", ";", ":", "!", "?", " ", "-"]),
                max_size=12).map("".join))
def test_hits_taken_as_matched_are_the_hits_with_trailing_punctuation_shed(text):
    for pattern, ok in UNSTRIPPED:
        assert vet._finditer("k", pattern, text, ok, strip=False) == vet._finditer("k", pattern, text, ok), pattern.pattern


def _email_ok_by_domain(text: str) -> bool:
    """The reserved-address rule read from the domain, label by label."""
    domain = text.rsplit("@", 1)[1].lower()
    if domain in vet.RESERVED_EMAIL_DOMAINS or domain.endswith(tuple("." + d for d in vet.RESERVED_EMAIL_DOMAINS)):
        return False
    return domain.rsplit(".", 1)[-1] not in vet.RESERVED_TLDS


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "example", "EXAMPLE", "com", "org", "test", "invalid", "localhost", "mail", "de"]),
                min_size=1, max_size=4), st.lists(st.sampled_from(["example", "Example", "com", "org", "net", "test",
                                                                    "invalid", "localhost", "mail", "de", "xtest"]),
                                                   min_size=2, max_size=4))
def test_reserved_addresses_read_by_their_ending_as_by_their_domain(local, labels):
    text = ".".join(local) + "@" + ".".join(labels)
    assert vet._email_ok(text) == _email_ok_by_domain(text)


def test_an_allowlist_pattern_past_the_engine_s_limits_is_one_line(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"text": "mail ann@mail.de"}) + "\n", encoding="utf-8")
    for pattern in ("a{99999999999}", "(" * 2000 + ")" * 2000):
        allow = tmp_path / "allow.txt"
        allow.write_text(f"{pattern}  # a reason\n", encoding="utf-8")
        code = main(["vet", str(data), "--allow", str(allow)])
        err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]
        assert code == 2 and len(err) == 1 and f"{allow}:1: pattern: not a regular expression" in err[0], err


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["+44 20 7946 0958", "(202) 555-0143", "202-555-0143", "13800138000", "138-0013-8000",
                                 "020 7946 0958", "01 23 45 67 89", "1", "12", "123", "+", "(", ")", " ", ".", "-", "a"]),
                max_size=10).map("".join))
def test_a_phone_pattern_skipped_for_what_a_text_lacks_would_find_nothing_there(text):
    for pattern, needs in zip(vet._PHONE_PATTERNS, vet._PHONE_NEEDS):
        lacks = (isinstance(needs, str) and needs not in text) or (
            isinstance(needs, re.Pattern) and needs.search(text) is None)
        if lacks:
            assert list(pattern.finditer(text)) == [], (pattern.pattern, text)
