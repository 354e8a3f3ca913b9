import importlib
import sys
import textwrap

import pytest


def write_package(root, name, stub):
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text(
        "from vecrl.lazy import attach_stub\n\n__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)\n"
    )
    (folder / "__init__.pyi").write_text(textwrap.dedent(stub))
    (folder / "heavy.py").write_text("LOADED = True\n\n\ndef thing():\n    return 'thing'\n")


def test_a_stub_s_names_are_imported_on_first_use(tmp_path, monkeypatch):
    write_package(
        tmp_path, "stubbed_pkg", 'from stubbed_pkg.heavy import thing as thing\n\n__all__ = ["thing"]\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("stubbed_pkg")
    try:
        assert package.__all__ == ["thing"] and "stubbed_pkg.heavy" not in sys.modules
        assert "thing" in dir(package)
        assert package.thing() == "thing" and "stubbed_pkg.heavy" in sys.modules
        with pytest.raises(AttributeError, match="has no attribute 'other'"):
            package.other  # noqa: B018
    finally:
        for name in [n for n in sys.modules if n.startswith("stubbed_pkg")]:
            del sys.modules[name]


def test_a_stub_that_lists_a_name_it_imports_from_nowhere_is_refused(tmp_path, monkeypatch):
    write_package(tmp_path, "broken_stub_pkg", '__all__ = ["missing"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"lists \['missing'\] in __all__ but imports them from no module"):
        importlib.import_module("broken_stub_pkg")
    sys.modules.pop("broken_stub_pkg", None)
