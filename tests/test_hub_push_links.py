"""What push sends, against the Hub stand-in: no symbolic link followed, each refused in one line
before any request."""

from __future__ import annotations

import os

import _hub_util as u
from _hub_util import TOKEN, hub  # noqa: F401  (the fixture)

REPO = "org/interleavebench"


def test_a_symbolic_link_is_refused_and_nothing_is_sent(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    outside = tmp_path / "outside.txt"
    outside.write_text("not for the Hub\n", encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(outside, folder / "v0" / "notes.txt")
    os.symlink(tmp_path / "elsewhere", folder / "more")
    os.symlink("../README.md", folder / "v0" / "card.md")  # inside the folder: refused all the same
    tail = "push uploads only the folder's own files; copy the file in or remove the link (nothing was sent)"
    u.refused_before_sending(hub, capsys, ["push", str(folder), "--repo", REPO],
             f"{folder / 'more'}: a symbolic link (to {tmp_path / 'elsewhere'}): {tail}",
             f"{folder / 'v0' / 'card.md'}: a symbolic link (to ../README.md): {tail}",
             f"{folder / 'v0' / 'notes.txt'}: a symbolic link (to {outside}): {tail}")


def test_the_folder_itself_may_be_a_link(hub, tmp_path, capsys):
    folder = u.exported(tmp_path, capsys)
    link = tmp_path / "linked"
    os.symlink(folder, link)
    code, _, err = u.cli(["push", str(link), "--repo", REPO, "--revision", "v1"], capsys)
    assert code == 0, err
    assert "v0/dev-00000-of-00001.parquet" in hub.files(REPO, "v1")

