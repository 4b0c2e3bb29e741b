"""Keep an uploaded import file on disk (streamed, size-capped) so the import can stream it.

A zip (a zipped Hugging Face dataset folder) is unpacked under three caps: its unpacked size, its number
of entries and its compression ratio. They are checked first from the zip's directory, before anything is
unpacked, and again while unpacking, counting the bytes actually written, so a zip whose directory lies
about its sizes is stopped as well. A refused zip leaves nothing behind.
"""

from __future__ import annotations

import shutil
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings

MiB = 1024 * 1024
COPY_CHUNK_BYTES = MiB
# Below this many unpacked bytes the compression ratio is not checked: small text files compress well.
RATIO_FREE_BYTES = 16 * MiB


class UploadRejected(Exception):
    pass


@dataclass(frozen=True)
class ZipLimits:
    max_unpacked_bytes: int
    max_entries: int
    max_ratio: int

    @classmethod
    def from_settings(cls) -> ZipLimits:
        return cls(
            max_unpacked_bytes=settings.IMPORT_ZIP_MAX_UNPACKED_BYTES,
            max_entries=settings.IMPORT_ZIP_MAX_FILES,
            max_ratio=settings.IMPORT_ZIP_MAX_RATIO,
        )


def store_upload(uploaded, *, file_format: str | None) -> tuple[Path, str]:
    """Write the upload under UPLOADS_DIR; unpack a zip of a dataset folder. Returns (path, format)."""
    limit = settings.IMPORT_MAX_UPLOAD_BYTES
    if uploaded.size is not None and uploaded.size > limit:
        raise UploadRejected(f"file: is larger than the limit of {limit // MiB} MiB")
    original = Path(uploaded.name or "upload").name
    suffix = Path(original).suffix.lower()
    folder = Path(settings.UPLOADS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{uuid.uuid4().hex}{suffix}"
    with target.open("wb") as out:
        for chunk in uploaded.chunks():
            out.write(chunk)
    if suffix == ".zip" or file_format == "hf":
        try:
            if not zipfile.is_zipfile(target):
                raise UploadRejected("file: a Hugging Face dataset folder must be uploaded as a .zip")
            unpacked = unpack_zip(target, name=original, limits=ZipLimits.from_settings())
        finally:
            target.unlink(missing_ok=True)
        # A zip of "folder/" unpacks to one sub-folder: import that.
        children = [p for p in unpacked.iterdir() if not p.name.startswith((".", "__MACOSX"))]
        if len(children) == 1 and children[0].is_dir():
            inner = unpacked.with_name(unpacked.name + "-data")
            children[0].rename(inner)
            shutil.rmtree(unpacked)
            inner.rename(unpacked)
        return unpacked, "hf"
    return target, file_format or ""


def unpack_zip(archive_path: Path, *, name: str, limits: ZipLimits) -> Path:
    """Unpack ``archive_path`` into a new folder beside it (the same name without the suffix) and return
    that folder; ``name`` is the file name the user sent, used in the messages.

    Raises ``UploadRejected`` when the zip is unreadable, holds an unsafe or encrypted entry, or would
    break a cap of ``limits``; the folder is then removed with whatever had been written into it.
    """
    archive_size = max(archive_path.stat().st_size, 1)
    try:
        archive = zipfile.ZipFile(archive_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UploadRejected(f"file: {name} is not a readable zip ({exc})") from None
    folder = archive_path.with_suffix("")
    with archive:
        entries = archive.infolist()
        destinations = _check_directory(entries, folder=folder, name=name, limits=limits, size=archive_size)
        folder.mkdir()
        try:
            _extract(archive, destinations, name=name, limits=limits, size=archive_size)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return folder


def _check_directory(
    entries: list[zipfile.ZipInfo], *, folder: Path, name: str, limits: ZipLimits, size: int
) -> list[tuple[zipfile.ZipInfo, Path]]:
    """The caps as the zip's directory states them; returns each entry with where it is unpacked to."""
    if len(entries) > limits.max_entries:
        raise UploadRejected(
            f"file: {name} holds {len(entries):,} entries, more than the limit of {limits.max_entries:,}"
        )
    declared = sum(info.file_size for info in entries)
    _check_total(declared, name=name, limits=limits, size=size, stated=True)
    root = folder.resolve()
    destinations = []
    for info in entries:
        member = PurePosixPath(info.filename.replace("\\", "/"))
        target = (folder / member).resolve()
        if member.is_absolute() or ".." in member.parts or not target.is_relative_to(root):
            raise UploadRejected(f"file: {name} holds an unsafe path {info.filename!r}")
        if info.flag_bits & 0x1:
            raise UploadRejected(f"file: {name} holds an encrypted file {info.filename!r}")
        destinations.append((info, target))
    return destinations


def _check_total(total: int, *, name: str, limits: ZipLimits, size: int, stated: bool) -> None:
    verb = "would unpack to" if stated else "unpacks to more than"
    if total > limits.max_unpacked_bytes:
        raise UploadRejected(
            f"file: {name} {verb} {_size(total)}, above the limit of {_size(limits.max_unpacked_bytes)} "
            "unpacked"
        )
    if total > RATIO_FREE_BYTES and total > limits.max_ratio * size:
        raise UploadRejected(
            f"file: {name} {verb} {_size(total)} from {_size(size)} zipped, a compression ratio of "
            f"{total // size:,}:1, above the limit of {limits.max_ratio}:1"
        )


def _extract(
    archive: zipfile.ZipFile,
    destinations: list[tuple[zipfile.ZipInfo, Path]],
    *,
    name: str,
    limits: ZipLimits,
    size: int,
) -> None:
    written = 0
    for info, target in destinations:
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(info) as source, target.open("wb") as out:
                while chunk := source.read(COPY_CHUNK_BYTES):
                    written += len(chunk)
                    _check_total(written, name=name, limits=limits, size=size, stated=False)
                    out.write(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
            raise UploadRejected(f"file: {name} cannot be unpacked: {info.filename!r}: {exc}") from None


def _size(n: int) -> str:
    if n >= 1024 * MiB:
        return f"{n / (1024 * MiB):.1f} GiB"
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    return f"{n:,} bytes"
