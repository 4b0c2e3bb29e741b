"""Uploaded zips: the caps on unpacked size, entry count and compression ratio, from the directory and
while unpacking; a refused zip leaves nothing behind."""

import io
import struct
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from datasets_app import import_messages
from datasets_app.uploads import UploadRejected, ZipLimits, store_upload

MiB = 1024 * 1024
LIMITS = ZipLimits(max_unpacked_bytes=64 * MiB, max_entries=20, max_ratio=100)


def zip_bytes(members: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def understate_sizes(data: bytes, stated: int) -> bytes:
    """The same zip with every central-directory entry claiming ``stated`` unpacked bytes."""
    out = bytearray(data)
    start = 0
    while (at := out.find(b"PK\x01\x02", start)) != -1:
        out[at + 24 : at + 28] = struct.pack("<I", stated)
        start = at + 4
    return bytes(out)


@pytest.fixture
def uploads(settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    settings.IMPORT_ZIP_MAX_UNPACKED_BYTES = LIMITS.max_unpacked_bytes
    settings.IMPORT_ZIP_MAX_FILES = LIMITS.max_entries
    settings.IMPORT_ZIP_MAX_RATIO = LIMITS.max_ratio
    return settings.UPLOADS_DIR


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/zip")


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_a_dataset_folder_zip_is_unpacked_into_its_own_folder(uploads):
    data = zip_bytes({"mine/data/train.jsonl": b'{"id": 1}\n' * 1000, "mine/README.md": b"# mine\n"})
    path, file_format = store_upload(upload("mine.zip", data), file_format=None)
    assert file_format == "hf"
    assert (path / "data" / "train.jsonl").read_bytes() == b'{"id": 1}\n' * 1000
    assert (path / "README.md").exists()
    assert [p for p in uploads.iterdir() if p.suffix == ".zip"] == []


def test_small_files_that_compress_well_are_not_held_to_the_ratio(uploads):
    # 8 MiB of one repeated line compresses about 1000:1, but stays below the size the ratio applies from.
    data = zip_bytes({"data/train.jsonl": b'{"id": 1}\n' * (8 * MiB // 10), "README.md": b"# small\n"})
    path, _ = store_upload(upload("small.zip", data), file_format=None)
    assert (path / "data" / "train.jsonl").stat().st_size == 8 * MiB // 10 * 10


def test_too_many_entries_are_refused_from_the_directory(uploads):
    data = zip_bytes({f"data/{i}.jsonl": b"{}\n" for i in range(21)})
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload("many.zip", data), file_format=None)
    assert str(caught.value) == "file: many.zip holds 21 entries, more than the limit of 20"
    assert leftovers(uploads) == []


def test_too_large_unpacked_is_refused_from_the_directory(uploads):
    # Stored, not compressed: the ratio is 1:1 and only the size cap applies.
    data = zip_bytes(
        {"data/a.bin": bytes(40 * MiB), "data/b.bin": bytes(30 * MiB)}, compression=zipfile.ZIP_STORED
    )
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload("big.zip", data), file_format=None)
    assert str(caught.value) == "file: big.zip would unpack to 70.0 MiB, above the limit of 64.0 MiB unpacked"
    assert leftovers(uploads) == []


def test_a_compression_ratio_above_the_cap_is_refused_from_the_directory(uploads):
    data = zip_bytes({"data/zeros.jsonl": bytes(32 * MiB)})
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload("zeros.zip", data), file_format=None)
    message = str(caught.value)
    assert message.startswith("file: zeros.zip would unpack to 32.0 MiB from ")
    assert message.endswith("above the limit of 100:1")
    assert leftovers(uploads) == []


def test_a_directory_that_understates_the_sizes_is_stopped_while_unpacking(uploads):
    """The directory says 1,000 bytes per file: every cap passes, and the unpacking, which never writes
    more than a member claims, finds the data does not match and removes what it wrote."""
    honest = zip_bytes({"data/a.jsonl": b'{"id": 1}\n' * 100_000, "data/b.jsonl": bytes(48 * MiB)})
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload("liar.zip", understate_sizes(honest, 1000)), file_format=None)
    assert str(caught.value).startswith("file: liar.zip cannot be unpacked: 'data/a.jsonl': ")
    assert leftovers(uploads) == []


@pytest.mark.parametrize("member", ["../escape.jsonl", "/etc/escape.jsonl", "data/../../escape.jsonl"])
def test_paths_outside_the_folder_are_refused(uploads, member):
    data = zip_bytes({member: b"{}\n"})
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload("unsafe.zip", data), file_format=None)
    assert str(caught.value) == f"file: unsafe.zip holds an unsafe path {member!r}"
    assert leftovers(uploads) == []
    assert not (uploads.parent / "escape.jsonl").exists()


def test_a_file_that_is_not_a_zip_is_refused(uploads):
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload("folder.zip", b"not a zip at all"), file_format="hf")
    assert "must be uploaded as a .zip" in str(caught.value)
    assert leftovers(uploads) == []


@pytest.mark.parametrize(
    ("name", "data", "file_format", "said"),
    [
        (
            "unsafe.zip",
            zip_bytes({"../escape.jsonl": b"{}\n"}),
            None,
            "berkas: unsafe.zip berisi jalur yang tidak aman",
        ),
        (
            "folder.zip",
            b"not a zip at all",
            "hf",
            "berkas: folder dataset Hugging Face harus diunggah sebagai .zip",
        ),
        (
            "many.zip",
            zip_bytes({f"data/{i}.jsonl": b"{}\n" for i in range(21)}),
            None,
            "berkas: many.zip berisi 21 entri, melebihi batas 20",
        ),
        (
            "bomb.zip",
            zip_bytes({"data/a.jsonl": bytes(60 * MiB)}),
            None,
            "berkas: bomb.zip akan menjadi 60.0 MiB dari",
        ),
    ],
)
def test_each_refusal_reads_in_the_pages_language(uploads, name, data, file_format, said):
    with pytest.raises(UploadRejected) as caught:
        store_upload(upload(name, data), file_format=file_format)
    english = str(caught.value)
    assert import_messages.file_problem(english) == english  # the English page: the same words
    with translation.override("id"):
        assert import_messages.file_problem(english).startswith(said), english
