"""Every NIF in the corpus reads, consumes exactly its declared block sizes, and writes back
byte-identical."""

import pytest
from support import CORPUS, corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile, RawBlock, registered_types

CORRUPT = "pynifly/tests/tests/FO4/Corrupt.nif"
NIFS = [path for path in corpus_files("**/*.nif") if path.relative_to(CORPUS).as_posix() != CORRUPT]

# The block types the foundation issue asks to be typed.
TYPED = {
    "NiNode", "BSFadeNode", "BSMultiBoundNode", "BSLeafAnimNode", "BSOrderedNode", "BSValueNode",
    "BSTriShape", "BSSubIndexTriShape", "BSMeshLODTriShape", "BSDynamicTriShape",
    "NiTriShape", "NiTriShapeData", "NiTriStrips", "NiTriStripsData",
    "BSSkin::Instance", "BSSkin::BoneData", "NiSkinInstance", "BSDismemberSkinInstance", "NiSkinData",
    "NiSkinPartition", "BSLightingShaderProperty", "BSEffectShaderProperty", "BSShaderPPLightingProperty",
    "BSShaderTextureSet", "NiAlphaProperty", "NiMaterialProperty", "NiStringExtraData", "NiIntegerExtraData",
    "BSXFlags", "BSBound", "bhkNPCollisionObject", "bhkPhysicsSystem", "bhkRagdollSystem",
}  # fmt: skip


def test_required_block_types_are_typed():
    assert TYPED <= set(registered_types())


@pytest.mark.parametrize("path", NIFS, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_corpus_nif_round_trips(path):
    data = path.read_bytes()
    nif = NifFile.from_bytes(data, path=path)
    assert nif.warnings == []
    for index, block in enumerate(nif.blocks):
        if not isinstance(block, RawBlock):
            assert block.trailing == b"", f"block {index} {block.type_name} left bytes unread"
    assert nif.to_bytes() == data


def test_every_typed_class_is_exercised_by_the_corpus(corpus):
    seen = set()
    for path in NIFS:
        seen.update(b.type_name for b in NifFile.read(path).blocks if not isinstance(b, RawBlock))
    # Present in the corpus, so these decoders are proven on real bytes.
    assert {
        "NiNode", "BSFadeNode", "BSLeafAnimNode", "BSValueNode", "BSTriShape", "BSSubIndexTriShape",
        "BSMeshLODTriShape", "BSDynamicTriShape", "NiTriShape", "NiTriShapeData", "NiTriStrips",
        "NiTriStripsData", "BSSkin::Instance", "BSSkin::BoneData", "BSDismemberSkinInstance", "NiSkinData",
        "NiSkinPartition", "BSLightingShaderProperty", "BSEffectShaderProperty", "BSShaderPPLightingProperty",
        "BSShaderTextureSet", "NiAlphaProperty", "NiMaterialProperty", "NiStringExtraData",
        "NiIntegerExtraData", "BSXFlags", "BSBound", "bhkNPCollisionObject", "bhkPhysicsSystem",
        "bhkRagdollSystem",
    } <= seen  # fmt: skip


def test_corrupt_corpus_file_fails_cleanly(corpus):
    path = corpus / CORRUPT
    with pytest.raises(FormatError) as caught:
        NifFile.read(path)
    error = caught.value
    assert error.block == 5 and error.block_type == "BSLightingShaderProperty"
    assert str(path) in str(error) and "offset" in str(error)


def test_versions_and_games(corpus):
    games = {}
    for path in NIFS:
        header = NifFile.read(path).header
        games.setdefault(header.game, set()).add((header.user_version, header.bs_version))
    assert games["FO4"] >= {(12, 130), (12, 139)}
    assert games["FO3"] == {(11, 34)}
    assert games["SSE"] == {(12, 100)}
    assert games["SKYRIM"] == {(12, 83)} and "unknown" not in games
    assert games["FO76"] == {(12, 155)} and games["SF"] == {(12, 173), (12, 175)}  # 175: nifly's Starfield test file
    sse = NifFile.read(corpus / "pynifly/tests/tests/FO4/VaaMaleScarR04.nif").header
    assert (sse.game, sse.bs_version) == ("SSE", 100)


def test_same_bytes_under_a_unicode_path(corpus):
    plain = NifFile.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif").to_bytes()
    unicode = NifFile.read(corpus / "pynifly/tests/tests/FO4/TestUnicode/проверка/будильник.nif").to_bytes()
    assert plain == unicode


def test_names_hold_any_byte_read_as_windows_1252(corpus):
    """A name holding every byte but NUL reads as Windows-1252 (its five undefined bytes as the
    C1 characters of the same number, never a surrogate no string store takes) and writes back
    as the same bytes."""
    from nif_rewriter import RawNif

    raw = RawNif.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif")
    shape = raw.indices_of("BSTriShape")[0]
    every = bytes(range(1, 256))
    raw.strings[raw.strings.index(raw.node_name(shape))] = every.decode("latin-1")
    raw.max_string_length = max(len(text) for text in raw.strings)
    data = raw.to_bytes()
    nif = NifFile.from_bytes(data)
    undefined = b"\x81\x8d\x8f\x90\x9d"
    assert nif.blocks[shape].name == "".join(chr(b) if b in undefined else bytes((b,)).decode("cp1252") for b in every)
    assert bytes(nif.to_bytes()) == data
