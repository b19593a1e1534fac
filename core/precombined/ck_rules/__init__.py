"""What the Creation Kit will do when it builds a Fallout 4 load order's precombines, told before
it runs: which models crash it or stay uncombined (``meshes``), which references of a cell it
combines and into which group (``references``, ``groups``, ``plan``).

The rules come from public sources, each cited where it is coded: PJMail's "Precombine Previs
Deep Dive" and "Resolving Creation Kit Crashes when generating Precombines" (Nexus Fallout 4
mod 69978), and Bryant-21/bacup's CK-free generator, which records the rules it checked against
the Creation Kit's output (``previs/src/precombine.rs``, ``group.rs``, ``crc.rs``, ``records.rs``).
"""
