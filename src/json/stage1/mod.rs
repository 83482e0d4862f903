//! Stage 1 of the single-pass validator: the structural index of one line.
//!
//! One pass over the line in 64-byte blocks finds, outside strings, every `{ } [ ] : ,` and the
//! first byte of every number or literal, and every string's opening and closing quote. The
//! envelope walk (`envelope::single_pass`) then reads the line through these positions only.
//! Along the way it checks what the walk does not look at again: no control character inside a
//! string, every escape well formed, every string closed. A line that fails any of these is
//! handed to the tape path, which says exactly why (docs/envelope.md#the-json-layer); stage 1
//! never reports, it only accepts or declines.
//!
//! Only the byte classification of a block is machine-specific (`classify`): AVX2 or SSE4.2 on
//! x86-64 when the CPU has them, NEON on aarch64, else a portable loop; the bit arithmetic
//! after it is shared, so every implementation gives the same index.
//! `RDQ_ENVELOPE_SIMD=portable` (or `sse4.2`) forces a classifier (the differential tests run
//! every one the CPU has).

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::sync::OnceLock;

/// What one 64-byte block holds, one bit per byte (bit `i` is byte `i`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    pub quote: u64,
    pub backslash: u64,
    /// `{ } [ ] : ,`
    pub op: u64,
    /// The bytes that end a number or literal: `{ } [ ] : ,` and white space (space, tab, line
    /// feed, carriage return). One mask, not a white-space one beside `op`: stage 1 only ever
    /// needs the two together.
    pub separator: u64,
    /// bytes below 0x20
    pub control: u64,
    /// bytes from 0x80 up (not ASCII): a line without any needs no UTF-8 validation
    pub non_ascii: u64,
}

/// The classifier of one block: the only machine-specific step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Classifier {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Sse42,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Classifier {
    /// The fastest classifier this CPU runs, unless `RDQ_ENVELOPE_SIMD` names another one it
    /// runs (`portable`, `sse4.2`, `avx2`, `neon`); decided once.
    pub(crate) fn detect() -> Classifier {
        static CHOSEN: OnceLock<Classifier> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let wanted = std::env::var_os("RDQ_ENVELOPE_SIMD");
            let all = Classifier::all();
            all.iter()
                .copied()
                .find(|c| wanted.as_ref().is_some_and(|w| *w == *c.name()))
                .unwrap_or(all[all.len() - 1])
        })
    }

    /// Every classifier this CPU runs, slowest (the portable one) first.
    pub(crate) fn all() -> Vec<Classifier> {
        // Pushed, not `vec![Portable]`: on a target with no SIMD classifier the list is never
        // changed again, and a `mut` binding would be an unused-`mut` warning there.
        let mut all = Vec::with_capacity(3);
        all.push(Classifier::Portable);
        #[cfg(target_arch = "x86_64")]
        {
            if x86::sse42_available() {
                all.push(Classifier::Sse42);
            }
            if x86::avx2_available() {
                all.push(Classifier::Avx2);
            }
        }
        #[cfg(target_arch = "aarch64")]
        if neon::neon_available() {
            all.push(Classifier::Neon);
        }
        all
    }

    /// Its name, as `RDQ_ENVELOPE_SIMD` spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Classifier::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Classifier::Sse42 => "sse4.2",
            #[cfg(target_arch = "x86_64")]
            Classifier::Avx2 => "avx2",
            #[cfg(target_arch = "aarch64")]
            Classifier::Neon => "neon",
        }
    }

    /// The CPU features it runs on: those `x86::*_available` (`neon::neon_available`) detects
    /// before offering it.
    pub(crate) fn features(self) -> &'static [&'static str] {
        match self {
            Classifier::Portable => &[],
            #[cfg(target_arch = "x86_64")]
            Classifier::Sse42 => &["sse4.2", "pclmulqdq", "popcnt"],
            #[cfg(target_arch = "x86_64")]
            Classifier::Avx2 => &["avx2", "bmi1", "pclmulqdq", "popcnt"],
            #[cfg(target_arch = "aarch64")]
            Classifier::Neon => &["neon"],
        }
    }
}

/// A block classifier. Stage 1 is compiled once per classifier (`Index::build_with`), so
/// the SIMD one is inlined into a loop compiled for its instruction set.
pub(crate) trait Classify {
    /// The classes of the 64 bytes of `block`.
    fn classify(block: &[u8; 64]) -> Classes;

    /// Bit `i` is the XOR of bits `0..=i` of `x` (in-string from the quotes).
    #[inline(always)]
    fn prefix_xor(x: u64) -> u64 {
        prefix_xor(x)
    }

    /// The bytes of `block` that may follow a backslash, and the `u`s among them: asked only
    /// of blocks that hold an escape.
    #[inline(always)]
    fn escape_letters(block: &[u8; 64]) -> EscapeLetters {
        escape_letters_portable(block)
    }

    /// Asks for the cache line at `at` ahead of its use; nothing where there is no such hint.
    #[inline(always)]
    fn prefetch(_at: *const u8) {}
}

/// The portable classifier.
pub(crate) struct Portable;

impl Classify for Portable {
    #[inline(always)]
    fn classify(block: &[u8; 64]) -> Classes {
        // Opaque to the optimiser, as the SIMD classifiers' masks are (`x86::in_register`).
        std::hint::black_box(classify_portable(block))
    }
}

/// Which bytes of a block may follow a backslash in a JSON string, one bit per byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct EscapeLetters {
    /// `" \ / b f n r t u`
    pub any: u64,
    /// `u`, whose escape goes on with four hex digits
    pub u: u64,
}

/// Byte by byte: the reference the SIMD versions must equal.
pub(crate) fn escape_letters_portable(block: &[u8; 64]) -> EscapeLetters {
    let mut letters = EscapeLetters::default();
    for (i, &b) in block.iter().enumerate() {
        if matches!(
            b,
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'
        ) {
            letters.any |= 1 << i;
        }
        if b == b'u' {
            letters.u |= 1 << i;
        }
    }
    letters
}

/// Byte by byte: the reference the SIMD classifiers must equal.
pub(crate) fn classify_portable(block: &[u8; 64]) -> Classes {
    let mut c = Classes::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => c.quote |= bit,
            b'\\' => c.backslash |= bit,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                c.op |= bit;
                c.separator |= bit;
            }
            b' ' | b'\t' | b'\n' | b'\r' => c.separator |= bit,
            _ => {}
        }
        if b < 0x20 {
            c.control |= bit;
        }
        if b >= 0x80 {
            c.non_ascii |= bit;
        }
    }
    c
}

/// The structural index of one line, and the blocks that hold a backslash; reused from line
/// to line (no allocation once grown).
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// The positions (see [`Index::positions`]) in `slots[..count]`; the slots after them are
    /// room that the next block may write (always at least 64 past `count`), never read.
    slots: Vec<u32>,
    count: usize,
    /// Bit `b` is set when 64-byte block `b` holds a backslash.
    backslash_blocks: Vec<u64>,
}

impl Index {
    /// Byte offsets, in order: every `{ } [ ] : ,` outside strings, every string's opening
    /// and closing quote, and the first byte of every other token (number, literal, or bytes
    /// that are neither, which the walk refuses).
    #[inline(always)]
    pub(crate) fn positions(&self) -> &[u32] {
        &self.slots[..self.count]
    }

    /// Whether `line[from..to]` holds a backslash (an escape, in a string).
    #[inline(always)]
    pub(crate) fn has_backslash(&self, line: &[u8], from: usize, to: usize) -> bool {
        if from >= to {
            return false;
        }
        // The bits of the string's blocks: one masked test of a word of the bitmap (4 KiB of
        // line) for most strings, a few for a long stack trace. Bytes are looked at only when
        // a block holds a backslash.
        let (first, last) = (from / 64, (to - 1) / 64);
        if first / 64 != last / 64 {
            return self.has_backslash_across_words(line, from, to);
        }
        let bits =
            self.backslash_blocks[first / 64] & (!0 << (first % 64)) & (!0 >> (63 - last % 64));
        bits != 0 && memchr::memchr(b'\\', &line[from..to]).is_some()
    }

    /// [`Index::has_backslash`] for a string over more than one word of the bitmap.
    #[cold]
    fn has_backslash_across_words(&self, line: &[u8], from: usize, to: usize) -> bool {
        let (first, last) = (from / 64, (to - 1) / 64);
        let (first_word, last_word) = (first / 64, last / 64);
        for word in first_word..=last_word {
            let mut bits = self.backslash_blocks[word];
            if word == first_word {
                bits &= !0 << (first % 64);
            }
            if word == last_word {
                bits &= !0 >> (63 - last % 64);
            }
            if bits != 0 {
                return memchr::memchr(b'\\', &line[from..to]).is_some();
            }
        }
        false
    }

    /// Indexes `line` with `classifier`. `false` when the line is surely not the JSON the walk
    /// could accept: not UTF-8, longer than 4 GiB, a control character or a bad escape in a
    /// string, a string left open, or a `\u` escape of a surrogate (which the tape path judges).
    pub(crate) fn build(&mut self, line: &[u8], classifier: Classifier) -> bool {
        self.count = 0;
        self.backslash_blocks.clear();
        if u32::try_from(line.len()).is_err() {
            return false;
        }
        self.backslash_blocks
            .resize(line.len().div_ceil(64 * 64), 0);
        // A block writes up to 64 slots past the positions so far, which are fewer than the
        // bytes before the block. Grown once to the longest line; never cleared.
        let room = line.len().div_ceil(64) * 64 + 64;
        if self.slots.len() < room {
            self.slots.resize(room, 0);
        }
        let indexed = match classifier {
            Classifier::Portable => self.build_with::<Portable>(line),
            #[cfg(target_arch = "x86_64")]
            Classifier::Sse42 => x86::build_with_sse42(self, line),
            #[cfg(target_arch = "x86_64")]
            Classifier::Avx2 => x86::build_with_avx2(self, line),
            #[cfg(target_arch = "aarch64")]
            Classifier::Neon => neon::build_with_neon(self, line),
        };
        // Most lines are ASCII, which stage 1 saw on the way (`Classes::non_ascii`): only the
        // others take a second pass to validate their UTF-8.
        match indexed {
            Indexed::Declined => false,
            Indexed::Ascii => true,
            Indexed::NonAscii => simdutf8::basic::from_utf8(line).is_ok(),
        }
    }

    /// [`Index::build`] after its checks, with the classifier `C` inlined.
    #[inline(always)]
    pub(crate) fn build_with<C: Classify>(&mut self, line: &[u8]) -> Indexed {
        let mut carry = Carry::default();
        let mut blocks = line.chunks_exact(64);
        let mut base = 0;
        for block in blocks.by_ref() {
            C::prefetch(line.as_ptr().wrapping_add(base + PREFETCH_AHEAD));
            let block: &[u8; 64] = block.try_into().expect("chunks_exact(64)");
            if !self.block::<C>(line, block, base, C::classify(block), &mut carry) {
                return Indexed::Declined;
            }
            base += 64;
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            // The tail, padded with spaces: white space ends any token and opens nothing.
            let mut last = [b' '; 64];
            last[..rest.len()].copy_from_slice(rest);
            if !self.block::<C>(line, &last, base, C::classify(&last), &mut carry) {
                return Indexed::Declined;
            }
        }
        if carry.in_string || carry.escaped {
            Indexed::Declined
        } else if carry.non_ascii != 0 {
            Indexed::NonAscii
        } else {
            Indexed::Ascii
        }
    }

    /// One block, `bytes`, at `base` (the tail block padded): its structurals appended,
    /// `carry` taken to the next block.
    #[inline(always)]
    fn block<C: Classify>(
        &mut self,
        line: &[u8],
        bytes: &[u8; 64],
        base: usize,
        c: Classes,
        carry: &mut Carry,
    ) -> bool {
        carry.non_ascii |= c.non_ascii;
        let escaped = if c.backslash == 0 && !carry.escaped {
            0
        } else {
            let b = base / 64;
            self.backslash_blocks[b / 64] |= u64::from(c.backslash != 0) << (b % 64);
            let escaped = escaped_bytes(c.backslash, &mut carry.escaped);
            // Every escape's letter at once (the padding is no letter: an escape left open at
            // the line's end fails here); only `\u` escapes are read one by one.
            let letters = C::escape_letters(bytes);
            if escaped & !letters.any != 0 {
                return false;
            }
            let unicode = escaped & letters.u;
            if unicode != 0
                && !unicode_escapes_well_formed(line, base, unicode, &mut carry.low_surrogate_at)
            {
                return false;
            }
            escaped
        };
        let quote = c.quote & !escaped;
        let in_string = C::prefix_xor(quote) ^ if carry.in_string { !0 } else { 0 };
        carry.in_string = in_string >> 63 != 0;
        // Inside a string every byte from 0x00 to 0x1F must be escaped (RFC 8259, section 7).
        if c.control & in_string != 0 {
            return false;
        }
        let open = quote & in_string;
        let close = quote & !in_string;
        let token = !(c.separator | in_string | close);
        let token_start = token & !(token << 1 | u64::from(carry.in_token));
        carry.in_token = token >> 63 != 0;
        let mut structural = (c.op & !in_string) | open | close | token_start;
        // Eight slots at a time, unconditionally (the extra ones are overwritten by the next
        // block): fewer branches than one push per bit, whose count is unpredictable.
        let found = structural.count_ones() as usize;
        let slots = &mut self.slots[self.count..self.count + 64];
        let base = base as u32;
        let mut written = 0;
        while written < found {
            for k in 0..8 {
                slots[(written + k) & 63] = base + structural.trailing_zeros();
                structural &= structural.wrapping_sub(1);
            }
            written += 8;
        }
        self.count += found;
        true
    }
}

/// How far ahead of the block being classified its line is asked for.
const PREFETCH_AHEAD: usize = 1024;

/// What a block passes to the next.
#[derive(Debug, Default)]
struct Carry {
    /// The block ended inside a string.
    in_string: bool,
    /// The block ended in an odd run of backslashes: the next block's first byte is escaped.
    escaped: bool,
    /// The block ended inside a token (a number or literal).
    in_token: bool,
    /// Where the `u` of the low surrogate escape that completes a pair is (0: none expected).
    low_surrogate_at: usize,
    /// Not zero once a block held a byte from 0x80 up.
    non_ascii: u64,
}

/// What stage 1 made of a line, before any UTF-8 validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Indexed {
    /// Surely not what the walk could accept (see [`Index::build`]).
    Declined,
    /// Indexed, and every byte ASCII: valid UTF-8.
    Ascii,
    /// Indexed, with bytes from 0x80 up: valid only if they are UTF-8.
    NonAscii,
}

/// The bytes escaped by a backslash that are not backslashes themselves (those right after an
/// odd-length run of backslashes), and byte 0 when the previous block escapes it.
/// `carry` says on entry whether byte 0 is escaped by the previous block, and on return whether
/// the next block's byte 0 is.
///
/// Without a loop over runs: adding a run's first bit to the run carries through it and sets
/// the bit just past its end. Doing that separately for the runs that start on even and on odd
/// bytes, a run's length is odd exactly when its end lands on a byte of the other parity.
#[inline]
pub(crate) fn escaped_bytes(backslash: u64, carry: &mut bool) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let escaped_first = u64::from(*carry);
    // A backslash escaped by the previous block is an ordinary byte: it starts no run.
    let backslash = backslash & !escaped_first;
    let starts = backslash & !(backslash << 1);
    let even_ends = (backslash.wrapping_add(starts & EVEN)) & !backslash;
    let (odd_sums, odd_overflow) = backslash.overflowing_add(starts & !EVEN);
    let odd_ends = odd_sums & !backslash;
    // A run from an odd byte that reaches byte 63 has odd length: it escapes the next block's
    // first byte. One from an even byte has even length there.
    *carry = odd_overflow;
    (even_ends & !EVEN) | (odd_ends & EVEN) | escaped_first
}

/// Whether every `\u` escape in the block at `base` (the bits of `unicode`, each on its `u`)
/// goes on with four hex digits, and every surrogate escape is one half of a pair, high then
/// low (docs/envelope.md#encoding). `low_surrogate_at` carries an expected low half from block
/// to block.
#[cold]
fn unicode_escapes_well_formed(
    line: &[u8],
    base: usize,
    mut unicode: u64,
    low_surrogate_at: &mut usize,
) -> bool {
    while unicode != 0 {
        let at = base + unicode.trailing_zeros() as usize;
        unicode &= unicode - 1;
        match hex4(line, at + 1) {
            Some(0xD800..=0xDBFF) => {
                // A high half must be followed at once by an escaped low half.
                let low = line.get(at + 5..at + 7) == Some(b"\\u")
                    && matches!(hex4(line, at + 7), Some(0xDC00..=0xDFFF));
                if !low {
                    return false;
                }
                *low_surrogate_at = at + 6;
            }
            Some(0xDC00..=0xDFFF) if *low_surrogate_at == at => *low_surrogate_at = 0,
            // A low half alone, or fewer than four hex digits before the line's end.
            Some(0xDC00..=0xDFFF) | None => return false,
            Some(_) => {}
        }
    }
    true
}

/// The four hex digits at `line[at..]`, as a number.
fn hex4(line: &[u8], at: usize) -> Option<u32> {
    let digits = line.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0, |n, &d| Some(n << 4 | char::from(d).to_digit(16)?))
}

/// Bit `i` of the result is the XOR of bits `0..=i` of `x`: inside-string from the quotes.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escape rule applied byte by byte: the reference for [`escaped_bytes`].
    fn escaped_slowly(backslash: u64, carry: &mut bool) -> u64 {
        let mut escaped = 0;
        for i in 0..64 {
            if *carry {
                escaped |= 1 << i;
                *carry = false;
            } else if backslash >> i & 1 != 0 {
                *carry = true;
            }
        }
        escaped
    }

    /// A small deterministic generator (splitmix64): no test dependency needed.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn escaped_bytes_equals_the_byte_by_byte_rule() {
        let mut state = 7;
        let mut cases = vec![
            0,
            !0,
            1,
            1 << 63,
            0x5555_5555_5555_5555,
            0xAAAA_AAAA_AAAA_AAAA,
        ];
        for _ in 0..200_000 {
            // Backslashes in runs, as escapes come: dense and sparse masks.
            let (a, b) = (next(&mut state), next(&mut state));
            cases.push(a & b);
            cases.push(a | b);
            cases.push(a);
        }
        for mask in cases {
            for carry in [false, true] {
                let (mut fast_carry, mut slow_carry) = (carry, carry);
                let fast = escaped_bytes(mask, &mut fast_carry);
                // Escaped backslashes inside a run need no mark (they are valid escapes and
                // no quotes); byte 0 is marked whenever the previous block escapes it.
                let slow = escaped_slowly(mask, &mut slow_carry) & !(mask & !u64::from(carry));
                assert_eq!(
                    (fast, fast_carry),
                    (slow, slow_carry),
                    "{mask:#066b} {carry}"
                );
            }
        }
    }

    #[test]
    fn has_backslash_answers_for_every_range() {
        // Escapes scattered over a line of three bitmap words (over 8 KiB), some blocks with
        // none: every range, short and long, across block and word boundaries.
        let mut state = 5;
        let mut text = String::new();
        while text.len() < 9_000 {
            let roll = next(&mut state) % 100;
            text.push_str(match roll {
                0..=2 => "\\n",
                3 => "\\\\",
                _ => "abcdefgh",
            });
        }
        let line = format!(r#"{{"k":"{text}"}}"#);
        let line = line.as_bytes();
        let mut index = Index::default();
        assert!(index.build(line, Classifier::detect()));
        let mut ranges: Vec<(usize, usize)> = (0..20_000)
            .map(|_| {
                let from = (next(&mut state) % line.len() as u64) as usize;
                let len = match next(&mut state) % 3 {
                    0 => next(&mut state) % 70,
                    1 => next(&mut state) % 600,
                    _ => next(&mut state) % 9_000,
                } as usize;
                (from, (from + len).min(line.len()))
            })
            .collect();
        ranges.extend([
            (0, line.len()),
            (5, 5),
            (4095, 4097),
            (4096, 8192),
            (63, 64),
        ]);
        let mut found = [0, 0];
        for (from, to) in ranges {
            let expected = line[from..to].contains(&b'\\');
            assert_eq!(
                index.has_backslash(line, from, to),
                expected,
                "{from}..{to}"
            );
            found[usize::from(expected)] += 1;
        }
        assert!(found[0] > 1_000 && found[1] > 1_000, "{found:?}");
    }

    #[test]
    fn only_lines_of_valid_utf8_are_indexed() {
        // A byte from 0x80 up in the first block, in a middle one and in the padded tail:
        // stage 1 sees it and hands the line to the UTF-8 check; ASCII lines skip that check.
        let long = "x".repeat(100);
        for classifier in Classifier::all() {
            let mut index = Index::default();
            for (at, prefix) in [(0, ""), (1, long.as_str()), (2, &long[..40])] {
                for (text, valid) in [
                    ("\u{e9}t\u{e9}".to_owned(), true),
                    ("\u{1F600}".to_owned(), true),
                    ("plain".to_owned(), true),
                ] {
                    let line = format!(r#"{{"k":"{prefix}{text}","n":1}}"#);
                    assert_eq!(index.build(line.as_bytes(), classifier), valid, "{at}");
                }
                for bad in [&[0xC3u8][..], &[0xFF], &[0xED, 0xA0, 0x80], &[0xE2, 0x82]] {
                    let mut line = format!(r#"{{"k":"{prefix}"#).into_bytes();
                    line.extend_from_slice(bad);
                    line.extend_from_slice(br#"","n":1}"#);
                    assert!(
                        !index.build(&line, classifier),
                        "{:?} {bad:x?} at {at}",
                        classifier
                    );
                }
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_carry_less_prefix_xor_equals_the_shifts() {
        let mut state = 13;
        for x in [0, 1, !0, 1 << 63, 0x8000_0000_0000_0001]
            .into_iter()
            .chain((0..100_000).map(|_| next(&mut state)))
        {
            let Some(clmul) = x86::prefix_xor_for_tests(x) else {
                return;
            };
            assert_eq!(clmul, prefix_xor(x), "{x:#x}");
        }
    }

    /// A SIMD block function for the tests, by name: `None` on a CPU without it.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    type SimdForTests<T> = (&'static str, fn(&[u8; 64]) -> Option<T>);

    /// Each of `simd` equals `reference` on every block of one byte value, on every byte value
    /// in every position of a block of others, and on `random` random blocks from `seed`. A
    /// version the CPU lacks is skipped.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn simd_equals_reference<T: PartialEq + std::fmt::Debug>(
        simd: &[SimdForTests<T>],
        reference: fn(&[u8; 64]) -> T,
        seed: u64,
        random: usize,
    ) {
        for &(name, simd) in simd {
            let mut state = seed;
            let mut block = [0u8; 64];
            for value in 0..=255u8 {
                block.fill(value);
                let Some(found) = simd(&block) else {
                    break;
                };
                assert_eq!(found, reference(&block), "{name}: byte {value:#04x}");
                for at in 0..64 {
                    block.fill(b'a');
                    block[at] = value;
                    assert_eq!(
                        simd(&block),
                        Some(reference(&block)),
                        "{name}: {value:#04x} at {at}"
                    );
                }
            }
            for _ in 0..random {
                for chunk in block.chunks_mut(8) {
                    chunk.copy_from_slice(&next(&mut state).to_le_bytes());
                }
                let Some(found) = simd(&block) else {
                    break;
                };
                assert_eq!(found, reference(&block), "{name}");
            }
        }
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn the_simd_escape_letters_equal_the_portable_ones() {
        #[cfg(target_arch = "x86_64")]
        let simd: [SimdForTests<EscapeLetters>; 2] = [
            ("avx2", x86::escape_letters_avx2_for_tests),
            ("sse4.2", x86::escape_letters_sse42_for_tests),
        ];
        #[cfg(target_arch = "aarch64")]
        let simd: [SimdForTests<EscapeLetters>; 1] =
            [("neon", neon::escape_letters_neon_for_tests)];
        simd_equals_reference(&simd, escape_letters_portable, 17, 20_000);
    }

    #[test]
    fn every_escape_letter_is_judged_in_every_block_position() {
        // Each byte value after a backslash, in the first block, across a block boundary, in
        // a middle block and in the padded tail: accepted exactly when JSON allows the escape.
        // (`\u` is followed by hex digits here; its own rules have their tests.)
        for classifier in Classifier::all() {
            let mut index = Index::default();
            for prefix in [0, 55, 62, 63, 64, 100, 127] {
                for letter in 0..=255u8 {
                    let mut line = br#"{"k":""#.to_vec();
                    line.extend(std::iter::repeat_n(b'x', prefix));
                    line.push(b'\\');
                    line.push(letter);
                    if letter == b'u' {
                        line.extend_from_slice(b"00e9");
                    }
                    line.extend_from_slice(br#"","n":1}"#);
                    // A quote or a byte from 0x80 up may close or break the string for other
                    // reasons: judged as a whole by the tape path's rules, not here.
                    let allowed = matches!(
                        letter,
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'
                    );
                    assert_eq!(
                        index.build(&line, classifier),
                        allowed,
                        "{classifier:?}: \\{:?} after {prefix} bytes",
                        letter as char
                    );
                }
            }
            // An escape left open by the line's end, in a full and in a padded last block.
            for len in [64 - 1, 64 + 10] {
                let mut line = br#"{"k":""#.to_vec();
                line.resize(len - 1, b'x');
                line.push(b'\\');
                assert!(!index.build(&line, classifier), "{classifier:?}: {len}");
            }
        }
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn the_simd_classifiers_classify_as_the_portable_code() {
        #[cfg(target_arch = "x86_64")]
        let simd: [SimdForTests<Classes>; 2] = [
            ("avx2", x86::classify_avx2_for_tests),
            ("sse4.2", x86::classify_sse42_for_tests),
        ];
        #[cfg(target_arch = "aarch64")]
        let simd: [SimdForTests<Classes>; 1] = [("neon", neon::classify_neon_for_tests)];
        simd_equals_reference(&simd, classify_portable, 11, 50_000);
    }
}

#[cfg(test)]
pub(crate) mod against_simd_json {
    /// Our index equals simd-json's on a line simd-json parses (one check, shared with the
    /// fuzz targets: `test_support`).
    pub(crate) use crate::test_support::stage1_agrees_with_simd_json as same_as_simd_json;

    #[test]
    fn small_lines_index_as_simd_json_does() {
        for line in [
            &br#"{"a":[1,true,"x\"y"],"b":{}}"#[..],
            br#" {"k" : null } "#,
            br#"{"\\":"\\\"","n":-1.5e3}"#,
        ] {
            assert!(same_as_simd_json(line));
        }
    }
}
