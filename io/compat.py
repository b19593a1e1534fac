"""The one place where the Blender versions this add-on supports (4.2 to 5.0) differ.

Materials: ``use_nodes`` is deprecated from 5.0, where every material has a node tree.

Actions: 4.4 introduced slotted (layered) actions, where F-curves live in a channelbag per slot
and an animation user picks a slot; 5.0 removed the classic ``Action.fcurves``. Everything
else uses the classic API on 4.2/4.3 and the slotted one from 4.4 on.
"""

import bpy

SLOTTED_ACTIONS = bpy.app.version >= (4, 4, 0)


def new_action(name, id_type="OBJECT"):
    """A new empty action and the slot its F-curves go into (None before 4.4)."""
    action = bpy.data.actions.new(name)
    if not SLOTTED_ACTIONS:
        return action, None
    slot = action.slots.new(id_type=id_type, name=action.name)
    action.layers.new("Layer").strips.new(type="KEYFRAME")
    return action, slot


def new_fcurve(action, slot, data_path, index, group):
    """An F-curve for ``data_path[index]`` in the channel group ``group``."""
    if not SLOTTED_ACTIONS:
        return action.fcurves.new(data_path, index=index, action_group=group)
    channelbag = action.layers[0].strips[0].channelbag(slot, ensure=True)
    fcurve = channelbag.fcurves.new(data_path, index=index)
    fcurve.group = channelbag.groups.get(group) or channelbag.groups.new(group)
    return fcurve


def find_fcurve(action, slot, data_path, index):
    """The F-curve for ``data_path[index]`` if ``action`` has one for ``slot``, else None."""
    if not SLOTTED_ACTIONS:
        return action.fcurves.find(data_path, index=index)
    channelbag = action.layers[0].strips[0].channelbag(slot)
    return channelbag.fcurves.find(data_path, index=index) if channelbag is not None else None


def fcurves(action, slot):
    """The F-curves through which ``action`` animates ``slot`` (all of them before 4.4)."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    channelbag = action_get_channelbag_for_slot(action, slot)
    return list(channelbag.fcurves) if channelbag else []


def assign_action(target, action, slot):
    """Make ``action`` (through ``slot``) the active action of the ID ``target``."""
    animation = target.animation_data or target.animation_data_create()
    animation.action = action
    if SLOTTED_ACTIONS:
        animation.action_slot = slot


def stash_action(target, action, slot, start_frame):
    """Keep ``action`` with ``target`` in a muted NLA track of its own, as Blender's Stash does."""
    animation = target.animation_data or target.animation_data_create()
    track = animation.nla_tracks.new()
    track.name = action.name
    strip = track.strips.new(action.name, int(start_frame), action)
    if SLOTTED_ACTIONS:
        strip.action_slot = slot
    track.mute = True
    return track


def animations(target):
    """(action, slot) pairs of ``target``: its NLA strips' actions in track order, then its active
    action if it is not among them."""
    animation = target.animation_data
    if animation is None:
        return []
    found = [
        (strip.action, strip.action_slot if SLOTTED_ACTIONS else None)
        for track in animation.nla_tracks
        for strip in track.strips
        if strip.action is not None
    ]
    if animation.action is not None:
        found.append((animation.action, animation.action_slot if SLOTTED_ACTIONS else None))
    return [pair for index, pair in enumerate(found) if pair not in found[:index]]


def material_node_tree(material):
    """The material's shader node tree, switched on where that is still a setting (5.0 made
    every material node-based and deprecated ``use_nodes``)."""
    if bpy.app.version < (5, 0, 0) and not material.use_nodes:
        material.use_nodes = True
    return material.node_tree
