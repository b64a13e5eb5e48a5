#!/usr/bin/env python3
"""Writes tests/data/ggml_blocks.gguf: blocks of every quantized type LlamaDesk reads, with the
floats ggml's reference dequantizer makes of them, so test_weight_types can check our to_f32_*
against llama.cpp's own reading of the same bytes without Python at test time.

ggml's reference comes from the PyPI package gguf (gguf.quants, a port of ggml-quants.c). For each
type T the file holds
  T.blocks    2 rows of 256 elements in type T. Row 0 of the 32-element types is gguf's quantizer
              applied to `source` (real block contents); every other row is random bytes with
              finite scales (gguf 0.19 cannot quantize K-quants, and random bits reach every code).
  T.expected  F32, the same shape: gguf.quants.dequantize of T.blocks.
  source      F32, 256 floats: normal values, an outlier, a constant run, a negative-only run.

Regenerate (the output is deterministic for a gguf version):
  python3 engine/tools/quant/write_ggml_blocks_fixture.py tests/data/ggml_blocks.gguf
"""

import sys

import numpy as np
from gguf import GGMLQuantizationType as T, GGUFWriter, quants

# Byte offsets of each block's f16 scales (blocks.h): random bits there could be inf or NaN.
SCALES = {T.Q8_0: (34, [0]), T.Q4_0: (18, [0]), T.Q4_1: (20, [0, 2]), T.Q5_0: (22, [0]),
          T.Q5_1: (24, [0, 2]), T.Q4_K: (144, [0, 2]), T.Q5_K: (176, [0, 2]), T.Q6_K: (210, [208])}
ROW = 256


def source_floats(rng):
    x = rng.standard_normal(ROW).astype(np.float32) * 0.05
    x[37] = 1.5             # an outlier in the second 32-block
    x[64:96] = 0.03125      # a constant block
    x[96:128] = -np.abs(x[96:128]) - 0.01  # negative only
    x[128:160] = 0.0        # all zero
    return x


def random_blocks(rng, t, rows):
    size, scale_offsets = SCALES[t]
    n_blocks = rows * ROW // quants.GGML_QUANT_SIZES[t][0]
    raw = rng.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    for off in scale_offsets:
        scales = (rng.uniform(-0.02, 0.02, n_blocks)).astype(np.float16)
        raw[:, off:off + 2] = scales.view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(rows, -1)


def main(path):
    rng = np.random.default_rng(20261130)
    source = source_floats(rng)
    w = GGUFWriter(path, "llamadesk-fixture")
    w.add_tensor("source", source.reshape(1, ROW))
    for t in SCALES:
        blocks = random_blocks(rng, t, 2)
        if quants.GGML_QUANT_SIZES[t][0] == 32:
            blocks[0] = quants.quantize(source.reshape(1, ROW), t)[0]
        expected = quants.dequantize(blocks, t).astype(np.float32)
        w.add_tensor(f"{t.name}.blocks", blocks, raw_dtype=t)
        w.add_tensor(f"{t.name}.expected", expected)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/ggml_blocks.gguf")
