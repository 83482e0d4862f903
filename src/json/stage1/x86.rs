//! The x86-64 block classifiers, AVX2 and SSE4.2: with `neon.rs` and one poll(2) call in
//! `io/waits.rs`, the crate's only `unsafe` code.
//!
//! Each of the 64 bytes is compared with the bytes stage 1 cares about, 32 (AVX2) or 16
//! (SSE4.2) at a time, and each comparison's lanes are gathered into one bit per byte. Both
//! results equal [`classify_portable`](super::classify_portable) on every block (tested).
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m128i, __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8,
    _mm256_movemask_epi8, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_srli_epi16, _mm_and_si128, _mm_clmulepi64_si128, _mm_cmpeq_epi8,
    _mm_cvtsi128_si64, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    _mm_set_epi64x, _mm_setr_epi8, _mm_setzero_si128, _mm_shuffle_epi8, _mm_srli_epi16,
};

use super::{Classes, Classify, EscapeLetters, Index, Indexed};

/// The nibble tables of `{ } [ ] : ,` and the four white-space bytes: a byte is in a class
/// when its low nibble's entry and its high nibble's entry share one of the class's bits.
/// Bits: 1 `,` (2C), 2 `:` (3A), 4 `[ ] { }` (5B 5D 7B 7D), 8 tab, LF, CR (09 0A 0D), 16 space
/// (20). A byte from 0x80 up has high nibble 8 to F, whose entries are empty.
const LOW_NIBBLE: [i8; 16] = [16, 0, 0, 0, 0, 0, 0, 0, 0, 8, 2 | 8, 4, 1, 4 | 8, 0, 0];
const HIGH_NIBBLE: [i8; 16] = [8, 0, 1 | 16, 2, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0];
/// The same kind of tables for the letters an escape may have, `" \ / b f n r t u`, one bit
/// per high nibble they share: 1 for 0x2_ (`"` 22, `/` 2F), 2 for 0x5_ (`\` 5C), 4 for 0x6_
/// (`b` 62, `f` 66, `n` 6E), 8 for 0x7_ (`r` 72, `t` 74, `u` 75).
const ESCAPE_LOW_NIBBLE: [i8; 16] = [0, 0, 1 | 4 | 8, 0, 8, 8, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1];
const ESCAPE_HIGH_NIBBLE: [i8; 16] = [0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0];
/// The class bits of `{ } [ ] : ,` (the others are white space's).
const OP_BITS: i8 = 1 | 2 | 4;

/// Whether the running CPU has AVX2, BMI1, POPCNT and PCLMULQDQ (checked at run time, cached by
/// `std`).
pub(super) fn avx2_available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// Whether the running CPU has SSE4.2, POPCNT and PCLMULQDQ.
pub(super) fn sse42_available() -> bool {
    std::arch::is_x86_feature_detected!("sse4.2")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// Stage 1 of `line` with the AVX2 classifier. Only called for `Classifier::Avx2`, which
/// `Classifier` offers only when [`avx2_available`] found AVX2 on this CPU.
pub(super) fn build_with_avx2(index: &mut Index, line: &[u8]) -> Indexed {
    // SAFETY: AVX2, BMI1, POPCNT and PCLMULQDQ are present (see above): the target features
    // of `build_avx2`.
    unsafe { build_avx2(index, line) }
}

/// Stage 1 of `line` with the SSE4.2 classifier. Only called for `Classifier::Sse42`, which
/// `Classifier` offers only when [`sse42_available`] found SSE4.2 on this CPU.
pub(super) fn build_with_sse42(index: &mut Index, line: &[u8]) -> Indexed {
    // SAFETY: SSE4.2, POPCNT and PCLMULQDQ are present: the target features of `build_sse42`.
    unsafe { build_sse42(index, line) }
}

/// The block loop compiled for SSE4.2, the SSE4.2 classifier inlined into it.
#[target_feature(enable = "sse4.2,popcnt,pclmulqdq")]
fn build_sse42(index: &mut Index, line: &[u8]) -> Indexed {
    index.build_with::<Sse42>(line)
}

/// The SSE4.2 classifier; private to this module, used only inside [`build_sse42`].
struct Sse42;

impl Classify for Sse42 {
    #[inline(always)]
    fn classify(block: &[u8; 64]) -> Classes {
        // SAFETY: only reached from `build_sse42` (the type is private to this module), which
        // runs only on a CPU with SSE4.2.
        unsafe { classify_sse42(block) }
    }

    #[inline(always)]
    fn prefix_xor(x: u64) -> u64 {
        // SAFETY: as above; `build_sse42` runs only on a CPU with PCLMULQDQ too.
        unsafe { prefix_xor_clmul(x) }
    }

    #[inline(always)]
    fn escape_letters(block: &[u8; 64]) -> EscapeLetters {
        // SAFETY: as `classify`.
        unsafe { escape_letters_sse42(block) }
    }
}

/// The whole block loop compiled for AVX2 (and the bit instructions every AVX2 CPU has), so
/// that the classifier is inlined into it.
#[target_feature(enable = "avx2,bmi1,popcnt,pclmulqdq")]
fn build_avx2(index: &mut Index, line: &[u8]) -> Indexed {
    index.build_with::<Avx2>(line)
}

/// The AVX2 classifier; private to this module, used only inside [`build_avx2`].
struct Avx2;

impl Classify for Avx2 {
    #[inline(always)]
    fn classify(block: &[u8; 64]) -> Classes {
        // SAFETY: only reached from `build_avx2` (the type is private to this module), which
        // runs only on a CPU with AVX2.
        unsafe { classify_avx2(block) }
    }

    #[inline(always)]
    fn prefix_xor(x: u64) -> u64 {
        // SAFETY: as above; `build_avx2` runs only on a CPU with PCLMULQDQ too.
        unsafe { prefix_xor_clmul(x) }
    }

    #[inline(always)]
    fn escape_letters(block: &[u8; 64]) -> EscapeLetters {
        // SAFETY: as `classify`.
        unsafe { escape_letters_avx2(block) }
    }

    #[inline(always)]
    fn prefetch(at: *const u8) {
        // SAFETY: a prefetch is a hint: it reads nothing and never faults, whatever `at` is.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast()) }
    }
}

/// The prefix XOR as one carry-less multiplication by all ones: bit `i` of the product sums
/// (without carries) bits `0..=i` of `x`. Shared by both classifiers.
#[target_feature(enable = "pclmulqdq")]
#[inline]
fn prefix_xor_clmul(x: u64) -> u64 {
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
}

/// [`prefix_xor_clmul`] for the tests; `None` without PCLMULQDQ.
#[cfg(test)]
pub(super) fn prefix_xor_for_tests(x: u64) -> Option<u64> {
    // SAFETY: called only when the CPU has PCLMULQDQ, checked just before.
    std::arch::is_x86_feature_detected!("pclmulqdq").then(|| unsafe { prefix_xor_clmul(x) })
}

/// Classifies `block`.
///
/// Each mask leaves through [`in_register`]: otherwise LLVM keeps the masks as vectors of
/// single bits, and the shifts and ORs stage 1 applies to them became hundreds of instructions
/// a block (callgrind, validate on 5 MB of `gen`: 71.5 M instructions against 39.9 M).
#[target_feature(enable = "avx2")]
#[inline]
fn classify_avx2(block: &[u8; 64]) -> Classes {
    // SAFETY: both loads read 32 bytes inside `block` (offsets 0 and 32 of 64 bytes);
    // `loadu` has no alignment requirement.
    let (low, high) = unsafe {
        let at = block.as_ptr().cast::<__m256i>();
        (_mm256_loadu_si256(at), _mm256_loadu_si256(at.add(1)))
    };
    let a = half(low);
    let b = half(high);
    let join = |l: u32, h: u32| in_register(u64::from(l) | u64::from(h) << 32);
    Classes {
        quote: join(a.quote, b.quote),
        backslash: join(a.backslash, b.backslash),
        op: join(a.op, b.op),
        separator: join(a.separator, b.separator),
        control: join(a.control, b.control),
        non_ascii: join(a.non_ascii, b.non_ascii),
    }
}

/// `x`, opaque to the optimiser but left in a general-purpose register: the bit arithmetic
/// after classification then stays scalar. (`std::hint::black_box` does the same through a
/// store and a load, which cost 12 instructions a block.)
#[inline(always)]
fn in_register(mut x: u64) -> u64 {
    // SAFETY: an empty template: no instruction runs, no memory or flag is touched; the asm
    // only tells the compiler that `x` may have changed, in the register it chose.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

/// The classes of 32 bytes, one bit per byte.
struct Half {
    quote: u32,
    backslash: u32,
    op: u32,
    separator: u32,
    control: u32,
    non_ascii: u32,
}

#[target_feature(enable = "avx2")]
#[inline]
fn half(v: __m256i) -> Half {
    // `{ } [ ] : ,` and the four white-space bytes in one lookup per nibble (`LOW_NIBBLE`).
    let classes = nibble_classes(v, LOW_NIBBLE, HIGH_NIBBLE);
    let none = _mm256_setzero_si256();
    let not_op = _mm256_cmpeq_epi8(_mm256_and_si256(classes, _mm256_set1_epi8(OP_BITS)), none);
    // Every class bit is an operator's or white space's: a byte in none separates nothing.
    let not_separator = _mm256_cmpeq_epi8(classes, none);
    // Unsigned: a byte is at most 0x1F exactly when max(byte, 0x1F) is 0x1F.
    let low_bound = _mm256_set1_epi8(0x1F);
    let control = _mm256_cmpeq_epi8(_mm256_max_epu8(v, low_bound), low_bound);
    Half {
        quote: bits(is(v, b'"')),
        backslash: bits(is(v, b'\\')),
        op: !bits(not_op),
        separator: !bits(not_separator),
        control: bits(control),
        // A lane's top bit is set exactly from 0x80 up.
        non_ascii: bits(v),
    }
}

/// Each byte's class bits by a pair of nibble tables (`LOW_NIBBLE`, `ESCAPE_LOW_NIBBLE`): the
/// AND of its low nibble's entry in `low` and its high nibble's entry in `high`.
#[target_feature(enable = "avx2")]
#[inline]
fn nibble_classes(v: __m256i, low: [i8; 16], high: [i8; 16]) -> __m256i {
    let (l, h) = (low, high);
    #[rustfmt::skip]
    let low_table = _mm256_setr_epi8(
        l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15],
        l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15],
    );
    #[rustfmt::skip]
    let high_table = _mm256_setr_epi8(
        h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15],
        h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15],
    );
    let nibble = _mm256_set1_epi8(0x0F);
    let low_classes = _mm256_shuffle_epi8(low_table, _mm256_and_si256(v, nibble));
    let high_classes = _mm256_shuffle_epi8(
        high_table,
        _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble),
    );
    _mm256_and_si256(low_classes, high_classes)
}

/// [`nibble_classes`] for 16 bytes.
#[target_feature(enable = "sse4.2")]
#[inline]
fn nibble_classes16(v: __m128i, low: [i8; 16], high: [i8; 16]) -> __m128i {
    let (l, h) = (low, high);
    #[rustfmt::skip]
    let low_table = _mm_setr_epi8(
        l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15],
    );
    #[rustfmt::skip]
    let high_table = _mm_setr_epi8(
        h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15],
    );
    let nibble = _mm_set1_epi8(0x0F);
    let low_classes = _mm_shuffle_epi8(low_table, _mm_and_si128(v, nibble));
    let high_classes = _mm_shuffle_epi8(high_table, _mm_and_si128(_mm_srli_epi16(v, 4), nibble));
    _mm_and_si128(low_classes, high_classes)
}

/// The lanes of `v` equal to `byte`. (Functions, not closures: a closure would not be compiled
/// with AVX2 enabled, and each intrinsic would become a call.)
#[target_feature(enable = "avx2")]
#[inline]
fn is(v: __m256i, byte: u8) -> __m256i {
    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8))
}

/// One bit per lane: its top bit.
#[target_feature(enable = "avx2")]
#[inline]
fn bits(lanes: __m256i) -> u32 {
    _mm256_movemask_epi8(lanes) as u32
}

/// Classifies `block`, 16 bytes at a time; as [`classify_avx2`], whose steps it repeats with
/// 128-bit vectors.
#[target_feature(enable = "sse4.2")]
#[inline]
fn classify_sse42(block: &[u8; 64]) -> Classes {
    // SAFETY: the four loads read 16 bytes each inside `block` (offsets 0, 16, 32 and 48 of 64
    // bytes); `loadu` has no alignment requirement.
    let quarters = unsafe {
        let at = block.as_ptr().cast::<__m128i>();
        [
            quarter(_mm_loadu_si128(at)),
            quarter(_mm_loadu_si128(at.add(1))),
            quarter(_mm_loadu_si128(at.add(2))),
            quarter(_mm_loadu_si128(at.add(3))),
        ]
    };
    let join = |class: fn(&Quarter) -> u16| {
        in_register(
            quarters
                .iter()
                .enumerate()
                .fold(0u64, |bits, (i, q)| bits | u64::from(class(q)) << (16 * i)),
        )
    };
    Classes {
        quote: join(|q| q.quote),
        backslash: join(|q| q.backslash),
        op: join(|q| q.op),
        separator: join(|q| q.separator),
        control: join(|q| q.control),
        non_ascii: join(|q| q.non_ascii),
    }
}

/// The classes of 16 bytes, one bit per byte.
struct Quarter {
    quote: u16,
    backslash: u16,
    op: u16,
    separator: u16,
    control: u16,
    non_ascii: u16,
}

#[target_feature(enable = "sse4.2")]
#[inline]
fn quarter(v: __m128i) -> Quarter {
    let classes = nibble_classes16(v, LOW_NIBBLE, HIGH_NIBBLE);
    let none = _mm_setzero_si128();
    let not_op = _mm_cmpeq_epi8(_mm_and_si128(classes, _mm_set1_epi8(OP_BITS)), none);
    let not_separator = _mm_cmpeq_epi8(classes, none);
    let low_bound = _mm_set1_epi8(0x1F);
    let control = _mm_cmpeq_epi8(_mm_max_epu8(v, low_bound), low_bound);
    Quarter {
        quote: bits16(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8))),
        backslash: bits16(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8))),
        op: !bits16(not_op),
        separator: !bits16(not_separator),
        control: bits16(control),
        non_ascii: bits16(v),
    }
}

/// One bit per lane: its top bit.
#[target_feature(enable = "sse4.2")]
#[inline]
fn bits16(lanes: __m128i) -> u16 {
    _mm_movemask_epi8(lanes) as u16
}

/// The escape letters of `block` (see [`ESCAPE_LOW_NIBBLE`]), 32 bytes at a time.
#[target_feature(enable = "avx2")]
#[inline]
fn escape_letters_avx2(block: &[u8; 64]) -> EscapeLetters {
    // SAFETY: both loads read 32 bytes inside `block` (offsets 0 and 32 of 64 bytes).
    let (low, high) = unsafe {
        let at = block.as_ptr().cast::<__m256i>();
        (_mm256_loadu_si256(at), _mm256_loadu_si256(at.add(1)))
    };
    let ((any_low, u_low), (any_high, u_high)) = (escape_half(low), escape_half(high));
    EscapeLetters {
        any: u64::from(any_low) | u64::from(any_high) << 32,
        u: u64::from(u_low) | u64::from(u_high) << 32,
    }
}

/// The escape letters of 32 bytes, and the `u`s among them.
#[target_feature(enable = "avx2")]
#[inline]
fn escape_half(v: __m256i) -> (u32, u32) {
    let letters = nibble_classes(v, ESCAPE_LOW_NIBBLE, ESCAPE_HIGH_NIBBLE);
    let none = _mm256_cmpeq_epi8(letters, _mm256_setzero_si256());
    (!bits(none), bits(is(v, b'u')))
}

/// [`escape_letters_avx2`] 16 bytes at a time.
#[target_feature(enable = "sse4.2")]
#[inline]
fn escape_letters_sse42(block: &[u8; 64]) -> EscapeLetters {
    let mut letters = EscapeLetters::default();
    for (i, quarter) in block.chunks_exact(16).enumerate() {
        // SAFETY: `quarter` is 16 bytes of `block`; `loadu` has no alignment requirement.
        let v = unsafe { _mm_loadu_si128(quarter.as_ptr().cast::<__m128i>()) };
        let letters_here = nibble_classes16(v, ESCAPE_LOW_NIBBLE, ESCAPE_HIGH_NIBBLE);
        let none = _mm_cmpeq_epi8(letters_here, _mm_setzero_si128());
        let u = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'u' as i8));
        letters.any |= u64::from(!bits16(none)) << (16 * i);
        letters.u |= u64::from(bits16(u)) << (16 * i);
    }
    letters
}

/// The AVX2 escape letters of `block`, for the equivalence tests; `None` without AVX2.
#[cfg(test)]
pub(super) fn escape_letters_avx2_for_tests(block: &[u8; 64]) -> Option<EscapeLetters> {
    // SAFETY: called only when the CPU has AVX2, checked just before.
    avx2_available().then(|| unsafe { escape_letters_avx2(block) })
}

/// The SSE4.2 escape letters of `block`, for the equivalence tests; `None` without SSE4.2.
#[cfg(test)]
pub(super) fn escape_letters_sse42_for_tests(block: &[u8; 64]) -> Option<EscapeLetters> {
    // SAFETY: called only when the CPU has SSE4.2, checked just before.
    sse42_available().then(|| unsafe { escape_letters_sse42(block) })
}

/// The AVX2 classification of `block`, for the equivalence tests; `None` without AVX2.
#[cfg(test)]
pub(super) fn classify_avx2_for_tests(block: &[u8; 64]) -> Option<Classes> {
    // SAFETY: called only when the CPU has AVX2, checked just before.
    avx2_available().then(|| unsafe { classify_avx2(block) })
}

/// The SSE4.2 classification of `block`, for the equivalence tests; `None` without SSE4.2.
#[cfg(test)]
pub(super) fn classify_sse42_for_tests(block: &[u8; 64]) -> Option<Classes> {
    // SAFETY: called only when the CPU has SSE4.2, checked just before.
    sse42_available().then(|| unsafe { classify_sse42(block) })
}
