"""MOPP code (Havok's bounding-volume program over a shape collection's triangles, kept in
bhkMoppBvTreeShape): walking it and building it."""

from .builder import build
from .space import BUILT_WITHOUT_CHUNKS, Mopp, quantise, space_of
from .walker import UnknownInstruction, check_leaves, leaves_at_point, leaves_in_box, program_leaves

__all__ = ["BUILT_WITHOUT_CHUNKS", "Mopp", "UnknownInstruction", "build", "check_leaves", "leaves_at_point", "leaves_in_box", "program_leaves",
           "quantise", "space_of"]
