#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the constants of lib/activation/activation_scalar.h (run with Debian's /usr/bin/python3: numpy, mpmath).

GELU, erf form: for y = |x| >= 0, Phi(-y) = exp(-y^2/2) * Q(y), where Q(y) = Phi(-y) e^(y^2/2) is Mills' ratio over
sqrt(2 pi): smooth, positive, 0.5 at 0 and ~ 1/(y sqrt(2 pi)) for large y. The library evaluates
Q(y) = 1 / (kSqrt2Pi * y + H(y)) with kSqrt2Pi = float(sqrt(2 pi)) and H(y) = 1/Q(y) - kSqrt2Pi * y (2 at y = 0,
~ sqrt(2 pi)/y for large y) approximated on [0, 15] by a rational function P4(y) / R5(y), R5(0) = 1: float
rounding errors in H are damped by H / (kSqrt2Pi y + H), which a direct rational fit of Q (tried first: 5.8 ULP of
evaluation error at y ~ 8 against 2.4 here) does not have. The fit minimises the maximum relative error of Q
itself, |H~ - H| / (kSqrt2Pi y + H): linearised least squares (Loeb's iteration, weighting by the previous
denominator) with Lawson's reweighting towards minimax, 6001 points, reference values from mpmath at 30 digits.
The coefficients are then rounded to float one at a time (highest index first), refitting the others after each
rounding, so that the float coefficients themselves are optimal; the script prints the max relative error of Q
with the float coefficients (evaluated exactly) in units of 2^-24.

GELU, tanh form: 1 + tanh(u) = 2 / (1 + e^(-2u)), so gelu_tanh(x) = x * sigmoid(z) with
z = 2 sqrt(2/pi) (x + 0.044715 x^3) = kC1 x + kC3 x^3. kC1 and kC3 are printed as float hi + lo pairs.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30
Y_MAX = 15.0
ys = np.linspace(0.0, Y_MAX, 6001)
K_SQRT2PI = float(np.float32(float(mp.sqrt(2 * mp.pi))))
q_exact = [0.5 * mp.erfc(mp.mpf(y) / mp.sqrt(2)) * mp.exp(mp.mpf(y) ** 2 / 2) for y in ys]
h = np.array([float(1 / q - mp.mpf(K_SQRT2PI) * mp.mpf(y)) for q, y in zip(q_exact, ys)])
inv_q = K_SQRT2PI * ys + h
M, K = 4, 5  # numerator and denominator degrees of H


def fit(fixed, iters=40):
    """Unknowns [p0..pM, r1..rK]; `fixed` maps indices to values held constant."""
    nvar = M + 1 + K
    a = np.zeros((len(ys), nvar))
    for j in range(M + 1):
        a[:, j] = ys ** j
    for j in range(1, K + 1):
        a[:, M + j] = -h * ys ** j
    w = np.ones_like(ys)
    r_prev = np.ones_like(ys)
    best = None
    for _ in range(iters):
        scale = np.sqrt(w) / (inv_q * r_prev)
        free = [i for i in range(nvar) if i not in fixed]
        b = h - sum((a[:, i] * v for i, v in fixed.items()), np.zeros_like(h))
        c, *_ = np.linalg.lstsq(a[:, free] * scale[:, None], b * scale, rcond=None)
        full = np.zeros(nvar)
        for i, v in fixed.items():
            full[i] = v
        full[free] = c
        p = full[: M + 1]
        r = np.concatenate([[1.0], full[M + 1:]])
        den = np.polyval(r[::-1], ys)
        err = np.abs((np.polyval(p[::-1], ys) / den - h) / inv_q)
        if best is None or err.max() < best[0]:
            best = (err.max(), full.copy())
        r_prev = den
        w = w * err
        w /= w.sum()
    return best


fixed = {}
err, full = fit(fixed)
print(f"// H: rational ({M},{K}) on [0, {Y_MAX}], double coefficients: max rel error of Q {err / 2**-24:.3f} * 2^-24")
for i in reversed(range(M + 1 + K)):
    fixed[i] = float(np.float32(full[i]))
    err, full = fit(fixed)
print(f"// float coefficients: max rel error of Q {err / 2**-24:.3f} * 2^-24")
print(f"  static constexpr float kSqrt2Pi = {K_SQRT2PI!r}f;")
for j in range(M + 1):
    print(f"  static constexpr float kP{j} = {float(np.float32(full[j]))!r}f;")
for j in range(1, K + 1):
    print(f"  static constexpr float kR{j} = {float(np.float32(full[M + j]))!r}f;")


def split(v):
    hi = float(np.float32(float(v)))
    lo = float(np.float32(float(v - mp.mpf(hi))))
    return hi, lo


c1 = 2 * mp.sqrt(2 / mp.pi)
c3 = c1 * mp.mpf("0.044715")
for name, v in (("kTanhC1", c1), ("kTanhC3", c3)):
    hi, lo = split(v)
    print(f"  static constexpr float {name}Hi = {hi!r}f;")
    print(f"  static constexpr float {name}Lo = {lo!r}f;")
