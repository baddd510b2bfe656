//! Charikar's simhash over weighted shingle features.
//!
//! Features are the tokens themselves (unigrams) and word 3-shingles (three consecutive tokens of
//! one pagelet, hashed with xxh3 over the three token hashes); every occurrence weighs 1, so a
//! word or phrase repeated in the text counts as often as it appears. Why both: a small edit (one
//! changed word) changes three shingles but one unigram, and the unigrams' repeated words give the
//! vector a large total weight, so small edits flip few bits (measured: an inserted sentence or a
//! changed timestamp stays within k = 3); the shingles keep word order, so different texts over a
//! shared vocabulary stay apart (same-site articles are ≥ 10 bits apart in the tests). Shingles never cross pagelet boundaries, which
//! makes a page's simhash vector the exact sum of its pagelets' vectors: that is what lets a
//! [`super::PageDigest`] re-fingerprint a page without its body.

use xxhash_rust::xxh3::xxh3_64;

/// Words per shingle feature.
pub const SHINGLE_WORDS: usize = 3;

/// Hash of one shingle feature (three consecutive token hashes).
#[inline]
pub(crate) fn shingle_hash(a: u64, b: u64, c: u64) -> u64 {
    let mut buf = [0u8; 24];
    buf[..8].copy_from_slice(&a.to_le_bytes());
    buf[8..16].copy_from_slice(&b.to_le_bytes());
    buf[16..].copy_from_slice(&c.to_le_bytes());
    xxh3_64(&buf)
}

/// Calls `emit` with each feature hash of a token sequence: every token (unigram) and every
/// 3-shingle, each occurrence with weight 1.
pub(crate) fn for_each_feature(tokens: &[u64], mut emit: impl FnMut(u64)) {
    tokens.iter().for_each(|&t| emit(t));
    if tokens.len() >= SHINGLE_WORDS {
        tokens
            .windows(SHINGLE_WORDS)
            .for_each(|w| emit(shingle_hash(w[0], w[1], w[2])));
    }
}

/// For each byte value, the ±1 its eight bits add to eight per-bit sums (bit j of the byte →
/// lane j: +1 when set, −1 when clear), so [`SimhashVector::add_feature`] adds a hash a byte at a
/// time.
static BYTE_SIGNS: [[i32; 8]; 256] = byte_signs();

const fn byte_signs() -> [[i32; 8]; 256] {
    let mut table = [[0i32; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut bit = 0;
        while bit < 8 {
            table[byte][bit] = if (byte >> bit) & 1 == 1 { 1 } else { -1 };
            bit += 1;
        }
        byte += 1;
    }
    table
}

/// The 64 signed per-bit sums of a simhash under construction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimhashVector(pub [i32; 64]);

impl Default for SimhashVector {
    fn default() -> Self {
        SimhashVector([0; 64])
    }
}

impl SimhashVector {
    /// Adds a feature with weight 1: +1 on bits set in its hash, −1 on the others.
    ///
    /// One byte of the hash at a time, through [`BYTE_SIGNS`]: eight table rows of eight lanes
    /// each instead of 64 shifts, which the compiler turns into a few vector additions (this was
    /// the largest single cost of page analysis on small pages). Not inlined: inlined into the
    /// pagelet loop the compiler left the lanes scalar (measured), on its own it adds them as
    /// vectors.
    #[inline(never)]
    pub fn add_feature(&mut self, hash: u64) {
        for (byte, slots) in hash.to_le_bytes().iter().zip(self.0.chunks_exact_mut(8)) {
            let signs = &BYTE_SIGNS[usize::from(*byte)];
            for (slot, sign) in slots.iter_mut().zip(signs) {
                *slot += sign;
            }
        }
    }

    /// Adds another vector (used to sum pagelet vectors into a page vector).
    pub fn add(&mut self, other: &[i32; 64]) {
        for (a, b) in self.0.iter_mut().zip(other) {
            *a = a.saturating_add(*b);
        }
    }

    /// The simhash: bit i is set when the sum for bit i is positive.
    pub fn finish(&self) -> u64 {
        self.0.iter().enumerate().fold(
            0u64,
            |acc, (i, &v)| if v > 0 { acc | (1 << i) } else { acc },
        )
    }
}

/// Simhash of a token sequence (as one pagelet).
pub fn simhash_tokens(tokens: &[u64]) -> u64 {
    let mut v = SimhashVector::default();
    for_each_feature(tokens, |h| v.add_feature(h));
    v.finish()
}

/// Simhash of plain text (tokenized with the same rules as page text); used to compare a page's
/// fingerprint with a gold text, or to fingerprint non-HTML content.
pub fn simhash_text(text: &str) -> u64 {
    simhash_tokens(&super::tokens::tokenize(text))
}

/// Hamming distance between two simhashes.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::tokens::tokenize;

    #[test]
    fn similar_texts_are_close_and_different_texts_far() {
        let base: String = (0..200).map(|i| format!("word{} ", i % 97)).collect();
        let edited = base.replacen("word5 ", "changed ", 1);
        let other: String = (0..200).map(|i| format!("other{} ", i * 7)).collect();
        let a = simhash_tokens(&tokenize(&base));
        assert!(hamming(a, simhash_tokens(&tokenize(&edited))) <= 3);
        assert!(hamming(a, simhash_tokens(&tokenize(&other))) > 10);
    }

    #[test]
    fn page_vector_is_sum_of_parts() {
        let a = tokenize("the quick brown fox jumps");
        let b = tokenize("over the lazy dog again");
        let mut va = SimhashVector::default();
        for_each_feature(&a, |h| va.add_feature(h));
        let mut vb = SimhashVector::default();
        for_each_feature(&b, |h| vb.add_feature(h));
        let mut both = SimhashVector::default();
        for_each_feature(&a, |h| both.add_feature(h));
        for_each_feature(&b, |h| both.add_feature(h));
        va.add(&vb.0);
        assert_eq!(va, both);
    }

    /// The table-driven [`SimhashVector::add_feature`] adds exactly what the per-bit definition
    /// says: +1 on every set bit of the hash, −1 on every clear one.
    #[test]
    fn add_feature_matches_the_per_bit_definition() {
        let mut fast = SimhashVector::default();
        let mut slow = [0i32; 64];
        let mut hash = 0x0123_4567_89ab_cdefu64;
        for step in 0..2000u64 {
            hash = xxh3_64(&step.to_le_bytes()) ^ hash.rotate_left(17);
            for h in [hash, 0, u64::MAX, 1 << (step % 64)] {
                fast.add_feature(h);
                for (i, slot) in slow.iter_mut().enumerate() {
                    *slot += if (h >> i) & 1 == 1 { 1 } else { -1 };
                }
            }
        }
        assert_eq!(fast.0, slow);
    }

    #[test]
    fn tiny_texts_use_unigrams() {
        assert_ne!(simhash_tokens(&tokenize("hello")), 0);
        assert_eq!(simhash_tokens(&[]), 0);
    }
}
