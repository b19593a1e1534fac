"""The objects of a collection and its children without ``Collection.all_objects``: once a
.blend has been saved or loaded, Blender rebuilds that cache with a search per object, which
takes minutes for a cell of 20k placed copies (measured: 149 s against 0.16 s for this walk)."""


def objects_in(collection):
    found, seen, stack = [], set(), [collection]
    while stack:
        current = stack.pop()
        for obj in current.objects:
            key = obj.as_pointer()
            if key not in seen:  # an object linked into two of the collections counts once
                seen.add(key)
                found.append(obj)
        stack.extend(current.children)
    return found
