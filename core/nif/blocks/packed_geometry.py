"""Additional geometry data: NiAdditionalGeometryData (LOD meshes) and the Xbox 360
BSPackedAdditionalGeometryData that holds a shape's vertices as interleaved half floats
(FORMAT-NOTES section 7). ``decode_streams`` turns the packed vertices into the arrays PC files
keep inline."""

import numpy as np

from ...errors import FormatError
from ..block import Block, block_class

HALF4, HALF2, UBYTE4 = 16, 14, 28
# Per stream type: the size of the words to swap when the byte order changes (ubyte4 is one u32).
STREAM_WORDS = {HALF4: 2, HALF2: 2, UBYTE4: 4}
UNIT_SIZES = {HALF4: 8, HALF2: 4, UBYTE4: 4}
STREAM_TYPE_NAMES = {HALF4: "half4", HALF2: "half2", UBYTE4: "ubyte4"}
SKINNED_STRIDES = (48, 52)  # decide by stride, not by the presence of a ubyte4 stream
BONE_INDEX_OFFSET = 16
SENTINEL_TOLERANCE = 0.02  # x + y + z of a sentinel vertex is 1 within half precision


def stream_dtype(s):
    """NiAGDDataStream (25 bytes, unaligned)."""
    u4 = s.dtype("u4")
    names = ["type", "unit_size", "total_size", "stride", "block_index", "offset", "flags"]
    return np.dtype({"names": names, "formats": [u4] * 6 + ["u1"], "offsets": [0, 4, 8, 12, 16, 20, 24], "itemsize": 25})


class DataBlock:
    """NiAGDDataBlock: sub-block offsets, atom sizes and the data bytes; the packed variant adds a
    shader index and a total size. ``data`` is a uint8 array in the byte order of ``big_endian``."""

    has_data = 1
    block_size = 0
    offsets = ()
    atom_sizes = ()
    data = None
    shader_index = 0
    total_size = 0
    big_endian = False

    def sync(self, s, packed, atoms_rule):
        self.has_data = s.bool8(self.has_data)
        if not self.has_data:
            return
        self.block_size = s.u32(self.block_size)
        self.offsets = s.counted_array(self.offsets, "u4", what="data block offsets")
        self.atom_sizes = s.counted_array(self.atom_sizes, "u4", what="data atoms")
        # nif.xml reads atoms x block size bytes, older readers block size: the block size decides.
        length = self.block_size * (len(self.atom_sizes) if atoms_rule else 1) if s.reading else len(self.data)
        self.data = s.array(self.data, "u1", length)
        if s.reading:
            self.big_endian = s.big_endian
        if packed:
            self.shader_index = s.u32(self.shader_index)
            self.total_size = s.u32(self.total_size)


class AdditionalGeometryData(Block):
    num_vertices = 0
    streams = ()
    blocks = ()
    packed = False

    def sync(self, s):
        self.num_vertices = s.u16(self.num_vertices)
        dtype = stream_dtype(s)
        n = s.count(len(self.streams), item_size=dtype.itemsize, what="streams")
        self.streams = s.array(self.streams, dtype, n)
        n = s.count(len(self.blocks), what="data blocks")
        if not s.reading:
            for block in self.blocks:
                original = block.data
                block.data = self._swapped(block, s.big_endian)
                try:
                    block.sync(s, self.packed, False)
                finally:
                    block.data = original
            return
        start = s.pos
        for atoms_rule in (False, True):
            s.pos = start
            try:
                self.blocks = self._read_blocks(s, n, atoms_rule)
            except FormatError:
                continue
            if s.remaining == 0:
                return
        raise s.error(f"{n} data blocks do not fill the block's size under either reading of their data length", start)

    def _read_blocks(self, s, n, atoms_rule):
        s.charge(n)
        blocks = []
        for _ in range(n):
            block = DataBlock()
            block.sync(s, self.packed, atoms_rule)
            blocks.append(block)
        return blocks

    def _swapped(self, block, big_endian):
        """The block's data in the byte order being written."""
        if not block.has_data or block.big_endian == big_endian:
            return block.data
        words = self._swap_words(block)
        data = np.array(block.data, np.uint8)
        for start, stop, word, stride in words:
            rows = len(data) // stride
            table = data[: rows * stride].reshape(rows, stride)
            width = stop - start
            table[:, start:stop] = table[:, start:stop].reshape(rows, width // word, word)[:, :, ::-1].reshape(rows, width)
        return data

    def _swap_words(self, block):
        """(start, stop, word size, stride) column ranges to byte-swap."""
        raise NotImplementedError


@block_class("NiAdditionalGeometryData")
class NiAdditionalGeometryData(AdditionalGeometryData):
    def _swap_words(self, block):
        if len(block.data) % 4:
            raise FormatError(f"additional geometry data of {len(block.data)} bytes cannot be swapped as 4-byte words")
        return [(0, 4, 4, 4)]  # the whole data as 4-byte words (FORMAT-NOTES section 7)


@block_class("BSPackedAdditionalGeometryData")
class BSPackedAdditionalGeometryData(AdditionalGeometryData):
    packed = True

    def _swap_words(self, block):
        index = self.blocks.index(block)
        words = []
        for stream in self.streams:
            if int(stream["block_index"]) != index:
                continue
            kind = int(stream["type"])
            if kind not in STREAM_WORDS:
                raise FormatError(f"packed stream type {kind} is unknown, so its byte order cannot be changed")
            start, stride = int(stream["offset"]), int(stream["stride"])
            stop = start + UNIT_SIZES[kind]
            if int(stream["unit_size"]) != UNIT_SIZES[kind] or stop > stride:
                raise FormatError(f"packed stream at offset {start} does not fit its stride {stride}")
            words.append((start, stop, STREAM_WORDS[kind], stride))
        return words

    @property
    def stride(self):
        return int(self.streams[0]["stride"]) if len(self.streams) else 0


def stream_semantics(streams):
    """Name each stream by the layouts of FORMAT-NOTES section 7: position first; in skinned
    strides the half4 at 8 holds weights and the ubyte4 at 16 bone indices; another ubyte4 is the
    colour, the first half2 the UV; the remaining half4s are normal, tangent, bitangent in order.
    Returns [(name, stream index)] in offset order."""
    order = sorted(range(len(streams)), key=lambda i: int(streams[i]["offset"]))
    stride = int(streams[order[0]]["stride"]) if order else 0
    skinned = stride in SKINNED_STRIDES
    vectors = iter(("normal", "tangent", "bitangent"))
    names = []
    for i in order:
        kind, offset = int(streams[i]["type"]), int(streams[i]["offset"])
        taken = {name for name, _ in names}
        if kind == HALF4 and "position" not in taken:
            name = "position"
        elif kind == HALF4 and skinned and offset == 8:
            name = "weights"
        elif kind == UBYTE4 and skinned and offset == BONE_INDEX_OFFSET:
            name = "bone_indices"
        elif kind == UBYTE4 and "color" not in taken:
            name = "color"
        elif kind == HALF2 and "uv" not in taken:
            name = "uv"
        elif kind == HALF4:
            name = next(vectors, "unknown")
        else:
            name = "unknown"
        names.append((name, i))
    return names


def decode_streams(block):
    """The packed vertices as float32 arrays: position, normal, tangent, bitangent (n, 3), uv (n, 2),
    color (n, 4) RGBA in 0..1, weights (n, 4), bone_indices (n, 4) uint8. A bitangent missing beside a
    normal and tangent is cross(N, T)."""
    n = block.num_vertices
    if not len(block.streams):
        return {}
    arrays = {}
    for name, i in stream_semantics(block.streams):
        stream = block.streams[i]
        kind, offset, stride = int(stream["type"]), int(stream["offset"]), int(stream["stride"])
        if name == "unknown":
            continue
        if kind not in UNIT_SIZES or int(stream["unit_size"]) != UNIT_SIZES[kind]:
            raise FormatError(f"packed stream {i}: type {kind} with unit size {int(stream['unit_size'])} is unknown")
        index = int(stream["block_index"])
        if not 0 <= index < len(block.blocks) or not block.blocks[index].has_data:
            raise FormatError(f"packed stream {i} is in data block {index}, which holds no data")
        data_block = block.blocks[index]
        if offset + UNIT_SIZES[kind] > stride:
            raise FormatError(f"packed stream {i}: a value at offset {offset} does not fit in a stride of {stride} bytes")
        if stride * n > len(data_block.data):
            raise FormatError(
                f"packed stream {i}: {n} vertices of stride {stride} need {stride * n} bytes, "
                f"the data block holds only {len(data_block.data)}"
            )
        order = ">" if data_block.big_endian else "<"
        if kind == UBYTE4:
            field, count = np.dtype(order + "u4"), None
        else:
            field, count = np.dtype(order + "f2"), UNIT_SIZES[kind] // 2
        dtype = np.dtype({"names": ["v"], "formats": [(field, count) if count else field], "offsets": [offset], "itemsize": stride})
        values = np.frombuffer(data_block.data, dtype, n)["v"]
        if kind == UBYTE4:  # one u32: x in the low byte .. w in the high byte
            values = np.stack([(values >> shift) & 0xFF for shift in (0, 8, 16, 24)], axis=1).astype(np.uint8)
        else:
            values = values.astype(np.float32)
        arrays[name] = values
    return _finish(arrays)


def _finish(arrays):
    out = {}
    for name in ("position", "normal", "tangent", "bitangent"):
        if name in arrays:
            out[name] = np.ascontiguousarray(arrays[name][:, :3])
    if "bitangent" not in out and "normal" in out and "tangent" in out:
        out["bitangent"] = np.cross(out["normal"], out["tangent"]).astype(np.float32)
    if "uv" in arrays:
        out["uv"] = arrays["uv"]
    if "color" in arrays:  # D3DCOLOR: A in the high byte, then R, G, B
        argb = arrays["color"][:, ::-1]
        out["color"] = (argb[:, [1, 2, 3, 0]] / np.float32(255)).astype(np.float32)
    if "bone_indices" in arrays:
        out["bone_indices"] = arrays["bone_indices"]
    if "weights" in arrays:
        out["weights"] = fix_weight_sentinel(arrays["weights"])
    return out


def fix_weight_sentinel(weights):
    """Some meshes store 1.0 in slot 3 while x + y + z is about 1: zero it and renormalise."""
    weights = np.array(weights, np.float32)
    first = weights[:, :3].sum(axis=1)
    sentinel = (weights[:, 3] == 1.0) & (np.abs(first - 1.0) <= SENTINEL_TOLERANCE)
    weights[sentinel, 3] = 0.0
    weights[sentinel] /= first[sentinel, None]
    return weights
