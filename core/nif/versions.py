"""The games a NIF's version numbers name, in one place: every decision that differs per game
reads one of these predicates (as nifly's IsFO3 / IsSK / IsSSE / IsFO4 / IsFO76 / IsSF do), never a raw
comparison of the Bethesda stream version (``bs_version``). All files are NIF 20.2.0.7; the
stream version tells the games apart, the user version only FO3/FNV (11) from the rest (12).

The predicates take the stream version and keep the bounds the layouts were read with, so files
of versions between two games' (development streams) are read as before. Stream versions of no
released game (Oblivion-era 14 to 28 and 76, FO4 development 132 and 152) stay numbers where a
block's layout reads them, as nif.xml states them.
"""

FO3 = 34  # Fallout 3 / New Vegas: the last stream version of theirs (older Bethesda streams below)
SKYRIM = 83  # Skyrim (Legendary Edition): hk 2010 collision layouts, culling modes
SSE = 100  # Skyrim Special Edition: BSTriShape geometry, skinned vertices in the partition
FO4_DEV = 103  # Fallout 4's development streams start here (the header names a max file path)
FO4 = 130  # Fallout 4 as released: packfile collision, no node effects, half-float vertices
FO4_LAST = 139  # the last of Fallout 4's streams
FO76 = 155  # Fallout 76: shapes hold a bounding box
SF_FIRST, SF_LAST = 172, 175  # Starfield: BSGeometry naming external .mesh files (nifly's range)
OBLIVION_BELOW = 9  # Oblivion's streams are below this

# The name a file's versions give its game: (key, test on stream and user version), first match.
GAMES = (
    ("SF", lambda bs, user: starfield(bs)),
    ("FO76", lambda bs, user: bs == FO76),
    ("FO4", lambda bs, user: fo4(bs)),
    ("SSE", lambda bs, user: bs == SSE),
    ("SKYRIM", lambda bs, user: user == 12 and bs == SKYRIM),
    ("FO3", lambda bs, user: user == 11 and 11 <= bs <= FO3),
)

# (user version, stream version) new files are written with, by game key.
WRITTEN = {
    "FO4": (12, FO4),
    "FO3": (11, FO3),
    "SSE": (12, SSE),
    "SKYRIM": (12, SKYRIM),  # Skyrim LE: NiTriShape geometry, as FO3's
    "FO76": (12, FO76),  # BSTriShape geometry and BSSkin skinning, as FO4's
    "SF": (12, 173),  # BSGeometry naming .mesh files (io/starfield), as the corpus files are
}


def game(bs_version, user_version):
    """The game key of a file with these versions, or "unknown"."""
    for key, test in GAMES:
        if test(bs_version, user_version):
            return key
    return "unknown"


def oblivion(bs):
    return bs < OBLIVION_BELOW


def up_to_fo3(bs):
    """FO3/FNV and older: NiTriShape geometry with a property list, FO3 furniture markers."""
    return bs <= FO3


def after_fo3(bs):
    """Skyrim on: shader and alpha property refs on the shape, Skyrim furniture markers."""
    return bs > FO3


def skyrim_or_later(bs):
    return bs >= SKYRIM


def between_fo3_and_skyrim(bs):
    """Streams after FO3's and before Skyrim's (no game's; their rigid bodies read as FO4's)."""
    return FO3 < bs < SKYRIM


def sse(bs):
    return bs == SSE


def fo4_dev_or_later(bs):
    return bs >= FO4_DEV


def before_fo4(bs):
    """FO3 to Skyrim SE: NiNode effects, bhk collision bodies, full-precision vertices."""
    return bs < FO4


def fo4_or_later(bs):
    return bs >= FO4


def fo4_release(bs):
    return bs == FO4


def fo4(bs):
    """Fallout 4's streams, its later development ones included."""
    return FO4 <= bs <= FO4_LAST


def up_to_fo4(bs):
    return bs <= FO4_LAST


def skyrim_to_fo4(bs):
    return SKYRIM <= bs <= FO4_LAST


def after_fo4_release(bs):
    """FO4's later development streams and FO76 (shader flags as arrays, a u32 in the header)."""
    return bs > FO4


def fo76(bs):
    return bs == FO76


def fo76_or_later(bs):
    return bs >= FO76


def starfield(bs):
    return SF_FIRST <= bs <= SF_LAST
