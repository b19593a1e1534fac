"""Paths as the games store them: relative to the Data folder."""


def data_relative(path):
    """A stored path relative to the Data folder, with backslashes. The Creation Kit stores
    absolute ones (``C:\\Projects\\...\\Data\\materials\\x.BGSM``): their part from
    ``materials\\`` or ``textures\\`` on; a leading ``Data\\`` goes too."""
    text = str(path).replace("/", "\\")
    parts = [p for p in text.split("\\") if p and p != "."]
    if len(text) > 1 and text[1] == ":" or text.startswith("\\"):
        lowered = [p.lower() for p in parts]
        starts = [lowered.index(name) for name in ("materials", "textures") if name in lowered]
        parts = parts[min(starts) :] if starts else parts
    elif parts and parts[0].lower() == "data":
        parts = parts[1:]
    return "\\".join(parts)
