"""What happened to a precombined cell's placed copies between its import and its export: each
copy of the file is kept, moved (turned or scaled), deleted or duplicated, and new copies
appear. A copy is known by its place in the file it was imported from (block, record, copy
number), which a duplicate shares with its original: among copies sharing one, the one still
where the file put it is the original, else the one whose name has no Blender suffix, else the
first by name. Placements are game units: translation, 3x3 rotation, uniform scale."""

import re

import numpy as np

from ..transforms import similarity

SUFFIX = re.compile(r"\.\d{3,}$")  # Blender's '.001' on the names of duplicates


class Copy:
    """A copy as the scene holds it: ``key`` (block, record, copy number) of the file's copy it
    came from, or None; ``name``; ``translation``, ``rotation``, ``scale``."""

    def __init__(self, key, name, matrix):
        self.key, self.name = key, name
        matrix = np.asarray(matrix, np.float64)
        self.rotation, self.scale = similarity(matrix[:3, :3], name, "a placed reference")
        self.translation = matrix[:3, 3].copy()

    def matrix(self):
        out = np.eye(4)
        out[:3, :3] = self.rotation * self.scale
        out[:3, 3] = self.translation
        return out


def placement_matrix(instance):
    """The 4x4 game-unit matrix of a stored instance (a record's placement row)."""
    out = np.eye(4)
    out[:3, :3] = np.asarray(instance["rotation"], np.float64).reshape(3, 3) * float(instance["scale"])
    out[:3, 3] = np.asarray(instance["translation"], np.float64)
    return out


def same_placement(copy, instance):
    """The tolerances the cell exporter keeps a stored placement within."""
    rotation = np.asarray(instance["rotation"], np.float64).reshape(3, 3)
    return (np.allclose(rotation, copy.rotation, atol=1e-5)
            and np.allclose(np.asarray(instance["translation"], np.float64), copy.translation, rtol=1e-6, atol=1e-3)
            and np.isclose(float(instance["scale"]), copy.scale, rtol=1e-6))


class Edits:
    """``kept``, ``moved`` [(key, Copy)], ``deleted`` [key], ``new`` [(key it was duplicated from
    or None, Copy)]."""

    def __init__(self):
        self.kept, self.moved, self.deleted, self.new = [], [], [], []

    def __bool__(self):
        return bool(self.moved or self.deleted or self.new)


def classify(instances, copies):
    """Edits of ``copies`` against the file's ``instances`` ({key: stored placement row})."""
    edits = Edits()
    by_key = {}
    for copy in copies:
        if copy.key in instances:
            by_key.setdefault(copy.key, []).append(copy)
        else:
            edits.new.append((None, copy))
    for key, instance in instances.items():
        group = by_key.get(key)
        if not group:
            edits.deleted.append(key)
            continue
        original = next((c for c in group if same_placement(c, instance)), None)
        if original is None:
            plain = sorted((c for c in group if not SUFFIX.search(c.name)), key=lambda c: c.name)
            original = plain[0] if plain else min(group, key=lambda c: c.name)
        (edits.kept if same_placement(original, instance) else edits.moved).append((key, original))
        edits.new += [(key, c) for c in group if c is not original]
    edits.kept = [key for key, _ in edits.kept]
    return edits
