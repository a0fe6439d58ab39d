# The package's version is the library's, and an interpreter that lacks numpy
# or pandas, or loads another extension ABI, is told so by name (issue 48: a
# pyenv interpreter without pandas got a list from read() and then
# "'list' object has no attribute 'label'"). The interpreters without a
# package are simulated: a child interpreter whose import of it fails.
import os
import pathlib
import re
import shutil
import subprocess
import sys

import fitspeed
from fitspeed import _fitspeed

ROOT = pathlib.Path(__file__).resolve().parents[2]
README_LOG = "tests/data/measured/pollux_t4_single_node.csv"


def test_version_is_the_librarys_and_the_clis(cli):
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"fitspeed {fitspeed.__version__}"
    assert fitspeed.__version__ == _fitspeed.__version__
    # The one place it is written: project(VERSION) of the top CMakeLists.txt.
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"project\(fitspeed VERSION (\S+)", cmake).group(1) == fitspeed.__version__


def test_module_names_the_interpreter_it_was_built_for():
    # ctest runs the tests with CMake's Python3_EXECUTABLE, the module's.
    assert os.path.realpath(_fitspeed._python_executable) == os.path.realpath(sys.executable)


def run_without(package, code, cwd=ROOT):
    """Runs code in a child interpreter in which `import package` fails, as it
    does where the package is not installed."""
    blocker = (f"import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
               f"        if name.split('.')[0] == {package!r}:\n"
               f"            raise ModuleNotFoundError(f'No module named {{name!r}}', name=name)\n"
               f"sys.meta_path.insert(0, Block())\n")
    return subprocess.run([sys.executable, "-c", blocker + code], capture_output=True,
                          text=True, cwd=cwd, check=False)


def test_without_pandas_read_says_what_is_missing_and_where():
    # The README's example, as a user runs it.
    done = run_without("pandas", f"import fitspeed\nlog = fitspeed.read({README_LOG!r})\n"
                                 "log[log.label == 'model=imagenet']\n")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: fitspeed.read (a pandas DataFrame; as_frame=False gives "
                           "a list instead) needs pandas, which this interpreter, "
                           f"{sys.executable}, cannot import (No module named 'pandas'): "
                           "install pandas for it ("), last
    assert "AttributeError" not in done.stderr


def test_without_pandas_the_lists_asked_for_still_come():
    done = run_without("pandas", "import fitspeed\n"
                                 f"samples = fitspeed.read({README_LOG!r}, as_frame=False)\n"
                                 "print(type(samples).__name__, len(samples))\n"
                                 "plan = fitspeed.plan_llm('llama-3-8b', 'h100', devices=8, "
                                 "global_batch=64, seq_len=4096, top=1)\n"
                                 "print(type(plan.ranked(as_frame=False)).__name__)\n"
                                 "plan.ranked()\n")
    rows = (ROOT / README_LOG).read_text().strip().count("\n")  # lines after the header
    assert done.stdout.split("\n")[:2] == [f"list {rows}", "list"], done.stderr
    assert "ImportError: LlmPlan.ranked (a pandas DataFrame" in done.stderr


def test_without_numpy_import_says_what_is_missing_and_where():
    done = run_without("numpy", "import fitspeed\n")
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: fitspeed needs numpy, which this interpreter, "
                           f"{sys.executable}, cannot import (No module named 'numpy')"), last


def test_an_extension_built_for_another_python_is_named(tmp_path):
    # The package with its extension renamed as CPython 3.99's: this interpreter
    # does not load it, as a Python 3.12 does not load one built for 3.11.
    package = pathlib.Path(fitspeed.__file__).parent
    copy = tmp_path / "fitspeed"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    extension = next(copy.glob("_fitspeed.*.so"))
    extension.rename(copy / "_fitspeed.cpython-399-x86_64-linux-gnu.so")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", "import fitspeed"], capture_output=True,
                          text=True, env=env, check=False)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: fitspeed's extension "
                           f"_fitspeed.cpython-399-x86_64-linux-gnu.so in {copy} was not built "
                           f"for this interpreter, {sys.executable}"), last
    assert f"cmake -DPython3_EXECUTABLE={sys.executable}" in last
