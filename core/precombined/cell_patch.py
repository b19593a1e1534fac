"""A precombined cell's edits (cell_edits.Edits) as a patch plugin (plugin.patch.CellPatch): each
copy's REFR is the one the cell's XCRI lists at the copy's stored placement (plugin.references
matches them); copies whose REFR no plugin given holds are named, with what the game does."""

from ..errors import FormatError
from ..plugin.references import CellReferences, match_instances, reference_angles
from .cell_edits import placement_matrix


def copy_references(copies, cell_id, plugins):
    """({(block, record, copy number): Reference or None} of a file's ``copies`` (as
    references.cell_instances lists them), the CELL's FormID as ``plugins[0]`` stores it)."""
    cell = CellReferences(plugins, cell_id)
    if not copies:
        return {}, cell.cell.form_id
    matrices = [placement_matrix(instance) for *_, instance in copies]
    found = match_instances(cell.references, [m[:3, 3] for m in matrices], [m[:3, :3] for m in matrices])
    return {(block, record, number): ref for (block, record, number, _), ref in zip(copies, found)}, cell.cell.form_id


def describe(key):
    return f"copy {key[2]} of record {key[1]} (block {key[0]})"


def patch_edits(patch, edits, references, mesh_id):
    """Apply ``edits`` to ``patch``; messages for the copies it cannot carry."""
    messages = []
    for key, copy in edits.moved:
        reference = references.get(key)
        if reference is None or not patch.move(reference.form_id, copy.translation, reference_angles(copy.rotation), copy.scale):
            messages.append(f"{copy.name} moved: {unknown(reference, key)}: not overridden, so it stands at its old "
                            f"place again if the precombines are broken or rebuilt")
    for key in edits.deleted:
        reference = references.get(key)
        if reference is None or not patch.disable(reference.form_id):
            messages.append(f"{describe(key)} deleted: {unknown(reference, key)}: it stays listed and "
                            f"enabled, hidden only while the precombines hold")
    for key, copy in edits.new:
        reference = references.get(key) if key is not None else None
        if reference is None or patch.add(reference.form_id, mesh_id, copy.translation, reference_angles(copy.rotation),
                                          copy.scale) is None:
            source = "it was not duplicated from an imported copy" if key is None else unknown(reference, key)
            messages.append(f"{copy.name} is new: {source}: no REFR places it, so only the combined mesh shows it")
    return messages


def unknown(reference, key):
    if reference is None:
        return f"its REFR is in no plugin given ({describe(key)} matches none at its stored place)"
    return f"REFR {reference.form_id:08X} is in a master not given"


def refuse_missing_plugin(cell_path, hashes):
    names = ", ".join(f"{h:08X}" for h in sorted(hashes)) or "none"
    raise FormatError(f"the plugin of this cell was not found in its Data folder (no plugin there has a geometry hash "
                      f"its records carry: {names}): give it with the cell plugin option, or the Data folder holding it "
                      f"(the preferences' Fallout 4 Data folder, cli.py --data)", path=str(cell_path))
