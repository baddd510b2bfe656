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

/// For each byte value, its eight bits spread over the eight bytes of a `u64` (bit k → byte k,
/// 0 or 1), so that [`FeatureCounts::add_feature`] counts set bits eight lanes to a word.
static BYTE_BITS: [u64; 256] = byte_bits();

const fn byte_bits() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut bit = 0;
        while bit < 8 {
            if (byte >> bit) & 1 == 1 {
                table[byte] |= 1 << (8 * bit);
            }
            bit += 1;
        }
        byte += 1;
    }
    table
}

/// Features a [`FeatureCounts`] takes before folding its byte-lane counts into the sums: a byte
/// lane counts at most this many set bits without carrying into its neighbour.
const FEATURES_PER_FOLD: u32 = 255;

/// A simhash vector under construction, for adding many features: the same sums as
/// [`SimhashVector::add_feature`] gives, at a fraction of its cost.
///
/// It counts, per bit, how many of the features since the last fold had it set, one byte per bit
/// packed eight to a `u64` (a feature costs eight table lookups and eight integer additions
/// instead of 64 lane additions), and every [`FEATURES_PER_FOLD`] features folds the counts into
/// the sums: a bit set in `c` of `n` features adds `c − (n − c)`, exactly the ±1s one at a time.
/// Page analysis adds two features per word of text (the word and the shingle starting at it),
/// which made the per-feature additions one of its largest costs.
#[derive(Clone, Debug, Default)]
pub(crate) struct FeatureCounts {
    sums: SimhashVector,
    /// Set-bit counts since the last fold: byte k of `set[j]` counts bit `8j + k`.
    set: [u64; 8],
    /// Features since the last fold.
    pending: u32,
    /// Whether any fold has moved counts into `sums` (otherwise they are all zero).
    folded: bool,
}

impl FeatureCounts {
    /// Adds a feature with weight 1 (as [`SimhashVector::add_feature`]).
    #[inline]
    pub(crate) fn add_feature(&mut self, hash: u64) {
        for (lanes, byte) in self.set.iter_mut().zip(hash.to_le_bytes()) {
            *lanes += BYTE_BITS[usize::from(byte)];
        }
        self.pending += 1;
        if self.pending == FEATURES_PER_FOLD {
            self.fold();
        }
    }

    /// Adds everything `other` counted, as if its features had been added here: its pending
    /// lane counts are added eight lanes to a word (a text block's counts into its pagelet's),
    /// instead of folding them and adding 64 sums.
    pub(crate) fn absorb(&mut self, other: &FeatureCounts) {
        if other.folded {
            self.sums.add(&other.sums.0);
        }
        if self.pending + other.pending > FEATURES_PER_FOLD {
            self.fold();
        }
        for (lanes, theirs) in self.set.iter_mut().zip(other.set) {
            *lanes += theirs;
        }
        self.pending += other.pending;
    }

    /// The sums of everything added.
    pub(crate) fn into_vector(mut self) -> SimhashVector {
        self.fold();
        self.sums
    }

    /// Moves the pending counts into the sums.
    fn fold(&mut self) {
        if self.pending == 0 {
            return;
        }
        let n = self.pending as i32;
        for (sums, lanes) in self.sums.0.chunks_exact_mut(8).zip(self.set) {
            for (k, sum) in sums.iter_mut().enumerate() {
                let set = ((lanes >> (8 * k)) & 0xff) as i32;
                *sum += 2 * set - n;
            }
        }
        self.set = [0; 8];
        self.pending = 0;
        self.folded = true;
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

    /// [`FeatureCounts`] gives exactly the sums of [`SimhashVector::add_feature`], whatever the
    /// number of features relative to its fold period (none, fewer, exactly, more, many folds).
    #[test]
    fn feature_counts_match_add_feature() {
        let mut hash = 0x9e37_79b9_7f4a_7c15u64;
        for count in [0usize, 1, 2, 254, 255, 256, 509, 510, 511, 1000, 70_000] {
            let mut slow = SimhashVector::default();
            let mut fast = FeatureCounts::default();
            for step in 0..count {
                hash = xxh3_64(&(step as u64).to_le_bytes()) ^ hash.rotate_left(13);
                let h = match step % 7 {
                    0 => 0,
                    1 => u64::MAX,
                    _ => hash,
                };
                slow.add_feature(h);
                fast.add_feature(h);
            }
            assert_eq!(fast.into_vector(), slow, "{count} features");
        }
        // Every bit set (or clear, or alternating) in every feature: a byte lane counts its
        // most between folds, so a fold period one too long would carry into the next lane.
        for hash in [u64::MAX, 0, 0x5555_5555_5555_5555] {
            for count in [255usize, 256, 257, 2000] {
                let mut slow = SimhashVector::default();
                let mut fast = FeatureCounts::default();
                for _ in 0..count {
                    slow.add_feature(hash);
                    fast.add_feature(hash);
                }
                assert_eq!(fast.into_vector(), slow, "{count} × {hash:#x}");
            }
        }
    }

    /// A block's counts absorbed into its pagelet's give exactly the sums of adding the block's
    /// features to the pagelet directly, whether either side has folded (more than
    /// [`FEATURES_PER_FOLD`] features) or the two together would carry a byte lane over.
    #[test]
    fn absorbed_counts_match_features_added_directly() {
        let mut hash = 0x2545_f491_4f6c_dd1du64;
        let mut next = |step: usize| {
            hash = xxh3_64(&(step as u64).to_le_bytes()) ^ hash.rotate_left(7);
            if step.is_multiple_of(5) {
                u64::MAX
            } else {
                hash
            }
        };
        for (outer, inner) in [
            (0usize, 0usize),
            (1, 1),
            (200, 100),
            (255, 255),
            (254, 1),
            (10, 600),
            (700, 3),
            (600, 600),
        ] {
            let mut slow = SimhashVector::default();
            let mut pagelet = FeatureCounts::default();
            let mut block = FeatureCounts::default();
            for step in 0..outer {
                let h = next(step);
                slow.add_feature(h);
                pagelet.add_feature(h);
            }
            for step in 0..inner {
                let h = next(outer + step);
                slow.add_feature(h);
                block.add_feature(h);
            }
            pagelet.absorb(&block);
            assert_eq!(pagelet.into_vector(), slow, "{outer} + {inner} features");
        }
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
