"""Helpers shared by the tests: where things are, and what a missing prerequisite means."""

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
# Packages of the Blender side that the command line's parser reads names from: they hold no code,
# so the codec commands may load them.
CODE_FREE_PACKAGES = ("precombined_nif.io", "precombined_nif.io.precombined")


def unavailable(reason):
    """Skip a test whose prerequisite is missing; in CI (CI set) fail it, since there every test must run."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI runs every test)", pytrace=False)
    pytest.skip(reason)


def corpus_files(pattern):
    """The corpus files matching a glob pattern (e.g. ``"**/*.nif"``), sorted; empty when the corpus is
    missing. For ``parametrize``: ``tests/test_corpus.py`` fails in CI when the corpus is missing, so an
    empty parameter list cannot pass silently there."""
    return sorted(path for path in CORPUS.glob(pattern) if path.is_file())


def corpus_plugin_folder(corpus, folder):
    """A Data folder at ``folder`` holding the corpus plugin AlootHomePlate.esp, its geometry file
    and its meshes (linked, not copied), without Fallout4.esm; returns it."""
    folder.mkdir()
    for name in ("AlootHomePlate.esp", "AlootHomePlate - Geometry.csg", "Meshes"):
        os.symlink(corpus / "ck-precombined" / name, folder / name)
    return folder
