# pytest set-up for the Python module's tests (tests/python, run by ctest with
# label `python`): where the test data and the CLI are. ctest passes them in
# the environment (tests/CMakeLists.txt); run by hand:
#   PYTHONPATH=build/python FITSPEED_CLI=build/fitspeed python3 -m pytest tests/python
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def data_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FITSPEED_TEST_DATA_DIR", ROOT / "tests" / "data"))


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("FITSPEED_CLI", str(ROOT / "build" / "fitspeed"))
    if not os.path.exists(path):
        pytest.fail(f"the fitspeed CLI is not at {path}: set FITSPEED_CLI")
    return path
