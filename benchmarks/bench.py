#!/usr/bin/env python3
"""etscope vs ExecuTorch's Inspector on a 1000-run tiny-Llama ETDump, and etscope alone on 10M events.

    python benchmarks/bench.py [--big1000 /tmp/big1000.etdump] [--etrecord llama.etrecord]
                               [--et-python /work/venv-oracle/bin/python] [--events 10e6]
                               [--out BENCHMARKS.md] [--repeat 5] [--inspector-repeat 2] [--qnn]

The goals of issue 20 are reported side by side, as ratios measured in the same run:
etscope `summary --json` (with the ETRecord) against the Inspector (with the ETRecord) on the
1000-run file, whole process each; `summary`, `llm` and `report` on 10M events against reading
that file once with `np.fromfile` (best of three up front and one before each etscope run); `etscope --help` and `summary` of the packaged
sample against their time budgets.

Every measurement is a separate child process: its wall time (time.perf_counter around the child)
and its peak RSS (``os.wait4`` rusage, ``ru_maxrss``, what ``/usr/bin/time -v`` calls "Maximum
resident set size"). The Inspector runs in the ExecuTorch venv (torch + executorch), etscope in
this interpreter. Runs of the two tools alternate, so a machine that gets busier slows both alike.

Inputs (made when missing):

* the 1000-run tiny-Llama ETDump: ``tools/make_fixtures.py --big 1000 PATH --big-only`` in the
  ExecuTorch venv (~200 s);
* ``llama_10m.etdump``: that file's runs replicated to 10M events (benchmarks/replicate_etdump.py);
* ``qnn_10m.etdump`` (with ``--qnn``): a synthetic QNN ETDump of 10M events (tools/synth_qnn_etdump.py
  --big-events).

Results go to BENCHMARKS.md (machine description, every sample, medians, targets) and are printed.
Only this script's section of BENCHMARKS.md (between its begin/end markers) is rewritten; the
sections other scripts wrote stay as they are.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ETRECORD = Path(os.environ.get("ETSCOPE_SHARED_DATA", REPO.parent / "shared" / "data")) / "executorch-cpu" / "llama.etrecord"
SMALL = REPO / "src/etscope/data/sample_cnn.etdump"

INSPECTOR = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
t0 = time.perf_counter()
from executorch.devtools import Inspector
t1 = time.perf_counter()
kw = {"etrecord": sys.argv[2]} if len(sys.argv) > 2 else {}
inspector = Inspector(etdump_path=sys.argv[1], **kw)
t2 = time.perf_counter()
table = inspector.to_dataframe().to_string()     # the per-event table the CLI prints
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "construct_s": t2 - t1, "table_s": t3 - t2, "rows": table.count("\n")}))
"""


STAGES = r"""
import json, resource, sys, time
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {}
t = time.perf_counter()
from etscope.formats.etdump import read_etdump
from etscope import profile as P
from etscope.analysis import placement, ops, qnn
d = read_etdump(sys.argv[1]); out["read"] = (time.perf_counter() - t, rss()); t = time.perf_counter()
p = P.build(d); out["build"] = (time.perf_counter() - t, rss()); t = time.perf_counter()
placement.breakdown(p); placement.fallback_ops(p); ops.op_table(p)
out["summary without QNN"] = (time.perf_counter() - t, rss()); t = time.perf_counter()
if qnn.qnn_instructions(p):
    qnn.qnn_report(p)
    out["QNN analysis (qnn.qnn_report)"] = (time.perf_counter() - t, rss())
print(json.dumps(out))
"""


FROMFILE = r"""
import json, sys, time
import numpy as np
t = time.perf_counter()
a = np.fromfile(sys.argv[1], dtype=np.uint8)
print(json.dumps({"read_s": time.perf_counter() - t, "bytes": int(a.size)}))
"""

BEGIN, END = "<!-- bench.py: begin (rewritten by benchmarks/bench.py) -->", "<!-- bench.py: end -->"
_OWN_HEADINGS = ("# Benchmarks", "## Goals", "## Machine", "## 1000-run", "## 10M events", "## How memory")


def update_section(path: Path, text: str) -> str:
    """``path``'s text with this script's section replaced by ``text`` (other sections kept).

    The section lies between BEGIN and END; a file written before the markers existed has it from
    the top down to the first heading this script does not write."""
    block = f"{BEGIN}\n{text.rstrip()}\n{END}\n"
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        return head + block + "\n" + rest.split(END, 1)[1].lstrip("\n")
    lines = old.splitlines(keepends=True)
    cut = len(lines)
    for i, line in enumerate(lines):
        if line.startswith("#") and not line.startswith(_OWN_HEADINGS):
            cut = i
            break
    return block + ("\n" + "".join(lines[cut:]) if cut < len(lines) else "")


def measure(cmd: list[str], env=None, stdout=subprocess.DEVNULL) -> dict:
    """Run a child; wall seconds, peak RSS (MB), exit code, stdout (when captured)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read() if p.stdout else b""
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err.decode()[-2000:]}")
    return {"wall_s": wall, "rss_mb": ru.ru_maxrss / 1024, "stdout": out.decode()}


ETSCOPE_PYTHON = sys.executable


def llm_phase_check(report: dict, etdump: Path) -> dict:
    """etscope llm's prefill runs against the schedule tools/make_fixtures.py ran (its .meta.json)."""
    llm = report["llm"]
    found = [i for i, ph in enumerate(llm["series"]["phase"]) if ph == "prefill"]
    out = {"by": llm["phase_split"]["by"], "prefill_runs_found": len(found), "runs": llm["runs"]}
    meta = Path(str(etdump) + ".meta.json")
    expected = json.loads(meta.read_text()).get("prefill_runs") if meta.is_file() else None
    if expected is None:
        out["verdict"] = f"{len(found)} prefill runs found by {out['by']} (no schedule to check against)"
    else:
        out["matches_schedule"] = found == expected
        out["verdict"] = (f"{len(found)} prefill runs found by {out['by']}, scheduled {len(expected)}: "
                          + ("exact" if found == expected else "**differs**"))
    return out


def etscope(*args) -> list[str]:
    return [ETSCOPE_PYTHON, "-m", "etscope.cli", *map(str, args)]


def ensure_etscope_venv(venv: Path) -> str:
    """A clean venv with etscope installed as a user would (`pip install .`, bytecode compiled at
    install), re-installed from this checkout every time. Measured there rather than in the
    development interpreter, whose site-packages may carry start-up hooks (.pth files) that have
    nothing to do with etscope; the Inspector likewise runs in its own venv."""
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"making {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", str(REPO)], check=True)
    else:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(REPO)],
                       check=True)
    return str(py)


def machine() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")).split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    import numpy

    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem, "os": platform.platform(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "load_average": " / ".join(f"{x:.2f}" for x in os.getloadavg())}


def ensure_big1000(path: Path, et_python: str) -> None:
    if path.exists():
        return
    print(f"making {path} with tools/make_fixtures.py (~200 s) ...", flush=True)
    subprocess.run([et_python, str(REPO / "tools/make_fixtures.py"), "--big", "1000", str(path), "--big-only"],
                   check=True, cwd=REPO)


def ensure_10m(kind: str, path: Path, src: Path, events: int) -> dict:
    made = path.with_name(path.name + ".made.json")
    if path.exists():
        how = json.loads(made.read_text())["made"] if made.exists() else "already there"
        return {"path": str(path), "bytes": path.stat().st_size, "made": how}
    t = time.perf_counter()
    if kind == "llama":
        subprocess.run([sys.executable, str(REPO / "benchmarks/replicate_etdump.py"), str(src), str(events),
                        str(path)], check=True)
        how = f"benchmarks/replicate_etdump.py {src.name} {events}"
    else:
        subprocess.run([sys.executable, str(REPO / "tools/synth_qnn_etdump.py"), "--big-events", str(events),
                        str(path)], check=True)
        how = f"tools/synth_qnn_etdump.py --big-events {events}"
    info = {"path": str(path), "bytes": path.stat().st_size, "made": f"{how} ({time.perf_counter() - t:.0f} s)"}
    made.write_text(json.dumps(info))
    return info


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big1000", type=Path, default=Path("/tmp/big1000.etdump"))
    ap.add_argument("--et-python", default="/work/venv-oracle/bin/python", help="Python with torch + executorch")
    ap.add_argument("--etrecord", type=Path, default=DEFAULT_ETRECORD if DEFAULT_ETRECORD.exists() else None,
                    help="ETRecord given to both tools on the 1000-run file (the tiny Llama's: same export)")
    ap.add_argument("--qnn", action="store_true", help="also the synthetic 10M-event QNN file")
    ap.add_argument("--repeat-10m", type=int, default=2, help="runs per command on 10M events (best kept)")
    ap.add_argument("--etscope-venv", type=Path, default=Path(tempfile.gettempdir()) / "etscope-bench-venv",
                    help="venv etscope is installed into and run from (made when missing)")
    ap.add_argument("--etscope-python", help="run etscope with this Python instead (no install)")
    ap.add_argument("--events", type=float, default=10e6, help="events in the synthetic files")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    ap.add_argument("--repeat", type=int, default=5, help="etscope runs per measurement")
    ap.add_argument("--inspector-repeat", type=int, default=2)
    ap.add_argument("--skip-10m", action="store_true")
    ap.add_argument("--render-only", action="store_true", help="rewrite BENCHMARKS.md from BENCHMARKS.json")
    ap.add_argument("--only-10m", action="store_true",
                    help="re-measure the 10M-event files only; keep the rest of BENCHMARKS.json")
    ap.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md")
    a = ap.parse_args(argv)

    if a.render_only:
        a.out.write_text(update_section(a.out, render(json.loads(a.out.with_suffix(".json").read_text()))))
        return 0
    global ETSCOPE_PYTHON
    ETSCOPE_PYTHON = a.etscope_python or ensure_etscope_venv(a.etscope_venv)
    env = dict(os.environ, ETSCOPE_PROGRESS="0")
    m = machine()
    m["etscope_python"] = ETSCOPE_PYTHON
    m["clean_venv"] = not a.etscope_python
    print(json.dumps(m), flush=True)
    ensure_big1000(a.big1000, a.et_python)
    big = a.big1000
    res: dict = {"machine": m, "file": {"path": str(big), "bytes": big.stat().st_size,
                                        "etrecord": str(a.etrecord) if a.etrecord else None}}
    if a.only_10m:
        res = json.loads(a.out.with_suffix(".json").read_text())
        res["machine_10m"] = m
    else:
        compare(a, res, big, env)
    big_files(a, res, big, env)
    res["machine"]["load_average_end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    a.out.write_text(update_section(a.out, render(res)))
    (a.out.with_suffix(".json")).write_text(json.dumps(res, indent=1))
    print(f"wrote {a.out}")
    return 0


def compare(a, res: dict, big: Path, env: dict) -> None:
    """`etscope --help`, and etscope summary against the Inspector on the 1000-run file."""

    # `etscope --help`
    helps = [measure(etscope("--help"), env=env)["wall_s"] for _ in range(10)]
    res["help"] = {"samples_s": helps, "median_s": med(helps)}
    print(f"etscope --help: median {med(helps):.3f} s", flush=True)
    small = [measure(etscope("summary", SMALL, "--etrecord", SMALL.with_suffix(".etrecord"), "--json"), env=env)
             for _ in range(10)]
    res["small_summary"] = {"file": SMALL.name, "samples_s": [x["wall_s"] for x in small],
                            "median_s": med([x["wall_s"] for x in small]), "rss_mb": max(x["rss_mb"] for x in small)}
    print(f"etscope summary {SMALL.name}: median {res['small_summary']['median_s']:.3f} s", flush=True)
    er = ("--etrecord", a.etrecord) if a.etrecord else ()

    # etscope summary vs the Inspector, alternating.
    ets, insp = [], []
    script = a.workdir / "etscope_bench_inspector.py"
    script.write_text(INSPECTOR)
    per_insp = max(1, a.repeat // max(1, a.inspector_repeat))
    for i in range(a.inspector_repeat):
        for _ in range(per_insp):
            ets.append(measure(etscope("summary", big, *er, "--json"), env=env))
        r = measure([a.et_python, str(script), str(big), *map(str, er[1:])], stdout=subprocess.PIPE)
        r.update(json.loads(r.pop("stdout").strip().splitlines()[-1]))
        insp.append(r)
        print(f"inspector #{i + 1}: {r['wall_s']:.1f} s wall ({r['import_s']:.1f} import, "
              f"{r['construct_s']:.1f} construct, {r['table_s']:.1f} table), {r['rss_mb']:.0f} MB", flush=True)
    while len(ets) < a.repeat:
        ets.append(measure(etscope("summary", big, *er, "--json"), env=env))
    for r in ets:
        r.pop("stdout", None)
    e_wall, e_rss = med([r["wall_s"] for r in ets]), max(r["rss_mb"] for r in ets)
    i_wall, i_rss = med([r["wall_s"] for r in insp]), max(r["rss_mb"] for r in insp)
    i_work = med([r["construct_s"] + r["table_s"] for r in insp])
    res["summary_vs_inspector"] = {
        "etscope": ets, "inspector": insp,
        "etscope_wall_s": e_wall, "etscope_rss_mb": e_rss, "inspector_wall_s": i_wall, "inspector_rss_mb": i_rss,
        "inspector_construct_table_s": i_work,
        "speedup_wall": i_wall / e_wall, "speedup_vs_construct_table": i_work / e_wall,
        "memory_ratio": i_rss / e_rss,
    }
    print(f"etscope summary: {e_wall:.3f} s, {e_rss:.0f} MB; speed-up {i_wall / e_wall:.0f}x "
          f"(construct+table only: {i_work / e_wall:.0f}x), memory 1/{i_rss / e_rss:.1f}", flush=True)
    llm_runs = [measure(etscope("llm", big, *er, "--json"), env=env, stdout=subprocess.PIPE) for _ in range(3)]
    res["llm_1000"] = {"wall_s": med([r["wall_s"] for r in llm_runs]), "rss_mb": max(r["rss_mb"] for r in llm_runs),
                       "phases": llm_phase_check(json.loads(llm_runs[0]["stdout"]), big)}
    print(f"etscope llm phases: {res['llm_1000']['phases']['verdict']}", flush=True)


def big_files(a, res: dict, big: Path, env: dict) -> None:
    """10M events: `np.fromfile` best of three, then summary, llm and report (best of --repeat-10m),
    then the stages in one process."""
    if a.skip_10m:
        return
    n = int(a.events)
    res["big"] = {}
    res["big_events"] = n
    for kind in ("llama",) + (("qnn",) if a.qnn else ()):
        path = a.workdir / f"etscope_bench_{kind}_{n // 1_000_000}m.etdump"
        info = ensure_10m(kind, path, big, n)
        ff_script = a.workdir / "etscope_bench_fromfile.py"
        ff_script.write_text(FROMFILE)
        def fromfile() -> float:
            return json.loads(measure([ETSCOPE_PYTHON, str(ff_script), str(path)], stdout=subprocess.PIPE)["stdout"])[
                "read_s"]

        # Three reads first, then one before every etscope run: the baseline is the best of all, so
        # a spell in which the machine's page faults are slow cannot flatter the ratios.
        reads = [fromfile() for _ in range(3)]
        info["fromfile_s"] = reads
        print(f"{kind}: np.fromfile best of 3 {min(reads):.2f} s", flush=True)
        html = a.workdir / "etscope_bench_report.html"
        cmds = {"summary": ("summary", path, "--json"), "llm": ("llm", path, "--json"),
                "report": ("report", path, "-o", html)}
        if kind != "llama":
            cmds = {"summary": cmds["summary"]}
        runs = {}
        for name, cmd in cmds.items():
            tries = []
            for _ in range(a.repeat_10m):
                reads.append(fromfile())
                r = measure(etscope(*cmd), env=env, stdout=subprocess.PIPE)
                out = r.pop("stdout")
                if name == "summary":
                    r["events"] = json.loads(out).get("etdump", {}).get("events")
                tries.append(r)
            best = min(tries, key=lambda x: x["wall_s"])
            best["samples_s"] = [x["wall_s"] for x in tries]
            best["rss_mb"] = max(x["rss_mb"] for x in tries)
            runs[name] = best
        for name, best in runs.items():       # against the best read of the whole run
            best["x_fromfile"] = best["wall_s"] / min(reads)
            print(f"{kind} {n:,} events: etscope {name} {best['wall_s']:.1f} s ({best['x_fromfile']:.1f}x np.fromfile "
                  f"best of {len(reads)}: {min(reads):.2f} s), {best['rss_mb']:.0f} MB", flush=True)
        html.unlink(missing_ok=True)
        st_script = a.workdir / "etscope_bench_stages.py"
        st_script.write_text(STAGES)
        r = measure([ETSCOPE_PYTHON, str(st_script), str(path)], env=env, stdout=subprocess.PIPE)
        stages = json.loads(r["stdout"].strip().splitlines()[-1])
        res["big"][kind] = {"file": info, "runs": runs, "stages": stages}


def goals(r: dict) -> list[str]:
    """Issue 20's goals, each measured in this run, as ratios against its target."""
    ok = lambda c: "met" if c else "**not met**"  # noqa: E731
    s = r["summary_vs_inspector"]
    rows = [
        f"| 1000-run file{' + ETRecord' if r['file'].get('etrecord') else ''}: Inspector wall / etscope `summary --json` wall | **{s['speedup_wall']:.0f}x** "
        f"| >= 100x | {ok(s['speedup_wall'] >= 100)} |",
        f"| 1000-run file: Inspector peak RSS / etscope's | **{s['memory_ratio']:.1f}x** | >= 10x "
        f"| {ok(s['memory_ratio'] >= 10)} |",
    ]
    llama = (r.get("big") or {}).get("llama")
    many = f"{r.get('big_events', 10_000_000) / 1e6:g}M events"
    if llama and llama["file"].get("fromfile_s"):
        for name, x in llama["runs"].items():
            rows.append(f"| {many}: `{name}` wall / `np.fromfile` best of {len(llama['file']['fromfile_s'])} | **{x['x_fromfile']:.1f}x** | <= 6x "
                        f"| {ok(x['x_fromfile'] <= 6)} |")
            rows.append(f"| {many}: `{name}` peak RSS | {x['rss_mb']:.0f} MB | < 600 MB | {ok(x['rss_mb'] < 600)} |")
    if r.get("help"):
        rows.append(f"| `etscope --help` (median of 10) / 0.15 s | {r['help']['median_s'] / 0.15:.2f} "
                    f"({r['help']['median_s']:.3f} s) | <= 1 | {ok(r['help']['median_s'] <= 0.15)} |")
    if r.get("small_summary"):
        x = r["small_summary"]
        rows.append(f"| `etscope summary {x['file']}` + ETRecord (median of 10) / 0.25 s | {x['median_s'] / 0.25:.2f} "
                    f"({x['median_s']:.3f} s) | <= 1 | {ok(x['median_s'] <= 0.25)} |")
    return ["## Goals (issue 20), measured side by side in one run", "",
            "| goal | measured | target | |", "|---|---:|---:|---|", *rows, ""]


def render(r: dict) -> str:
    m = r["machine"]
    s = r["summary_vs_inspector"]
    lines = [
        "# Benchmarks",
        "",
        "Made by `python benchmarks/bench.py` (see its docstring); raw numbers in `BENCHMARKS.json`.",
        "Each number is a separate process: wall time around it, peak RSS from `wait4` (`ru_maxrss`).",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores; memory {m['memory']}",
        f"- OS: {m['os']}; Python {m['python']}, numpy {m['numpy']}",
        f"- etscope ran from `{m.get('etscope_python', '?')}` "
        + ("(a clean venv, `pip install .`)" if m.get("clean_venv", True) else "(`--etscope-python`: this checkout)")
        + "; the Inspector from the ExecuTorch venv (torch 2.13.0, executorch 1.5.1)",
        f"- load average (1 / 5 / 15 min; other work shares the machine) at the start: {m['load_average']}; "
        f"at the end: {m.get('load_average_end', '?')}",
        "",
        *goals(r),
        f"## 1000-run tiny-Llama ETDump ({r['file']['bytes'] / 1e6:.1f} MB, `{Path(r['file']['path']).name}`)",
        "",
        "| | wall (median) | peak RSS |",
        "|---|---:|---:|",
        f"| `etscope summary --json` ({len(s['etscope'])} runs) | {s['etscope_wall_s']:.3f} s | {s['etscope_rss_mb']:.0f} MB |",
        f"| ExecuTorch Inspector: import + construction + table ({len(s['inspector'])} runs) | {s['inspector_wall_s']:.1f} s | {s['inspector_rss_mb']:.0f} MB |",
        f"| of which construction + table | {s['inspector_construct_table_s']:.1f} s | |",
        f"| `etscope llm --json` | {r['llm_1000']['wall_s']:.3f} s | {r['llm_1000']['rss_mb']:.0f} MB |",
        "",
        f"- speed-up, whole process: **{s['speedup_wall']:.0f}x**; against the Inspector's construction + table"
        f" alone (its import of torch not counted, etscope's whole process counted): **{s['speedup_vs_construct_table']:.0f}x**",
        f"- peak memory: **1/{s['memory_ratio']:.1f}** of the Inspector's",
        f"- ETRecord given to both: `{r['file'].get('etrecord') or 'none'}`",
    ]
    if r["llm_1000"].get("phases"):
        lines.append(f"- `etscope llm` phases: {r['llm_1000']['phases']['verdict']}")
    lines += [
        "",
        "Samples (wall s / MB): etscope " + ", ".join(f"{x['wall_s']:.3f}/{x['rss_mb']:.0f}" for x in s["etscope"])
        + "; Inspector " + ", ".join(f"{x['wall_s']:.1f}/{x['rss_mb']:.0f} (import {x['import_s']:.1f}, "
                                    f"construct {x['construct_s']:.1f}, table {x['table_s']:.1f})" for x in s["inspector"]),
        "",
    ]
    if r.get("big"):
        m10 = r.get("machine_10m")
        lines += ["## 10M events, etscope alone", ""]
        if m10:
            lines += [f"(measured in a later run; load average then {m10['load_average']})", ""]
        lines += ["| file | size | command | wall (best) | / `np.fromfile` | peak RSS |",
                  "|---|---:|---|---:|---:|---:|"]
        for kind, b in r["big"].items():
            ff = b["file"].get("fromfile_s")
            if ff:
                lines.append(f"| {kind} | {b['file']['bytes'] / 1e6:.0f} MB | `np.fromfile` (best of {len(ff)}; "
                             + ", ".join(f"{x:.2f}" for x in ff) + f") | {min(ff):.2f} s | 1 | |")
            for cmd, x in b["runs"].items():
                ratio = f"{x['x_fromfile']:.1f}x" if "x_fromfile" in x else ""
                lines.append(f"| {kind} (`{b['file']['made']}`) | {b['file']['bytes'] / 1e6:.0f} MB | `etscope {cmd}` | "
                             f"{x['wall_s']:.1f} s | {ratio} | {x['rss_mb']:.0f} MB |")
        lines.append("")
        lines.append("Stages in one process (seconds, peak RSS so far in MB):")
        lines.append("")
        for kind, b in r["big"].items():
            lines.append(f"- {kind}: " + "; ".join(f"{k} {v[0]:.1f} s, {v[1]:.0f} MB" for k, v in b["stages"].items()))
        lines.append("")
        for kind, b in r["big"].items():
            st = b["stages"]
            q = st.get("QNN analysis (qnn.qnn_report)") or st.get("QNN analysis (summary.qnn_brief)")
            core = st.get("summary without QNN")
            if q and core and q[1] >= 1024 > core[1]:
                lines += [f"The {kind} file stays under 1 GB up to the QNN analysis ({core[1]:.0f} MB); "
                          f"the QNN analysis (`analysis/qnn.py`, per-partition series over all QNN events) then takes it to "
                          f"{q[1]:.0f} MB.", ""]
    lines += [
        "Both tools' times move with the machine's load (other sessions share its 2 cores); the runs",
        "alternate so both see the same conditions, but the ratio differs from run to run.",
        "",
    ]
    lines += [
        "## How memory stays bounded",
        "",
        "- The file is memory-mapped. A run that repeats an earlier run byte for byte (times and vtable",
        "  offsets aside: a static graph) is compared with it a block of runs at a time and copied, its",
        "  times read from the same view; the other runs are parsed in chunks of 64k events (RunData",
        "  tables in chunks of 4096). Either way each block's pages are dropped (`madvise(MADV_DONTNEED)`)",
        "  once read, so the file never stays resident. The reader keeps ~33 bytes per event (run, kind,",
        "  name, delegate id string, instruction id, chain as int8, start, end); columns a file does not",
        "  use (allocation, debug tensors, metadata, delegate int ids) are zero-stride views. The Profile",
        "  adds role, execute, value and unit (14 bytes) and drops what other data give back exactly",
        "  (checked): end times (start + value) and the run of each event (the RunData's counts).",
        "  That is 40 bytes per event, 400 MB on 10M events.",
        "- The analyses keep per profile only the positions of the instruction-level events (int32),",
        "  not columns of them; each analysis gathers what it needs and frees it when done.",
        "- The QNN analysis walks a partition's events in run-aligned slices of 1M events (two passes:",
        "  names and repeats, then values), so its temporaries do not grow with the file.",
        "- Statistics per event signature use one (runs x events) matrix when every run logged the same",
        "  event sequence (a static graph), instead of sorting signature keys of every event. That",
        "  matrix is the value column itself when the runs lie back to back (no copy), and its",
        "  percentiles come from a partition of an int32 copy (integer values), not from a sort.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
