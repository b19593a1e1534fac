"""Havok packfile container: every packfile of the corpus re-serialises byte-identical, rebuilt
from its object model (or, for files another writer laid out, kept while unchanged); the typed
classes cover every hknp object of the game's files."""

import pytest
from packfiles import nif_systems
import hkx_writer
from support import CORPUS, EMPTY_PACKFILE, FO4_CREATURE_SKELETON, SSE_CHARACTER_SKELETON, corpus_bytes, corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import Packfile, RawObject
from precombined_nif.core.havok.animation.hkx import CLASSES, hkx_from_packfile
from precombined_nif.core.havok.animation.summary import hkx_info
from precombined_nif.core.havok.objects import typed_class

def binary_hkx():
    return [path for path in corpus_files("**/*.hkx") if corpus_bytes(path)[:4] == bytes.fromhex("57E0E057")]


def corpus_packfiles():
    """(name, bytes) of every packfile: NIF blocks, cut-out blobs and binary .hkx files."""
    found = [(name, data) for name, (_, data) in nif_systems().items()]
    found += [(str(path.relative_to(CORPUS)), corpus_bytes(path)) for path in corpus_files("havok/*.packfile*.bin")]
    found += [(str(path.relative_to(CORPUS)), corpus_bytes(path)) for path in binary_hkx()]
    return found


def test_corpus_has_packfiles(corpus):
    names = [name for name, _ in corpus_packfiles()]
    assert len(nif_systems()) >= 50
    assert sum(".packfile" in name for name in names) == 7
    assert sum(name.endswith(".hkx") for name in names) >= 9
    kinds = {kind for kind, _ in nif_systems().values()}
    assert kinds == {"physics", "ragdoll"}


def test_every_packfile_reserialises_identical(corpus):
    """NIF blobs decoded whole; .hkx files as the .hkx reader decodes them (their animation,
    skeleton and behaviour classes)."""
    differing = []
    for name, data in corpus_packfiles():
        packfile = Packfile.from_bytes(data, CLASSES if name.endswith(".hkx") else None)
        if packfile.to_bytes() != data:
            differing.append(name)
    assert not differing




EMPTY = EMPTY_PACKFILE


@pytest.mark.parametrize("version, pointer", [(None, None), (11, 8), (8, 8), (8, 4)], ids=["hkxpack", "hk_2014", "hk_2010", "hk_2010 32-bit"])
def test_an_empty_packfile_reads_and_writes_back(corpus, version, pointer):
    """A file with no objects (hkxpack's unit-test file, and ones built here): the three sections,
    its contents an hkBaseObject of no bytes at the data's start, one virtual fixup naming it."""
    if version is None:
        data = corpus_bytes(EMPTY)
    else:
        data = hkx_writer.packfile(hkx_writer.Obj("hkBaseObject", 0, pointer), version=version, pointer=pointer)
    packfile = Packfile.from_bytes(data, CLASSES)
    assert packfile.section_names == ["__classnames__", "__types__", "__data__"]
    assert [(obj.class_name, raw) for obj, (raw, _, _) in packfile.objects()] == [("hkBaseObject", b"")]
    assert packfile.to_bytes() == data
    assert packfile._build(packfile.objects()) == data  # laid out as Havok does, not only kept
    with pytest.raises(FormatError, match="an empty packfile"):
        hkx_from_packfile(packfile)
    if version is None:
        assert hkx_info(EMPTY)["kind"] == "empty"


def test_hkx_physics_decodes_typed_too(corpus):
    """The skeletons' ragdolls decode with the physics classes as well, and write back the same,
    except the UAP creature skeleton's: its exporter wrote capsules whose plane, face and index
    arrays run past the capsule into the next objects (8 planes stored as 7, no faces), which the
    typed capsule refuses; the .hkx reader carries them as they are."""
    for path in binary_hkx():
        data = corpus_bytes(path)
        if path == FO4_CREATURE_SKELETON:
            with pytest.raises(FormatError, match="8 items of 16 bytes need 128 bytes but only 112 remain") as caught:
                Packfile.from_bytes(data)
            assert caught.value.offset == 0x4B50  # the first capsule's planes, 0x120 into it
            continue
        assert Packfile.from_bytes(data).to_bytes() == data, path


def test_rebuilt_unless_unchanged(corpus):
    """A file another writer laid out (the UAP creature skeleton: its objects' blocks in another
    order) is written back as read while nothing changed; changed, it is rebuilt in Havok's
    layout, which reads back to the same objects. The Skyrim SE skeleton whose objects carry a
    converter's numbers is written back only unchanged."""
    data = FO4_CREATURE_SKELETON.read_bytes()
    packfile = Packfile.from_bytes(data, CLASSES)
    assert packfile.to_bytes() == data
    laid_out = Packfile(packfile.root)  # the same objects, read from nowhere: Havok's layout
    laid_out.header, laid_out.classnames, laid_out.raw_sections = packfile.header, packfile.classnames, packfile.raw_sections
    assert laid_out.to_bytes() != data
    packfile.root.find("hkaAnimationContainer").skeletons[0].name = "renamed"
    rebuilt = packfile.to_bytes()
    again = Packfile.from_bytes(rebuilt, CLASSES)
    assert again.root.find("hkaAnimationContainer").skeletons[0].name == "renamed"
    assert [obj.class_name for obj, _ in again.objects()] == [obj.class_name for obj, _ in packfile.objects()]
    assert again.to_bytes() == rebuilt

    data = SSE_CHARACTER_SKELETON.read_bytes()
    packfile = Packfile.from_bytes(data)
    assert packfile.object_numbers == 8 and packfile.to_bytes() == data
    packfile.root.find("hkaAnimationContainer").skeletons[0].name = "renamed"
    with pytest.raises(FormatError, match="converter's numbers: it is written back only unchanged"):
        packfile.to_bytes()


def test_game_objects_are_all_typed(corpus):
    """In the collision packfiles every hknp and shape property object is decoded by a typed
    class, so the byte identity above comes from the typed writers, not from kept bytes."""
    raw_classes = set()
    typed_count = 0
    for name, data in corpus_packfiles():
        if name.endswith(".hkx"):
            continue
        packfile = Packfile.from_bytes(data)
        for obj, _ in packfile.objects():
            if isinstance(obj, RawObject):
                raw_classes.add(obj.class_name)
            else:
                typed_count += 1
    assert typed_count > 400
    assert not {name for name in raw_classes if name.startswith("hknp") or typed_class(name)}
    constraints = {"hkpRagdollConstraintData", "hkpLimitedHingeConstraintData", "hkpPositionConstraintMotor"}
    assert raw_classes == constraints


def test_section_headers_found_from_header(corpus):
    """NIF blobs have no predicate array (sections at 0x40); .hkx files have 16 bytes of it
    (sections at 0x50); Skyrim's hk_2010 files have neither."""
    blob = Packfile.from_bytes(next(iter(nif_systems().values()))[1])
    assert blob.header.predicates == b"" and blob.header.file_version == 11
    hkx = Packfile.read(CORPUS / "pynifly/tests/tests/FO4/skeleton_vanilla.hkx")
    assert len(hkx.header.predicates) == 16 and hkx.header.max_predicate == 21
    skyrim = Packfile.read(CORPUS / "pynifly/tests/tests/SkyrimSE/skeleton.hkx")
    assert skyrim.header.file_version == 8 and skyrim.header.contents_version.startswith("hk_2010")
    # hk_2010 64-bit: the animation classes are decoded, the others carried
    assert not isinstance(skyrim.root, RawObject) and skyrim.root.class_name == "hkRootLevelContainer"


def test_class_names_read_once_stay_each_files(corpus):
    """The class names of files that list the same classes are parsed once: a class one packfile
    adds does not appear in another's (read from the same bytes, or new)."""
    data = corpus_bytes(CORPUS / "pynifly/tests/tests/Skyrim/skeleton.hkx")
    first, second = Packfile.from_bytes(data), Packfile.from_bytes(data)
    listed = list(second.classnames.entries)
    new = list(Packfile().classnames.entries)
    first.classnames.offset_of("hkaAnimationBinding", first.header.file_version)
    Packfile().classnames.offset_of("hkRootLevelContainer", Packfile().header.file_version)
    assert second.classnames.entries == listed == Packfile.from_bytes(data).classnames.entries
    assert Packfile().classnames.entries == new
    assert [name for _, _, name in first.classnames.entries] == [name for _, _, name in listed] + ["hkaAnimationBinding"]


def test_32_bit_hk_2010_reserialises(corpus):
    path = CORPUS / "pynifly/tests/tests/Skyrim/skeleton.hkx"
    packfile = Packfile.read(path)
    assert packfile.header.pointer_size == 4
    assert packfile.to_bytes() == path.read_bytes()


@pytest.mark.parametrize("name", ["skeleton_xml.hkx", "tailskeleton.hkx"])
def test_xml_havok_refused(corpus, name):
    with pytest.raises(FormatError, match="XML Havok file"):
        Packfile.read(CORPUS / "pynifly/tests/tests/Skyrim" / name)


def test_edit_rebuilds_fixups(corpus):
    """Dropping an object's only reference removes it from the written file, with the tables,
    offsets and headers recomputed."""
    kind, data = nif_systems()["pynifly/tests/tests/FO4/44BullBarrel.nif#5"]
    packfile = Packfile.from_bytes(data)
    system = packfile.root
    before = len(packfile.objects())
    compound = system.bodies[0].shape
    compound.instances = compound.instances[:1]
    compound.rebuild()
    written = packfile.to_bytes()
    again = Packfile.from_bytes(written)
    assert len(again.objects()) == before - 3  # a polytope, its properties and mass properties
    assert len(again.root.bodies[0].shape.instances) == 1
    assert again.to_bytes() == written
