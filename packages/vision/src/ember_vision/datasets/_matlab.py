"""A reader for the numeric arrays of MATLAB level-5 ``.mat`` files (SVHN ships as these),
so ember-vision needs no SciPy. Only real numeric matrices are read; cells, structs,
sparse and complex arrays raise."""
import struct
import zlib

import numpy as np

__all__ = ["load_mat"]

_MI_TYPES = {1: np.int8, 2: np.uint8, 3: np.int16, 4: np.uint16, 5: np.int32, 6: np.uint32, 7: np.float32,
             9: np.float64, 12: np.int64, 13: np.uint64}
_MX_CLASSES = {6: np.float64, 7: np.float32, 8: np.int8, 9: np.uint8, 10: np.int16, 11: np.uint16, 12: np.int32,
               13: np.uint32, 14: np.int64, 15: np.uint64}
MI_MATRIX, MI_COMPRESSED = 14, 15


def _elements(buffer, endian):
    """(type, payload) of each data element in ``buffer``."""
    offset = 0
    while offset + 8 <= len(buffer):
        first, = struct.unpack_from(endian + "I", buffer, offset)
        if first >> 16:  # small element: type and size share the first word, data the second
            yield first & 0xFFFF, buffer[offset + 4:offset + 4 + (first >> 16)]
            offset += 8
            continue
        mtype, nbytes = struct.unpack_from(endian + "II", buffer, offset)
        yield mtype, buffer[offset + 8:offset + 8 + nbytes]
        offset += 8 + nbytes
        if mtype != MI_COMPRESSED:
            offset += (-nbytes) % 8  # uncompressed elements are padded to 8 bytes


def _matrix(payload, endian):
    parts = list(_elements(payload, endian))
    flags = struct.unpack_from(endian + "I", parts[0][1])[0]
    mx_class, complex_flag = flags & 0xFF, flags & 0x800
    if mx_class not in _MX_CLASSES or complex_flag:
        raise ValueError(f"only real numeric MATLAB arrays are supported (class {mx_class})")
    dims = np.frombuffer(parts[1][1], dtype=endian + "i4")
    name = bytes(parts[2][1]).decode("ascii")
    dtype, data = parts[3]
    values = np.frombuffer(data, dtype=np.dtype(_MI_TYPES[dtype]).newbyteorder(endian))
    return name, values.astype(_MX_CLASSES[mx_class]).reshape(tuple(dims), order="F")


def load_mat(path):
    """``{name: ndarray}`` of the numeric variables in a level-5 MAT file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 128 or data[126:128] not in (b"IM", b"MI"):
        raise ValueError(f"{path} is not a MATLAB 5.0 MAT-file (version 7.3 files are HDF5: not supported)")
    endian = "<" if data[126:128] == b"IM" else ">"
    result = {}
    for mtype, payload in _elements(data[128:], endian):
        if mtype == MI_COMPRESSED:
            mtype, payload = next(_elements(zlib.decompress(payload), endian))
        if mtype == MI_MATRIX:
            name, array = _matrix(payload, endian)
            result[name] = array
    return result
