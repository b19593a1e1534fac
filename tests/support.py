"""Helpers shared by the tests: where things are, and what a missing prerequisite means."""

import functools
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
# The .hkx files of realmods/: the Skyrim SE character skeleton whose objects a converter numbered,
# a Fallout 4 creature skeleton and a Fallout 4 mod animation written by another exporter.
REALMODS = CORPUS / "realmods"
SSE_CHARACTER_SKELETON = (REALMODS / "Pandora-Behaviour-Engine-Plus/Pandora Behaviour Engine/Pandora_Engine/Skyrim"
                          / "Template/actors/character/character assets/skeleton.hkx")
FO4_CREATURE_SKELETON = REALMODS / "UAP/006 Super_Mutant_Skeleton/Meshes/Actors/Supermutant/CharacterAssets/skeleton.hkx"
FO4_MOD_ANIMATION = (REALMODS / "UAP/60 Addons/30 Fixes/Anim_Aligments/Meshes/Actors/Character/Animations/Brave"
                     / "DCFemSitting3M0.hkx")
# Skyrim LE files as XML (the Dodge mod's: a packfile skeleton as hkxcmd writes it, a tagfile
# animation) and hkxpack's unit-test packfile holding no objects.
DODGE = REALMODS / "The-Ultimate-Dodge-Mod-Redux/32 bit files/00 Data/meshes/actors/character"
XML_SKELETON = DODGE / "character assets/skeleton.hkx"
XML_ANIMATION = DODGE / "animations/roll_forward.hkx"
EMPTY_PACKFILE = REALMODS / "hkxpack/core/src/test/resources/test-base.hkx"
# Packages of the Blender side that the command line's parser reads names from: they hold no code,
# so the codec commands may load them.
CODE_FREE_PACKAGES = ("precombined_nif.io", "precombined_nif.io.precombined")


def unavailable(reason):
    """Skip a test whose prerequisite is missing; in CI (CI set) fail it, since there every test must run."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI runs every test)", pytrace=False)
    pytest.skip(reason)


# The corpus is read and parsed once per test session: collection builds many modules' test cases
# from it (every NIF holding some block, every mesh of a kind), and these caches serve them all.
@functools.cache
def _matching(pattern):
    return tuple(sorted(path for path in CORPUS.glob(pattern) if path.is_file()))


def corpus_files(pattern):
    """The corpus files matching a glob pattern (e.g. ``"**/*.nif"``), sorted; empty when the corpus is
    missing. For ``parametrize``: ``tests/test_corpus.py`` fails in CI when the corpus is missing, so an
    empty parameter list cannot pass silently there."""
    return list(_matching(pattern))


@functools.cache
def corpus_bytes(path):
    """A corpus file's bytes, read once per session."""
    return Path(path).read_bytes()


def corpus_files_holding(pattern, *names):
    """The corpus files matching ``pattern`` whose bytes hold any of ``names`` (block or class names)."""
    return [path for path in corpus_files(pattern) if any(name in corpus_bytes(path) for name in names)]


def corpus_nifs(*names):
    """Every corpus NIF (.nif and .NIF) the codec reads, as (path, NifFile), holding any of ``names``
    if given. Parsed once per session and shared by every module that chooses its test cases
    from them: read these, never change them (a test that edits a NIF reads its own)."""
    paths = corpus_files("**/*.nif") + corpus_files("**/*.NIF")
    if names:
        paths = [path for path in paths if any(name in corpus_bytes(path) for name in names)]
    return [(path, nif) for path in paths if (nif := corpus_nif(path)) is not None]


@functools.cache
def corpus_nif(path):
    """The codec's NifFile of a corpus file, parsed once per session (shared: never change it), or
    None when the codec refuses the file."""
    from precombined_nif.core.errors import FormatError
    from precombined_nif.core.nif import NifFile

    try:
        return NifFile.from_bytes(corpus_bytes(path), path)
    except FormatError:
        return None  # Corrupt.nif: refused, which the damaged-file tests check


def corpus_plugin_folder(corpus, folder):
    """A Data folder at ``folder`` holding the corpus plugin AlootHomePlate.esp, its geometry file
    and its meshes (linked, not copied), without Fallout4.esm; returns it."""
    folder.mkdir()
    for name in ("AlootHomePlate.esp", "AlootHomePlate - Geometry.csg", "Meshes"):
        os.symlink(corpus / "ck-precombined" / name, folder / name)
    return folder
