"""The parsed-spec cache: the same Spec and the same problems as a fresh parse, fewer parses,
refused where a cache file could have come with the tree."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from chimera.errors import SpecError
from chimera.spec.loader import load_spec, load_spec_files
from chimera.spec.parsecache import ParseCache, StoredMarks
from chimera.spec.yamlload import parse_yaml

GOOD = """\
requirements:
  - id: has-main
    title: the entry point exists
    contains:
      paths: ["src/*.py"]
      pattern: "def main"
  - id: no-print
    depends_on: [has-main]
    absent: {paths: ["src/*.py"], pattern: 'print\\(', regex: true}
  - id: "0"
    defines: {path: src/a.py, symbol: main}
"""

# Clean YAML (so it may be cached) that fails validation: the problems must keep their
# positions when read from the cache.
INVALID = """\
requirements:
  - id: ok-one
    contains: {paths: ["a.py"], pattern: x}
  - id: Bad Id
    contains: {paths: ["a.py"], pattern: x, colour: red}
  - id: ok-two
    depends_on: [nowhere]
    absent: {paths: ["a.py"], pattern: "("}
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "README.md").write_text("x\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "README.md")  # the cache needs git to track something here
    return tmp_path


def entries(root: Path) -> list[Path]:
    return sorted((root / ".chimera/cache").glob("spec-*.json"))


def test_a_cached_load_is_the_same_spec_and_parses_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_file = repo / "specs/a.yaml"
    spec_file.write_text(GOOD, encoding="utf-8")
    fresh = load_spec([spec_file])
    cache = ParseCache.for_root(repo)
    assert cache is not None
    assert load_spec([spec_file], parse_cache=cache) == fresh
    assert (cache.hits, cache.misses) == (0, 1)
    assert len(entries(repo)) == 1

    import chimera.spec.loader as loader

    def no_parse(text: str) -> None:
        raise AssertionError("parsed although the cache holds this text")

    monkeypatch.setattr(loader, "parse_yaml", no_parse)
    again = ParseCache.for_root(repo)
    assert again is not None
    cached = load_spec([spec_file], parse_cache=again)
    assert cached == fresh
    assert [r.location for r in cached.requirements] == [r.location for r in fresh.requirements]
    assert again.hits == 1


def test_problems_read_from_the_cache_keep_their_positions(repo: Path) -> None:
    spec_file = repo / "specs/bad.yaml"
    spec_file.write_text(INVALID, encoding="utf-8")
    fresh = load_spec_files([spec_file]).all_problems()
    assert fresh, "the fixture must be invalid"
    for _ in range(2):  # the first run stores the parse, the second reads it
        cache = ParseCache.for_root(repo)
        assert cache is not None
        with pytest.raises(SpecError) as caught:
            load_spec([spec_file], parse_cache=cache)
        assert [str(p) for p in caught.value.problems] == [str(p) for p in fresh]
    assert cache is not None
    assert cache.hits == 1


def test_a_changed_file_is_parsed_again(repo: Path) -> None:
    spec_file = repo / "specs/a.yaml"
    spec_file.write_text(GOOD, encoding="utf-8")
    cache = ParseCache.for_root(repo)
    assert cache is not None
    load_spec([spec_file], parse_cache=cache)
    spec_file.write_text(GOOD.replace("has-main", "has-entry"), encoding="utf-8")
    spec = load_spec([spec_file], parse_cache=cache)
    assert [r.id for r in spec.requirements] == ["has-entry", "no-print", "0"]
    assert cache.hits == 0


@pytest.mark.parametrize(
    "text",
    [
        "requirements: []\n1: integer key\n",  # JSON would turn the key into a string
        "requirements: []\nwhen: 2024-01-01\n",  # a date
        "requirements: []\nx: .nan\n",
        'requirements: []\n"a\\x1fsb": 1\n',  # a key holding the path separator
        "requirements: [\n",  # malformed
        "# nothing\n",  # empty
        "requirements: []\nrequirements: []\n",  # duplicate key: an issue
    ],
)
def test_only_documents_json_gives_back_exactly_are_stored(repo: Path, text: str) -> None:
    cache = ParseCache.for_root(repo)
    assert cache is not None
    cache.store(text, parse_yaml(text))
    assert entries(repo) == []
    assert cache.lookup(text) is None


def test_stored_marks_answer_as_the_fresh_ones(repo: Path) -> None:
    cache = ParseCache.for_root(repo)
    assert cache is not None
    fresh = parse_yaml(GOOD)
    cache.store(GOOD, fresh)
    stored = cache.lookup(GOOD)
    assert stored is not None
    assert isinstance(stored.marks, StoredMarks)
    for path, mark in fresh.marks.items():
        assert path in stored.marks
        assert stored.marks.get(path) == mark == stored.marks[path]
        assert stored.mark(path) == fresh.mark(path)
    for path in fresh.key_marks:
        assert stored.key_mark(path) == fresh.key_mark(path)
    # The index 0 and the key "0" are different nodes.
    assert ("requirements", 0) in stored.marks
    assert ("requirements", "0") not in stored.marks
    assert stored.marks.get(("nowhere",)) is None
    with pytest.raises(KeyError):
        stored.marks[("nowhere",)]
    assert len(stored.marks) == len(fresh.marks)
    assert stored.marks == fresh.marks
    assert dict(stored.key_marks.items()) == fresh.key_marks
    assert stored.value == fresh.value


def test_non_ascii_and_lone_surrogates_survive_the_round_trip(repo: Path) -> None:
    text = 'requirements: []\nnote: "caf\u00e9 \\ud800 \u2603"\n'
    cache = ParseCache.for_root(repo)
    assert cache is not None
    fresh = parse_yaml(text)
    assert not fresh.issues
    cache.store(text, fresh)
    stored = cache.lookup(text)
    assert stored is not None
    assert stored.value == fresh.value
    assert "\ud800" in stored.value["note"]


def test_an_entry_under_the_wrong_key_is_ignored(repo: Path) -> None:
    cache = ParseCache.for_root(repo)
    assert cache is not None
    cache.store(GOOD, parse_yaml(GOOD))
    (entry,) = entries(repo)
    raw = json.loads(entry.read_text(encoding="utf-8"))
    raw["key"] = "0" * 40
    entry.write_text(json.dumps(raw), encoding="utf-8")
    assert cache.lookup(GOOD) is None


def test_refused_when_git_tracks_dot_chimera(repo: Path) -> None:
    spec_file = repo / "specs/a.yaml"
    spec_file.write_text(GOOD, encoding="utf-8")
    cache = ParseCache.for_root(repo)
    assert cache is not None
    load_spec([spec_file], parse_cache=cache)
    # A forged entry: the cached parse of GOOD now says something else.
    (entry,) = entries(repo)
    raw = json.loads(entry.read_text(encoding="utf-8"))
    raw["value"]["requirements"] = raw["value"]["requirements"][:1]
    entry.write_text(json.dumps(raw), encoding="utf-8")
    git(repo, "add", "-f", str(entry))
    git(repo, "commit", "-qm", "forged")
    assert ParseCache.for_root(repo) is None


def test_refused_in_a_folder_git_tracks_nothing_in(repo: Path) -> None:
    """An archive extracted into an untracked folder of a repository brings its own cache."""
    (repo / "third-party" / "specs").mkdir(parents=True)
    assert ParseCache.for_root(repo / "third-party") is None
    assert ParseCache.for_root(repo) is not None


def test_refused_outside_a_git_repository(tmp_path: Path) -> None:
    assert ParseCache.for_root(tmp_path) is None
