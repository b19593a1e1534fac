"""hkaInterleavedUncompressedAnimation: every frame's transforms stored whole.

After hkaAnimation: +0x38 transforms (hkQsTransform, frame-major: frame f, track t at
f * tracks + t), +0x48 floats (f32, frame-major likewise).
"""

import numpy as np

from ..objects import havok_class
from .base import AnimationObject
from .classes import BOTH, POINTER_SIZES
from .skeleton import QS_TRANSFORM


@havok_class("hkaInterleavedUncompressedAnimation")
class InterleavedAnimation(AnimationObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self):
        super().__init__()
        self.transforms = np.zeros(0, QS_TRANSFORM)
        self.floats = np.zeros(0, "<f4")

    def sync(self, s):
        self.sync_base(s)
        self.transforms = s.hk_array(self.transforms, QS_TRANSFORM, what="transforms")
        self.floats = s.hk_array(self.floats, np.dtype("<f4"), what="floats")
