/* Bit masks of ``x[j] >= t`` for the threshold kernel (sparsecal/core/_threshold.pyx).
 *
 * sc_mask_f32 / sc_mask_f64(x, n, t, mask): for j < n, bit j % 64 of
 * mask[j / 64] is ``x[j] >= t``; returns 1 if some x[j] is NaN or outside [0, 1],
 * else 0. The kernel then visits only the set bits (survivors are ~0.4% of the
 * entries), so each value costs a load, three comparisons and a movemask.
 *
 * On x86-64 the default build (SSE2) uses SSE2 intrinsics, and AVX2
 * versions are picked at run time where the CPU has them (GCC and Clang);
 * elsewhere a portable scalar loop. All versions give identical bits
 * (tests/test_threshold.py runs every level the CPU has, via sc_set_level).
 */
#ifndef SPARSECAL_SIMD_H
#define SPARSECAL_SIMD_H

#include <stdint.h>
#include <stddef.h>

#if defined(__x86_64__) || defined(_M_X64)
#define SC_X86 1
#include <immintrin.h>
#endif

#if defined(SC_X86) && (defined(__GNUC__) || defined(__clang__))
#define SC_AVX2 1
#endif

/* Portable tail: values j0 <= j < n. */
#define SC_SCALAR(T)                                                          \
    static int sc_mask_scalar_##T(const T *x, ptrdiff_t j0, ptrdiff_t n, T t, \
                                  uint64_t *mask) {                           \
        int bad = 0;                                                          \
        for (ptrdiff_t j = j0; j < n; j++) {                                  \
            mask[j >> 6] |= (uint64_t) (x[j] >= t) << (j & 63);               \
            bad |= !(x[j] >= (T) 0) | !(x[j] <= (T) 1);   /* NaN fails both */ \
        }                                                                     \
        return bad;                                                           \
    }
SC_SCALAR(float)
SC_SCALAR(double)

/* Ask for the cache lines SC_AHEAD bytes ahead of the bytes [p, p + bytes) about
   to be read: the comparisons take enough instructions per byte that the
   out-of-order window alone keeps too few loads in flight to reach the memory
   bandwidth that a bare count_nonzero reaches. */
#define SC_AHEAD 4096
#if defined(SC_X86)
#define SC_PREFETCH(p, bytes)                                                     \
    for (size_t sc_o = 0; sc_o < (bytes); sc_o += 64)                            \
        _mm_prefetch((const char *) (p) + SC_AHEAD + sc_o, _MM_HINT_T0)
#else
#define SC_PREFETCH(p, bytes)
#endif

static inline void sc_clear(uint64_t *mask, ptrdiff_t n) {
    for (ptrdiff_t w = 0; w < (n + 63) >> 6; w++) mask[w] = 0;
}

#if defined(SC_X86)
/* SSE2 (every x86-64 CPU): 4 floats or 2 doubles per comparison. */
static int sc_mask_f32_sse2(const float *x, ptrdiff_t n, float t, uint64_t *mask) {
    __m128 vt = _mm_set1_ps(t), zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
    __m128 bad = _mm_setzero_ps();
    ptrdiff_t j = 0;
    sc_clear(mask, n);
    for (; j + 64 <= n; j += 64) {        /* a mask word at a time, in a register */
        SC_PREFETCH(x + j, sizeof(*x) * 64);
        uint64_t m = 0;
        for (int k = 0; k < 64; k += 4) {
            __m128 v = _mm_loadu_ps(x + j + k);
            m |= (uint64_t) _mm_movemask_ps(_mm_cmpge_ps(v, vt)) << k;
            bad = _mm_or_ps(bad, _mm_or_ps(_mm_cmpnge_ps(v, zero), _mm_cmpnle_ps(v, one)));
        }
        mask[j >> 6] = m;
    }
    {                                      /* whole vectors of the last word */
        uint64_t m = 0;
        ptrdiff_t j1 = j;
        for (; j + 4 <= n; j += 4) {
            __m128 v = _mm_loadu_ps(x + j);
            m |= (uint64_t) _mm_movemask_ps(_mm_cmpge_ps(v, vt)) << (j - j1);
            bad = _mm_or_ps(bad, _mm_or_ps(_mm_cmpnge_ps(v, zero), _mm_cmpnle_ps(v, one)));
        }
        if (j1 < n) mask[j1 >> 6] = m;
    }
    return (_mm_movemask_ps(bad) != 0) | sc_mask_scalar_float(x, j, n, t, mask);
}

static int sc_mask_f64_sse2(const double *x, ptrdiff_t n, double t, uint64_t *mask) {
    __m128d vt = _mm_set1_pd(t), zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
    __m128d bad = _mm_setzero_pd();
    ptrdiff_t j = 0;
    sc_clear(mask, n);
    for (; j + 64 <= n; j += 64) {
        SC_PREFETCH(x + j, sizeof(*x) * 64);
        uint64_t m = 0;
        for (int k = 0; k < 64; k += 2) {
            __m128d v = _mm_loadu_pd(x + j + k);
            m |= (uint64_t) _mm_movemask_pd(_mm_cmpge_pd(v, vt)) << k;
            bad = _mm_or_pd(bad, _mm_or_pd(_mm_cmpnge_pd(v, zero), _mm_cmpnle_pd(v, one)));
        }
        mask[j >> 6] = m;
    }
    {
        uint64_t m = 0;
        ptrdiff_t j1 = j;
        for (; j + 2 <= n; j += 2) {
            __m128d v = _mm_loadu_pd(x + j);
            m |= (uint64_t) _mm_movemask_pd(_mm_cmpge_pd(v, vt)) << (j - j1);
            bad = _mm_or_pd(bad, _mm_or_pd(_mm_cmpnge_pd(v, zero), _mm_cmpnle_pd(v, one)));
        }
        if (j1 < n) mask[j1 >> 6] = m;
    }
    return (_mm_movemask_pd(bad) != 0) | sc_mask_scalar_double(x, j, n, t, mask);
}
#endif

#if defined(SC_AVX2)
/* AVX2: 8 floats or 4 doubles per comparison (_CMP_NGE_UQ / _CMP_NLE_UQ are
   true for NaN, like SSE2's cmpnge / cmpnle). */
__attribute__((target("avx2")))
static int sc_mask_f32_avx2(const float *x, ptrdiff_t n, float t, uint64_t *mask) {
    __m256 vt = _mm256_set1_ps(t), zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    __m256 bad = _mm256_setzero_ps();
    ptrdiff_t j = 0;
    sc_clear(mask, n);
    for (; j + 64 <= n; j += 64) {
        SC_PREFETCH(x + j, sizeof(*x) * 64);
        uint64_t m = 0;
        for (int k = 0; k < 64; k += 8) {
            __m256 v = _mm256_loadu_ps(x + j + k);
            m |= (uint64_t) _mm256_movemask_ps(_mm256_cmp_ps(v, vt, _CMP_GE_OQ)) << k;
            bad = _mm256_or_ps(bad, _mm256_or_ps(_mm256_cmp_ps(v, zero, _CMP_NGE_UQ),
                                                 _mm256_cmp_ps(v, one, _CMP_NLE_UQ)));
        }
        mask[j >> 6] = m;
    }
    {
        uint64_t m = 0;
        ptrdiff_t j1 = j;
        for (; j + 8 <= n; j += 8) {
            __m256 v = _mm256_loadu_ps(x + j);
            m |= (uint64_t) _mm256_movemask_ps(_mm256_cmp_ps(v, vt, _CMP_GE_OQ)) << (j - j1);
            bad = _mm256_or_ps(bad, _mm256_or_ps(_mm256_cmp_ps(v, zero, _CMP_NGE_UQ),
                                                 _mm256_cmp_ps(v, one, _CMP_NLE_UQ)));
        }
        if (j1 < n) mask[j1 >> 6] = m;
    }
    return (_mm256_movemask_ps(bad) != 0) | sc_mask_scalar_float(x, j, n, t, mask);
}

__attribute__((target("avx2")))
static int sc_mask_f64_avx2(const double *x, ptrdiff_t n, double t, uint64_t *mask) {
    __m256d vt = _mm256_set1_pd(t), zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    __m256d bad = _mm256_setzero_pd();
    ptrdiff_t j = 0;
    sc_clear(mask, n);
    for (; j + 64 <= n; j += 64) {
        SC_PREFETCH(x + j, sizeof(*x) * 64);
        uint64_t m = 0;
        for (int k = 0; k < 64; k += 4) {
            __m256d v = _mm256_loadu_pd(x + j + k);
            m |= (uint64_t) _mm256_movemask_pd(_mm256_cmp_pd(v, vt, _CMP_GE_OQ)) << k;
            bad = _mm256_or_pd(bad, _mm256_or_pd(_mm256_cmp_pd(v, zero, _CMP_NGE_UQ),
                                                 _mm256_cmp_pd(v, one, _CMP_NLE_UQ)));
        }
        mask[j >> 6] = m;
    }
    {
        uint64_t m = 0;
        ptrdiff_t j1 = j;
        for (; j + 4 <= n; j += 4) {
            __m256d v = _mm256_loadu_pd(x + j);
            m |= (uint64_t) _mm256_movemask_pd(_mm256_cmp_pd(v, vt, _CMP_GE_OQ)) << (j - j1);
            bad = _mm256_or_pd(bad, _mm256_or_pd(_mm256_cmp_pd(v, zero, _CMP_NGE_UQ),
                                                 _mm256_cmp_pd(v, one, _CMP_NLE_UQ)));
        }
        if (j1 < n) mask[j1 >> 6] = m;
    }
    return (_mm256_movemask_pd(bad) != 0) | sc_mask_scalar_double(x, j, n, t, mask);
}

#endif

/* The instruction set used: 0 scalar, 1 SSE2, 2 AVX2; by default the best the
   CPU has. (No AVX-512 version: no machine here to test it on, and the loop is
   bound by memory bandwidth at AVX2 already.) sc_set_level lowers it (the tests check every level). */
static int sc_level = -1;

static int sc_max_level(void) {
#if defined(SC_AVX2)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return 2;
    return 1;
#elif defined(SC_X86)
    return 1;
#else
    return 0;
#endif
}

/* Use ``level`` (the best available when negative or above it); returns it. */
static int sc_set_level(int level) {
    int top = sc_max_level();
    sc_level = level < 0 || level > top ? top : level;
    return sc_level;
}

#if defined(SC_AVX2)
#define SC_DISPATCH_SIMD(SUFFIX)                                                   \
        if (level >= 2) return sc_mask_##SUFFIX##_avx2(x, n, t, mask);             \
        if (level == 1) return sc_mask_##SUFFIX##_sse2(x, n, t, mask);
#elif defined(SC_X86)
#define SC_DISPATCH_SIMD(SUFFIX)                                                   \
        if (level >= 1) return sc_mask_##SUFFIX##_sse2(x, n, t, mask);
#else
#define SC_DISPATCH_SIMD(SUFFIX)
#endif
#define SC_DISPATCH(NAME, T, SUFFIX)                                               \
    static int NAME(const T *x, ptrdiff_t n, T t, uint64_t *mask) {                \
        int level = sc_level >= 0 ? sc_level : sc_set_level(-1);                   \
        SC_DISPATCH_SIMD(SUFFIX)                                                   \
        sc_clear(mask, n);                                                         \
        return sc_mask_scalar_##T(x, 0, n, t, mask);                               \
    }
SC_DISPATCH(sc_mask_f32, float, f32)
SC_DISPATCH(sc_mask_f64, double, f64)

/* Index of the lowest set bit of a non-zero word. */
static inline int sc_ctz(uint64_t w) {
#if defined(_MSC_VER)
    unsigned long i;
    _BitScanForward64(&i, w);
    return (int) i;
#else
    return __builtin_ctzll(w);
#endif
}

#endif
