"""The numpy examples of docs/python.md (```py-numpy blocks) run as written, from the repository
root, so that the page stays true."""

import os
import re

import pytest

from conftest import REPO

DOC = os.path.join(REPO, "docs", "python.md")


def blocks():
    text = open(DOC).read()
    return [(text[:m.start()].count("\n") + 2, m.group(1)) for m in re.finditer(r"```py-numpy\n(.*?)```", text, re.S)]


def test_the_page_has_numpy_examples():
    assert blocks()


@pytest.mark.parametrize("line,code", blocks(), ids=lambda x: f"line{x}" if isinstance(x, int) else "")
def test_example_runs(line, code, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    path = tmp_path / f"python_md_line{line}.py"  # the mods' source must be in a file
    path.write_text(code)
    exec(compile(code, str(path), "exec"), {"__name__": "__doc_example__"})
