"""A wheel (not just a checkout) carries everything the commands read at run time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_data_prompts_and_card_templates(built_wheel):
    names = set(zipfile.ZipFile(built_wheel).namelist())
    shipped_data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "interleave_bench" / "data").rglob("*") if p.is_file()
                    and "__pycache__" not in p.parts}
    assert shipped_data and shipped_data <= names, sorted(shipped_data - names)
    cards = {p.name for p in (ROOT / "dataset_card").iterdir() if p.is_file()}
    in_wheel = {n.rsplit("/", 1)[-1] for n in names if "/share/interleave-bench/dataset_card/" in n}
    assert cards and cards == in_wheel


# --- the built wheel in a fresh venv, no checkout ---------------------------------------------------------

WHEEL_CHILD = r"""
import doctest, importlib.util, json, os, sys

import evaluate
import interleave_bench

inputs = json.load(open(sys.argv[1], encoding="utf-8"))
report = {"package": interleave_bench.__file__, "cwd": os.getcwd(), "doctests": {}, "results": {}}
for name in interleave_bench.metric_names():
    path = interleave_bench.metric_path(name)
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report["doctests"][name] = [result.attempted, result.failed]
routing = evaluate.load(interleave_bench.metric_path("interleave_routing"))
for case, kwargs in inputs.items():
    report["results"][case] = routing.compute(**kwargs)
print("REPORT " + json.dumps(report))
"""


def _venv_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that must see the venv's wheel only: no PYTHONPATH, caches in tmp, offline."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({
        "HF_MODULES_CACHE": str(tmp_path / "hf-modules"), "HF_EVALUATE_CACHE": str(tmp_path / "hf-evaluate"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"), "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "INTERLEAVE_NO_PROGRESS": "1",
    })
    return env


def see_this_environment(python: Path) -> None:
    """Let the venv of ``python`` see the packages of the interpreter running the tests.

    ``--system-site-packages`` shows the *base* interpreter's packages; when the tests run inside
    a virtual environment, its packages (the ones ``pip install -e ".[test]"`` put there) live in
    that environment's site-packages instead, so they are added by a ``.pth`` file, after the
    venv's own (the wheel) and before the base interpreter's. A ``.pth`` line only adds a folder:
    the ``.pth`` files inside it (an editable install of the checkout) are not run, so the venv
    still imports the wheel.
    """
    import site

    if sys.prefix == sys.base_prefix:
        return  # not in a venv: the base interpreter's packages are this environment's
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "outer-environment.pth").write_text("".join(p + "\n" for p in site.getsitepackages()),
                                                          encoding="utf-8")


def test_the_wheel_in_a_fresh_venv_loads_every_metric_from_anywhere_and_matches_score_json(tmp_path, built_wheel):
    """Build the wheel (no build isolation, no download), install it into a venv that takes its
    dependencies from this machine (``--system-site-packages``, no network), and from a folder
    outside the checkout: every metric loads by ``metric_path``, its examples pass, and the routing
    module's numbers equal ``interleave-bench score --json`` of the same venv."""
    from test_score_evaluate import evaluate_inputs
    from test_score_metrics import C1_LABELS, c1

    from _score_util import write_jsonl

    wheel = built_wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    see_this_environment(python)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--ignore-installed",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _venv_env(tmp_path)
    s, r = c1()
    bare = [{k: v for k, v in row.items() if k in ("session_id", "i", "pred", "mode", "refs")} for row in r]
    data = write_jsonl(elsewhere / "sessions.jsonl", [s])
    pred = write_jsonl(elsewhere / "run.jsonl", bare)
    cli = subprocess.run([str(venv / "bin" / "interleave-bench"), "score", str(data), str(pred), "--json",
                          "--split", "all", "--bootstrap", "0"], capture_output=True, text=True, env=env,
                         cwd=elsewhere, timeout=300)
    assert cli.returncode == 0, cli.stderr[-2000:]
    expected = json.loads(cli.stdout)["metrics"]

    inputs = elsewhere / "inputs.json"
    inputs.write_text(json.dumps({"c1": evaluate_inputs([s], {"c1": C1_LABELS}, "closed",
                                                        {("c1", x["i"]): x["refs"] for x in r if "refs" in x})}))
    child = subprocess.run([str(python), "-c", WHEEL_CHILD, str(inputs)], capture_output=True, text=True, env=env,
                           cwd=elsewhere, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    line = next(x for x in child.stdout.splitlines() if x.startswith("REPORT "))
    report = json.loads(line[len("REPORT "):])
    assert Path(report["package"]).resolve().is_relative_to(venv.resolve()), report["package"]  # the wheel, not a checkout
    assert set(report["doctests"]) >= {"interleave_routing", "interleave_bcubed", "interleave_mid_reply"}
    for name, (attempted, failed) in report["doctests"].items():
        assert attempted >= 4 and failed == 0, (name, child.stdout[-3000:])
    assert report["results"]["c1"] == expected
