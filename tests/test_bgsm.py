"""BGSM/BGEM material files: every corpus file reads and writes back byte for byte, and what
is read matches facts taken straight from the file bytes."""

import re
import struct

import pytest
from support import corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.materials.bgsm import MaterialFile

MATERIALS = corpus_files("pynifly/tests/tests/FO4/Materials/**/*.[bB][gG][sSeE][mM]")


def test_the_corpus_holds_the_17_material_files(corpus):
    assert len(MATERIALS) == 17


@pytest.mark.parametrize("path", MATERIALS, ids=lambda p: p.name)
def test_corpus_material_reads_and_writes_back_identically(path):
    data = path.read_bytes()
    material = MaterialFile.read(path)
    assert material.kind == data[:4].decode() and material.version == struct.unpack_from("<I", data, 4)[0]
    assert material.to_bytes() == data
    # Texture paths: every u32-length-prefixed, NUL-terminated .dds string in the bytes, in order.
    found = [m.group(2).decode() for m in re.finditer(rb"(?s)(.{4})([ -~]+?\.dds)\0", data)
             if struct.unpack("<I", m.group(1))[0] == len(m.group(2)) + 1]
    assert [t for t in material.textures.values() if t] == found
    # Fixed offsets of the common header: alpha, alpha test reference, alpha test, two-sided.
    shown = material.look()
    assert shown["alpha"] == struct.unpack_from("<f", data, 28)[0]
    assert shown["threshold"] == data[41]
    assert shown["alpha_test"] == bool(data[42])
    assert shown["two_sided"] == bool(data[48])
    assert shown["uv_scale"] == struct.unpack_from("<2f", data, 20)


def test_facts_of_known_files(corpus):
    folder = corpus / "pynifly/tests/tests/FO4/Materials"
    hair = MaterialFile.read(folder / "actors/Character/HumanHair/HairCurly1_1bit.BGSM").look()
    assert (hair["alpha_test"], hair["threshold"], hair["two_sided"], hair["blend"]) == (True, 162, True, False)
    assert hair["grayscale_to_palette"] and hair["textures"]["palette"] == "Actors/Character/Hair/HairColor_Lgrad_d.dds"
    glass = MaterialFile.read(folder / "Armor/FlightHelmet/glass.BGEM")
    assert glass.kind == "BGEM" and glass.blend_mode == "standard"
    assert glass.look()["textures"]["diffuse"] == "Armor/FlightHelmet/Helmet_03_d.dds"
    assert MaterialFile.read(folder / "Vulpine/vulpinetail.bgsm").version == 1
    # The file whose texture names say their slot: version 2 has the old slot order.
    every = MaterialFile.read(folder / "actors/Character/BaseHumanMale/TestAllTextures.bgsm").textures
    assert every["glow"].endswith("/glow.dds") and every["inner_layer"].endswith("/inner.dds")
    assert every["displacement"].endswith("/height.dds") and every["greyscale"].endswith("/greyscale.dds")
    assert every["envmap"].startswith("Shared/Cubemaps/") and every["wrinkles"].endswith("Wrinkles_n.dds")


def test_edited_material_writes_and_reads_back(corpus, tmp_path):
    material = MaterialFile.read(corpus / "pynifly/tests/tests/FO4/Materials/SetDressing/AlarmClock/AlarmClock.BGSM")
    material.textures["diffuse"] = "SetDressing/AlarmClock/Other_d.dds"
    material.fields["two_sided"] = 1
    material.write(tmp_path / "x.bgsm")
    again = MaterialFile.read(tmp_path / "x.bgsm")
    assert again.textures["diffuse"] == "SetDressing/AlarmClock/Other_d.dds" and again.look()["two_sided"]


def test_damaged_material_files_fail_cleanly(corpus, tmp_path):
    data = (corpus / "pynifly/tests/tests/FO4/Materials/Architecture/Buildings/BrickRed01.BGSM").read_bytes()
    path = tmp_path / "bad.bgsm"
    for cut in (0, 3, 8, 50, 100, len(data) - 1):
        path.write_bytes(data[:cut])
        with pytest.raises(FormatError) as error:
            MaterialFile.read(path)
        assert str(path) in str(error.value)
    path.write_bytes(data + b"x")
    with pytest.raises(FormatError, match="left after"):
        MaterialFile.read(path)
    path.write_bytes(data[:63] + b"\xff\xff\xff\x7f" + data[67:])  # the diffuse path's length
    with pytest.raises(FormatError):
        MaterialFile.read(path)



def test_look_changes_written_back(corpus):
    path = corpus / "pynifly/tests/tests/FO4/Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
    material = MaterialFile.read(path)
    material.apply_look({"textures": {"diffuse": "Textures\\SetDressing\\New_d.dds", "palette": "textures/p.dds"},
                         "two_sided": True, "threshold": 99})
    again = MaterialFile.from_bytes(material.to_bytes())
    assert again.textures["diffuse"] == "SetDressing/New_d.dds" and again.textures["greyscale"] == "p.dds"
    assert again.look()["two_sided"] and again.look()["threshold"] == 99
    untouched = MaterialFile.read(path)
    assert {k: v for k, v in again.fields.items() if k not in ("two_sided", "alpha_test_ref")} == {
        k: v for k, v in untouched.fields.items() if k not in ("two_sided", "alpha_test_ref")}


def test_byte_flips_never_escape_as_other_errors(tmp_path):
    import numpy as np

    rng = np.random.default_rng(11)
    for source in MATERIALS:
        data = source.read_bytes()
        for _ in range(40):
            damaged = bytearray(data)
            for at in rng.integers(0, len(data), 3):
                damaged[at] ^= int(rng.integers(1, 256))
            try:
                MaterialFile.from_bytes(bytes(damaged), "damaged.bgsm").to_bytes()
            except FormatError as error:
                assert "damaged.bgsm" in str(error)
