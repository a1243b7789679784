"""The benchmarks' hang handling (bench/collectives.py): a case that runs
past its time becomes a failed row and the job exits with status 3
(Watchdog), and a resumed run skips the cases the CSV already has
(CsvLog(resume=True)), which is how bench_sweep (scripts/gpu/common.sh)
goes on after a hang."""
import csv
import os
import subprocess
import sys
import textwrap

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench")


def test_a_hang_becomes_a_row_and_resume_skips_it(tmp_path):
    path = tmp_path / "sweep.csv"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.abspath(BENCH)!r})
        import collectives as CB
        log = CB.CsvLog({str(path)!r}, 0)
        log.add(dict(op="all_reduce", system="nccl", median_us=1.0, correct=True, error=""))
        dog = CB.Watchdog(0.5, log, 0)
        with dog.case(dict(op="all_reduce", system="cuda", median_us=float("nan"),
                           correct=False, error="")):
            time.sleep(60)  # a kernel that never ends
        print("not reached")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "not reached" not in done.stdout
    rows = list(csv.DictReader(open(path)))
    assert [(r["system"], r["correct"]) for r in rows] == [("nccl", "True"), ("cuda", "False")]
    assert rows[1]["error"] == "timeout: no result in 0.5 s"

    sys.path.insert(0, os.path.abspath(BENCH))
    try:
        import collectives as CB
    finally:
        sys.path.remove(os.path.abspath(BENCH))
    log = CB.CsvLog(str(path), 0, resume=True)
    assert log.done(op="all_reduce", system="cuda") and log.done(system="nccl")
    assert not log.done(op="all_gather", system="cuda")
    assert log.wrong() == []  # a timeout is a failed row with its reason, not a wrong one
    log.add(dict(op="all_gather", system="cuda", median_us=2.0, correct=True, error=""))
    log.close()
    rows = list(csv.DictReader(open(path)))
    assert [r["op"] for r in rows] == ["all_reduce", "all_reduce", "all_gather"]


def test_resumed_rows_follow_the_files_columns(tmp_path):
    """A resumed run whose rows have fewer columns (bench/nodes.py's torch
    job) writes them under the file's header, not shifted left."""
    sys.path.insert(0, os.path.abspath(BENCH))
    try:
        import collectives as CB
    finally:
        sys.path.remove(os.path.abspath(BENCH))
    path = str(tmp_path / "mixed.csv")
    log = CB.CsvLog(path, 0)
    log.add(dict(date="d", host="h", gpu="g", op="put", system="weft", median_us=1.0))
    log.close()
    log = CB.CsvLog(path, 0, resume=True)
    log.add(dict(date="d", op="put", system="torch", median_us=2.0))
    log.close()
    rows = list(csv.DictReader(open(path)))
    assert [(r["system"], r["median_us"], r["host"]) for r in rows] == [
        ("weft", "1.0", "h"), ("torch", "2.0", "")]
