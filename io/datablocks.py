"""What a failed import made, removed again: whatever kinds of datablock it created, so the
.blend is left as it was."""

import functools

import bpy


def remove_all(datablocks):
    """Remove ``datablocks`` (objects, meshes, armatures, actions, materials, images, node
    groups, collections...) from bpy.data in one step; those already removed are skipped."""
    alive = []
    for datablock in datablocks:
        try:
            datablock.name  # a removed ID's Python object raises here
        except ReferenceError:
            continue
        alive.append(datablock)
    bpy.data.batch_remove(alive)


class Rollback:
    """The one way a failed import is undone. Every datablock an import makes is ``add``ed; an
    exception leaving the ``with`` block removes them all (and puts the selection back, when
    ``keep_selection`` was called), then goes on. The import loop (io.file_import.each_file)
    opens one per file around everything the file's import does: the build and the passes after
    it (reference naming, load-order marks, the report)."""

    def __init__(self):
        self.created = []
        self._selection = None

    def add(self, datablock):
        self.created.append(datablock)
        return datablock

    def keep_selection(self, view_layer):
        """Put back the active and selected objects of ``view_layer`` if the import fails."""
        if self._selection is None:
            self._selection = (view_layer, view_layer.objects.active, [o for o in view_layer.objects if o.select_get()])

    def savepoint(self):
        """Where ``undo`` can go back to: what is made from now on."""
        return len(self.created)

    def undo(self, savepoint=0):
        """Remove what was made since ``savepoint`` (everything by default)."""
        remove_all(self.created[savepoint:])
        del self.created[savepoint:]
        if savepoint == 0 and self._selection is not None:
            view_layer, active, selected = self._selection
            view_layer.objects.active = active
            for obj in selected:
                obj.select_set(True)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is not None:
            self.undo()
        return False


def rolled_back(function):
    """For an import step taking ``rollback=``: called without one (a script, a test), it gets a
    Rollback of its own, so it still leaves nothing behind when it fails."""

    @functools.wraps(function)
    def step(*args, rollback=None, **options):
        if rollback is not None:
            return function(*args, rollback=rollback, **options)
        with Rollback() as own:
            return function(*args, rollback=own, **options)

    return step
