#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Golden outputs of two transformer layers, computed by PyTorch, for edgeattn's block tests (tests/block_test.cc).

Run with Debian's system python3 and python3-torch (PyTorch 1.13), not a python from a version manager:

    /usr/bin/python3 tools/gen_block_golden.py                 # writes the files below (FILES)
    /usr/bin/python3 tools/gen_block_golden.py --out-dir DIR   # writes them into DIR instead
    /usr/bin/python3 tools/gen_block_golden.py --check DIR     # writes them into DIR, compares with the committed

--check passes when the regenerated files are byte for byte the committed ones, or (another machine's float64
arithmetic may differ in the last bits) when they differ only in numbers, each within 1e-12 relative; it says
which. Without torch it says so and exits with 77, which ctest (block_golden_up_to_date) reports as skipped.

Encoder layer (block_encoder.h): nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0,
activation="gelu", batch_first=True, norm_first=True), Whisper's block: LayerNorm, self-attention, residual;
LayerNorm, Linear, GELU in erf form, Linear, residual. No mask.

Decoder layer (block_decoder.h), llama-style as llama2.c's forward() for one layer, in PyTorch ops below: RMSNorm
(eps 1e-5 rounded to float32), Q/K/V projections (nn.Linear layout [out][in], no bias) with num_kv_heads dividing
num_heads (query head h reads K/V head h / (num_heads / num_kv_heads)), RoPE in the interleaved layout of llama2.c
and Meta's llama (pairs (2i, 2i+1) of each head, angle p * 10000^(-2i/head_dim), rotated K cached), causal
attention over the K/V cache with scale 1/sqrt(head_dim), output projection, residual; RMSNorm, SwiGLU MLP
w2(silu(w1 x) * w3 x), residual. A prefill of the first `prefill` tokens at positions 0.. in one call, then one
token per call for `steps` calls, each against the cache of everything before it; the outputs of every token, in
order, are recorded. The script checks that this equals one causal pass over the whole sequence.

Weights and inputs are not stored: they come from a counter-based generator that C and C++ reproduce bit for bit
(below), so the headers hold only the shapes and PyTorch's outputs, small enough for the Cortex-M boards (the
Whisper-tiny encoder's 1.8 M weights would be tens of MB as text). The outputs are computed in float64 from those
float32 weights and inputs (model.double()), so they are the reference up to float64 rounding, not PyTorch's
float32 arithmetic. Shapes too big for the boards' 4 MB of RAM are inside #if !EDGEATTN_TEST_SMALL_MEMORY.

Generator, for a layer's seed, tensor number t (the order of the tensor lists below) and element i (row-major):
    s = (seed + 0x9E3779B9 * (t + 1) + 0x85EBCA6B * (i + 1)) mod 2^32, then the 32-bit finaliser of MurmurHash3:
    s ^= s >> 16; s *= 0x85EBCA6B; s ^= s >> 13; s *= 0xC2B2AE35; s ^= s >> 16   (all mod 2^32)
    u = ((s >> 16) - 32768) * 2^-15                       in [-1, 1), 16 significant bits: exact in float
    weights and biases: u * 2^-k with 2^-k the power of two nearest 1/sqrt(fan_in) (listed per tensor in the
    header), norm weights 1 + u/4, LayerNorm biases u/4, input u. Every value is exact in float32.
The run is deterministic (fixed seeds, one thread): a rerun on the same machine reproduces the files byte for byte.
"""

import argparse
import math
import os
import re
import struct
import sys

try:
    import torch
except ImportError as error:  # ctest's skip code: the committed headers are then used as they are
    print("block golden: SKIPPED: %s cannot import torch (%s); install Debian's python3-torch to regenerate and "
          "check tests/data/block_*.h" % (sys.executable, error))
    sys.exit(77)

# The committed files carry the repository's license line (scripts/spdx.py), so a regenerated file matches.
SPDX_LINE = "// SPDX-License-Identifier: Apache-2.0"
ENCODER_SEED = 20251123
DECODER_SEED = 20251124

# (name, shape as a function of the layer's shape, kind, fan-in as a function of the shape or None). Kind: "w"
# weight/bias scaled by the fan-in power of two, "nw" norm weight, "nb" LayerNorm bias.
ENCODER_TENSORS = [
    ("self_attn.in_proj_weight", lambda s: (3 * s["d"], s["d"]), "w", lambda s: s["d"]),
    ("self_attn.in_proj_bias", lambda s: (3 * s["d"],), "w", lambda s: s["d"]),
    ("self_attn.out_proj.weight", lambda s: (s["d"], s["d"]), "w", lambda s: s["d"]),
    ("self_attn.out_proj.bias", lambda s: (s["d"],), "w", lambda s: s["d"]),
    ("linear1.weight", lambda s: (s["ffn"], s["d"]), "w", lambda s: s["d"]),
    ("linear1.bias", lambda s: (s["ffn"],), "w", lambda s: s["d"]),
    ("linear2.weight", lambda s: (s["d"], s["ffn"]), "w", lambda s: s["ffn"]),
    ("linear2.bias", lambda s: (s["d"],), "w", lambda s: s["ffn"]),
    ("norm1.weight", lambda s: (s["d"],), "nw", None),
    ("norm1.bias", lambda s: (s["d"],), "nb", None),
    ("norm2.weight", lambda s: (s["d"],), "nw", None),
    ("norm2.bias", lambda s: (s["d"],), "nb", None),
]

# llama2.c's names for one layer. wq [heads*hd][dim], wk and wv [kv_heads*hd][dim], wo [dim][heads*hd],
# w1 (gate) and w3 (up) [hidden][dim], w2 (down) [dim][hidden].
DECODER_TENSORS = [
    ("attention_norm", lambda s: (s["dim"],), "nw", None),
    ("wq", lambda s: (s["heads"] * s["hd"], s["dim"]), "w", lambda s: s["dim"]),
    ("wk", lambda s: (s["kv_heads"] * s["hd"], s["dim"]), "w", lambda s: s["dim"]),
    ("wv", lambda s: (s["kv_heads"] * s["hd"], s["dim"]), "w", lambda s: s["dim"]),
    ("wo", lambda s: (s["dim"], s["heads"] * s["hd"]), "w", lambda s: s["heads"] * s["hd"]),
    ("ffn_norm", lambda s: (s["dim"],), "nw", None),
    ("w1", lambda s: (s["hidden"], s["dim"]), "w", lambda s: s["dim"]),
    ("w2", lambda s: (s["dim"], s["hidden"]), "w", lambda s: s["hidden"]),
    ("w3", lambda s: (s["hidden"], s["dim"]), "w", lambda s: s["dim"]),
]

# "tiny" and "small" (also the encoder example's, examples/layers/encoder_layer.c) run on every platform;
# "whisper_tiny" is Whisper-tiny's block (d_model 384, 6 heads, FFN 1536) on a short sequence, for the hosted
# platforms.
ENCODER_SHAPES = [
    dict(name="tiny", d=8, heads=2, ffn=16, seq=4, small=True),
    dict(name="small", d=64, heads=4, ffn=256, seq=8, small=True),
    dict(name="whisper_tiny", d=384, heads=6, ffn=1536, seq=6, small=False),
]

# "tiny": 4 heads over 2 K/V heads of 4; "stories260k": one layer of llama2.c's stories260K (dim 64, 8 heads,
# 4 K/V heads, hidden 172), both on every platform; "stories15m": one layer of stories15M (dim 288, 6 heads, no
# grouping, hidden 768), hosted only. At least 32 decode steps each.
DECODER_SHAPES = [
    dict(name="tiny", dim=16, heads=4, kv_heads=2, hidden=40, prefill=5, steps=32, small=True),
    dict(name="stories260k", dim=64, heads=8, kv_heads=4, hidden=172, prefill=7, steps=33, small=True),
    dict(name="stories15m", dim=288, heads=6, kv_heads=6, hidden=768, prefill=4, steps=32, small=False),
]

RMS_EPS = struct.unpack("f", struct.pack("f", 1e-5))[0]  # the float32 eps the C code passes, exactly
ROPE_BASE = 10000.0


def mix(seed, t, i):
    s = (seed + 0x9E3779B9 * (t + 1) + 0x85EBCA6B * (i + 1)) & 0xFFFFFFFF
    s ^= s >> 16
    s = (s * 0x85EBCA6B) & 0xFFFFFFFF
    s ^= s >> 13
    s = (s * 0xC2B2AE35) & 0xFFFFFFFF
    s ^= s >> 16
    return ((s >> 16) - 32768) * 2.0**-15


def scale_exponent(fan_in):
    """k with 2^-k nearest (in log scale) to 1/sqrt(fan_in)."""
    return int(round(0.5 * math.log2(fan_in)))


def make_tensor(seed, t, shape, kind, fan_in):
    n = math.prod(shape)
    values = [mix(seed, t, i) for i in range(n)]
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


def encoder_golden(s):
    layer = torch.nn.TransformerEncoderLayer(s["d"], s["heads"], s["ffn"], dropout=0.0, activation="gelu",
                                             batch_first=True, norm_first=True)
    layer = layer.double().eval()
    params = dict(layer.named_parameters())
    assert sorted(params) == sorted(name for name, _, _, _ in ENCODER_TENSORS), sorted(params)
    exponents = {}
    with torch.no_grad():
        for t, (name, shape_fn, kind, fan_fn) in enumerate(ENCODER_TENSORS):
            shape = shape_fn(s)
            assert tuple(params[name].shape) == shape, (name, params[name].shape, shape)
            fan_in = fan_fn(s) if fan_fn else None
            params[name].copy_(make_tensor(ENCODER_SEED, t, shape, kind, fan_in))
            if kind == "w":
                exponents[name] = scale_exponent(fan_in)
        x = make_tensor(ENCODER_SEED, len(ENCODER_TENSORS), (s["seq"], s["d"]), "x", None)
        y = layer(x.unsqueeze(0)).squeeze(0)
        explicit = explicit_encoder_layer(params, x, s["d"], s["heads"])
        worst = ((explicit - y).norm(dim=-1) / y.norm(dim=-1)).max().item()
        assert worst < 1e-12, "the module and the explicit composition differ: %g" % worst
    first = [mix(ENCODER_SEED, 0, i) * 2.0**-scale_exponent(s["d"]) for i in range(4)]
    return exponents, first, y


def explicit_encoder_layer(params, x, d, heads):
    """The same layer from explicit float64 operations, in the order an edgeattn composition runs them: the
    check that the module computes what the golden file's comment says (pre-norm, in_proj rows q, k, v, heads
    of d/heads columns, scale 1/sqrt(d/heads), GELU with erf, population variance with eps 1e-5)."""
    p = {k: v.detach() for k, v in params.items()}

    def layer_norm(v, w, b):
        mean = v.mean(-1, keepdim=True)
        var = ((v - mean) ** 2).mean(-1, keepdim=True)
        return (v - mean) / torch.sqrt(var + 1e-5) * w + b

    def linear(v, w, b):  # y = x W^T + b, W [out][in]: edgeattn_linear_transposed
        return v @ w.T + b

    seq = x.shape[0]
    hd = d // heads
    h = layer_norm(x, p["norm1.weight"], p["norm1.bias"])
    qkv = linear(h, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"])
    q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
    out = torch.empty(seq, d, dtype=torch.float64)
    for head in range(heads):
        cols = slice(head * hd, (head + 1) * hd)
        scores = (q[:, cols] @ k[:, cols].T) / math.sqrt(hd)
        out[:, cols] = torch.softmax(scores, dim=-1) @ v[:, cols]
    x = x + linear(out, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])
    h = layer_norm(x, p["norm2.weight"], p["norm2.bias"])
    a = linear(h, p["linear1.weight"], p["linear1.bias"])
    a = a * 0.5 * (1.0 + torch.erf(a / math.sqrt(2.0)))
    return x + linear(a, p["linear2.weight"], p["linear2.bias"])


# ---- The llama-style decoder layer, float64 PyTorch ops.
def rms_norm(x, weight):
    return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + RMS_EPS) * weight


def rope_interleaved(x, first_position):
    """x [tokens][heads][hd]: pairs (2i, 2i+1) of each head rotated by p * base^(-2i/hd), p = first_position + t."""
    tokens, _, hd = x.shape
    pair = torch.arange(0, hd, 2, dtype=torch.float64)
    inv_freq = ROPE_BASE ** (-pair / hd)
    positions = torch.arange(first_position, first_position + tokens, dtype=torch.float64)
    angle = positions[:, None] * inv_freq[None, :]  # [tokens][hd/2]
    cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def cached_attention(q, k_cache, v_cache, first_position):
    """q [tokens][heads][hd] at positions first_position..; caches [positions][kv_heads][hd] (all positions up to
    the last query's). Query at position p sees cache positions 0..p."""
    tokens, heads, hd = q.shape
    group = heads // k_cache.shape[1]
    k = k_cache.repeat_interleave(group, dim=1)  # query head h reads K/V head h // group
    v = v_cache.repeat_interleave(group, dim=1)
    scores = torch.einsum("thd,phd->htp", q, k) / math.sqrt(hd)
    query_pos = torch.arange(first_position, first_position + tokens)[:, None]
    key_pos = torch.arange(k_cache.shape[0])[None, :]
    scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("htp,phd->thd", weights, v)


class DecoderLayer:
    def __init__(self, s, w):
        self.s, self.w = s, w
        self.k_cache = torch.zeros((0, s["kv_heads"], s["hd"]), dtype=torch.float64)
        self.v_cache = torch.zeros((0, s["kv_heads"], s["hd"]), dtype=torch.float64)

    def forward(self, x):
        """x [tokens][dim], the tokens after those already cached; returns the layer's output [tokens][dim]."""
        s, w = self.s, self.w
        tokens, first = x.shape[0], self.k_cache.shape[0]
        h = rms_norm(x, w["attention_norm"])
        q = torch.nn.functional.linear(h, w["wq"]).reshape(tokens, s["heads"], s["hd"])
        k = torch.nn.functional.linear(h, w["wk"]).reshape(tokens, s["kv_heads"], s["hd"])
        v = torch.nn.functional.linear(h, w["wv"]).reshape(tokens, s["kv_heads"], s["hd"])
        q, k = rope_interleaved(q, first), rope_interleaved(k, first)
        self.k_cache = torch.cat([self.k_cache, k])
        self.v_cache = torch.cat([self.v_cache, v])
        att = cached_attention(q, self.k_cache, self.v_cache, first).reshape(tokens, s["heads"] * s["hd"])
        x = x + torch.nn.functional.linear(att, w["wo"])
        h = rms_norm(x, w["ffn_norm"])
        gate = torch.nn.functional.linear(h, w["w1"])
        up = torch.nn.functional.linear(h, w["w3"])
        return x + torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, w["w2"])


def decoder_golden(s):
    s = dict(s, hd=s["dim"] // s["heads"])
    assert s["hd"] * s["heads"] == s["dim"] and s["heads"] % s["kv_heads"] == 0 and s["hd"] % 2 == 0
    weights, exponents = {}, {}
    for t, (name, shape_fn, kind, fan_fn) in enumerate(DECODER_TENSORS):
        fan_in = fan_fn(s) if fan_fn else None
        weights[name] = make_tensor(DECODER_SEED, t, shape_fn(s), kind, fan_in)
        if kind == "w":
            exponents[name] = scale_exponent(fan_in)
    total = s["prefill"] + s["steps"]
    x = make_tensor(DECODER_SEED, len(DECODER_TENSORS), (total, s["dim"]), "x", None)
    with torch.no_grad():
        layer = DecoderLayer(s, weights)
        outputs = [layer.forward(x[: s["prefill"]])]
        for t in range(s["prefill"], total):
            outputs.append(layer.forward(x[t : t + 1]))
        y = torch.cat(outputs)
        # The same layer in one causal pass: the cache bookkeeping above must not change the answer.
        whole = DecoderLayer(s, weights).forward(x)
        assert torch.allclose(y, whole, rtol=1e-12, atol=1e-12), (y - whole).abs().max()
    first = [mix(DECODER_SEED, 1, i) * 2.0**-scale_exponent(s["dim"]) for i in range(4)]
    return s, exponents, first, y


# ---- A tiny random llama model in the shape of llama2.c's stories260K, for the greedy decoder example
# (examples/layers/llama_decoder.cc): its weights are the generator's, computed at compile time into const data.
# Tensor numbers: 0 token embedding [vocab][dim] (u), then layer l's DECODER_TENSORS at 1 + 9 l + j, then the final
# RMSNorm weight and the classifier wcls [vocab][dim] (not shared with the embedding, so that a random model does
# not just echo its input token).
MODEL = dict(dim=64, heads=8, kv_heads=4, hidden=172, layers=5, vocab=512, context=512)
MODEL_SEED = 20251125
MODEL_PROMPT = [1, 113, 257, 411]
MODEL_GENERATE = 60  # tokens generated greedily after the prompt


def model_golden():
    s = dict(MODEL, hd=MODEL["dim"] // MODEL["heads"])
    embedding = make_tensor(MODEL_SEED, 0, (s["vocab"], s["dim"]), "x", None)
    layers, exponents = [], {}
    for l in range(s["layers"]):
        weights = {}
        for j, (name, shape_fn, kind, fan_fn) in enumerate(DECODER_TENSORS):
            fan_in = fan_fn(s) if fan_fn else None
            weights[name] = make_tensor(MODEL_SEED, 1 + 9 * l + j, shape_fn(s), kind, fan_in)
            if kind == "w":
                exponents[name] = scale_exponent(fan_in)
        layers.append(DecoderLayer(s, weights))
    final_norm = make_tensor(MODEL_SEED, 1 + 9 * s["layers"], (s["dim"],), "nw", None)
    exponents["wcls"] = scale_exponent(s["dim"])
    wcls = make_tensor(MODEL_SEED, 2 + 9 * s["layers"], (s["vocab"], s["dim"]), "w", s["dim"])
    tokens, gaps = list(MODEL_PROMPT), []

    def forward(chunk):
        x = embedding[chunk]
        for layer in layers:
            x = layer.forward(x)
        logits = torch.nn.functional.linear(rms_norm(x[-1:], final_norm), wcls)[0]
        top = torch.topk(logits, 2).values
        gaps.append(float((top[0] - top[1]) / logits.abs().max()))
        return int(torch.argmax(logits))

    with torch.no_grad():
        next_token = forward(torch.tensor(tokens))  # the prompt in one prefill
        for _ in range(MODEL_GENERATE - 1):
            tokens.append(next_token)
            next_token = forward(torch.tensor(tokens[-1:]))
        tokens.append(next_token)
    # float32 arithmetic moves a logit by about 1e-6 of the largest: every choice must be far clearer than that,
    # or a platform could pick another token.
    assert min(gaps) > 1e-4, min(gaps)
    return s, exponents, tokens, min(gaps)


# ---- Rendering.
def c_name(name):
    return re.sub(r"[^A-Za-z0-9]", "_", name)


def output_table(name, y):
    rows, cols = y.shape
    lines = ["static const double %s[%d][%d] = {" % (name, rows, cols)]
    for row in y.tolist():
        values = ["%.17g" % v for v in row]
        chunks = [", ".join(values[i : i + 4]) for i in range(0, len(values), 4)]
        lines.append("    {" + ",\n     ".join(chunks) + "},")
    lines.append("};")
    return lines


def guarded(small, lines):
    if small:
        return lines
    return ["#if !EDGEATTN_TEST_SMALL_MEMORY /* hosted platforms only: too big for the boards' 4 MB of RAM */"] + \
        lines + ["#endif"]


def render_encoder():
    lines = [
        SPDX_LINE,
        "// Generated by tools/gen_block_golden.py using PyTorch %s (float64); do not edit." % torch.__version__,
        "// Valid C99 and C++. nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0,",
        '// activation="gelu", batch_first=True, norm_first=True) on weights and inputs from the generator described',
        "// in the script (not stored here); outputs [seq][d_model] from PyTorch in float64.",
        "#ifndef EDGEATTN_TESTS_DATA_BLOCK_ENCODER_H_",
        "#define EDGEATTN_TESTS_DATA_BLOCK_ENCODER_H_",
        "",
        "#define BLOCK_ENCODER_SEED %du" % ENCODER_SEED,
        "/* Tensor numbers of the generator, in order. */",
    ]
    for t, (name, _, kind, _) in enumerate(ENCODER_TENSORS):
        lines.append("#define BLOCK_ENCODER_TENSOR_%s %d /* %s */" % (c_name(name).upper(), t, kind))
    lines.append("#define BLOCK_ENCODER_TENSOR_INPUT %d" % len(ENCODER_TENSORS))
    lines.append("")
    for s in ENCODER_SHAPES:
        exponents, first, y = encoder_golden(s)
        prefix = "block_encoder_%s" % s["name"]
        upper = prefix.upper()
        block = [
            "#define %s_D_MODEL %d" % (upper, s["d"]),
            "#define %s_HEADS %d" % (upper, s["heads"]),
            "#define %s_FFN %d" % (upper, s["ffn"]),
            "#define %s_SEQ %d" % (upper, s["seq"]),
            "/* Weights and biases are u * 2^-k: k by tensor (the power of two nearest 1/sqrt(fan_in)). */",
        ]
        for name, k in exponents.items():
            block.append("#define %s_K_%s %d" % (upper, c_name(name).upper(), k))
        block.append("/* The first four values of self_attn.in_proj_weight: a check of a port of the generator. */")
        block.append("static const float %s_first_weights[4] = {%s};" % (prefix, ", ".join("%.9gf" % v for v in first)))
        block += output_table("%s_output" % prefix, y)
        lines += guarded(s["small"], block)
        lines.append("")
    lines.append("#endif  /* EDGEATTN_TESTS_DATA_BLOCK_ENCODER_H_ */")
    return "\n".join(lines) + "\n"


def render_decoder():
    lines = [
        SPDX_LINE,
        "// Generated by tools/gen_block_golden.py using PyTorch %s (float64); do not edit." % torch.__version__,
        "// Valid C99 and C++. One llama-style decoder layer (llama2.c's layout; see the script): RMSNorm (eps is",
        "// 1e-5f), Q/K/V projections with grouped K/V heads, RoPE (interleaved pairs, base 10000), causal attention",
        "// over a K/V cache, output projection, residual, RMSNorm, SwiGLU MLP, residual. Weights and inputs from the",
        "// generator described in the script (not stored here). A prefill of PREFILL tokens at positions 0.., then",
        "// STEPS single-token decode steps; output [prefill + steps][dim]: every token's output, from PyTorch in float64.",
        "#ifndef EDGEATTN_TESTS_DATA_BLOCK_DECODER_H_",
        "#define EDGEATTN_TESTS_DATA_BLOCK_DECODER_H_",
        "",
        "#define BLOCK_DECODER_SEED %du" % DECODER_SEED,
        "#define BLOCK_DECODER_RMS_EPS 1e-5f",
        "#define BLOCK_DECODER_ROPE_BASE 10000.0f",
        "/* Tensor numbers of the generator, in order. */",
    ]
    for t, (name, _, kind, _) in enumerate(DECODER_TENSORS):
        lines.append("#define BLOCK_DECODER_TENSOR_%s %d /* %s */" % (c_name(name).upper(), t, kind))
    lines.append("#define BLOCK_DECODER_TENSOR_INPUT %d" % len(DECODER_TENSORS))
    lines.append("")
    for shape in DECODER_SHAPES:
        s, exponents, first, y = decoder_golden(shape)
        prefix = "block_decoder_%s" % s["name"]
        upper = prefix.upper()
        block = ["#define %s_%s %d" % (upper, key.upper(), s[key])
                 for key in ("dim", "heads", "kv_heads", "hd", "hidden", "prefill", "steps")]
        block.append("/* Weights are u * 2^-k: k by tensor (the power of two nearest 1/sqrt(fan_in)). */")
        for name, k in exponents.items():
            block.append("#define %s_K_%s %d" % (upper, c_name(name).upper(), k))
        block.append("/* The first four values of wq: a check of a port of the generator. */")
        block.append("static const float %s_first_weights[4] = {%s};" % (prefix, ", ".join("%.9gf" % v for v in first)))
        block += output_table("%s_output" % prefix, y)
        lines += guarded(s["small"], block)
        lines.append("")
    lines.append("#endif  /* EDGEATTN_TESTS_DATA_BLOCK_DECODER_H_ */")
    return "\n".join(lines) + "\n"


def render_model():
    s, exponents, tokens, gap = model_golden()
    lines = [
        SPDX_LINE,
        "// Generated by tools/gen_block_golden.py using PyTorch %s (float64); do not edit." % torch.__version__,
        "// Valid C99 and C++. A tiny random llama model in the shape of llama2.c's stories260K (see the script for",
        "// its generator and tensor numbers); the tokens PyTorch chooses greedily (argmax) after the prompt, in float64.",
        "// The smallest gap between the best and second-best logit over all steps is %.3g of the largest logit," % gap,
        "// far above float32 rounding, so every platform must choose the same tokens.",
        "#ifndef EDGEATTN_EXAMPLES_LAYERS_LLAMA_DECODER_EXPECTED_H_",
        "#define EDGEATTN_EXAMPLES_LAYERS_LLAMA_DECODER_EXPECTED_H_",
        "",
        "#define LLAMA_SEED %du" % MODEL_SEED,
    ]
    for key in ("dim", "heads", "kv_heads", "hd", "hidden", "layers", "vocab", "context"):
        lines.append("#define LLAMA_%s %d" % (key.upper(), s[key]))
    lines.append("/* Weights are u * 2^-k: k by tensor (the power of two nearest 1/sqrt(fan_in)). */")
    for name, k in exponents.items():
        lines.append("#define LLAMA_K_%s %d" % (name.upper(), k))
    lines.append("#define LLAMA_PROMPT_LENGTH %d" % len(MODEL_PROMPT))
    lines.append("#define LLAMA_GENERATE %d" % MODEL_GENERATE)
    lines.append("static const int llama_prompt[%d] = {%s};" % (len(MODEL_PROMPT), ", ".join(map(str, MODEL_PROMPT))))
    lines.append("/* The prompt, then the generated tokens. */")
    lines.append("static const int llama_expected_tokens[%d] = {" % len(tokens))
    for i in range(0, len(tokens), 16):
        lines.append("    " + ", ".join(str(t) for t in tokens[i : i + 16]) + ",")
    lines.append("};")
    lines.append("")
    lines.append("#endif  /* EDGEATTN_EXAMPLES_LAYERS_LLAMA_DECODER_EXPECTED_H_ */")
    return "\n".join(lines) + "\n"


ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA_DIR = os.path.join(ROOT, "tests", "data")
# (path in the repository, renderer); --out-dir and --check DIR put each file in DIR under its base name.
FILES = [
    ("tests/data/block_encoder.h", render_encoder),
    ("tests/data/block_decoder.h", render_decoder),
    ("examples/layers/llama_decoder_expected.h", render_model),
]


def numbers(text):
    return [float(v) for v in re.findall(r"[-+]?\d+\.\d*(?:e[-+]?\d+)?|[-+]?\d+e[-+]?\d+", text)]


# PyTorch's float64 results move by up to about 6e-12 relative with the BLAS behind Debian's libblas.so.3: the
# reference BLAS, or OpenBLAS once libopenblas-dev is installed (scripts/bench.sh installs it for the peers). The
# tests compare float32 results with these values at 1e-5, so 1e-10 still catches any change of the model.
NUMBER_TOLERANCE = 1e-10


def compare(name, got, want):
    """0 if the regenerated text matches the committed one (bytes, or numbers within NUMBER_TOLERANCE relative)."""
    if got == want:
        print("%s: byte for byte the committed file" % name)
        return 0
    strip = lambda s: [l for l in s.splitlines() if not l.startswith("// Generated by")]
    words = lambda lines: re.sub(r"[-+]?\d+\.\d*(?:e[-+]?\d+)?|[-+]?\d+e[-+]?\d+", "#", "\n".join(lines))
    if words(strip(got)) != words(strip(want)):
        print("%s: FAIL: the regenerated file differs from the committed one in more than numbers" % name)
        return 1
    a, b = numbers("\n".join(strip(got))), numbers("\n".join(strip(want)))
    worst = max((abs(x - y) / max(abs(y), 1e-300) for x, y in zip(a, b)), default=0.0)
    verdict = "ok" if worst <= NUMBER_TOLERANCE else "FAIL"
    print("%s: %s: not byte-identical (PyTorch version line or float64 rounding); %d numbers, worst relative "
          "difference %.3g (limit %g)" % (name, verdict, len(a), worst, NUMBER_TOLERANCE))
    return 0 if worst <= NUMBER_TOLERANCE else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", help="write the headers into this directory instead of the repository")
    parser.add_argument("--check", metavar="DIR", help="write the headers into DIR and compare with the repository's")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out_dir = args.check or args.out_dir
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    status = 0
    for path, render in FILES:
        text = render()
        out = os.path.join(out_dir, os.path.basename(path)) if out_dir else os.path.join(ROOT, path)
        with open(out, "w") as f:
            f.write(text)
        print("wrote %s" % out)
        if args.check:
            with open(os.path.join(ROOT, path)) as f:
                status |= compare(path, text, f.read())
    return status


if __name__ == "__main__":
    sys.exit(main())
