"""Havok packfiles for the codec tests: every physics and ragdoll system the corpus NIFs hold,
and shapes written as the bodies of a new system and read back."""

import functools

from support import CORPUS, corpus_files_holding, corpus_nif

from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.classes.physics_system import BodyCinfo, Material, PhysicsSystemData
from precombined_nif.core.havok.tagfile import is_tagfile
from precombined_nif.core.nif.blocks.collision import bhkSystem

SYSTEM_TYPES = (b"bhkPhysicsSystem", b"bhkRagdollSystem")


@functools.lru_cache(maxsize=None)
def nif_systems():
    """{"relative path#block": (kind, packfile bytes)} of every physics and ragdoll block holding
    a packfile (Starfield's hold Havok tagfiles: test_starfield_nif.py covers them)."""
    systems = {}
    for path in corpus_files_holding("**/*.nif", *SYSTEM_TYPES):
        for index, block in corpus_nif(path).blocks_of(bhkSystem):
            if is_tagfile(block.packfile):
                continue
            systems[f"{path.relative_to(CORPUS)}#{index}"] = (block.kind, block.packfile)
    return systems


def shapes_round_trip(*shapes):
    """The shapes as the bodies of a new physics system, written and read back."""
    system = PhysicsSystemData()
    system.materials = [Material()]
    for shape in shapes:
        body = BodyCinfo()
        body.shape = shape
        system.bodies.append(body)
        system.referenced_objects.append(shape)
    written = Packfile(system).to_bytes()
    again = Packfile.from_bytes(written)
    assert again.to_bytes() == written
    return [body.shape for body in again.root.bodies]
