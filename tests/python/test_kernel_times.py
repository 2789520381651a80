"""bench/kernel_times.py on a made-up Nsight Compute raw CSV: ncu's own lines skipped, names cut
before their template arguments, launches counted, medians and shares of the time per kernel."""

import os
import subprocess
import sys

from conftest import REPO

KERNEL_TIMES = os.path.join(REPO, "bench", "kernel_times.py")

CSV = '''==PROF== Connected to process 1234 (attn_bench)
attn_bench: 1 config
"ID","Process ID","Kernel Name","gpu__time_duration.sum"
"","","","usecond"
"0","1234","fj_prep_0(flexjit::AttnArgs, fj_generated::Params)","10.00"
"1","1234","attention_bwd<Cfg, 3>(flexjit::AttnArgs)","100.00"
"2","1234","fj_prep_0(flexjit::AttnArgs, fj_generated::Params)","30.00"
"3","1234","attention_bwd<Cfg, 3>(flexjit::AttnArgs)","1,200.00"
"4","1234","attention_bwd<Cfg, 3>(flexjit::AttnArgs)","140.00"
==PROF== Disconnected from process 1234
'''


def run(tmp_path, text):
    path = tmp_path / "ncu.csv"
    path.write_text(text)
    return subprocess.run([sys.executable, "-B", KERNEL_TIMES, str(path)], capture_output=True, text=True)


def test_each_kernel_gets_its_launches_median_and_share(tmp_path):
    out = run(tmp_path, CSV)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "| kernel | launches | median (usecond) | share of the time |"
    assert lines[2] == "| fj_prep_0 | 2 | 20.0 | 2.7% |"  # 40 of 1480
    assert lines[3] == "| attention_bwd | 3 | 140.0 | 97.3% |"
    assert len(lines) == 4


def test_a_file_without_kernel_rows_is_an_error(tmp_path):
    out = run(tmp_path, "==PROF== Connected to process 1\n")
    assert out.returncode != 0 and "no kernel rows" in out.stderr
