"""Locating GGUF files: any path, the SmolLM2 package, and split models joined from part packages.

The split-model tests install three tiny "part packages" into a temp folder on ``sys.path`` (a module with
``get_part_path()`` and a ``dist-info`` folder, as pip would leave them) and register a model made of them,
so joining, ordering and the sha256 check run through the real code path.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from evaluation.inference import gguf_models
from evaluation.inference.gguf_models import (
    KNOWN_MODELS,
    SMOLLM2_135M,
    GgufNotAvailable,
    KnownGguf,
    is_installed,
    locate_gguf,
    sha256_of,
)

PARTS = [b"GGUF-head|", b"middle|", b"tail"]


def install_part_package(root: Path, distribution: str, data: bytes) -> None:
    module = distribution.replace("-", "_")
    folder = root / module
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "part.bin").write_bytes(data)
    (folder / "__init__.py").write_text(
        "import os\n\ndef get_part_path():\n    return os.path.join(os.path.dirname(__file__), 'data', 'part.bin')\n"
    )
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{module}\n")


@pytest.fixture
def split_model(tmp_path, monkeypatch) -> KnownGguf:
    site = tmp_path / "site"
    names = [f"timbang-test-part{i}" for i in range(1, 4)]
    for name, data in zip(names, PARTS, strict=True):
        install_part_package(site, name, data)
    monkeypatch.syspath_prepend(str(site))
    model = KnownGguf(
        name="tiny-split",
        filename="tiny-split.gguf",
        sha256=hashlib.sha256(b"".join(PARTS)).hexdigest(),
        packages=tuple(f"{name}==1.0" for name in names),
        description="three parts",
    )
    monkeypatch.setitem(KNOWN_MODELS, model.name, model)
    yield model
    for name in names:
        sys.modules.pop(name.replace("-", "_"), None)


def test_split_model_is_joined_in_order_once_and_checked(split_model, tmp_path):
    cache = tmp_path / "cache"
    assert is_installed("tiny-split")

    path = locate_gguf("tiny-split", cache_dir=cache)

    assert path == cache / "tiny-split.gguf"
    assert path.read_bytes() == b"GGUF-head|middle|tail"
    written = path.stat().st_mtime_ns
    assert locate_gguf("TINY-SPLIT", cache_dir=cache) == path  # names are case-insensitive
    assert path.stat().st_mtime_ns == written  # found, not joined again
    assert [p.name for p in cache.iterdir()] == ["tiny-split.gguf"]  # no temporary left behind


def test_a_changed_part_fails_the_checksum_and_leaves_nothing(split_model, tmp_path, monkeypatch):
    monkeypatch.setitem(KNOWN_MODELS, "tiny-split", KnownGguf(**{**split_model.__dict__, "sha256": "0" * 64}))
    cache = tmp_path / "cache"
    with pytest.raises(GgufNotAvailable, match="joined parts of tiny-split have sha256 .* expected 0000"):
        locate_gguf("tiny-split", cache_dir=cache)
    assert list(cache.iterdir()) == []


def test_a_missing_part_package_is_named(split_model, tmp_path, monkeypatch):
    parts = (*split_model.packages, "timbang-test-part4==1.0")
    monkeypatch.setitem(KNOWN_MODELS, "tiny-split", KnownGguf(**{**split_model.__dict__, "packages": parts}))
    assert not is_installed("tiny-split")
    with pytest.raises(
        GgufNotAvailable,
        match="missing timbang-test-part4.*pip install 'timbang-test-part1==1.0' .* 'timbang-test-part4==1.0'",
    ):
        locate_gguf("tiny-split", cache_dir=tmp_path / "cache")


def test_any_existing_path_is_accepted_and_a_wrong_one_is_explained(tmp_path):
    own = tmp_path / "my-model.Q8_0.gguf"
    own.write_bytes(b"GGUF")
    assert locate_gguf(own) == own
    assert locate_gguf(str(own)) == own
    with pytest.raises(GgufNotAvailable, match="no GGUF file at .*missing.gguf and not a known model name"):
        locate_gguf(tmp_path / "missing.gguf")


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(gguf_models.CACHE_ENV, str(tmp_path / "models"))
    assert gguf_models.default_cache_dir() == tmp_path / "models"
    monkeypatch.delenv(gguf_models.CACHE_ENV)
    assert gguf_models.default_cache_dir() == Path.home() / ".cache" / "timbang" / "models"


def test_the_shipped_smollm2_file_has_the_published_checksum(smollm2_gguf):
    assert smollm2_gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert sha256_of(smollm2_gguf) == KNOWN_MODELS[SMOLLM2_135M].sha256
    assert smollm2_gguf.stat().st_size > 90_000_000
