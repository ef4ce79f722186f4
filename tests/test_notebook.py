"""notebooks/quickstart.ipynb: valid nbformat v4, public API only, and it runs top to bottom."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"

RUNNER = r"""
import json, sys
nb = json.load(open(sys.argv[1]))
env = {"__name__": "__main__"}
for i, cell in enumerate(nb["cells"]):
    if cell["cell_type"] != "code":
        continue
    source = "".join(cell["source"])
    exec(compile(source, f"<cell {i}>", "exec"), env)
print("notebook ok")
"""


def _cells():
    return json.loads(NOTEBOOK.read_text())["cells"]


def test_notebook_is_nbformat_v4():
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] >= 4
    assert nb["metadata"]["kernelspec"]["language"] == "python"
    ids = set()
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code")
        assert isinstance(cell["source"], list) and all(isinstance(s, str) for s in cell["source"])
        assert isinstance(cell["metadata"], dict) and cell["id"] not in ids
        ids.add(cell["id"])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def test_notebook_uses_the_public_api_only():
    code = "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "code")
    assert "import jaxcfr" in code
    for private in ("from jaxcfr", "import jaxcfr.", "import games", "from games"):
        assert private not in code, private
    assert not re.search(r"jaxcfr\._[a-z]", code)          # no private names


@pytest.mark.slow
def test_notebook_runs(tmp_path_factory):
    # XLA's disk cache is shared with test_train's subprocess (the same Kuhn program).
    env = dict(os.environ, MPLBACKEND="Agg", JAX_COMPILATION_CACHE_DIR=str(
        tmp_path_factory.getbasetemp() / "jax-compilation-cache"))
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(NOTEBOOK)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "notebook ok" in proc.stdout
