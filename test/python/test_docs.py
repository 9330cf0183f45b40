"""docs/python.md's examples are tests: every ```python block runs, in
order, in a scratch folder that can see the repository's examples/ and the
build's tools."""
import os
import re
import shutil

import pytest

from conftest import BIN, ROOT

DOC = os.path.join(ROOT, "docs", "python.md")


def blocks():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_doc_has_examples():
    assert len(blocks()) >= 6


@pytest.mark.parametrize("index", range(len(blocks())))
def test_doc_example_runs(index, tmp_path, monkeypatch):
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    code = blocks()[index]
    exec(compile(code, f"docs/python.md[block {index}]", "exec"), {"__name__": "__doc__"})
