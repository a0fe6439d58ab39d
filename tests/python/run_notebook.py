"""Executes a notebook cell by cell (nbclient, the kernel 'python3') in the
notebook's own folder, as Jupyter runs it, writes the executed copy and every
figure it drew (PNG) into OUT_DIR, and fails when a cell fails. ctest runs it on
examples/notebooks/*.ipynb (label python), from that folder.

    python3 tests/python/run_notebook.py NOTEBOOK OUT_DIR
"""
import base64
import os
import pathlib
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main() -> int:
    # The kernel draws with matplotlib's inline backend (PNG outputs), whatever
    # backend the tests around it chose; and ipykernel's debugger stays quiet.
    os.environ.pop("MPLBACKEND", None)
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    notebook_path, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.read(notebook_path, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook_path.resolve().parent)}})
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"{notebook_path}: a cell failed:\n{e}", file=sys.stderr)
        return 1
    finally:
        nbformat.write(notebook, out_dir / notebook_path.name)
    figures = 0
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                figures += 1
                name = f"{notebook_path.stem}_cell{index:02d}_figure{figures}.png"
                (out_dir / name).write_bytes(base64.b64decode(png))
    print(f"{notebook_path}: {len(notebook.cells)} cells ran, {figures} figures in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
