# The type stubs shipped with the package say what the module has: every
# public name of fitspeed and fitspeed._fitspeed is declared in its .pyi, no
# stub declares a name the module lacks, and the package's functions take
# the parameters (names, order, keyword-only) their stubs give.
import ast
import inspect
import pathlib

import fitspeed
from fitspeed import _fitspeed

PACKAGE = pathlib.Path(fitspeed.__file__).parent


def stub_names(path):
    tree = ast.parse(path.read_text())
    names, functions = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.FunctionDef):
                functions[node.name] = node
        elif isinstance(node, ast.ImportFrom) and node.module == "_fitspeed":
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    return names, functions


def test_package_stub_declares_every_public_name_and_no_other():
    names, _ = stub_names(PACKAGE / "__init__.pyi")
    public = set(fitspeed.__all__)
    assert public - names == set(), "public names missing from __init__.pyi"
    extra = {n for n in names - public if not n.startswith("_")} - {"__version__", "__all__"}
    assert extra == set(), "__init__.pyi declares names the package does not export"


def test_package_functions_take_the_parameters_their_stubs_give():
    _, functions = stub_names(PACKAGE / "__init__.pyi")
    for name, node in functions.items():
        real = inspect.signature(getattr(fitspeed, name))
        stub_params = [a.arg for a in node.args.args] + [a.arg for a in node.args.kwonlyargs]
        assert list(real.parameters) == stub_params, name
        kwonly = {p.name for p in real.parameters.values() if p.kind is p.KEYWORD_ONLY}
        assert kwonly == {a.arg for a in node.args.kwonlyargs}, name


def test_extension_stub_matches_the_extension():
    names, _ = stub_names(PACKAGE / "_fitspeed.pyi")
    real = {n for n in dir(_fitspeed) if not n.startswith("_")}
    assert real == {n for n in names if not n.startswith("_")}
    assert {"__version__", "_python_executable"} <= names <= real | set(dir(_fitspeed))


def test_docstrings_are_there():
    for name in fitspeed.__all__:
        obj = getattr(fitspeed, name)
        assert (obj.__doc__ or "").strip(), name
