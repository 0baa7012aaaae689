"""tests/python/test_parplan.py — the parplan Python package (python/),
installed with pip by tests/python/run.sh, against the CLI built beside the
library: values equal `parplan ... --format json` for the same inputs,
failures raise parplan.Error with the CLI's exit code and the field, a
10,000-scenario sweep streams in constant memory, and the library is found
or refused with a clear message. Needs PARPLAN_CLI (the parplan binary)."""
import json
import os
import subprocess
import sys

import pytest

import parplan

CLI = os.environ["PARPLAN_CLI"]


def cli(*args, code=0):
    r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == code, "%s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr)
    return r


def cli_json(*args):
    return json.loads(cli(*args, "--format", "json").stdout)


# ---- values equal the CLI's ----

def test_plan_equals_cli_plan_json():
    got = parplan.plan(model="llama3-8b", cluster="dgx-h100", gpus=16, global_batch=256, seq=4096, top=3,
                       tp=[1, 2], zero=[1, 2], train_tokens=1e11)
    want = cli_json("plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--global-batch", "256",
                    "--seq", "4096", "--top", "3", "--tp", "1,2", "--zero", "1,2", "--train-tokens", "1e11")
    assert len(got["plans"]) == 3
    assert got["plans"] == want["plans"]


def test_estimate_equals_cli_estimate_json():
    got = parplan.estimate(model="llama3-70b", cluster="dgx-h100", nodes=4, tp=8, pp=2, zero=1, micro_batch=1,
                           global_batch=64, recompute="selective", sp=True, train_tokens=1e12)
    want = cli_json("estimate", "--model", "llama3-70b", "--cluster", "dgx-h100", "--nodes", "4", "--tp", "8", "--pp",
                    "2", "--zero", "1", "--micro-batch", "1", "--global-batch", "64", "--recompute", "selective",
                    "--sp", "--train-tokens", "1e12")
    assert got == want


def test_estimate_that_does_not_fit_is_a_result_as_in_the_cli():
    got = parplan.estimate(model="llama3-70b", cluster="dgx-h100", gpus=8)
    want = cli_json("estimate", "--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "8")
    assert got == want
    assert got["memory"]["fits"] is False


def test_sweep_rows_equal_cli_sweep_lines(tmp_path):
    spec = {"grid": {"model": ["gpt3-125m", "llama3-8b"], "cluster": ["dgx-a100-80g", "dgx-h100"], "gpus": [8, 16],
                     "global_batch": [256], "seq": [2048]},
            "scenarios": [{"model": "no-such-model", "cluster": "dgx-h100", "global_batch": 8}]}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    lines = cli("sweep", str(path), "--top", "2", code=1).stdout.splitlines()
    rows = list(parplan.sweep(spec, top=2, jobs=2))
    assert rows == [json.loads(l) for l in lines]
    assert [r["index"] for r in rows] == list(range(9))
    assert rows[-1]["error"]["field"] == "$.model"
    assert parplan.sweep_size(spec) == 9
    assert list(parplan.sweep(str(path), top=2, shard=(2, 3), window=2)) == [json.loads(l) for l in lines[1::3]]
    # every field of the options struct reaches the library: framework, skip, window
    fw = cli("sweep", str(path), "--top", "1", "--framework", "megatron,fsdp", "--jobs", "1", code=1).stdout.splitlines()
    rows = list(parplan.sweep(spec, top=1, framework=["megatron", "fsdp"], skip=[0, 5], window=1, jobs=1))
    assert rows == [json.loads(l) for i, l in enumerate(fw) if i not in (0, 5)]
    assert rows[0]["scenario"]["framework"] == ["megatron", "fsdp"]


# ---- errors ----

@pytest.mark.parametrize("call,code,field,words", [
    (lambda: parplan.plan(model="no-such-model", cluster="dgx-h100", global_batch=8), 2, "model", "unknown model"),
    (lambda: parplan.plan(model="llama3-8b", cluster="dgx-h100", global_batch=8, tpp=2), 2, "tpp", "unknown key"),
    (lambda: parplan.plan(model="llama3-8b", cluster="dgx-h100", gpus=8, global_batch=8, tp=3), 2, "tp", "must divide"),
    (lambda: parplan.plan(model="gpt3-175b", cluster="dgx-h100", gpus=1, global_batch=8, offload="none"), 1, None,
     "nothing fits"),
    (lambda: parplan.estimate(model="llama3-8b", cluster="dgx-h100", zero=4), 2, "zero", "expected an integer in [0, 3]"),
    (lambda: parplan.estimate(model="llama3-8b", cluster="dgx-h100", recompute="some"), 2, "recompute",
     "none|selective|full"),
    (lambda: parplan.sweep_size({"grid": {"model": []}}), 2, "grid.model", "expected a non-empty list"),
    (lambda: list(parplan.sweep({"gird": {}})), 2, "gird", 'did you mean "grid"'),
    (lambda: list(parplan.sweep('{"grid": ')), 2, "$", "malformed"),
    # as the CLI (red team rt12): a spec that cannot be read, a NaN named by its key
    (lambda: list(parplan.sweep("no-such-spec.json")), 2, None, "no-such-spec.json"),
    (lambda: parplan.sweep_size("/"), 2, None, "/"),
    (lambda: parplan.plan(model="llama3-8b", cluster="dgx-h100", global_batch=8, train_tokens=float("nan")), 2,
     "train_tokens", "finite"),
])
def test_errors_raise_with_exit_code_field_and_message(call, code, field, words):
    with pytest.raises(parplan.Error) as e:
        call()
    assert e.value.exit_code == code
    assert e.value.field == field
    assert words in e.value.message


def test_the_cli_gives_the_same_exit_code():
    r = cli("plan", "--model", "no-such-model", "--cluster", "dgx-h100", "--global-batch", "8", code=2)
    assert "unknown model" in r.stderr


# ---- streaming ----

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_10000_scenario_sweep_streams_in_constant_memory():
    spec = {"grid": {"model": ["gpt3-125m", "gpt3-350m"], "cluster": ["dgx-a100-80g", "dgx-h100"],
                     "gpus": [1, 2, 4, 8, 16], "global_batch": list(range(16, 16 * 101, 16)), "seq": [512, 1024, 2048, 4096, 8192],
                     "tp": 1, "pp": 1, "zero": 1, "micro_batch": 1, "precision": "bf16", "recompute": "none",
                     "offload": "none"}}
    assert parplan.sweep_size(spec) == 10000
    n, rss_at_1000 = 0, None
    for row in parplan.sweep(spec, top=1):
        assert row["index"] == n
        n += 1
        if n == 1000:
            rss_at_1000 = rss_bytes()
    growth = rss_bytes() - rss_at_1000
    # 9,000 more rows of ~2 KB JSON each: kept as dicts they would be
    # hundreds of MB; streamed, the process barely grows
    assert n == 10000
    assert growth < 64 * 2**20, "RSS grew by %.1f MiB over 9,000 rows" % (growth / 2**20)


def test_closing_a_sweep_early_stops_it():
    spec = {"grid": {"model": ["gpt3-125m"], "cluster": ["dgx-a100-80g"], "gpus": [1, 2, 4, 8],
                     "global_batch": list(range(8, 8 * 201, 8)), "top": 1}}
    rows = parplan.sweep(spec)
    first = [next(rows) for _ in range(3)]
    rows.close()
    assert [r["index"] for r in first] == [0, 1, 2]
    assert [r["index"] for r in parplan.sweep(spec, skip=range(0, 799))] == [799]


def test_to_pandas_only_with_pandas():
    rows = list(parplan.sweep({"scenarios": [{"model": "gpt3-125m", "cluster": "dgx-a100-80g", "gpus": 1,
                                              "global_batch": 8, "top": 1}]}))
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="python3-pandas"):
            parplan.to_pandas(rows)
        return
    df = parplan.to_pandas(rows)
    assert df["plan.throughput.tokens_per_s"][0] == rows[0]["plans"][0]["throughput"]["tokens_per_s"]


# ---- finding the library ----

def run_python(code, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("PARPLAN_LIB", "PARPLAN_BUILD_DIR")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)


def test_a_missing_library_gives_a_clear_error():
    r = run_python("import parplan; parplan.version()", PARPLAN_LIB="/nonexistent/libparplan.so")
    assert r.returncode != 0
    assert "LibraryNotFound" in r.stderr
    assert "PARPLAN_LIB=/nonexistent/libparplan.so does not exist" in r.stderr
    assert "make install" in r.stderr


def test_the_library_is_found_without_parplan_lib():
    """Through pkg-config, or the build tree of the checkout it was installed from."""
    build = os.path.dirname(os.environ["PARPLAN_LIB"])
    r = run_python("import parplan; print(parplan.library_path()); print(parplan.version())", PARPLAN_BUILD_DIR=build)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[1] == parplan.version()
