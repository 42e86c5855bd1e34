"""``chimera init``: a starter spec inferred from a repository, never overwriting silently."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
import yaml

from chimera.cli import main
from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec
from chimera.spec.starter import infer_requirements, render_spec

REPO_ROOT = Path(__file__).resolve().parents[3]

INIT = '''\
"""Shop."""

from shop.cart import Cart
from shop.catalog import Catalog

__all__ = ["Cart", "Catalog", "VERSION"]
VERSION = "1"
'''

CART = '''\
class Cart:
    """A cart."""

    def add(self, sku: str) -> None:
        pass


class CartError(Exception):
    pass


class _Internal:
    pass
'''

CATALOG = """\
class Catalog:
    def find(self, sku: str) -> None:
        return None


class BigHelper:
    def a(self) -> None: ...
    def b(self) -> None: ...
    def c(self) -> None: ...
    def d(self) -> None: ...
    def e(self) -> None: ...
"""

README = """\
# shop

Install:

    $ pip install shop[fast]

Then `import shop`.
"""


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = tmp_path / "src" / "shop"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT, encoding="utf-8")
    (pkg / "cart.py").write_text(CART, encoding="utf-8")
    (pkg / "catalog.py").write_text(CATALOG, encoding="utf-8")
    (pkg / "_private.py").write_text("class Hidden:\n    pass\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "test_shop.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_writes_a_starter_spec(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    target = shop / "specs" / "starter.yaml"
    data = yaml.safe_load(target.read_text(encoding="utf-8"))
    reqs = {r["id"]: r for r in data["requirements"]}
    assert list(reqs) == [
        "shop-defines-cart",
        "shop-defines-catalog",
        "shop-defines-big-helper",
        "readme-install-command",
        "tests-pass",
    ]
    assert reqs["shop-defines-cart"]["defines"] == {
        "path": "src/shop/cart.py",
        "symbol": "Cart",
        "kind": "class",
    }
    assert reqs["readme-install-command"]["contains"] == {
        "path": "README.md",
        "pattern": "pip install shop[fast]",
        "regex": False,
    }
    assert reqs["tests-pass"]["command"]["run"] == "python -m pytest -q"
    assert out.splitlines()[0] == "wrote specs/starter.yaml (5 requirements):"
    assert "  shop-defines-cart        defines class Cart in src/shop/cart.py" in out
    assert "next: chimera check" in out


def test_inferred_requirements_hold(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init"]) == 0
    spec = load_spec([shop / "specs"])
    static = [r.id for r in spec if r.kind != "command"]
    report = check_drift(spec, shop, only=static)
    assert report.ok, [r.render() for r in report.red]
    capsys.readouterr()
    assert main(["check", "--only", *static]) == 0


def test_init_refuses_to_overwrite(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = shop / "specs" / "starter.yaml"
    target.parent.mkdir()
    target.write_text("mine\n", encoding="utf-8")
    assert main(["init"]) == 2
    assert capsys.readouterr().err == (
        "chimera: error: specs/starter.yaml already exists; pass --force to overwrite it\n"
    )
    assert target.read_text(encoding="utf-8") == "mine\n"
    assert main(["init", "--force"]) == 0
    assert "requirements:" in target.read_text(encoding="utf-8")


def test_init_with_root(
    shop: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert main(["init", "--root", str(shop)]) == 0
    assert (shop / "specs" / "starter.yaml").is_file()
    assert f"next: chimera check --root {shop}" in capsys.readouterr().out


def test_makefile_test_target_wins(shop: Path) -> None:
    (shop / "Makefile").write_text("lint:\n\truff check .\n\ntest:\n\tpytest\n", encoding="utf-8")
    reqs = {r.id: r for r in infer_requirements(shop).requirements}
    assert reqs["tests-pass"].fields["run"] == "make test"


def test_nothing_to_infer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("chimera: error: nothing to infer in ")
    assert "no Python package found" in err
    assert not (tmp_path / "specs").exists()


def test_unparsable_module_is_skipped(shop: Path) -> None:
    (shop / "src" / "shop" / "broken.py").write_text("class Oops(:\n", encoding="utf-8")
    ids = [r.id for r in infer_requirements(shop).requirements]
    assert "shop-defines-oops" not in ids
    assert "shop-defines-cart" in ids


def test_inference_on_chimera_itself() -> None:
    inference = infer_requirements(REPO_ROOT)
    kinds = [r.kind for r in inference.requirements]
    assert "defines" in kinds
    paths = {r.fields["path"] for r in inference.requirements if r.kind == "defines"}
    assert all(p.startswith(("chimera/", "pytest_chimera/")) for p in paths)


def test_inference_on_installed_packages(tmp_path: Path) -> None:
    """Real code nobody here wrote: the interpreter's site-packages, read only."""
    site = Path(sysconfig.get_paths()["purelib"])
    inference = infer_requirements(site)
    defines = [r for r in inference.requirements if r.kind == "defines"]
    assert defines, inference.notes
    spec_file = tmp_path / "starter.yaml"
    spec_file.write_text(render_spec(defines), encoding="utf-8")
    spec = load_spec([spec_file])
    report = check_drift(spec, site)
    assert report.ok, [r.render() for r in report.red]


# -- a new user's project: a module and a bare test file at the root (the first tutorial) ----

CART_PY = "def total(prices: list[int]) -> int:\n    return sum(prices)\n"
TEST_CART = "from cart import total\n\n\ndef test_total() -> None:\n    assert total([2, 3]) == 5\n"
TUTORIAL_SPEC = """\
requirements:
  - id: cents-not-floats
    absent: {pattern: '\\bfloat\\(', paths: ['**/*.py']}
  - id: tests-pass
    command: {run: 'python -m pytest -q'}
"""


@pytest.fixture
def tutorial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cart.py").write_text(CART_PY, encoding="utf-8")
    (tmp_path / "test_cart.py").write_text(TEST_CART, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


@pytest.mark.parametrize("name", ["test_cart.py", "cart_test.py"])
def test_a_bare_test_file_at_the_root_is_a_test_command(
    tutorial: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tutorial / "test_cart.py").rename(tutorial / name)
    assert main(["init"]) == 0
    data = yaml.safe_load((tutorial / "specs" / "starter.yaml").read_text(encoding="utf-8"))
    assert [(r["id"], r["command"]["run"]) for r in data["requirements"]] == [
        ("tests-pass", "python -m pytest -q")
    ]
    assert "next: chimera check" in capsys.readouterr().out
    assert main(["check", "--no-cache"]) == 0  # and it runs the test file, green
    assert "1 passed" in capsys.readouterr().out


def test_a_test_file_under_tests_without_configuration_counts(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "cart_test.py").write_text(TEST_CART, encoding="utf-8")
    ids = [r.id for r in infer_requirements(tmp_path).requirements]
    assert ids == ["tests-pass"]


def test_a_python_file_that_is_not_a_test_is_no_test_command(tutorial: Path) -> None:
    (tutorial / "test_cart.py").rename(tutorial / "check_cart.py")
    inference = infer_requirements(tutorial)
    assert inference.requirements == []
    assert any("test_*.py" in note for note in inference.notes)


def test_init_leaves_out_an_id_the_spec_already_has(
    tutorial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tutorial / "specs").mkdir()
    (tutorial / "specs" / "cart.yaml").write_text(TUTORIAL_SPEC, encoding="utf-8")
    pkg = tutorial / "shop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("class Cart:\n    pass\n", encoding="utf-8")
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    data = yaml.safe_load((tutorial / "specs" / "starter.yaml").read_text(encoding="utf-8"))
    assert [r["id"] for r in data["requirements"]] == ["shop-defines-cart"]
    assert (
        "note: left out tests-pass: specs/cart.yaml already has a requirement with that id"
        in out.splitlines()
    )
    assert out.splitlines()[-1].startswith("next: chimera check")
    # The Spec chimera check is told to load next is valid: no duplicate id.
    assert [r.id for r in load_spec([tutorial / "specs"])] == [
        "cents-not-floats",
        "tests-pass",
        "shop-defines-cart",
    ]
    assert main(["check", "--no-cache", "--only", "shop-defines-cart"]) == 0


def test_init_writes_nothing_when_the_spec_has_every_inferred_id(
    tutorial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tutorial / "specs").mkdir()
    (tutorial / "specs" / "cart.yaml").write_text(TUTORIAL_SPEC, encoding="utf-8")
    assert main(["init"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "note: left out tests-pass: specs/cart.yaml already has a requirement with that id",
        f"wrote nothing: specs/ already has every requirement inferred for {tutorial}",
    ]
    assert sorted(p.name for p in (tutorial / "specs").iterdir()) == ["cart.yaml"]


def test_init_refuses_to_add_to_a_spec_that_does_not_load(
    tutorial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tutorial / "specs").mkdir()
    (tutorial / "specs" / "cart.yaml").write_text(
        "requirements:\n  - id: a\n    defines: {path: cart.py}\n", encoding="utf-8"
    )
    assert main(["init"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("specs/cart.yaml:3:")
    assert err[-1].startswith("chimera: error: ")
    assert err[-1].endswith(
        "holds an invalid spec (1 problem); fix it before chimera init adds a starter file to it"
    )
    assert not (tutorial / "specs" / "starter.yaml").exists()


def test_force_replaces_the_starter_without_counting_its_own_ids(
    tutorial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init"]) == 0
    assert main(["init", "--force"]) == 0
    assert "wrote specs/starter.yaml (1 requirement):" in capsys.readouterr().out
    assert [r.id for r in load_spec([tutorial / "specs"])] == ["tests-pass"]
