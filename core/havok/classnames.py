"""The __classnames__ section: u32 class signature, u8 tag (0x09), NUL-terminated name, repeated;
padded with 0xFF to a 16-byte boundary. Virtual fixups name an object's class by the offset of
its name here."""

from functools import lru_cache

from ..errors import FormatError
from ..stream import decode_text, encode_text
from .header import HK_2010, HK_2014

TAG = 0x09

# Signatures of the classes packfiles are built from, per file version, as the games' files list
# them: for classes added to a packfile that did not list them yet. Fallout 4's physics systems
# and both games' animation files (the interleaved animation's and hk_2010's reference frame's
# from Havok class lists of the same versions).
SIGNATURES = {
    HK_2014: {
        "hkClass": 0x33D42383, "hkClassMember": 0xB0EFA719, "hkClassEnum": 0x8A3609CF,
        "hkClassEnumItem": 0xCE6F8A6C,
        "hknpPhysicsSystemData": 0xB857718B, "hknpRagdollData": 0xDC8F20AB,
        "hknpConvexPolytopeShape": 0x3CE9B3E3, "hknpCapsuleShape": 0x60A75F4C, "hknpSphereShape": 0x741E9012,
        "hknpCompressedMeshShape": 0x5F60D536, "hknpCompressedMeshShapeData": 0xA2BDFC59,
        "hknpDynamicCompoundShape": 0x4620D11C, "hknpDynamicCompoundShapeData": 0xF33DC3CC,
        "hknpStaticCompoundShape": 0x4620D11C,  # as the Creation Kit's cells list it
        "hknpStaticCompoundShapeData": 0x4FD87FD9,
        "hkRefCountedProperties": 0x7C574867, "hknpShapeMassProperties": 0xE9191728,
        "hknpBSMaterialProperties": 0xA3E47A9A,
        "hkRootLevelContainer": 0x2772C11E, "hkaAnimationContainer": 0x26859F4C,
        "hkaSplineCompressedAnimation": 0x8C3B5F7E, "hkaInterleavedUncompressedAnimation": 0xA5EFF3F2,
        "hkaDefaultAnimatedReferenceFrame": 0x60F8E0B8, "hkaAnimationBinding": 0x0FAF9150,
        "hkMemoryResourceContainer": 0x1DE13A73,
        "hkaSkeleton": 0xFEC1CEDB,  # as the games' skeleton files list it
    },
    HK_2010: {
        "hkClass": 0x75585EF6, "hkClassMember": 0x5C7EA4C2, "hkClassEnum": 0x8A3609CF,
        "hkClassEnumItem": 0xCE6F8A6C,
        "hkRootLevelContainer": 0x2772C11E, "hkaAnimationContainer": 0x8DC20333,
        "hkaSplineCompressedAnimation": 0x792EE0BB, "hkaInterleavedUncompressedAnimation": 0x930AF031,
        "hkaDefaultAnimatedReferenceFrame": 0x6D85E445, "hkaAnimationBinding": 0x66EAC971,
        "hkMemoryResourceContainer": 0x4762F92A,
        "hkaSkeleton": 0x366E8220, "hkbProjectStringData": 0x076AD60A,  # as the games' skeleton and project files list them
    },
}  # fmt: skip
BASE_CLASSES = ("hkClass", "hkClassMember", "hkClassEnum", "hkClassEnumItem")


class ClassNames:
    """The section's entries; a class not listed yet is added (with its signature for the file's
    version) when an object of it is written."""

    @classmethod
    def listing(cls, version, names):
        """The section a new packfile of ``version`` starts with: ``names`` with their signatures."""
        return _listed(version, tuple(names)).copy()

    def __init__(self, entries=()):
        self.entries = []  # [(signature, tag, name)] in section order
        self._offsets = {}
        self._names = {}
        self._size = 0
        for entry in entries:
            self._append(*entry)

    def _append(self, signature, tag, name, at=None):
        if name in self._offsets:
            raise FormatError(f"class name {name!r} listed twice", offset=at)
        offset = self._size + 5
        self.entries.append((signature, tag, name))
        self._offsets[name] = offset
        self._names[offset] = name
        self._size = offset + len(encode_text(name)) + 1

    @classmethod
    def from_bytes(cls, data, base):
        """Parse a section's bytes; ``base`` is its file offset, for messages. Files of a kind
        list the same classes: each section is parsed once (_parsed) and copied."""
        return _parsed(bytes(data), base).copy()

    def copy(self):
        """A copy to add classes to."""
        twin = ClassNames()
        twin.entries, twin._size = list(self.entries), self._size
        twin._offsets, twin._names = dict(self._offsets), dict(self._names)
        return twin

    def to_bytes(self):
        out = bytearray()
        for signature, tag, name in self.entries:
            out += signature.to_bytes(4, "little") + bytes((tag,)) + encode_text(name) + b"\0"
        return bytes(out) + b"\xff" * (-len(out) % 16)

    def offset_of(self, name, version):
        """The offset of a class name, adding the name when it is not listed yet (with its
        signature for the file ``version``)."""
        if name not in self._offsets:
            signature = SIGNATURES.get(version, {}).get(name)
            if signature is None:
                raise FormatError(f"class {name} is not listed and its signature is unknown")
            self._append(signature, TAG, name)
        return self._offsets[name]

    def name_at(self, offset):
        return self._names.get(offset)


# The files of a kind list the same classes: each section is parsed, and each listing made, once
# and kept for the next file; callers get copies.
@lru_cache(maxsize=16)
def _parsed(data, base):
    names = ClassNames()
    pos = 0
    end_of_names = len(data.rstrip(b"\xff"))  # then only the 0xFF padding
    while pos < end_of_names:
        if pos + 5 > len(data):
            raise FormatError("class name entry cut off by the end of its section", offset=base + pos)
        end = data.find(b"\0", pos + 5)
        if end < 0:
            raise FormatError("class name without its terminating NUL", offset=base + pos)
        signature = int.from_bytes(data[pos : pos + 4], "little")
        names._append(signature, data[pos + 4], decode_text(data[pos + 5 : end]), base + pos)
        pos = end + 1
    return names


@lru_cache(maxsize=16)
def _listed(version, names):
    return ClassNames((SIGNATURES[version][name], TAG, name) for name in names)
