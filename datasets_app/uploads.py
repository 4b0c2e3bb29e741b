"""Keep an uploaded import file on disk (streamed, size-capped) so the import can stream it."""

from __future__ import annotations

import shutil
import uuid
import zipfile
from pathlib import Path

from django.conf import settings


class UploadRejected(Exception):
    pass


def store_upload(uploaded, *, file_format: str | None) -> tuple[Path, str]:
    """Write the upload under UPLOADS_DIR; unpack a zip of a dataset folder. Returns (path, format)."""
    limit = settings.IMPORT_MAX_UPLOAD_BYTES
    if uploaded.size is not None and uploaded.size > limit:
        raise UploadRejected(f"file: is larger than the limit of {limit // (1024 * 1024)} MiB")
    original = Path(uploaded.name or "upload").name
    suffix = Path(original).suffix.lower()
    folder = Path(settings.UPLOADS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{uuid.uuid4().hex}{suffix}"
    with target.open("wb") as out:
        for chunk in uploaded.chunks():
            out.write(chunk)
    if suffix == ".zip" or file_format == "hf":
        if not zipfile.is_zipfile(target):
            target.unlink(missing_ok=True)
            raise UploadRejected("file: a Hugging Face dataset folder must be uploaded as a .zip")
        unpacked = target.with_suffix("")
        with zipfile.ZipFile(target) as archive:
            for member in archive.namelist():
                resolved = (unpacked / member).resolve()
                if not str(resolved).startswith(str(unpacked.resolve())):
                    target.unlink(missing_ok=True)
                    raise UploadRejected(f"file: the zip holds an unsafe path {member!r}")
            archive.extractall(unpacked)
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
