"""Bethesda plugins (.esm/.esp/.esl): records read on demand, and the references that placed
each copy of a precombined cell."""

from .records import Plugin, Record
from .references import CellReferences, Reference, cell_form_id, match_instances

__all__ = ["CellReferences", "Plugin", "Record", "Reference", "cell_form_id", "match_instances"]
