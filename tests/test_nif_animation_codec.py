"""Animation blocks decoded by the codec agree with the same fields read with struct from the
bytes (tests/raw_animation.py) in every corpus file holding sequences; edited keys write back
where a raw reading finds them."""

import numpy as np
import pytest
from raw_animation import bool_data, read_sequences, text_keys, transform_data
from support import CORPUS, corpus_files_holding

from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.animation import NiBoolData, NiBoolInterpolator, NiTransformData, NiTransformInterpolator
from precombined_nif.core.nif.blocks.sequences import NiControllerSequence, NiTextKeyExtraData

ANIMATED = corpus_files_holding("**/*.nif", b"NiControllerSequence")
ANIMATION_TYPES = {
    "NiControllerManager", "NiControllerSequence", "NiMultiTargetTransformController", "NiDefaultAVObjectPalette",
    "NiTextKeyExtraData", "NiTransformController", "NiTransformInterpolator", "NiTransformData", "NiVisController",
    "NiBoolInterpolator", "NiBoolData", "NiFloatInterpolator", "NiFloatData", "NiPoint3Interpolator", "NiPosData",
    "BSEffectShaderPropertyFloatController", "BSEffectShaderPropertyColorController", "BSLightingShaderPropertyFloatController",
}  # fmt: skip


def test_the_corpus_has_animated_files():
    assert len(ANIMATED) >= 15


@pytest.mark.parametrize("path", ANIMATED, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_sequences_decode_as_the_bytes_hold_them(path):
    nif = NifFile.read(path)
    raw, sequences = read_sequences(path)
    assert not [b.type_name for b in nif.blocks if isinstance(b, RawBlock) and b.type_name in ANIMATION_TYPES]
    decoded = [block for _index, block in nif.blocks_of(NiControllerSequence)]
    assert [s.name for s in decoded] == [s.name for s in sequences]
    for block, expected in zip(decoded, sequences):
        assert (block.cycle_type, block.frequency, block.start_time, block.stop_time, block.text_keys) == (
            expected.cycle_type, np.float32(expected.frequency), np.float32(expected.start), np.float32(expected.stop),
            expected.text_key_ref,
        )  # fmt: skip
        assert [(c.node_name, c.controller_type, c.interpolator) for c in block.controlled_blocks] == expected.blocks
        if expected.text_key_ref >= 0:
            keys = nif.blocks[expected.text_key_ref]
            assert isinstance(keys, NiTextKeyExtraData)
            assert [(np.float32(k.time), k.text) for k in keys.keys] == [(np.float32(t), s) for t, s in text_keys(raw, expected.text_key_ref)]
        for _node, _controller, index in expected.blocks:
            interpolator = nif.blocks[index] if index >= 0 else None
            if isinstance(interpolator, NiTransformInterpolator) and interpolator.data >= 0:
                _same_transform_keys(nif.blocks[interpolator.data], transform_data(raw, index))
            elif isinstance(interpolator, NiBoolInterpolator):
                kind, keys = bool_data(raw, index)
                if kind is None:
                    assert interpolator.value == keys
                else:
                    data = nif.blocks[interpolator.data]
                    assert isinstance(data, NiBoolData) and data.keys.interpolation == kind
                    assert [(float(t), int(v[0])) for t, v in zip(data.keys.keys["time"], data.keys.keys["value"])] == [
                        (pytest.approx(t), v) for t, v in keys
                    ]


def _same_transform_keys(data, expected):
    assert isinstance(data, NiTransformData)

    def rows(kind, keys, group_keys):
        assert len(group_keys) == len(keys)
        for key, (time, value, extra) in zip(group_keys, keys):
            assert key["time"] == np.float32(time)
            np.testing.assert_array_equal(key["value"], np.float32(value))
            if kind == 2 and "forward" in key.dtype.names:
                np.testing.assert_array_equal([key["forward"], key["backward"]], np.float32(extra))
            elif kind == 3:
                np.testing.assert_array_equal(key["tbc"], np.float32(extra))

    if "xyz" in expected:
        for group, (kind, keys) in zip(data.xyz_rotations, expected["xyz"]):
            rows(kind, keys, group.keys)
    else:
        rows(*expected["rotation"], data.rotation_keys)
    rows(*expected["translation"], data.translations.keys)
    rows(*expected["scale"], data.scales.keys)


def test_edited_keys_write_back_where_the_bytes_hold_them(corpus):
    """CigaretteMachine 'Open': its X angle keys shifted by 0.1 s and turned; the file's other
    blocks keep their bytes."""
    path = corpus / "pynifly/tests/tests/FO4/CigaretteMachine.nif"
    nif = NifFile.read(path)
    sequence = next(block for _i, block in nif.blocks_of(NiControllerSequence) if block.name == "Open")
    interpolator_index = sequence.controlled_blocks[0].interpolator
    data_index = nif.blocks[interpolator_index].data
    keys = nif.blocks[data_index].xyz_rotations[0].keys.copy()
    keys["time"] += 0.1
    keys["value"] *= 2
    nif.blocks[data_index].xyz_rotations[0].keys = keys
    raw_before, _ = read_sequences(path)
    raw, _ = read_sequences(nif.to_bytes())
    kind, written = transform_data(raw, interpolator_index)["xyz"][0]
    assert [t for t, _v, _e in written] == pytest.approx([0.1, 0.1 + 1 / 6], abs=1e-6)
    assert [v[0] for _t, v, _e in written] == pytest.approx([0.0, 2 * 0.05235987901687622], abs=1e-7)
    assert [i for i in range(len(raw.blocks)) if raw.blocks[i] != raw_before.blocks[i]] == [data_index]
