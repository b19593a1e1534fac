"""The flags of a BSDismemberSkinInstance's body parts, one per skin partition written.

nif.xml (BSPartFlag): bit 0 shows the part in the editor; bit 8, PF_START_NET_BONESET, "starts a
new shared boneset". The games' files set it on the first partition (niftools #263: without it
there the armour is broken in game; PyNifly #28: set on every partition it crashes), and some on
the first partition of a further body part (draugr.nif, VaaMaleScarR04.nif). So: the first
partition always starts a set, a partition continuing the body part of the one before it (a
part split at the bone limit) never does, and the first partition of another body part does
when the file's own flags for that part did."""

START_NET_BONESET = 0x100
EDITOR_VISIBLE = 0x1


def partition_flags(parts, stored):
    """The flag of each partition, whose body parts are ``parts`` in order; ``stored``: the
    file's [body part, flag] pairs (its other bits kept per body part; a part it lacks is
    visible in the editor)."""
    kept, starts = {}, set()
    for part, flag in stored:
        kept.setdefault(int(part), int(flag) & ~START_NET_BONESET)
        if int(flag) & START_NET_BONESET:
            starts.add(int(part))
    out = []
    for number, part in enumerate(int(p) for p in parts):
        flag = kept.get(part, EDITOR_VISIBLE)
        first_of_part = number == 0 or part != int(parts[number - 1])
        if number == 0 or first_of_part and part in starts:
            flag |= START_NET_BONESET
        out.append(flag)
    return out
