"""``vet``: planted secrets and personal data are found with the right field and kind; look-alikes are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import _hub_util as u
from interleave_bench.vet import (
    API_KEY,
    CARD,
    EMAIL,
    HIGH_ENTROPY,
    IBAN,
    IP_ADDRESS,
    KINDS,
    LOCAL_PATH,
    PHONE,
    URL_CREDENTIALS,
    iban_ok,
    luhn_ok,
    mask,
    scan_text,
    vet_paths,
)

#: one planted value per kind and language, each written the way it would appear in that language
PLANTS = {
    API_KEY: {"en": "my key is sk-proj-Abc123XyZ789defGHI456jklMNO012pqr, keep it",
              "zh": "我的密钥是hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789，别外传"},
    HIGH_ENTROPY: {"en": "the secret is Zx9Qm3LpV7tR2sW8yB4nK6jH1dF5gA0c for now",
                   "zh": "口令是Qw7Er4Ty1Ui8Op5As2Df9Gh6Jk3Lz0Xc，记住"},
    EMAIL: {"en": "write to jane.doe@gmail.com about it", "zh": "请发到邮箱zhang.wei@qq.com。"},
    PHONE: {"en": "call me on +44 20 7946 0958 tonight", "zh": "我的手机13812345678，随时打"},
    IBAN: {"en": "pay to DE89 3704 0044 0532 0130 00 by Friday", "zh": "转账到账户GB82WEST12345698765432即可"},
    CARD: {"en": "my card 4111 1111 1111 1111 expires soon", "zh": "卡号5555555555554444，有效期到明年"},
    URL_CREDENTIALS: {"en": "the db is postgres://admin:s3cretPass@db.internal:5432/app now",
                      "zh": "接口地址https://api.shop.cn/v1?token=abcd1234efgh5678，别公开"},
    LOCAL_PATH: {"en": "I saved it in /home/alice/reports/q3.xlsx yesterday",
                 "zh": r"文件在C:\Users\zhangwei\Desktop\报税.pdf，你看看"},
    IP_ADDRESS: {"en": "ssh into 192.168.1.20 and restart it", "zh": "服务器地址是10.0.0.5。"},
}

#: dates, prices, versions, times, counts and this project's ids: none of them is a finding
LOOK_ALIKES = {
    "en": [
        "2024-05-14", "14/05/2024", "May 14, 2024", "2024-05-14 10:30:00", "2024.05.14", "14-19 May",
        "$1,299.00", "1.299,00 €", "12 000 000 000", "1,234,567,890", "EUR 2,400", "+15%", "50-60%",
        "v1.2.3", "3.11.7", "Python 3.12", "2.0.0-rc.1", "10.15.7", "1.2.3.4", "v2024.05.14.1", "HTTP/1.1 200",
        "zh-0001", "zh-0001-p1", "en-0042", "t2", "en-06", "sha256:bf7007d3b708f30c",
        "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f", "550e8400-e29b-41d4-a716-446655440000",
        "10:30 am", "09:00-17:00", "9:30:15", "6:10/km", "6 x 400 m", "1920x1080", "ISBN 978-3-16-148410-0",
        "order 20240514", "1715673600", "1715673600000", "room 101-203", "pages 120-135", "300 000 000 users",
        "getUserProfileByIdentifierAndVersion2", "datetime.utcnow()", "std::vector<int>", "/usr/local/bin/python",
        "/etc/nginx/nginx.conf", "~/notes.txt", "jane@example.com", "192.0.2.10", "127.0.0.1", "0.0.0.0",
    ],
    "zh": [
        "2024年5月14日", "5月14日到19日", "10月8日飞昆明", "共计 12,345.67 元", "¥12,000", "3.5万元", "预算13800元",
        "版本 3.11.7", "编号 zh-0001-p3", "会话 zh-0001", "线程 t2", "下午3:30", "第7周跑14公里",
        "身高175厘米", "每月600美元", "2024-2025学年", "电话号码我晚点发你",
    ],
}

#: the field of each field type where a value is planted
FIELDS = {
    "user message": "turns[1].text",
    "assistant reply": "turns[2].assistant",
    "thread card": "threads[0].description",
    "persona": "persona",
    "fact": "threads[1].facts[0].value",
    "probe question": "probes[0].question",
    "probe gold": "probes[0].gold",
    "probe decoy": "probes[0].decoys[1]",
}


def _set(obj, path: str, value: str) -> None:
    """Set a JSON path such as ``turns[2].assistant`` in ``obj``."""
    parts = path.replace("]", "").replace("[", ".").split(".")
    for k, p in enumerate(parts):
        key = int(p) if p.isdigit() else p
        if k == len(parts) - 1:
            obj[key] = value
        else:
            obj = obj[key]


def _session(sid: str, lang: str) -> dict:
    s = u.session(sid, lang=lang, version="interleave-v1")
    for t in s["turns"]:
        t.pop("reply", None)
        t["assistant"] = "Noted." if lang == "en" else "好的。"
    s["probes"] = [{"id": f"{sid}-p1", "after": 4, "thread": "t3", "source": "t2", "key": "budget", "category": "cross",
                    "gold": "300 EUR", "decoys": ["250 EUR", "280 EUR"], "question": "What is the budget now?"}]
    s["timeline"] = [{"thread": "t2", "key": "budget", "turn": 1, "kind": "intro", "status": "confirmed", "value": "300 EUR"}]
    return s


def _case_file(texts: list[tuple[str, str]], planted_request: bool = False) -> dict:
    f = u.case_file()
    f["cases"] = []
    for k, (lang, text) in enumerate(texts):
        topic = "trip" if lang == "en" else "tax"
        request = text if planted_request else "go on"
        f["cases"].append({"id": f"{lang}-{k:02d}", "lang": lang, "running": {"topicId": topic, "request": request, "progress": ""},
                           "how": "queued", "text": text, "expect": "running", "tags": []})
    return f


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _write_case_file(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_every_planted_kind_is_found_in_every_field_type_in_both_languages(tmp_path):
    rows, expected = [], set()
    for kind in KINDS:
        for lang in ("en", "zh"):
            for ftype, fld in FIELDS.items():
                s = _session(f"{lang}-{len(rows):04d}", lang)
                _set(s, fld, PLANTS[kind][lang])
                rows.append(s)
                expected.add((len(rows), fld, kind))
    data = _write_jsonl(tmp_path / "data" / "sessions.jsonl", rows)
    cases = [(lang, PLANTS[kind][lang]) for kind in KINDS for lang in ("en", "zh")]
    case_path = _write_case_file(tmp_path / "cases.json", _case_file(cases, planted_request=True))

    report = vet_paths([data.parent, case_path])
    assert not report.errors
    got = {(f.line, f.field, f.kind) for f in report.findings if f.path == str(data)}
    assert got == expected
    in_cases = sorted((f.field, f.kind) for f in report.findings if f.path == str(case_path))
    planted = [kind for kind in KINDS for _ in ("en", "zh")]
    assert in_cases == sorted([(f"cases[{k}].text", kind) for k, kind in enumerate(planted)]
                              + [(f"cases[{k}].running.request", kind) for k, kind in enumerate(planted)])
    # the line of a finding in a JSON document is the line its string is on
    lines = case_path.read_text(encoding="utf-8").splitlines()
    for f in report.findings:
        if f.path == str(case_path):
            assert f'"{f.field.rsplit(".", 1)[-1]}"' in lines[f.line - 1]


def test_look_alikes_give_no_finding_in_any_field(tmp_path):
    rows = []
    for lang, values in LOOK_ALIKES.items():
        for v in values:
            for fld in FIELDS.values():
                s = _session(f"{lang}-{len(rows):04d}", lang)
                _set(s, fld, f"{v}" if lang == "zh" else f"see {v} there")
                rows.append(s)
    data = _write_jsonl(tmp_path / "sessions.jsonl", rows)
    case_path = _write_case_file(tmp_path / "cases.json",
                                 _case_file([(lang, v) for lang, vs in LOOK_ALIKES.items() for v in vs]))
    report = vet_paths([data, case_path])
    assert [f.format() for f in report.findings] == []
    assert report.strings > len(rows) * len(FIELDS)


def test_the_shipped_cases_and_offline_data_are_clean(tmp_path):
    from interleave_bench.generate import generate_offline

    data = generate_offline(6, tmp_path / "off", seed=5)
    cases = Path(__file__).resolve().parents[1] / "interleave_bench" / "data" / "mid_reply" / "cases.json"
    report = vet_paths([data.parent, cases])
    assert report.clean and report.files and report.records == 6 + 1 + 1


# --- the checks that keep numbers from being flagged ----------------------------------------------------


def test_luhn_and_iban_checksums_by_hand():
    assert luhn_ok("4111111111111111") and luhn_ok("79927398713")
    assert not luhn_ok("4111111111111112") and not luhn_ok("79927398710")
    assert iban_ok("DE89 3704 0044 0532 0130 00") and iban_ok("GB82WEST12345698765432")
    assert not iban_ok("DE88 3704 0044 0532 0130 00") and not iban_ok("GB82WEST1234569876543")
    # the same shape with a wrong check digit is not a finding
    assert scan_text("card 4111 1111 1111 1112") == []
    assert scan_text("IBAN DE88 3704 0044 0532 0130 00") == []


@pytest.mark.parametrize("text,kind", [
    ("+86 138 0013 8000", PHONE), ("(202) 555-0143", PHONE), ("020 7946 0958", PHONE), ("01 23 45 67 89", PHONE),
    ("3782 822463 10005", CARD), ("2001:4860:4860::8888", IP_ADDRESS), ("AKIAIOSFODNN7EXAMPLE", API_KEY),
    ("ghp_0123456789abcdefghijABCDEFGHIJ012345", API_KEY), ("-----BEGIN RSA PRIVATE KEY-----", API_KEY),
    ("/Users/zhangwei/文档/报告.docx", LOCAL_PATH), ("ｊａｎｅ＠ｇｍａｉｌ．ｃｏｍ", EMAIL),
])
def test_more_shapes_of_each_kind(text, kind):
    assert [m.kind for m in scan_text(f"x {text} y")] == [kind]


def test_overlapping_hits_are_reported_once_by_the_first_kind():
    # the password inside the URL is not also an e-mail address; the key in the query is an api-key
    assert [m.kind for m in scan_text("postgres://bob:pw1234567@mail.corp.com/db")] == [URL_CREDENTIALS]
    assert [m.kind for m in scan_text("https://x.io/?key=AIzaSyA1234567890abcdefghijklmnopqrstuv")] == [API_KEY]


def test_a_url_whose_secret_is_the_redaction_placeholder_holds_no_credential(tmp_path, capsys):
    # what the project writes for a --router URL's password or secret parameter: no credential left
    for url in ("http://acme:[redacted]@127.0.0.1:18765/route", "https://router.corp.io/route?token=[redacted]",
                "see https://router.corp.io/route?user=a&key=[redacted]."):
        assert scan_text(url) == [], url
    # a real password or value beside the placeholder, or the placeholder as part of one, still is
    for url in ("http://acme:[redacted]x@router.corp.io/", "http://acme:hunter2pw@router.corp.io/",
                "https://router.corp.io/route?token=[redacted]&key=abcd1234efgh5678"):
        assert [m.kind for m in scan_text(url)] == [URL_CREDENTIALS], url
    record = tmp_path / "d" / "closed-sticky.run.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"options": {"router": "http://acme:[redacted]@127.0.0.1:18765/route"}}, indent=2))
    code, out, _ = u.cli(["vet", str(record.parent)], capsys)
    assert code == 0, out
    assert "0 findings" in out


@pytest.mark.parametrize("text, found", [
    # a placeholder URL, then another URL in the same run of URL characters: each judged on its own
    ("mirrors: http://ci:[redacted]@proxy.example,https://deploy:RealPassw0rd@db.example/x",
     "https://deploy:RealPassw0rd@db.example/x"),
    ("http://ci:[redacted]@proxy.example/login?next=https://deploy:RealPassw0rd@db.example/x",
     "https://deploy:RealPassw0rd@db.example/x"),
    ("http://a:[redacted]@x.example,http://b:[redacted]@y.example,ftp://c:hunter2pw@z.example.",
     "ftp://c:hunter2pw@z.example"),
])
def test_a_url_credential_after_a_placeholder_url_is_found(tmp_path, capsys, text, found):
    assert [(m.kind, m.text) for m in scan_text(text)] == [(URL_CREDENTIALS, found)]
    assert scan_text(text.replace(found, "https://ok.example/x")) == []  # the placeholder URLs alone: none
    path = tmp_path / "notes.jsonl"
    path.write_text(json.dumps({"note": text}) + "\n", encoding="utf-8")
    code, out, _ = u.cli(["vet", str(path)], capsys)
    assert code == 1, out
    assert "url-credentials" in out and "RealPassw0rd" not in out and "hunter2pw" not in out


def test_a_url_credential_finding_runs_to_its_run_end_and_the_next_run_is_read():
    text = "http://acme:hunter2pw@router.corp.io/a,http://b:zzzzzzzz@y.io/ then http://c:yyyyyyyy@z.io/."
    assert [m.text for m in scan_text(text)] == ["http://acme:hunter2pw@router.corp.io/a,http://b:zzzzzzzz@y.io/",
                                                 "http://c:yyyyyyyy@z.io/"]


_dates = st.dates().flatmap(lambda d: st.sampled_from([
    f"{d:%Y-%m-%d}", f"{d:%d/%m/%Y}", f"{d:%d.%m.%Y}", f"{d:%Y%m%d}", f"{d:%B %d, %Y}", f"{d.year}年{d.month}月{d.day}日",
    f"{d:%Y-%m-%d} {d.day % 24:02d}:{d.month:02d}:00",
]))
_prices = st.decimals(min_value=0, max_value=10**9, places=2).flatmap(lambda x: st.sampled_from([
    f"${x:,.2f}", f"{x:,.2f} €", f"¥{int(x):,}", f"{int(x):,} 元", f"{x} EUR", f"{int(x):,}".replace(",", " ") + " kr",
]))
_versions = st.tuples(*[st.integers(0, 999)] * 4).flatmap(lambda v: st.sampled_from([
    f"{v[0]}.{v[1]}.{v[2]}", f"v{v[0]}.{v[1]}.{v[2]}.{v[3]}", f"{v[0]}.{v[1]}.{v[2]}-rc.{v[3]}", f"Python {v[0] % 4}.{v[1]}",
]))
_ids = st.tuples(st.sampled_from(["en", "zh"]), st.integers(0, 9999), st.integers(1, 8)).flatmap(lambda t: st.sampled_from([
    f"{t[0]}-{t[1]:04d}", f"{t[0]}-{t[1]:04d}-p{t[2]}", f"t{t[2]}", f"{t[0]}-{t[2]:02d}",
]))


@given(st.one_of(_dates, _prices, _versions, _ids), st.sampled_from(["{} ", "on {} ok", "截至{}为止", "({})", "{}。"]))
def test_no_date_price_version_or_id_is_ever_a_finding(value, frame):
    assert scan_text(frame.format(value)) == []


@given(st.text(min_size=0, max_size=80))
def test_masking_shows_at_most_a_quarter_and_keeps_the_length(text):
    m = mask(text)
    assert len(m) == len(text)
    visible = sum(1 for a, b in zip(text, m) if a == b and b != "*")
    assert visible <= len(text) // 4


# --- the command ---------------------------------------------------------------------------------------


def test_cli_prints_masked_findings_and_exits_1_and_never_the_secret(tmp_path, capsys):
    secret = "sk-proj-Abc123XyZ789defGHI456jklMNO012pqr"
    s = _session("en-0000", "en")
    s["turns"][3]["text"] = f"use {secret}"
    data = _write_jsonl(tmp_path / "d" / "sessions.jsonl", [s])
    code, out, err = u.cli(["vet", str(data.parent)], capsys)
    assert code == 1
    assert f"{data}:1: turns[3].text: api-key: sk-" in out
    assert secret not in out + err
    assert "1 finding (api-key 1), 0 allowed" in out


def test_a_secret_or_an_address_used_as_a_field_name_is_found_and_masked_in_its_path(tmp_path, capsys):
    """An unknown field's name is published (the dataset's ``extra`` column): vet reads keys as it reads values."""
    secret = "sk-proj-Abc123XyZ789defGHI456jklMNO012pqr"
    s = _session("en-0000", "en")
    s[secret] = True
    s["contact"] = {"alice.smith@gmail.com": {"note": "call alice.smith@gmail.com"}}
    data = _write_jsonl(tmp_path / "d" / "sessions.jsonl", [s])
    doc = _write_case_file(tmp_path / "cases.json", {**_case_file([("en", "hello")]), "owner": {secret: 1}})
    code, out, err = u.cli(["vet", str(data), str(doc)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert any(x.startswith(f"{data}:1: sk-") and " (key): api-key: sk-" in x for x in lines), out
    assert any(x.startswith(f"{data}:1: contact.al") and " (key): email: al" in x for x in lines), out
    # the value under that key is found too, and its path shows the key masked
    assert any(x.startswith(f"{data}:1: contact.al") and ".note: email: al" in x for x in lines), out
    assert any(x.startswith(f"{doc}:") and "owner.sk-" in x and " (key): api-key: sk-" in x for x in lines), out
    assert secret not in out + err and "alice.smith@gmail.com" not in out + err


def test_digests_are_not_vetted_but_what_else_their_fields_hold_is(tmp_path, capsys):
    """A run record's digests are hex a program computed: their digits can take a phone number's
    shape ("b13473509355efd6"), and vetting them cried wolf on every run record of the SGD data."""
    digest = "b13473509355efd6"
    assert [m.kind for m in scan_text(digest)] == [PHONE]  # out of a digest's place, it is a finding
    sha = "sha256:" + digest * 4
    record = {
        "format": "interleave-run-v1", "data_sha256": sha, "predictions_sha256": sha,
        "provenance": {"git_commit": digest * 2 + "0" * 8, "data": sha, "predictions": sha},
        "data_fingerprints": {"sgd": sha},
        "conversation_digests": {"sgd-19_00052": digest, "sgd-1_00001": "+44 20 7946 0958", "13812345678": digest},
        "note": digest,
    }
    doc = tmp_path / "d" / "closed-bm25.run.json"
    doc.parent.mkdir()
    doc.write_text(json.dumps(record, indent=1), encoding="utf-8")
    line = _write_jsonl(tmp_path / "d" / "runs.jsonl", [record])
    code, out, err = u.cli(["vet", str(doc.parent)], capsys)
    assert code == 1
    found = sorted(x.split(": ", 1)[1] for x in out.splitlines() if x.startswith(str(tmp_path)))
    # in each file: the text in a digests field, a key there, and the digest written where no digest goes
    assert found == sorted(2 * ["conversation_digests.sgd-1_00001: phone: +4************58",
                                "conversation_digests.1*********8 (key): phone: 1*********8", "note: phone: 1*********5"]), out
    assert f"{line}:1: note: " in out and f"{doc}:" in out


def test_allowlist_accepts_known_fakes_with_a_reason(tmp_path, capsys):
    s = _session("en-0000", "en")
    s["turns"][1]["text"] = "write to ops@acme-widgets.com or jane.doe@gmail.com"
    data = _write_jsonl(tmp_path / "sessions.jsonl", [s])
    allow = tmp_path / "vet-allow.txt"
    allow.write_text("# known fakes\nemail:.*@acme-widgets\\.com  # the persona's company is invented\n"
                     "phone:\\+1 555 .*  # 555 numbers are fictional\n", encoding="utf-8")
    code, out, err = u.cli(["vet", str(data), "--allow", str(allow)], capsys)
    assert code == 1 and out.count(": email: ") == 1 and "1 allowed" in out
    assert f"{allow}:3: pattern accepted no finding" in err
    allow.write_text("email:.*  # every address in this test is invented\n", encoding="utf-8")
    code, out, _ = u.cli(["vet", str(data), "--allow", str(allow), "--show-allowed"], capsys)
    assert code == 0 and "allowed by" in out and "0 findings, 2 allowed" in out


@pytest.mark.parametrize("line,message", [
    ("email:.*@acme\\.com", ":1: expected `[KIND:]PATTERN  # REASON`"),
    ("mail:.*  # wrong kind", ":1: kind: 'mail' is not one of"),
    ("([  # broken", ":1: pattern: not a regular expression"),
])
def test_a_bad_allowlist_is_one_line_exit_2(tmp_path, capsys, line, message):
    data = _write_jsonl(tmp_path / "sessions.jsonl", [_session("en-0000", "en")])
    allow = tmp_path / "vet-allow.txt"
    allow.write_text(line + "\n", encoding="utf-8")
    code, _, err = u.cli(["vet", str(data), "--allow", str(allow)], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_unreadable_input_exits_2_naming_the_file_and_line(tmp_path, capsys):
    good = _write_jsonl(tmp_path / "sessions.jsonl", [_session("en-0000", "en")])
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"a": "b"}\n{not json\n', encoding="utf-8")
    code, _, err = u.cli(["vet", str(good), str(bad), str(tmp_path / "missing.json")], capsys)
    assert code == 2
    assert f"error: {bad}:2: invalid JSON" in err and f"error: {tmp_path / 'missing.json'}: no such file" in err


def test_a_folder_with_nothing_to_vet_is_an_input_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, err = u.cli(["vet", str(tmp_path / "empty")], capsys)
    assert code == 2 and f"error: {tmp_path / 'empty'}: no .jsonl or .json files in this folder" in err


def test_nothing_readable_is_the_error_lines_alone(tmp_path, capsys):
    """With no input read at all, the error lines are the whole output: no summary of nothing."""
    code, out, err = u.cli(["vet", str(tmp_path / "missing.json"), str(tmp_path / "gone")], capsys)
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: {tmp_path / 'missing.json'}: no such file or folder",
                                f"error: {tmp_path / 'gone'}: no such file or folder"]


def test_a_json_document_in_a_jsonl_file_is_named_for_what_it_is(tmp_path, capsys):
    """A score file or a manifest saved as .jsonl was shown as broken JSON at its first line; vet
    names the document and says what it reads."""
    from interleave_bench.cli import main

    reads = "vet reads a .jsonl file as JSON Lines, one record a line, and a JSON document from a .json file"
    docs = {"score.jsonl": ({"format": "interleave-score-v1", "system": "x"}, "a score document (interleave-score-v1)"),
            "manifest.jsonl": ({"version": "interleave-v0", "writer": "templates"}, "a manifest")}
    for name, (doc, words) in docs.items():
        path = tmp_path / name
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        assert main(["vet", str(path)]) == 2
        err = capsys.readouterr().err
        assert [x for x in err.splitlines() if x.startswith("error:")] == [f"error: {path}: {words} in a .jsonl file: {reads}"]
    # the same document on one line is a record: vetted as one
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"format": "interleave-score-v1", "system": "x"}) + "\n", encoding="utf-8")
    assert main(["vet", str(one)]) == 0


@given(st.sampled_from(["13800138000", "+44 20 7946 0958", "4111 1111 1111 1111"]),
       st.sampled_from(["hash", "data_sha256", "conversation_digests", "fingerprint"]))
def test_a_number_in_a_digest_field_is_still_read(number, field):
    """Only a hash's name may stand before a hex digest: ``13800138000:deadbeef`` in a field named
    for digests is read, and the number in it found."""
    from interleave_bench import vet

    assert not vet.is_digest(f"{number.replace(' ', '')}:deadbeef", in_digest_field=vet.names_digests(field))
    assert vet.is_digest("sha256:" + "ab" * 32, in_digest_field=False)
    assert vet.is_digest("git:deadbeef1", in_digest_field=True)
