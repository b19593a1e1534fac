"""Extra data shown as empties, each kind by its module: connect points (connect_points),
furniture markers, bounds and the inventory marker (markers), Havok constraints
(io.havok.constraints: built with the collision, written here)."""

import numpy as np

from ..havok import constraints
from . import connect_points, markers
from .. import schema


def build_extras(builder):
    """Empties for the extra data of every node the import made."""
    builders = {**connect_points.BUILDERS, **markers.BUILDERS}
    blocks = builder.nif.blocks
    shown = set()  # a block listed by several nodes is shown once, under the first
    for index, owner in list(builder.objects.items()):
        for ref in np.asarray(getattr(blocks[index], "extra_data", ())).tolist():
            if 0 <= ref < len(blocks) and type(blocks[ref]) in builders and ref not in shown:
                shown.add(ref)
                builders[type(blocks[ref])](builder, owner, index, ref, blocks[ref])


def write_extras(exporter, objects):
    """Write the extra data shown by ``objects`` (empties of ``is_extra``)."""
    writers = {**connect_points.WRITERS, **markers.WRITERS, **constraints.WRITERS}
    by_kind = {}
    for obj in sorted(objects, key=lambda o: (o.get(schema.NIF_EXTRA_ITEM, 1 << 30), o.name)):
        by_kind.setdefault(obj[schema.NIF_EXTRA_KIND], []).append(obj)
    unknown = sorted(set(by_kind) - set(writers))
    if unknown:
        exporter.warn(f"empties of unknown extra data kinds are not written: {', '.join(unknown)}")
    for kind, writer in writers.items():
        if kind in by_kind:
            writer(exporter, by_kind[kind])
