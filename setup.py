"""`pip install .` and `pip wheel .` of the Python package fitspeed (docs/python.md).

The package's Python files come from python/fitspeed/; the extension
fitspeed._fitspeed is built by the project's own CMake (python/CMakeLists.txt),
not by setuptools: a Release configure of the whole project with its tests,
benchmarks and examples off, for the interpreter running pip
(-DPython3_EXECUTABLE=sys.executable), then a build of the extension's target
alone (fitspeed_python: the library, the module, nothing else), into a
temporary folder, build-pip-*/ in the source folder, removed afterwards. The
C++ dependencies are Debian's (scripts/install-deps.sh), so pip runs with
--no-build-isolation:

    /usr/bin/python3 -m venv --system-site-packages ~/fitspeed-venv
    ~/fitspeed-venv/bin/pip install --no-build-isolation .

Environment:
  FITSPEED_BUILD_DIR  an already configured CMake build folder (build/): its
                      extension target is brought up to date there and copied,
                      instead of a build from scratch (seconds, not minutes).
                      Its Python3_EXECUTABLE must be an interpreter of the same
                      ABI as the one running pip; the extension's file name
                      says which, and a mismatch is refused.
  FITSPEED_CMAKE_ARGS more arguments for the configure step (shell words).
  CMAKE_BUILD_PARALLEL_LEVEL  parallel compile jobs (default: one per CPU).
ccache is used when it is on PATH, with CCACHE_BASEDIR the source folder unless
set: a second install from the same folder compiles nothing again (38 s against
8 minutes here). build/'s objects are not reused: the unity units
(cmake/Unity.cmake) include the sources by absolute path, and build-pip-*/ has
units of its own.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version() -> str:
    """project(fitspeed VERSION x.y.z) of CMakeLists.txt: the one place the version
    is written (the library's fitspeed::Version(), the CLI's --version and
    fitspeed.__version__ come from it too)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*fitspeed\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not match:
        sys.exit("setup.py: no project(fitspeed VERSION x.y.z) in CMakeLists.txt")
    return match.group(1)


def cmake_cache_value(build_dir: Path, name: str) -> str:
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    return "?"


class CMakeBuild(build_ext):
    """Builds fitspeed._fitspeed with CMake and puts it where setuptools packs it."""

    def build_extension(self, ext: Extension) -> None:
        destination = Path(self.get_ext_fullpath(ext.name)).resolve()
        destination.parent.mkdir(parents=True, exist_ok=True)
        existing = os.environ.get("FITSPEED_BUILD_DIR")
        if existing:
            self._copy_from(self._build_existing(Path(existing).resolve()), destination)
            return
        # In the source folder, where git ignores build*/, removed after.
        with tempfile.TemporaryDirectory(prefix="build-pip-", dir=ROOT) as scratch:
            build_dir = Path(scratch)
            self._configure(build_dir)
            self._build(build_dir)
            self._copy_from(build_dir, destination)

    def _configure(self, build_dir: Path) -> None:
        command = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                   "-DCMAKE_BUILD_TYPE=Release",
                   f"-DPython3_EXECUTABLE={sys.executable}",
                   "-DFITSPEED_BUILD_TESTS=OFF", "-DFITSPEED_BUILD_BENCH=OFF",
                   "-DFITSPEED_BUILD_EXAMPLES=OFF"]
        if shutil.which("ninja"):
            command += ["-G", "Ninja"]
        if shutil.which("ccache"):
            command.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        command += shlex.split(os.environ.get("FITSPEED_CMAKE_ARGS", ""))
        self._run(command)

    def _build(self, build_dir: Path) -> None:
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        self._run(["cmake", "--build", str(build_dir), "--target", "fitspeed_python",
                   "--parallel", jobs])

    def _build_existing(self, build_dir: Path) -> Path:
        if not (build_dir / "CMakeCache.txt").is_file():
            sys.exit(f"setup.py: FITSPEED_BUILD_DIR={build_dir} is not a configured CMake "
                     "build folder (no CMakeCache.txt)")
        self._build(build_dir)
        return build_dir

    def _copy_from(self, build_dir: Path, destination: Path) -> None:
        """Copies the extension built for this interpreter's ABI; refuses one built
        for another (its file name ends in that interpreter's EXT_SUFFIX)."""
        package = build_dir / "python" / "fitspeed"
        wanted = package / ("_fitspeed" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not wanted.is_file():
            built = sorted(p.name for p in package.glob("_fitspeed.*")) or ["nothing"]
            sys.exit(f"setup.py: {build_dir} holds {', '.join(built)}, built for "
                     f"{cmake_cache_value(build_dir, 'Python3_EXECUTABLE')}, not {wanted.name} "
                     f"for {sys.executable}: configure that folder with "
                     f"-DPython3_EXECUTABLE={sys.executable}, or unset FITSPEED_BUILD_DIR")
        shutil.copyfile(wanted, destination)

    @staticmethod
    def _run(command) -> None:
        print("setup.py:", shlex.join(command), flush=True)
        # ccache keys on the compiler's command line: paths relative to the source
        # folder make those of one build-pip-*/ (a new name each time) the same
        # as the last one's, so that a second install hits.
        env = dict(os.environ)
        env.setdefault("CCACHE_BASEDIR", str(ROOT))
        subprocess.run(command, check=True, env=env)


setup(
    version=project_version(),
    packages=["fitspeed"],
    package_dir={"": "python"},
    package_data={"fitspeed": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("fitspeed._fitspeed", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
