#!/usr/bin/python3
"""Golden outputs of a pre-norm transformer encoder layer, computed by PyTorch, for edgeattn's block tests.

Run with Debian's system python3 and python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/gen_block_golden.py            # writes tests/data/block_encoder.h
    /usr/bin/python3 tools/gen_block_golden.py --check    # recomputes and compares with the committed file

The layer is nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0, activation="gelu",
batch_first=True, norm_first=True) (Whisper's block: LayerNorm, self-attention, residual; LayerNorm, Linear, GELU
in erf form, Linear, residual). Its weights and input are not stored: they come from a counter-based generator
that C and C++ reproduce bit for bit (below), so the header holds only the shapes and PyTorch's outputs, small
enough for the Cortex-M boards. The outputs are computed in float64 from those float32 weights and inputs
(model.double()), so they are the reference up to float64 rounding, not PyTorch's float32 arithmetic.

Generator, for tensor number t (the order of TENSORS below) and element i of it (row-major):
    s = (seed + 0x9E3779B9 * (t + 1) + 0x85EBCA6B * (i + 1)) mod 2^32, then the 32-bit finaliser of MurmurHash3:
    s ^= s >> 16; s *= 0x85EBCA6B; s ^= s >> 13; s *= 0xC2B2AE35; s ^= s >> 16   (all mod 2^32)
    u = ((s >> 16) - 32768) * 2^-15                       in [-1, 1), 16 significant bits: exact in float
    weights and biases: u * 2^-k with 2^-k the power of two nearest 1/sqrt(fan_in) (listed per tensor in the
    header), LayerNorm weights 1 + u/4, LayerNorm biases u/4, input u. Every value is exact in float32.
"""

import argparse
import math
import os
import re
import sys

import torch

SEED = 20251123

# (name, shape as a function of (d, ffn), kind). Kind: "w" weight/bias scaled by the fan-in power of two,
# "nw" LayerNorm weight, "nb" LayerNorm bias.
TENSORS = [
    ("self_attn.in_proj_weight", lambda d, f: (3 * d, d), "w", lambda d, f: d),
    ("self_attn.in_proj_bias", lambda d, f: (3 * d,), "w", lambda d, f: d),
    ("self_attn.out_proj.weight", lambda d, f: (d, d), "w", lambda d, f: d),
    ("self_attn.out_proj.bias", lambda d, f: (d,), "w", lambda d, f: d),
    ("linear1.weight", lambda d, f: (f, d), "w", lambda d, f: d),
    ("linear1.bias", lambda d, f: (f,), "w", lambda d, f: d),
    ("linear2.weight", lambda d, f: (d, f), "w", lambda d, f: f),
    ("linear2.bias", lambda d, f: (d,), "w", lambda d, f: f),
    ("norm1.weight", lambda d, f: (d,), "nw", None),
    ("norm1.bias", lambda d, f: (d,), "nb", None),
    ("norm2.weight", lambda d, f: (d,), "nw", None),
    ("norm2.bias", lambda d, f: (d,), "nb", None),
]
INPUT_TENSOR = len(TENSORS)  # the input x [seq][d] is tensor number 12

# name, d_model, heads, ffn, seq. "tiny" runs on every platform; "whisper_tiny" is Whisper-tiny's block
# (d_model 384, 6 heads, FFN 1536) on a short sequence, for the hosted platforms.
SHAPES = [
    ("tiny", 8, 2, 16, 4),
    ("whisper_tiny", 384, 6, 1536, 6),
]


def mix(t, i):
    s = (SEED + 0x9E3779B9 * (t + 1) + 0x85EBCA6B * (i + 1)) & 0xFFFFFFFF
    s ^= s >> 16
    s = (s * 0x85EBCA6B) & 0xFFFFFFFF
    s ^= s >> 13
    s = (s * 0xC2B2AE35) & 0xFFFFFFFF
    s ^= s >> 16
    return ((s >> 16) - 32768) * 2.0**-15


def scale_exponent(fan_in):
    """k with 2^-k nearest (in log scale) to 1/sqrt(fan_in)."""
    return int(round(0.5 * math.log2(fan_in)))


def make_tensor(t, shape, kind, fan_in):
    n = math.prod(shape)
    values = [mix(t, i) for i in range(n)]
    if kind == "w":
        k = scale_exponent(fan_in)
        values = [v * 2.0**-k for v in values]
    elif kind == "nw":
        values = [1.0 + v / 4 for v in values]
    elif kind == "nb":
        values = [v / 4 for v in values]
    out = torch.tensor(values, dtype=torch.float64).reshape(shape)
    assert torch.equal(out.float().double(), out), "generator values must be exact in float32"
    return out


def golden(d, heads, ffn, seq):
    layer = torch.nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=True)
    layer = layer.double().eval()
    params = dict(layer.named_parameters())
    assert sorted(params) == sorted(name for name, _, _, _ in TENSORS), sorted(params)
    exponents = {}
    with torch.no_grad():
        for t, (name, shape_fn, kind, fan_fn) in enumerate(TENSORS):
            shape = shape_fn(d, ffn)
            assert tuple(params[name].shape) == shape, (name, params[name].shape, shape)
            fan_in = fan_fn(d, ffn) if fan_fn else None
            params[name].copy_(make_tensor(t, shape, kind, fan_in))
            if kind == "w":
                exponents[name] = scale_exponent(fan_in)
        x = make_tensor(INPUT_TENSOR, (seq, d), "x", None)
        y = layer(x.unsqueeze(0)).squeeze(0)
    first = [mix(0, i) * 2.0**-scale_exponent(d) for i in range(4)]
    return exponents, first, y


def c_name(name):
    return re.sub(r"[^A-Za-z0-9]", "_", name)


def render():
    lines = [
        "// Generated by tools/gen_block_golden.py using PyTorch %s (float64); do not edit." % torch.__version__,
        "// Valid C99 and C++. nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0,",
        '// activation="gelu", batch_first=True, norm_first=True) on weights and inputs from the generator described',
        "// in the script (not stored here); outputs [seq][d_model] from PyTorch in float64.",
        "#ifndef EDGEATTN_TESTS_DATA_BLOCK_ENCODER_H_",
        "#define EDGEATTN_TESTS_DATA_BLOCK_ENCODER_H_",
        "",
        "#define BLOCK_ENCODER_SEED %du" % SEED,
        "/* Tensor numbers of the generator, in order. */",
    ]
    for t, (name, _, kind, _) in enumerate(TENSORS):
        lines.append("#define BLOCK_ENCODER_TENSOR_%s %d /* %s */" % (c_name(name).upper(), t, kind))
    lines.append("#define BLOCK_ENCODER_TENSOR_INPUT %d" % INPUT_TENSOR)
    lines.append("")
    for shape_name, d, heads, ffn, seq in SHAPES:
        exponents, first, y = golden(d, heads, ffn, seq)
        prefix = "block_encoder_%s" % shape_name
        upper = prefix.upper()
        lines.append("#define %s_D_MODEL %d" % (upper, d))
        lines.append("#define %s_HEADS %d" % (upper, heads))
        lines.append("#define %s_FFN %d" % (upper, ffn))
        lines.append("#define %s_SEQ %d" % (upper, seq))
        lines.append("/* Weights and biases are u * 2^-k: k by tensor (the power of two nearest 1/sqrt(fan_in)). */")
        for name, k in exponents.items():
            lines.append("#define %s_K_%s %d" % (upper, c_name(name).upper(), k))
        lines.append("/* The first four values of self_attn.in_proj_weight: a check of a port of the generator. */")
        lines.append("static const float %s_first_weights[4] = {%s};" % (prefix, ", ".join("%.9gf" % v for v in first)))
        lines.append("static const double %s_output[%d][%d] = {" % (prefix, seq, d))
        for row in y.tolist():
            values = ["%.17g" % v for v in row]
            chunks = [", ".join(values[i:i + 4]) for i in range(0, len(values), 4)]
            lines.append("    {" + ",\n     ".join(chunks) + "},")
        lines.append("};")
        lines.append("")
    lines.append("#endif  /* EDGEATTN_TESTS_DATA_BLOCK_ENCODER_H_ */")
    return "\n".join(lines) + "\n"


def numbers(text):
    return [float(v) for v in re.findall(r"[-+]?\d+\.\d*(?:e[-+]?\d+)?|[-+]?\d+e[-+]?\d+", text)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                                                      "block_encoder.h"))
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    args = parser.parse_args()
    torch.set_num_threads(1)
    text = render()
    if args.check:
        with open(args.out) as f:
            committed = f.read()
        strip = lambda s: "\n".join(l for l in s.splitlines() if not l.startswith("// Generated by"))
        got, want = numbers(strip(text)), numbers(strip(committed))
        if len(got) != len(want):
            print("block golden: %d numbers regenerated, %d committed" % (len(got), len(want)))
            return 1
        worst = max((abs(a - b) / max(abs(b), 1e-300) for a, b in zip(got, want)), default=0.0)
        print("block golden: %d numbers, worst relative difference %.3g" % (len(got), worst))
        return 0 if worst <= 1e-12 else 1
    with open(args.out, "w") as f:
        f.write(text)
    print("wrote %s" % os.path.normpath(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
