"""The custom property keys and attribute names the previous release (main at 6987e2a, before
the keys were gathered in io/schema.py) wrote into .blend files, spelled here as that release
spelled them, independently of the schema: a .blend it saved must still export
(tests/blender/test_schema_blender.py), so none of these may be renamed without the schema
reading the old spelling too."""

# Constraint limits are ``havok_`` + a limit name of core.havok.constraints.LIMITS.
CONSTRAINT_LIMITS = ("twist_min", "twist_max", "cone_max", "plane_min", "plane_max", "max_friction_torque",
                     "min_angle", "max_angle")

PREVIOUS_RELEASE = frozenset({
    # an imported file's collection
    "nif_path", "nif_game", "nif_source", "nif_scale", "nif_built_collision", "nif_built_skin",
    "precombined_layout", "reference_cell_plugin",
    "precombine_status", "precombine_causes", "precombine_previs", "precombine_plugin",
    # node and shape objects, armatures, skinned shapes, .kf handles
    "nif_block", "nif_type", "nif_flags", "nif_basis", "nif_parent", "nif_root", "nif_body_parts", "nif_segments",
    "nif_kf",
    # collision objects
    "nif_collision", "havok_source", "havok_shape", "havok_material", "havok_radius", "havok_motion", "havok_mass",
    "havok_friction", "havok_restitution", "havok_layer",
    # extra data empties and constraints
    "nif_extra_kind", "nif_extra", "nif_extra_item", "nif_extra_basis", "nif_extra_owner",
    "nif_connect_parent", "nif_connect_skinned", "nif_animation_type", "nif_entry_points", "nif_orientation",
    "nif_position_ref_1", "nif_position_ref_2", "nif_zoom", "havok_constraint", "havok_body_a", "havok_body_b",
    *(f"havok_{limit}" for limit in CONSTRAINT_LIMITS),
    # precombined copies, their meshes, placeholders, references
    "precombined_cell", "precombined_block", "precombined_object", "precombined_instance",
    "precombined_grayscale_scale", "precombined_instance_raw", "precombined_instances_raw", "precombined_source",
    "precombined_hash", "precombined_offset", "precombined_vertex_desc", "precombined_record_desc", "precombined_lod",
    "precombined_geometry_file", "precombined",
    "reference_form_id", "reference_plugin", "base_form_id", "base_editor_id", "base_model",
    "precombine_breaker", "precombine_override",
    # meshes, bones, materials, image nodes, face attributes
    "nif_geometry", "nif_rest", "nif_matrix", "nif_record", "nif_blocks", "nif_file", "nif_bs_version",
    "nif_material_path", "bgsm_file", "bgsm_look", "nif_texture", "nif_body_part", "nif_segment", "nif_subsegment",
    # NIF animation actions
    "nif_sequence", "nif_name", "nif_fps", "nif_cycle_type", "nif_frequency", "nif_frame_range", "nif_channels",
    # Havok animation armatures and actions
    "hkx_bones", "hkx_skeleton", "hkx_game", "hkx_fps", "hkx_binding", "hkx_annotations", "hkx_root_axes",
    # .bsm2 imports
    "bsm2_normal", "bsm2_tangent", "bsm2_tangent_sign", "bsm2_interval_ns", "bsm2_duration_ns", "bsm2_bind_residual",
    "bsm2_name",
})  # fmt: skip

# Written by that release and read by nothing but a test: no longer written, ignored when found.
DROPPED = frozenset({"precombined_layout"})
