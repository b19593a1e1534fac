"""A whole NIF file: header, blocks in order, footer."""

import os
from pathlib import Path

from ..errors import FormatError
from ..files import write_replacing
from ..stream import Budget, ReadStream, WriteStream, encode_text
from .block import RawBlock, block_at, class_for
from .header import Header


class NifFile:
    def __init__(self, header=None, blocks=None, roots=None):
        self.header = header or Header()
        self.blocks = blocks if blocks is not None else []
        self.roots = roots if roots is not None else [0]
        self.path = None
        self.trailing = b""  # bytes after the footer
        self.warnings = []  # what a reader should know but that did not stop reading

    # -- reading ------------------------------------------------------------------------
    @classmethod
    def read(cls, path):
        path = Path(path)
        with open(path, "rb") as handle:
            data = bytearray(os.fstat(handle.fileno()).st_size)
            del data[handle.readinto(data) :]  # read straight into the buffer the arrays will view
        return cls.from_bytes(data, path=path)

    @classmethod
    def from_bytes(cls, data, path=None):
        """Decode a whole file. Arrays are writable views of the data: a bytearray is used as it
        is (the file's blocks keep it alive), anything else is copied into one first."""
        nif = cls()
        nif.path = path
        try:
            nif._parse(data if isinstance(data, bytearray) else bytearray(data))
        except FormatError as error:
            raise error.located(path=path) from None
        return nif

    def _parse(self, buffer):
        view = memoryview(buffer)
        self._budget = Budget(len(buffer))
        s = ReadStream(view, None, budget=self._budget)
        header = self.header
        header.sync(s)
        pos = s.pos
        sizes = header.block_sizes.tolist()
        type_indices = header.block_type_indices.tolist()
        for index, (type_index, size) in enumerate(zip(type_indices, sizes)):
            type_slot = type_index & 0x7FFF
            if type_slot >= len(header.block_types):
                raise FormatError(
                    f"type index {type_slot} outside the {len(header.block_types)} block types",
                    block=index,
                    offset=pos,
                )
            type_name = header.block_types[type_slot]
            s.charge(1)
            if size > len(buffer) - pos:
                raise FormatError(
                    f"truncated: its declared {size} bytes run past the end of the file ({len(buffer) - pos} left)",
                    block=index,
                    block_type=type_name,
                    offset=pos,
                )
            self.blocks.append(self._parse_block(view[pos : pos + size], pos, index, type_name))
            pos += size
        s.pos = pos
        num_roots = s.count(item_size=4, what="roots")
        self.roots = s.array(None, "i4", num_roots).tolist()
        if s.remaining:
            self.trailing = bytes(view[s.pos :])
            self.warnings.append(f"{s.remaining} bytes after the footer kept as they are")

    def _parse_block(self, view, pos, index, type_name):
        cls = class_for(type_name)
        block = cls.__new__(cls)
        block.type_name = type_name
        s = ReadStream(view, self.header, big_endian=self.header.big_endian, base=pos, budget=self._budget)
        try:
            block.sync(s)
        except FormatError as error:
            if cls.fallback_raw:
                return self._kept_raw(view, pos, index, type_name, error.message)
            raise error.located(block=index, block_type=type_name) from None
        except Exception as error:  # a decoder bug or data no check foresaw: still one clear line
            if cls.fallback_raw:
                return self._kept_raw(view, pos, index, type_name, f"{type(error).__name__}: {error}")
            raise FormatError(
                f"cannot be decoded ({type(error).__name__}: {error})",
                block=index,
                block_type=type_name,
                offset=s.base + s.pos,
            ) from None
        if s.remaining and cls.fallback_raw:
            return self._kept_raw(view, pos, index, type_name, f"{s.remaining} bytes after its fields")
        if s.remaining:
            block.trailing = bytes(view[s.pos :])
            self.warnings.append(
                f"block {index} ({type_name}): {s.remaining} bytes after its fields kept as they are"
            )
        return block

    def _kept_raw(self, view, pos, index, type_name, why):
        """A block whose bytes do not fit its layout (see block_class's ``fallback_raw``): its
        bytes as they are, and a warning (its references stay unknown)."""
        self.warnings.append(f"block {index} ({type_name}) kept as its bytes: they do not fit its layout ({why})")
        block = RawBlock(type_name)
        block.sync(ReadStream(view, self.header, big_endian=self.header.big_endian, base=pos, budget=self._budget))
        return block

    # -- writing ------------------------------------------------------------------------
    def to_bytes(self):
        header = self.header
        chunks = []
        for index, block in enumerate(self.blocks):
            s = WriteStream(header, big_endian=header.big_endian)
            try:
                block.sync(s)
            except FormatError as error:
                raise error.located(path=self.path, block=index, block_type=block.type_name) from None
            s.raw(block.trailing)
            chunks.append(s.out)
        self._update_header([len(chunk) for chunk in chunks])
        s = WriteStream(header)
        header.sync(s)
        for chunk in chunks:
            s.raw(chunk)
        s.u32(len(self.roots))
        for root in self.roots:
            s.i32(root)
        s.raw(self.trailing)
        return bytes(s.out)

    def _update_header(self, sizes):
        header = self.header
        types = header.block_types
        slots = {}
        for slot, name in enumerate(types):
            slots.setdefault(name, slot)
        old_indices = list(header.block_type_indices)
        indices = []
        for index, block in enumerate(self.blocks):
            slot = slots.get(block.type_name)
            if slot is None:
                slot = slots[block.type_name] = len(types)
                types.append(block.type_name)
            # Keep bit 15 (a flag some tools set) when the block kept its type.
            old = old_indices[index] if index < len(old_indices) else slot
            indices.append(old if old & 0x7FFF == slot else slot)
        header.num_blocks = len(self.blocks)
        header.block_type_indices = indices
        header.block_sizes = sizes
        longest = max((len(encode_text(text)) for text in header.strings.strings), default=0)
        header.max_string_length = max(header.max_string_length, longest) if header.strings.strings else 0

    def write(self, path):
        """Encode first, then replace the file in one step: a failed write never leaves a
        damaged or half-written file behind."""
        write_replacing(path, self.to_bytes())

    # -- queries ------------------------------------------------------------------------
    def blocks_of(self, *classes):
        return [(index, block) for index, block in enumerate(self.blocks) if isinstance(block, classes)]

    def block_at(self, index, *classes):
        return block_at(self.blocks, index, *classes)
