"""PyTorch's checkpoint archive (the format of ``torch.save`` since 1.6), written.

An uncompressed zip whose records sit under one folder::

    archive/data.pkl                 the pickled object (protocol 2), storages as persistent ids
    archive/.format_version          "1"
    archive/.storage_alignment       "64"
    archive/byteorder                "little"
    archive/data/<key>               one record of raw bytes per storage
    archive/version                  "3"
    archive/.data/serialization_id   an id for this save

Record data starts on 64-byte boundaries of the file (the local header's extra field is
padded, as PyTorch pads it), so a reader can map storages straight out of the file.
"""
import io
import struct
import uuid
import zipfile

from ._pickler import CheckpointPickler

__all__ = ["write_zip_checkpoint"]

ALIGNMENT = 64
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: equal objects give equal files


def _aligned_info(zf, name, size):
    info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    # Local header: 30 fixed bytes, the name, our extra field (4-byte header + padding),
    # then the zip64 field zipfile appends for large records.
    data_start = zf.fp.tell() + 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -data_start % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info, zip64


def _write_record(zf, name, payload):
    view = memoryview(payload).cast("B")
    info, zip64 = _aligned_info(zf, name, view.nbytes)
    with zf.open(info, "w", force_zip64=zip64) as out:
        out.write(view)


def write_zip_checkpoint(obj, f, protocol=2, archive="archive"):
    """Pickle `obj` into PyTorch's zip archive on the binary file object `f`."""
    pickled = io.BytesIO()
    pickler = CheckpointPickler(pickled, protocol=protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, f"{archive}/data.pkl", pickled.getbuffer())
        _write_record(zf, f"{archive}/.format_version", b"1")
        _write_record(zf, f"{archive}/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(zf, f"{archive}/byteorder", b"little")
        for record in pickler.records:
            _write_record(zf, f"{archive}/data/{record.key}", record.blob)
        _write_record(zf, f"{archive}/version", b"3\n")
        _write_record(zf, f"{archive}/.data/serialization_id", f"{uuid.uuid4().int:040d}"[:40].encode())
