"""Our own vectorisable exp and tanh for the C dialect (float32), in plain C.

glibc's vector math library (libmvec) computes expf and tanhf at about half
the speed of XLA's approximations on AVX2; these are written so that gcc's
auto-vectoriser turns a loop calling them into straight SIMD code: no
branches, no tables, integer tricks on the bit patterns instead of ``ldexp``
(``-fno-trapping-math`` lets it if-convert the one select that touches
floating-point arithmetic). The scalar op table keeps writing ``exp(x)`` and
``tanh(x)``: the prelude maps those names to these functions for ``float``
operands and leaves every other type to ``<tgmath.h>``.

Results keep numpy's special values (NaN, +-inf, -0.0, overflow to inf,
underflow through the subnormals to 0). Errors, measured by
``benchmarks/ulp_sweep.py`` on every one of the 2**32 float32 inputs against
libm's float64 function (gcc 12, AMD EPYC; no input of the wrong kind: NaN,
infinity or signed zero), in float32 ulp:

==========  ===================================  ====================
function    with FMA (``-march=native``, AVX2)   without FMA
==========  ===================================  ====================
ak_expf     0.909 (at x = 5.1998)                1.170 (x = 5.2005)
ak_tanhf    2.566 (at x = 0.0620)                2.606 (x = 0.0624)
==========  ===================================  ====================

(tanh's largest errors sit near 0.06, where ``t / (t + 2)`` rounds three
times; everywhere the issue's bound of 4 ulp holds.) ``EXP_ULP`` and
``TANH_ULP`` are the larger of each pair, the bounds tests/backends/test_c_math.py
holds a dense sample to.

How they work:

- ``exp``: x clamped to [-104, 89] with integer min on its bits; x = n ln2 + r
  with |r| <= ln2/2 (n from the round-by-adding-1.5*2^23 trick, Cody-Waite
  split of ln2, exact with FMA); e^r by a degree-6 polynomial fitted for
  relative error; 2^n applied in two parts: 2^(n - n/2) added into the
  polynomial's exponent bits (exact: the value stays normal), then one multiply
  by 2^(n/2), so a subnormal result is rounded once and an overflowing one
  becomes inf. A NaN (which the clamps turned into 89 or -104) comes back as a
  quiet NaN OR-ed into that last factor's bits.
- ``tanh``: tanh|x| = t / (t + 2) with t = expm1(2|x|) = 2^n (e^r - 1) + (2^n - 1);
  e^r - 1 = r + r^2 P(r) keeps its relative accuracy near 0, so one formula
  serves every |x| (clamped to 10, where tanh is 1 in float32, by an integer min
  on its bits), with the sign and, for NaN, a quiet NaN's bits put back by OR
  (so -0.0 stays -0.0). With FMA, 2|x| - n ln2 is one fused step with ln2
  rounded to float: n <= 29, so ln2's rounding error (2e-9) times n stays far
  below an ulp of the result; without FMA, the Cody-Waite split.

Why these forms: measured A/B in one process on Zen 3 (AVX2), W3's loop (a
tanh and an exp per element) ran faster with them: integer min rather than a
float compare-and-blend, an exponent-bits add rather than a second multiply,
NaN mended by OR rather than by a final blend, the one-step reduction in tanh.
Together they took W3's generated kernel from 1.25 to 1.10 ns per element
(16384 elements, so in cache; 1.04 with the native compiler's scheduling
flags): 25 multiplies, FMAs, compares, blends and divisions per 8 elements
instead of 30, in about as many instructions (61). Not kept: Estrin's split
of the polynomials (shorter chains, one more multiply: no faster),
interleaving two elements' chains (no faster), a NaN test on the integer bits
(AVX2 has no unsigned compare: three more instructions, 15% slower), a
degree-5 polynomial in exp (1-2% faster; 2.2 ulp instead of 0.9 on every
97th input).
"""
from __future__ import annotations

# Measured maxima over all 2**32 float32 inputs, with or without FMA (see above), in ulp.
EXP_ULP = 1.17
TANH_ULP = 2.61

SOURCE = r"""
#ifdef __FMA__
#define AK_FMAF(a, b, c) __builtin_fmaf(a, b, c)
#else
#define AK_FMAF(a, b, c) ((a) * (b) + (c))
#endif
#ifdef __FMA__
/* x - n ln2 for |n| <= 29 with one rounding: ln2's float error (2e-9) times n stays far below an ulp of tanh */
#define AK_REDUCE(nf, x) __builtin_fmaf(nf, -0x1.62e430p-1f, x)
#else
#define AK_REDUCE(nf, x) (((x) - (nf) * 0x1.62e4p-1f) - (nf) * 0x1.7f7d1cp-20f)
#endif
#define AK_SHIFTF 0x1.8p23f
static inline float ak_f32(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
static inline uint32_t ak_u32(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }

static inline float ak_expf(float x) {
  int32_t b = (int32_t)ak_u32(x);
  b = b < 0x42b20000 ? b : 0x42b20000;              /* at most 89 (+NaN too: put back below) */
  uint32_t u = (uint32_t)b;
  u = u < 0xc2d00000u ? u : 0xc2d00000u;             /* at least -104 (-inf, -NaN too) */
  const float c = ak_f32(u);
  const float z = AK_FMAF(c, 0x1.715476p+0f, AK_SHIFTF);
  const float nf = z - AK_SHIFTF;
  float r = AK_FMAF(nf, -0x1.62e4p-1f, c);
  r = AK_FMAF(nf, -0x1.7f7d1cp-20f, r);
  float p = 0x1.6a23a4p-10f;
  p = AK_FMAF(p, r, 0x1.1239bep-7f);
  p = AK_FMAF(p, r, 0x1.5558f2p-5f);
  p = AK_FMAF(p, r, 0x1.555492p-3f);
  p = AK_FMAF(p, r, 0x1.fffffcp-2f);
  p = AK_FMAF(p, r, 1.0f);
  p = AK_FMAF(p, r, 1.0f);
  /* zb << 23 is n << 23 and h23 (n >> 1) << 23: the shift constant's bits fall off */
  const uint32_t zb = ak_u32(z), h23 = (zb << 22) & 0xff800000u;
  const uint32_t nan = x != x ? 0x7fc00000u : 0u;
  return ak_f32(ak_u32(p) + (zb << 23) - h23) * ak_f32((h23 + 0x3f800000u) | nan);
}

static inline float ak_tanhf(float x) {
  const uint32_t sign = ak_u32(x) & 0x80000000u;
  uint32_t ua = ak_u32(x) ^ sign;
  ua = ua < 0x41200000u ? ua : 0x41200000u;          /* at most 10 (NaN too: put back below) */
  const float a = ak_f32(ua);
  const float z = AK_FMAF(a, 0x1.715476p+1f, AK_SHIFTF);
  const float nf = z - AK_SHIFTF;
  const float r = AK_REDUCE(nf, a + a);
  float p = 0x1.6bebaep-10f;
  p = AK_FMAF(p, r, 0x1.122762p-7f);
  p = AK_FMAF(p, r, 0x1.555674p-5f);
  p = AK_FMAF(p, r, 0x1.5554b0p-3f);
  p = AK_FMAF(p, r, 0x1.fffffep-2f);
  const float q = AK_FMAF(r * r, p, r);
  const float s = ak_f32((ak_u32(z) << 23) + 0x3f800000u);
  const float t = AK_FMAF(s, q, s - 1.0f);
  const uint32_t nan = x != x ? 0x7fc00000u : 0u;
  return ak_f32(ak_u32(t / (t + 2.0f)) | sign | nan);
}
"""

# The generic names the table's expressions use -> our float32 function.
OVERRIDES = {"exp": "ak_expf", "tanh": "ak_tanhf"}


def mapping() -> str:
    """Macros, placed after <tgmath.h>, sending ``float`` operands of the generic names to
    our functions and the rest (double: the kernels have no other floating type) to libm's
    (a macro's own name is not expanded again inside it)."""
    lines = []
    for name, ours in OVERRIDES.items():
        lines += [f"#undef {name}", f"#define {name}(x) _Generic((x), float: {ours}, default: {name})(x)"]
    return "\n".join(lines) + "\n"
