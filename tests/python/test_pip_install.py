# `pip install .`, the way Python users install a package (issue 48): a clean
# copy of the source tree (the files git tracks, no build outputs) installed
# by pip into a fresh virtual environment of this interpreter that sees
# Debian's numpy and pandas (--system-site-packages), offline
# (--no-build-isolation --no-index), then the README's Python example run by
# the environment's interpreter, its output compared with the README's.
#
# The extension comes from this build's folder (FITSPEED_BUILD_DIR, which
# ctest sets and setup.py honours: its target is brought up to date and
# copied), so the test takes half a minute. With FITSPEED_PIP_FROM_SCRATCH=1
# setup.py configures and builds it from the copy alone, as a user's pip does
# (minutes: .ci/run runs it that way).
import os
import pathlib
import re
import shutil
import subprocess
import sys

import fitspeed

ROOT = pathlib.Path(__file__).resolve().parents[2]


def copy_source_tree(destination: pathlib.Path) -> None:
    """The tree as a fresh checkout has it: the files git tracks, as they are in the
    working tree, where this is a git checkout (no build folders, no virtual
    environment made inside it); else everything but build folders."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached"],
                            capture_output=True, check=False)
    if listed.returncode != 0:
        shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(
            "build*", ".git", "__pycache__", "*.egg-info"))
        return
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not copied
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def readme_example():
    """The README's Python example and the output it shows."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"### From Python\n\n```python\n(.*?)```\n```\n(.*?)```", readme, re.S)
    assert found, "README.md: no ```python block with its output under '### From Python'"
    return found.group(1), found.group(2)


def run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_pip_install_into_a_fresh_venv_runs_the_readme_example(tmp_path, cli):
    source, venv = tmp_path / "source", tmp_path / "venv"
    copy_source_tree(source)
    assert not (source / "build").exists()
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if os.environ.get("FITSPEED_PIP_FROM_SCRATCH") == "1":
        env.pop("FITSPEED_BUILD_DIR", None)
    run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "."],
        cwd=source, env=env)

    code, expected = readme_example()
    got = run([python, "-c", code], cwd=source, env=env)
    assert [line.rstrip() for line in got.splitlines()] == \
        [line.rstrip() for line in expected.splitlines()]

    where = run([python, "-c", "import fitspeed, importlib.metadata as m; "
                               "print(fitspeed.__file__, fitspeed.__version__, m.version('fitspeed'))"],
                cwd=source, env=env).split()
    assert where[0].startswith(str(venv)), where
    version = run([cli, "--version"]).strip()
    assert version == f"fitspeed {where[1]}" == f"fitspeed {where[2]}"
    assert where[1] == fitspeed.__version__
