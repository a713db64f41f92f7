"""qconform's bit-exact reference of burn's tensor quantization (numpy + ml_dtypes).

Each module is one concept of the spec (``docs/spec/``): ``scheme`` (§1), ``calibration`` (§2),
``qparams`` (§3), ``rounding`` and ``scales`` (§4), ``quantize`` (§5), ``dequantize`` (§6), ``codec`` (§7),
``errors`` (§8), ``matmul`` (§9.4); ``profiles`` names where burn's backends differ; ``ops.run`` is the single
entry point the vectors and the reference backend use.
"""

from .blocks import BlockLayout
from .calibration import compute_range
from .checkpoint import CheckpointUnmodelled, load_checkpoint, save_checkpoint
from .choices import ProfileError
from .codec import decode_scales, encode_scales, from_bytes, pack_u32, to_bytes, unpack_u32
from .dequantize import dequantize, load_quantized
from .errors import CATALOGUE, BurnPanic, UndefinedBehaviour, classify_panic, message_matches
from .matmul import ternary_matmul
from .ops import OPS, run
from .profiles import (DEFAULT_PROFILE, PROFILES, Profile, build_line, campaign_line, get_profile, profiles,
                       status_line)
from .qparams import compute_q_params
from .qtensor import QTensor
from .quantize import quantize, quantize_dynamic
from .rounding import round_half_away, round_half_even, round_up
from .scales import scale_to_dtype
from .scheme import (
    NATIVE,
    BlockScale,
    BlockSize,
    QuantMode,
    QuantScheme,
    QuantStore,
    QuantValue,
    ScaleDtype,
    quantizable,
)
from .stages import Stages

__version__ = "0.1.0"


__all__ = [
    "CATALOGUE",
    "DEFAULT_PROFILE",
    "NATIVE",
    "OPS",
    "PROFILES",
    "BlockLayout",
    "BlockScale",
    "BlockSize",
    "BurnPanic",
    "CheckpointUnmodelled",
    "Profile",
    "ProfileError",
    "QTensor",
    "QuantMode",
    "QuantScheme",
    "QuantStore",
    "QuantValue",
    "ScaleDtype",
    "Stages",
    "UndefinedBehaviour",
    "classify_panic",
    "compute_q_params",
    "compute_range",
    "decode_scales",
    "dequantize",
    "encode_scales",
    "from_bytes",
    "get_profile",
    "load_checkpoint",
    "load_quantized",
    "message_matches",
    "pack_u32",
    "profiles",
    "quantizable",
    "quantize",
    "quantize_dynamic",
    "round_half_away",
    "round_half_even",
    "round_up",
    "run",
    "save_checkpoint",
    "scale_to_dtype",
    "status_line",
    "campaign_line",
    "build_line",
    "ternary_matmul",
    "to_bytes",
    "unpack_u32",
]
