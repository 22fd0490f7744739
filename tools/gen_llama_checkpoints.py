#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Random-weight llama2.c checkpoints, a tokenizer, and PyTorch's logits for them (examples/llama's tests).

    /usr/bin/python3 tools/gen_llama_checkpoints.py --out-dir DIR   # files below into DIR (references need torch)
    /usr/bin/python3 tools/gen_llama_checkpoints.py                 # rewrites tests/data/llama_reference.txt
    /usr/bin/python3 tools/gen_llama_checkpoints.py --check DIR     # --out-dir DIR, then compares the summary
                                                                    # with the committed one (77 without torch)
    python3 tools/gen_llama_checkpoints.py --fuzz-seeds tests/fuzz/corpus/llama   # llama_fuzzer.cc's seeds

Checkpoints, tokenizers and tokenizer cases need only Python's standard library: the weights come from
random.Random(seed).random() (a sequence Python promises to keep across versions), rounded to 16 significant
bits so that every value is exact in float32, and the files are byte for byte the same on every machine. The
logits need Debian's python3-torch (PyTorch 1.13): without it --out-dir writes everything else and says so, and
the tests then check against the committed summary tests/data/llama_reference.txt (below) instead of the full
logits.

Shapes (llama2.c's config: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len):
  s260k  64, 172, 5, 8, 4, 512, 512 (TinyStories 260K's shape), classifier shared with the embedding;
  small  48, 128, 2, 6, 2, 320, 128 (three query heads per K/V head), classifier of its own.
Files written into DIR:
  <shape>_f32.bin        version 0 (run.c): 7 int32, the float32 tensors, the two legacy RoPE tables, wcls
                         after them when it is not shared (then vocab_size is written negative)
  <shape>_q8.bin         version 2 (runq.c, "ak42"): 256-byte header, float32 norms, then each quantized tensor as
                         int8 values and float32 scales per group of inputs (s260k: groups of 4, the largest that
                         divides both 64 and 172; small: 16); quantized as llama2.c's export.py does: scale =
                         max|w| / 127 and q = round-half-even(w / scale), float32 divisions
  s260k_q8_g64.bin       the same model with groups of 64, which llama2.c's exporter writes (it only checks that
                         the group size divides dim) although 64 does not divide hidden_dim 172: must be rejected
  tok512.bin, tok320.bin llama2.c's tokenizer.bin format (max_token_length, then per token score, length, bytes):
                         <unk>, "\\n<s>\\n", "\\n</s>\\n", the 256 byte tokens <0x00>..<0xFF>, the characters of a
                         small corpus, then byte-pair merges learned on it (score -rank)
  tokenizer_cases.txt    prompts (hex) and their tokens under run.c's encode rules (dummy space prefix, BOS,
                         UTF-8 characters looked up whole, byte fallback, best-scoring merge first; BOS never
                         merged), computed by the plain list-based encoder below
  bad_*.bin              s260k files broken in one way each: the f32 file without its last 100 bytes, the Q8
                         file with version 3, the Q8 file with a NaN scale (layer 3's w2, scale 100)
  <name>.ref.txt         (torch) the logits at every position of a 64-token greedy run: position 0 is BOS, the
                         token at p + 1 is the argmax of the logits at p. <shape>_f32: PyTorch's float64 forward of
                         the file's weights. <shape>_q8.act_f32: the same with the dequantized weights q * scale
                         taken exactly; <shape>_q8.act_q8: issue 30's ACT_Q8 formula in float64 (each linear
                         layer's input quantized per group, scale max|x| / 127, round half even; exact integer
                         group dots times the weight's and the input's scales, summed). The Q8 embedding rows are
                         float32(q * scale), what a loader that dequantizes the table computes.
  llama_reference.txt    (torch) the summary committed as tests/data/llama_reference.txt: per reference the input
                         tokens and, per position, the best token, its logit and its margin over the second best.

The model is llama2.c's forward(): RMSNorm (eps float32(1e-5)), Q/K/V projections, RoPE on interleaved pairs
(angle p * 10000^(-2i/head_dim), in float64), causal attention with scale 1/sqrt(head_dim), query head h reading
K/V head h / (n_heads / n_kv_heads), output projection, residual; RMSNorm, w2(silu(w1 x) * w3 x), residual; final
RMSNorm, classifier. Computed as one causal pass over the run's tokens (the logits at p depend only on tokens 0..p).
"""

import argparse
import array
import math
import os
import random
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = os.path.join(ROOT, "tests", "data", "llama_reference.txt")
POSITIONS = 64
RMS_EPS = struct.unpack("f", struct.pack("f", 1e-5))[0]  # the float32 eps the C++ code passes, exactly
ROPE_BASE = 10000.0

SHAPES = [
    dict(name="s260k", dim=64, hidden=172, layers=5, heads=8, kv_heads=4, vocab=512, seq_len=512, shared=True,
         group=4, seed=31260),
    dict(name="small", dim=48, hidden=128, layers=2, heads=6, kv_heads=2, vocab=320, seq_len=128, shared=False,
         group=16, seed=31048),
]

# The tokenizer's training text (written for this script).
CORPUS = """
Once upon a time there was a little fox who lived near a quiet river. Every morning the fox walked to the water
and looked at the fish. One day a small bird sat on a branch and sang a happy song. The fox said hello to the bird
and the bird said hello back. They became friends and played together in the warm sun. The little fox was very
happy because he was not alone anymore. When the rain came they sat under a big tree and told stories about the
moon, the stars and the sea. The bird wanted to fly over the mountains, and the fox wanted to see the city. So
they went on a long trip together. They saw a red house, a blue boat and a green garden with many flowers. At the
end of the day they were tired but they smiled. Mom said that friends help each other, and that is what they did.
In the café the girl drank milk and ate a cake. She was kind to everyone she met, and everyone was kind to her.
"""


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


# ---- Weights.
def scale_exponent(fan_in):
    """k with 2^-k nearest (in log scale) to 1/sqrt(fan_in)."""
    return int(round(0.5 * math.log2(fan_in)))


class Generator:
    """Uniform values in [-1, 1) with 16 significant bits (exact in float32), from random.Random(seed)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def uniform(self, n):
        return [math.floor((self.rng.random() * 2.0 - 1.0) * 32768.0) / 32768.0 for _ in range(n)]

    def matrix(self, rows, cols):  # u * 2^-k, 2^-k near 1/sqrt(cols), the fan-in
        k = 2.0 ** -scale_exponent(cols)
        return [v * k for v in self.uniform(rows * cols)]

    def norm(self, n):  # 1 + u/4
        return [1.0 + v / 4.0 for v in self.uniform(n)]


# Multipliers of u * 2^-k per tensor, and the embedding u/8. Plain random weights make a model whose greedy run
# repeats one token (the current token and an attention that averages the history decide the next); a small
# embedding and sharper attention (larger Q and K, so the scores spread) make the 64-token runs use 30-50 tokens,
# so that the keys, values and attention weights differ from position to position.
GAINS = {"wq": 4.0, "wk": 4.0, "wv": 2.0}


def make_weights(s):
    """The model's tensors, llama2.c's names, matrices [out][in] flattened row-major, per layer in lists."""
    g = Generator(s["seed"])
    hd = s["dim"] // s["heads"]
    dim, hidden, layers, kv = s["dim"], s["hidden"], s["layers"], s["kv_heads"] * hd
    w = {"embedding": [v / 8.0 for v in g.uniform(s["vocab"] * dim)]}
    for name, rows, cols in [("rms_att", 1, dim), ("wq", dim, dim), ("wk", kv, dim), ("wv", kv, dim),
                             ("wo", dim, dim), ("rms_ffn", 1, dim), ("w1", hidden, dim), ("w2", dim, hidden),
                             ("w3", hidden, dim)]:
        gain = GAINS.get(name, 1.0)
        w[name] = [g.norm(cols) if rows == 1 else [v * gain for v in g.matrix(rows, cols)] for _ in range(layers)]
    w["rms_final"] = g.norm(dim)
    w["wcls"] = w["embedding"] if s["shared"] else g.matrix(s["vocab"], dim)
    return w


MATRICES = ["wq", "wk", "wv", "wo", "w1", "w2", "w3"]


def quantize(values, group):
    """export.py's quantize_q80 on a flattened tensor: per group of `group` consecutive values, float32 scale
    max|w| / 127 and q = round-half-even(w / scale) (float32 division), clamped to [-127, 127]."""
    q, scales = [], []
    for start in range(0, len(values), group):
        chunk = values[start:start + group]
        scale = f32(max(abs(v) for v in chunk) / 127.0)
        scales.append(scale)
        q.extend(0 if scale == 0 else max(-127, min(127, round(f32(v / scale)))) for v in chunk)
    return q, scales


# ---- Files.
def floats(values):
    return array.array("f", values).tobytes()


def rope_tables(s):
    hd = s["dim"] // s["heads"]
    cos, sin = [], []
    for p in range(s["seq_len"]):
        for i in range(0, hd, 2):
            angle = p * ROPE_BASE ** (-i / hd)
            cos.append(math.cos(angle))
            sin.append(math.sin(angle))
    return floats(cos) + floats(sin)


def write_v0(s, w, path):
    vocab = s["vocab"] if s["shared"] else -s["vocab"]
    parts = [struct.pack("<7i", s["dim"], s["hidden"], s["layers"], s["heads"], s["kv_heads"], vocab, s["seq_len"]),
             floats(w["embedding"])]
    for name in ["rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2", "w3"]:
        parts.extend(floats(t) for t in w[name])
    parts += [floats(w["rms_final"]), rope_tables(s)]
    if not s["shared"]:
        parts.append(floats(w["wcls"]))
    with open(path, "wb") as f:
        f.write(b"".join(parts))


def write_v2(s, w, group, path):
    """Returns the quantized tensors {name: (q, scales)} (per layer lists for the matrices)."""
    header = struct.pack("<Ii7iBi", 0x616B3432, 2, s["dim"], s["hidden"], s["layers"], s["heads"], s["kv_heads"],
                         s["vocab"], s["seq_len"], 1 if s["shared"] else 0, group)
    parts = [header + b"\0" * (256 - len(header))]
    parts.extend(floats(t) for t in w["rms_att"])
    parts.extend(floats(t) for t in w["rms_ffn"])
    parts.append(floats(w["rms_final"]))
    quantized = {"embedding": quantize(w["embedding"], group)}
    tensors = [quantized["embedding"]]
    for name in MATRICES:
        quantized[name] = [quantize(t, group) for t in w[name]]
        tensors.extend(quantized[name])
    quantized["wcls"] = quantized["embedding"] if s["shared"] else quantize(w["wcls"], group)
    if not s["shared"]:
        tensors.append(quantized["wcls"])
    quantized["scale_offsets"] = []  # of each quantized tensor in file order
    for q, scales in tensors:
        quantized["scale_offsets"].append(sum(len(p) for p in parts) + len(q))
        parts += [array.array("b", q).tobytes(), floats(scales)]
    with open(path, "wb") as f:
        f.write(b"".join(parts))
    return quantized


def write_bad_files(out_dir, q8_scale_offsets, layers):
    """Broken copies of the s260k files, for the program's one-line errors (the unit tests break more in memory)."""
    with open(os.path.join(out_dir, "s260k_f32.bin"), "rb") as f:
        f32_file = f.read()
    with open(os.path.join(out_dir, "s260k_q8.bin"), "rb") as f:
        q8_file = bytearray(f.read())
    with open(os.path.join(out_dir, "bad_truncated.bin"), "wb") as f:
        f.write(f32_file[:-100])
    version = bytearray(q8_file)
    version[4:8] = struct.pack("<i", 3)
    with open(os.path.join(out_dir, "bad_version.bin"), "wb") as f:
        f.write(bytes(version))
    # Scale 100 of layer 3's w2: the tensors after the embedding are wq, wk, wv, wo, w1, w2, w3, each per layer.
    at = q8_scale_offsets[1 + 5 * layers + 3] + 4 * 100
    q8_file[at:at + 4] = struct.pack("<f", float("nan"))
    with open(os.path.join(out_dir, "bad_nan_scale.bin"), "wb") as f:
        f.write(bytes(q8_file))


# ---- Tokenizer.
def utf8_chunks(data):
    """run.c's split of the prompt: a byte and the continuation bytes after it, at most 4 bytes per chunk."""
    chunks, i = [], 0
    while i < len(data):
        j = i + 1
        while j < len(data) and (data[j] & 0xC0) == 0x80 and j - i < 4:
            j += 1
        chunks.append(data[i:j])
        i = j
    return chunks


def train_tokenizer(vocab_size):
    """(pieces, scores): specials, byte tokens, the corpus's characters, then the most frequent pair merged
    repeatedly (ties: the pair that sorts first) until the vocabulary is full."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    scores = [0.0] * len(pieces)
    words = {}
    for word in CORPUS.split():
        key = tuple(utf8_chunks((" " + word).encode()))
        words[key] = words.get(key, 0) + 1
    chars = sorted({c for word in words for c in word})
    pieces += chars
    scores += [-1e6 - i for i in range(len(chars))]
    rank = 0
    while len(pieces) < vocab_size:
        pairs = {}
        for word, count in words.items():
            for a, b in zip(word, word[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + count
        if not pairs:
            raise SystemExit("the corpus has too few merges for %d tokens" % vocab_size)
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merged = best[0] + best[1]
        new_words = {}
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + count
        words = new_words
        if merged not in pieces:
            pieces.append(merged)
            scores.append(-float(rank))
            rank += 1
    return pieces, scores


def write_tokenizer(pieces, scores, path):
    parts = [struct.pack("<i", max(len(p) for p in pieces))]
    for piece, score in zip(pieces, scores):
        parts.append(struct.pack("<fi", score, len(piece)) + piece)
    with open(path, "wb") as f:
        f.write(b"".join(parts))


def encode(pieces, scores, text):
    """run.c's encode(text, bos=1, eos=0), written as plainly as possible (lists, linear scans)."""
    ids = {}
    for i, p in enumerate(pieces):
        ids.setdefault(p, i)
    tokens = [1]
    if text:
        tokens.append(ids[b" "])
    for chunk in utf8_chunks(text):
        tokens.extend([ids[chunk]] if chunk in ids else [b + 3 for b in chunk])
    while True:  # pairs after BOS (a control token; run.c would let it merge)
        best, where = -1e10, -1
        for i in range(1, len(tokens) - 1):
            merged = pieces[tokens[i]] + pieces[tokens[i + 1]]
            if merged in ids and scores[ids[merged]] > best:
                best, where = scores[ids[merged]], i
        if where < 0:
            return tokens
        tokens[where:where + 2] = [ids[pieces[tokens[where]] + pieces[tokens[where + 1]]]]


PROMPTS = [b"", b"Once upon a time", b"the little fox", b"Hello, world!\n", b" two  spaces", b"caf\xc3\xa9",
           b"na\xc3\xafve \xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80", b"\x80\xbf stray continuation bytes",
           b"The bird wanted to fly over the mountains."]


def write_tokenizer_cases(pieces, scores, path):
    with open(path, "w") as f:
        f.write("# Generated by tools/gen_llama_checkpoints.py: prompt (hex, '-' when empty) then run.c's tokens\n")
        for prompt in PROMPTS:
            f.write("%s %s\n" % (prompt.hex() or "-", " ".join(str(t) for t in encode(pieces, scores, prompt))))


# ---- References (PyTorch, float64).
def reference_logits(torch, s, tensors, embedding, linear):
    """Logits [POSITIONS][vocab] of the greedy run, and its tokens. tensors: per layer matrices as given to
    `linear` (a function of x [T][in] and one tensor entry), embedding [vocab][dim] float64."""
    hd = s["dim"] // s["heads"]
    t64 = lambda v: torch.tensor(v, dtype=torch.float64)
    rms = lambda x, weight: x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + RMS_EPS) * t64(weight)

    def rope(x):  # x [T][heads][hd]
        inv_freq = ROPE_BASE ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
        angle = torch.arange(x.shape[0], dtype=torch.float64)[:, None] * inv_freq[None, :]
        cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
        a, b = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        return out

    def forward(tokens):
        n = len(tokens)
        x = embedding[tokens]
        group = s["heads"] // s["kv_heads"]
        for l in range(s["layers"]):
            h = rms(x, tensors["rms_att"][l])
            q = rope(linear(h, tensors["wq"][l]).reshape(n, s["heads"], hd))
            k = rope(linear(h, tensors["wk"][l]).reshape(n, s["kv_heads"], hd)).repeat_interleave(group, dim=1)
            v = linear(h, tensors["wv"][l]).reshape(n, s["kv_heads"], hd).repeat_interleave(group, dim=1)
            scores = torch.einsum("thd,phd->htp", q, k) / math.sqrt(hd)
            scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
            attended = torch.einsum("htp,phd->thd", torch.softmax(scores, dim=-1), v).reshape(n, s["dim"])
            x = x + linear(attended, tensors["wo"][l])
            h = rms(x, tensors["rms_ffn"][l])
            gate, up = linear(h, tensors["w1"][l]), linear(h, tensors["w3"][l])
            x = x + linear(torch.nn.functional.silu(gate) * up, tensors["w2"][l])
        return linear(rms(x, tensors["rms_final"]), tensors["wcls"])

    tokens = [1]
    while len(tokens) < POSITIONS:
        tokens.append(int(torch.argmax(forward(tokens)[-1])))
    logits = forward(tokens)
    for p in range(POSITIONS - 1):  # the one causal pass chose the same tokens as the step-by-step runs
        assert int(torch.argmax(logits[p])) == tokens[p + 1]
    return tokens, logits


def references(torch, s, w, quantized):
    """{name: (tokens, logits)} for the f32 file and the Q8 file's two activation modes."""
    t64 = lambda v: torch.tensor(v, dtype=torch.float64)
    hd = s["dim"] // s["heads"]
    rows = {"wq": s["dim"], "wk": s["kv_heads"] * hd, "wv": s["kv_heads"] * hd, "wo": s["dim"], "w1": s["hidden"],
            "w2": s["dim"], "w3": s["hidden"], "wcls": s["vocab"]}
    cols = {"wq": s["dim"], "wk": s["dim"], "wv": s["dim"], "wo": s["dim"], "w1": s["dim"], "w2": s["hidden"],
            "w3": s["dim"], "wcls": s["dim"]}
    group = s["group"]

    def f32_tensors():
        t = {name: [t64(m).reshape(rows[name], cols[name]) for m in w[name]] for name in MATRICES}
        t.update(rms_att=w["rms_att"], rms_ffn=w["rms_ffn"], rms_final=w["rms_final"],
                 wcls=t64(w["wcls"]).reshape(s["vocab"], s["dim"]))
        return t

    def q8_tensors():  # (q [out][in] as float64, scale [out][in / group])
        pair = lambda name, qs: (t64(qs[0]).reshape(rows[name], cols[name]),
                                 t64(qs[1]).reshape(rows[name], cols[name] // group))
        t = {name: [pair(name, qs) for qs in quantized[name]] for name in MATRICES}
        t.update(rms_att=w["rms_att"], rms_ffn=w["rms_ffn"], rms_final=w["rms_final"],
                 wcls=pair("wcls", quantized["wcls"]))
        return t

    def linear_f32(x, weight):
        return x @ weight.T

    def linear_q8_act_f32(x, qs):
        q, scale = qs
        return x @ (q * scale.repeat_interleave(group, dim=1)).T

    def linear_q8_act_q8(x, qs):
        q, scale = qs
        xg = x.reshape(x.shape[0], -1, group)
        sx = xg.abs().amax(dim=-1) / 127.0                                  # [rows][groups]
        qx = torch.where(sx[..., None] == 0, torch.zeros_like(xg), torch.round(xg / sx[..., None]).clamp(-127, 127))
        dots = torch.einsum("rgi,ogi->rog", qx, q.reshape(q.shape[0], -1, group))  # exact integers in float64
        return (dots * scale[None, :, :] * sx[:, None, :]).sum(dim=-1)

    emb_q, emb_s = quantized["embedding"]
    q8_embedding = t64([f32(v * emb_s[i // group]) for i, v in enumerate(emb_q)]).reshape(s["vocab"], s["dim"])
    f32_embedding = t64(w["embedding"]).reshape(s["vocab"], s["dim"])
    return {
        s["name"] + "_f32": reference_logits(torch, s, f32_tensors(), f32_embedding, linear_f32),
        s["name"] + "_q8.act_f32": reference_logits(torch, s, q8_tensors(), q8_embedding, linear_q8_act_f32),
        s["name"] + "_q8.act_q8": reference_logits(torch, s, q8_tensors(), q8_embedding, linear_q8_act_q8),
    }


def write_reference(name, tokens, logits, path):
    with open(path, "w") as f:
        f.write("# Generated by tools/gen_llama_checkpoints.py: PyTorch float64 logits of a greedy run\n")
        f.write("reference %s positions %d vocab %d\n" % (name, len(tokens), logits.shape[1]))
        f.write("tokens %s\n" % " ".join(str(t) for t in tokens))
        for p, row in enumerate(logits.tolist()):
            f.write("logits %d %s\n" % (p, " ".join(repr(v) for v in row)))


def summary_lines(name, tokens, logits):
    lines = ["reference %s positions %d vocab %d" % (name, len(tokens), logits.shape[1]),
             "tokens %s" % " ".join(str(t) for t in tokens)]
    for p, row in enumerate(logits.tolist()):
        order = sorted(range(len(row)), key=lambda i: -row[i])
        lines.append("top %d %d %r %r" % (p, order[0], row[order[0]], row[order[0]] - row[order[1]]))
    return lines


def summary_header(torch):
    return ["# Generated by tools/gen_llama_checkpoints.py with PyTorch %s (float64): per reference, the tokens of"
            % torch.__version__,
            "# its 64-position greedy run and, per position, the best token, its logit and its margin over the",
            "# second best. The tests read it when the full logits (DIR/<name>.ref.txt) were not generated."]


def compare_summary(got, want):
    """0 if equal, or equal but for numbers within 1e-12 relative (another machine's float64 rounding; a margin
    relative to its logit)."""
    body = lambda text: [l for l in text.splitlines() if not l.startswith("#")]
    a, b = body(got), body(want)
    if a == b:
        print("llama_reference.txt: the committed summary, line for line")
        return 0
    worst = 0.0
    for x, y in zip(a, b):
        xs, ys = x.split(), y.split()
        if len(a) != len(b) or len(xs) != len(ys) or xs[:3] != ys[:3]:
            print("llama_reference.txt: FAIL: differs from the committed one in more than numbers:\n  %s\n  %s"
                  % (x, y))
            return 1
        for u, v in zip(xs[3:], ys[3:]):
            try:
                fu, fv = float(u), float(v)
            except ValueError:  # a word ("vocab" in a reference's first line): equal or a failure
                if u != v:
                    print("llama_reference.txt: FAIL: differs from the committed one:\n  %s\n  %s" % (x, y))
                    return 1
                continue
            # A margin is a difference of two logits: its rounding is relative to the logit, not to itself.
            scale = abs(float(ys[3])) if ys[0] == "top" else 0.0
            worst = max(worst, abs(fu - fv) / max(abs(fv), scale, 1e-300))
    verdict = "ok" if worst <= 1e-12 else "FAIL"
    print("llama_reference.txt: %s: numbers differ by at most %.3g relative (limit 1e-12)" % (verdict, worst))
    return 0 if worst <= 1e-12 else 1


def write_fuzz_seeds(out_dir):
    """Seeds for tests/fuzz/llama_fuzzer.cc in its framing: tiny valid checkpoints of both versions (byte 0 even)
    and a tokenizer (byte 0 odd; prompt, file, prompt length, vocabulary size - 1 low and high)."""
    os.makedirs(out_dir, exist_ok=True)
    tiny = dict(name="tiny", dim=8, hidden=12, layers=1, heads=2, kv_heads=1, vocab=16, seq_len=8, shared=True,
                group=4, seed=7)
    for name, s, writer in [("v0_shared", dict(tiny), write_v0), ("v0_own", dict(tiny, shared=False), write_v0),
                            ("v2_shared", dict(tiny), None), ("v2_own", dict(tiny, shared=False), None)]:
        path = os.path.join(out_dir, name + ".tmp")
        if writer:
            writer(s, make_weights(s), path)
        else:
            write_v2(s, make_weights(s), s["group"], path)
        with open(path, "rb") as f:
            body = f.read()
        os.remove(path)
        with open(os.path.join(out_dir, "seed_" + name), "wb") as f:
            f.write(b"\x00" + body)
    pieces, scores = train_tokenizer(300)
    path = os.path.join(out_dir, "tokenizer.tmp")
    write_tokenizer(pieces, scores, path)
    with open(path, "rb") as f:
        body = f.read()
    os.remove(path)
    prompt = "caf\xc3\xa9 fox".encode("latin-1")
    with open(os.path.join(out_dir, "seed_tokenizer"), "wb") as f:
        f.write(b"\x01" + prompt + body + bytes([len(prompt), 299 & 0xFF, 299 >> 8]))
    print("wrote %s" % out_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", help="write the files into this directory")
    parser.add_argument("--check", metavar="DIR", help="--out-dir DIR, then compare the summary with the committed")
    parser.add_argument("--fuzz-seeds", metavar="DIR", help="write the llama fuzzer's seed inputs into DIR, only")
    parser.add_argument("--no-logits", action="store_true",
                        help="with --out-dir: the checkpoints and tokenizers only (a build step; no torch needed)")
    args = parser.parse_args()
    if args.fuzz_seeds:
        write_fuzz_seeds(args.fuzz_seeds)
        return 0
    assert sys.byteorder == "little", "llama2.c files are little-endian"
    out_dir = args.check or args.out_dir
    torch = None
    if not (args.no_logits and args.out_dir and not args.check):
        try:
            import torch
            torch.set_num_threads(1)
        except ImportError as error:
            print("gen_llama_checkpoints: %s cannot import torch (%s): no logits written (Debian: python3-torch)"
                  % (sys.executable, error))
            if not out_dir or args.check:
                return 77
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    summary = summary_header(torch) if torch else []
    for s in SHAPES:
        pieces, scores = train_tokenizer(s["vocab"])
        w = make_weights(s)
        if out_dir:
            write_tokenizer(pieces, scores, os.path.join(out_dir, "tok%d.bin" % s["vocab"]))
            write_tokenizer_cases(pieces, scores, os.path.join(out_dir, "tok%d_cases.txt" % s["vocab"]))
            write_v0(s, w, os.path.join(out_dir, s["name"] + "_f32.bin"))
            if s["name"] == "s260k":
                write_v2(s, w, 64, os.path.join(out_dir, "s260k_q8_g64.bin"))
        quantized = write_v2(s, w, s["group"], os.path.join(out_dir, s["name"] + "_q8.bin") if out_dir else os.devnull)
        if out_dir and s["name"] == "s260k":
            write_bad_files(out_dir, quantized["scale_offsets"], s["layers"])
        if torch:
            for name, (tokens, logits) in references(torch, s, w, quantized).items():
                if out_dir:
                    write_reference(name, tokens, logits, os.path.join(out_dir, name + ".ref.txt"))
                summary += summary_lines(name, tokens, logits)
    text = "\n".join(summary) + "\n"
    if torch and out_dir:
        with open(os.path.join(out_dir, "llama_reference.txt"), "w") as f:
            f.write(text)
    if out_dir:
        print("wrote %s" % out_dir)
    if not out_dir:
        with open(SUMMARY, "w") as f:
            f.write(text)
        print("wrote %s" % SUMMARY)
    if args.check:
        with open(SUMMARY) as f:
            return compare_summary(text, f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
