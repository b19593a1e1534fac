"""What a precombine build does with the cell's previs (issue 40, point 1).

A cell's previs file (``Vis\\<master>\\<cell>.uvd``, an Umbra tome the Creation Kit computes) is
made for the exact precombines it was built with: its objects are the XPRI references, by
FormID, and the combined shapes of the cell's ``_OC`` files numbered in XCRI's mesh order, then
block order (ids 0xFD000000 | n; CSG-NOTES, checked on the corpus cell's 248 objects). New
precombines renumber those shapes, so the old tome culls the wrong geometry: the flickering and
vanishing walls of broken previs (PJM's "Precombine Previs Deep Dive").

XPRI ("PreVis Reference Index") is previs's, not the physics': the cell's references the tome
holds one by one, outside the precombines (bacup ``previs.rs``: the cell's REFRs not in XCRI whose
base is an ACTI or STAT, or in retail tomes an MSTT, CONT, FURN, SCOL, TERM, TACT or FLOR, with a
model, neither a marker, initially disabled nor linked to). The corpus cell's 15: 9 of the
plugin's water-leak moveable statics, a container, 4 references of a Fallout4.esm base and one
Fallout4.esm reference (neither in the corpus), each in its ``.uvd`` by FormID and none in XCRI;
its merged collision belongs to the XCRI references.

The game takes a cell's VISI and PCMB from the winning CELL override, even blank
(``core.precombined.status``): a blank VISI turns the cell's previs off and it is drawn without
occlusion culling, slower but never wrong. Bacup's CK-free precombine step (Bryant-21/bacup
``previs/src/metadata.rs``) writes PCMB and XCRI and drops VISI, RVIS and XPRI ("RVIS/XPRI
metadata requires previs"), and dates every record of the stamped cell no later than PCMB: the
runtime's ClearPreCalcedData wipes a cell's XCRI, VISI and PCMB when one of its records carries
no date or a newer one (``core.plugin.patch`` already dates its records so).

So a build that makes no new tome writes its CELL override without VISI, RVIS and XPRI, and the
cell's ``.cdx`` without a visibility row. The No Pre Vis flag (0x80) is left as it is: it would
also stop the CK, or PJM's scripts, from building the cell's previs later.
"""

PREVIS_FIELDS = ("VISI", "RVIS", "XPRI")

