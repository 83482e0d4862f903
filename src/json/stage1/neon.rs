//! The aarch64 block classifier, NEON: with `x86` and one poll(2) call in `io/waits.rs`, the
//! crate's only `unsafe` code.
//!
//! The steps of the x86 classifiers in 16-byte vectors. NEON has no `movemask`: each class's
//! four comparison vectors (64 lanes of 0x00 or 0xFF) become one bit per byte by keeping bit
//! `i % 8` of lane `i` and adding neighbouring lanes pairwise three times (simdjson's arm64
//! kernel), 8 instructions and a move for 64 bytes. The prefix XOR stays the shared shifts:
//! aarch64 folds each shift into its `eor` (6 instructions), as short as a `pmull` round trip
//! through a vector register, and `pmull` would need the crypto extension, which some NEON
//! CPUs (the Raspberry Pi 4's Cortex-A72) lack. Both results equal
//! [`classify_portable`](super::classify_portable) on every block (tested).
#![allow(unsafe_code)]

use std::arch::aarch64::{
    uint8x16_t, vandq_u8, vceqq_u8, vcltq_u8, vdupq_n_u8, vgetq_lane_u64, vld1q_u8, vld1q_u8_x4,
    vpaddq_u8, vqtbl1q_u8, vreinterpretq_u64_u8, vshrq_n_u8, vtstq_u8,
};

use super::{Classes, Classify, EscapeLetters, Index, Indexed};

/// The nibble tables of `{ } [ ] : ,` and white space, as in the x86 classifiers (whose
/// comments give the class bits): the same tables, unsigned.
const LOW_NIBBLE: [u8; 16] = [16, 0, 0, 0, 0, 0, 0, 0, 0, 8, 2 | 8, 4, 1, 4 | 8, 0, 0];
const HIGH_NIBBLE: [u8; 16] = [8, 0, 1 | 16, 2, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0];
/// The letters an escape may have, `" \ / b f n r t u` (see the x86 classifiers).
const ESCAPE_LOW_NIBBLE: [u8; 16] = [0, 0, 1 | 4 | 8, 0, 8, 8, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1];
const ESCAPE_HIGH_NIBBLE: [u8; 16] = [0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0];
/// The class bits of `{ } [ ] : ,` (the others are white space's).
const OP_BITS: u8 = 1 | 2 | 4;
/// Lane `i` keeps bit `i % 8`: what the pairwise adds of [`bits`] gather into bytes.
const LANE_BITS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

/// Whether the running CPU has NEON. Every aarch64 CPU Rust's aarch64 targets run on has it
/// (the targets enable it), but asked all the same, as the x86 classifiers ask for theirs.
pub(super) fn neon_available() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

/// Stage 1 of `line` with the NEON classifier. Only called for `Classifier::Neon`, which
/// `Classifier` offers only when [`neon_available`] found NEON on this CPU.
pub(super) fn build_with_neon(index: &mut Index, line: &[u8]) -> Indexed {
    // SAFETY: NEON is present (see above): the target feature of `build_neon`.
    unsafe { build_neon(index, line) }
}

/// The block loop compiled for NEON, the NEON classifier inlined into it.
#[target_feature(enable = "neon")]
fn build_neon(index: &mut Index, line: &[u8]) -> Indexed {
    index.build_with::<Neon>(line)
}

/// The NEON classifier; private to this module, used only inside [`build_neon`].
struct Neon;

impl Classify for Neon {
    #[inline(always)]
    fn classify(block: &[u8; 64]) -> Classes {
        // SAFETY: only reached from `build_neon` (the type is private to this module), which
        // runs only on a CPU with NEON.
        unsafe { classify_neon(block) }
    }

    #[inline(always)]
    fn escape_letters(block: &[u8; 64]) -> EscapeLetters {
        // SAFETY: as `classify`.
        unsafe { escape_letters_neon(block) }
    }
}

/// The four 16-byte quarters of `block`.
#[target_feature(enable = "neon")]
#[inline]
fn load(block: &[u8; 64]) -> [uint8x16_t; 4] {
    // SAFETY: `vld1q_u8_x4` reads 64 bytes from the pointer, exactly `block`; it has no
    // alignment requirement beyond a byte's.
    let quarters = unsafe { vld1q_u8_x4(block.as_ptr()) };
    [quarters.0, quarters.1, quarters.2, quarters.3]
}

/// A 16-byte table, as a vector.
#[target_feature(enable = "neon")]
#[inline]
fn table(entries: &[u8; 16]) -> uint8x16_t {
    // SAFETY: `vld1q_u8` reads 16 bytes from the pointer, exactly `entries`.
    unsafe { vld1q_u8(entries.as_ptr()) }
}

/// Each byte's class bits by a pair of nibble tables: the AND of its low nibble's entry in
/// `low` and its high nibble's entry in `high`. (`vqtbl1q_u8` is `pshufb`'s counterpart; a
/// high nibble needs no mask after the unsigned shift.)
#[target_feature(enable = "neon")]
#[inline]
fn nibble_classes(v: uint8x16_t, low: uint8x16_t, high: uint8x16_t) -> uint8x16_t {
    let low_classes = vqtbl1q_u8(low, vandq_u8(v, vdupq_n_u8(0x0F)));
    let high_classes = vqtbl1q_u8(high, vshrq_n_u8::<4>(v));
    vandq_u8(low_classes, high_classes)
}

/// One bit per lane of the four vectors of 0x00 or 0xFF lanes: bit `i` is lane `i % 16` of
/// vector `i / 16`.
#[target_feature(enable = "neon")]
#[inline]
fn bits(lanes: [uint8x16_t; 4]) -> u64 {
    let lane_bits = table(&LANE_BITS);
    let [a, b, c, d] = lanes.map(|l| vandq_u8(l, lane_bits));
    // Each add sums neighbouring lanes, whose bits differ: after three, byte `k` holds the
    // eight bits of lanes `8k..8k + 8`.
    let ab = vpaddq_u8(a, b);
    let cd = vpaddq_u8(c, d);
    let abcd = vpaddq_u8(ab, cd);
    let gathered = vpaddq_u8(abcd, abcd);
    in_register(vgetq_lane_u64::<0>(vreinterpretq_u64_u8(gathered)))
}

/// `x`, opaque to the optimiser but left in a general-purpose register (see the x86
/// module's `in_register`, whose measurement holds here: the masks must leave the vectors).
#[inline(always)]
fn in_register(mut x: u64) -> u64 {
    // SAFETY: an empty template: no instruction runs, no memory or flag is touched; the asm
    // only tells the compiler that `x` may have changed, in the register it chose.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

/// Classifies `block`, 16 bytes at a time.
#[target_feature(enable = "neon")]
#[inline]
fn classify_neon(block: &[u8; 64]) -> Classes {
    let v = load(block);
    let (low, high) = (table(&LOW_NIBBLE), table(&HIGH_NIBBLE));
    let classes = v.map(|q| nibble_classes(q, low, high));
    let is = |byte: u8| v.map(|q| vceqq_u8(q, vdupq_n_u8(byte)));
    Classes {
        quote: bits(is(b'"')),
        backslash: bits(is(b'\\')),
        // `vtst`: all ones where the lanes share a bit.
        op: bits(classes.map(|c| vtstq_u8(c, vdupq_n_u8(OP_BITS)))),
        // Every class bit is an operator's or white space's.
        separator: bits(classes.map(|c| vtstq_u8(c, c))),
        control: bits(v.map(|q| vcltq_u8(q, vdupq_n_u8(0x20)))),
        non_ascii: bits(v.map(|q| vtstq_u8(q, vdupq_n_u8(0x80)))),
    }
}

/// The escape letters of `block`, and the `u`s among them, 16 bytes at a time.
#[target_feature(enable = "neon")]
#[inline]
fn escape_letters_neon(block: &[u8; 64]) -> EscapeLetters {
    let v = load(block);
    let (low, high) = (table(&ESCAPE_LOW_NIBBLE), table(&ESCAPE_HIGH_NIBBLE));
    EscapeLetters {
        any: bits(v.map(|q| {
            let letters = nibble_classes(q, low, high);
            vtstq_u8(letters, letters)
        })),
        u: bits(v.map(|q| vceqq_u8(q, vdupq_n_u8(b'u')))),
    }
}

/// The NEON classification of `block`, for the equivalence tests; `None` without NEON.
#[cfg(test)]
pub(super) fn classify_neon_for_tests(block: &[u8; 64]) -> Option<Classes> {
    // SAFETY: called only when the CPU has NEON, checked just before.
    neon_available().then(|| unsafe { classify_neon(block) })
}

/// The NEON escape letters of `block`, for the equivalence tests; `None` without NEON.
#[cfg(test)]
pub(super) fn escape_letters_neon_for_tests(block: &[u8; 64]) -> Option<EscapeLetters> {
    // SAFETY: called only when the CPU has NEON, checked just before.
    neon_available().then(|| unsafe { escape_letters_neon(block) })
}
