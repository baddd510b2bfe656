//! Text normalization: visible text → hashed word tokens.
//!
//! Rules (documented because fingerprints depend on them):
//! - Words are maximal runs of alphanumeric characters (`char::is_alphanumeric`); everything else
//!   (punctuation, symbols, whitespace) separates words, so `"Hello, World!"` and `"hello world"`
//!   give the same tokens.
//! - Lowercasing is Unicode-aware (`char::to_lowercase`), with an ASCII fast path.
//! - Scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) are cut
//!   into overlapping character bigrams (a lone character is a unigram), the usual choice for
//!   near-duplicate detection in CJK text; Hangul is spaced and is treated as words.
//! - A token is identified by the 64-bit xxh3 of its lowercased UTF-8 bytes; token strings are
//!   never kept.
//! - The HTML path also learns whether a token is *numeric* (made only of digits: parts of dates,
//!   times, counters, prices), so that template identities can mask numbers (see
//!   [`super::pagelet`]); fingerprint features keep the digits.

use xxhash_rust::xxh3::xxh3_64;

/// Maximum bytes of one word; longer runs (base64 blobs, minified junk) are cut so one token never
/// costs more than this to hash.
const MAX_WORD_BYTES: usize = 64;

/// True for characters of scripts written without spaces between words.
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF      // Thai, Lao
        | 0x1000..=0x109F    // Myanmar
        | 0x1780..=0x17FF    // Khmer
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x20000..=0x3FFFF) // CJK extensions B..
}

/// [`BYTE_CLASS`] of an ASCII byte that separates words (no flag set).
const SEPARATOR: u8 = 0;
/// [`BYTE_CLASS`] flag of an ASCII digit.
const DIGIT: u8 = 1;
/// [`BYTE_CLASS`] flag of an ASCII letter.
const LETTER: u8 = 2;
/// [`BYTE_CLASS`] flag of an ASCII upper-case letter (set with [`LETTER`]).
const UPPER: u8 = 4;
/// [`BYTE_CLASS`] flag of a byte of a non-ASCII character (taken a character at a time).
const NON_ASCII: u8 = 8;

/// What each byte is to the ASCII fast path of [`Tokenizer::feed`]: flags, so that a run's
/// bytes can be ORed together to learn in one pass whether it had letters or capitals.
static BYTE_CLASS: [u8; 256] = byte_classes();

const fn byte_classes() -> [u8; 256] {
    let mut table = [SEPARATOR; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = if !b.is_ascii() {
            NON_ASCII
        } else if b.is_ascii_digit() {
            DIGIT
        } else if b.is_ascii_uppercase() {
            LETTER | UPPER
        } else if b.is_ascii_lowercase() {
            LETTER
        } else {
            SEPARATOR
        };
        byte += 1;
    }
    table
}

/// Streaming tokenizer: feed text, receive token hashes through a callback.
///
/// Keeps one reusable buffer so tokenizing allocates nothing per token.
#[derive(Default)]
pub(crate) struct Tokenizer {
    /// The current word, lowercased UTF-8 (at most [`MAX_WORD_BYTES`] plus one character).
    word: Vec<u8>,
    /// Previous character of the current unspaced (CJK) run, for bigrams.
    cjk_prev: Option<char>,
    /// Whether the current CJK run has emitted a bigram yet (a run of one char emits a unigram).
    cjk_emitted: bool,
    /// Whether every character of the current word so far is a digit.
    numeric: bool,
}

impl Tokenizer {
    /// Tokenizes `text`, calling `emit` with each token hash and whether the token is numeric
    /// (only digits), in order, and ends the last word: callers only pass text that ends at a
    /// word boundary.
    pub(crate) fn feed(&mut self, text: &str, emit: &mut impl FnMut(u64, bool)) {
        let bytes = text.as_bytes();
        let mut at = 0;
        while let Some(&first) = bytes.get(at) {
            let class = BYTE_CLASS[usize::from(first)];
            if class != NON_ASCII {
                // A whole run of ASCII word bytes (or of ASCII separators) at once: most text is
                // ASCII, and a run costs one scan (a table lookup per byte, which also tells
                // whether it held a letter or a capital) and at most one copy instead of a step
                // per character.
                self.end_cjk(emit);
                let rest = &bytes[at..];
                if class == SEPARATOR {
                    let run = rest
                        .iter()
                        .position(|&b| BYTE_CLASS[usize::from(b)] != SEPARATOR)
                        .unwrap_or(rest.len());
                    self.end_word(emit);
                    at += run;
                    continue;
                }
                let mut seen = SEPARATOR;
                let run = rest
                    .iter()
                    .position(|&b| {
                        let class = BYTE_CLASS[usize::from(b)];
                        seen |= class;
                        class == SEPARATOR || class == NON_ASCII
                    })
                    .unwrap_or(rest.len());
                let letters = seen & LETTER != 0;
                let ends_here = rest
                    .get(run)
                    .is_none_or(|&b| BYTE_CLASS[usize::from(b)] == SEPARATOR);
                if self.word.is_empty() && ends_here && seen & UPPER == 0 {
                    // A whole lower-case word (most words of most text): hashed where it lies,
                    // without the copy into `word` that lowercasing or a continuation needs.
                    emit(xxh3_64(&rest[..run.min(MAX_WORD_BYTES)]), !letters);
                    at += run;
                    continue;
                }
                if self.word.is_empty() {
                    self.numeric = true;
                }
                self.numeric &= !letters;
                let kept = run.min(MAX_WORD_BYTES.saturating_sub(self.word.len()));
                let from = self.word.len();
                self.word.extend_from_slice(&rest[..kept]);
                self.word[from..].make_ascii_lowercase();
                at += run;
                continue;
            }
            let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            at += c.len_utf8();
            if is_unspaced(c) {
                self.end_word(emit);
                if let Some(prev) = self.cjk_prev {
                    let mut buf = [0u8; 8];
                    let a = prev.encode_utf8(&mut buf[..4]).len();
                    let b = c.encode_utf8(&mut buf[a..]).len();
                    emit(xxh3_64(&buf[..a + b]), false);
                    self.cjk_emitted = true;
                }
                self.cjk_prev = Some(c);
            } else if c.is_alphanumeric() {
                self.end_cjk(emit);
                if self.word.is_empty() {
                    self.numeric = true;
                }
                self.numeric &= c.is_numeric();
                if self.word.len() < MAX_WORD_BYTES {
                    for lower in c.to_lowercase() {
                        let mut buf = [0u8; 4];
                        self.word
                            .extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
                    }
                }
            } else {
                self.end_cjk(emit);
                self.end_word(emit);
            }
        }
        self.end_cjk(emit);
        self.end_word(emit);
    }

    fn end_word(&mut self, emit: &mut impl FnMut(u64, bool)) {
        if !self.word.is_empty() {
            emit(xxh3_64(&self.word), self.numeric);
            self.word.clear();
        }
    }

    fn end_cjk(&mut self, emit: &mut impl FnMut(u64, bool)) {
        if let Some(prev) = self.cjk_prev.take() {
            if !self.cjk_emitted {
                let mut buf = [0u8; 4];
                emit(xxh3_64(prev.encode_utf8(&mut buf).as_bytes()), false);
            }
            self.cjk_emitted = false;
        }
    }
}

/// Tokenizes a whole text into token hashes (same rules as the HTML path).
pub fn tokenize(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    Tokenizer::default().feed(text, &mut |h, _| out.push(h));
    out
}

/// Index of the byte after the last word boundary in `text`: the prefix `..idx` can be tokenized
/// now, the suffix may be the first half of a word continued by the next text chunk.
pub(crate) fn complete_prefix(text: &str) -> usize {
    match text.char_indices().next_back() {
        None => 0,
        Some((_, c)) if !c.is_alphanumeric() => text.len(),
        Some(_) => text
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_alphanumeric())
            .map_or(0, |(i, c)| i + c.len_utf8()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokenizer as it was written before ASCII runs were taken whole: one step per
    /// character. The runs must give exactly its tokens, since fingerprints and stored digests
    /// depend on them.
    fn per_character(text: &str) -> Vec<(u64, bool)> {
        let (mut out, mut word, mut numeric) = (Vec::new(), String::new(), false);
        let (mut cjk_prev, mut cjk_emitted) = (None::<char>, false);
        let end_cjk = |out: &mut Vec<(u64, bool)>, prev: &mut Option<char>, done: &mut bool| {
            if let Some(p) = prev.take() {
                if !*done {
                    let mut buf = [0u8; 4];
                    out.push((xxh3_64(p.encode_utf8(&mut buf).as_bytes()), false));
                }
                *done = false;
            }
        };
        let end_word = |out: &mut Vec<(u64, bool)>, word: &mut String, numeric: bool| {
            if !word.is_empty() {
                out.push((xxh3_64(word.as_bytes()), numeric));
                word.clear();
            }
        };
        for c in text.chars() {
            if c.is_ascii() {
                end_cjk(&mut out, &mut cjk_prev, &mut cjk_emitted);
                if c.is_ascii_alphanumeric() {
                    if word.is_empty() {
                        numeric = true;
                    }
                    numeric &= c.is_ascii_digit();
                    if word.len() < MAX_WORD_BYTES {
                        word.push(c.to_ascii_lowercase());
                    }
                } else {
                    end_word(&mut out, &mut word, numeric);
                }
            } else if is_unspaced(c) {
                end_word(&mut out, &mut word, numeric);
                if let Some(prev) = cjk_prev {
                    out.push((xxh3_64(format!("{prev}{c}").as_bytes()), false));
                    cjk_emitted = true;
                }
                cjk_prev = Some(c);
            } else if c.is_alphanumeric() {
                end_cjk(&mut out, &mut cjk_prev, &mut cjk_emitted);
                if word.is_empty() {
                    numeric = true;
                }
                numeric &= c.is_numeric();
                if word.len() < MAX_WORD_BYTES {
                    word.extend(c.to_lowercase());
                }
            } else {
                end_cjk(&mut out, &mut cjk_prev, &mut cjk_emitted);
                end_word(&mut out, &mut word, numeric);
            }
        }
        end_cjk(&mut out, &mut cjk_prev, &mut cjk_emitted);
        end_word(&mut out, &mut word, numeric);
        out
    }

    fn runs(text: &str) -> Vec<(u64, bool)> {
        let mut out = Vec::new();
        Tokenizer::default().feed(text, &mut |h, n| out.push((h, n)));
        out
    }

    #[test]
    fn ascii_runs_give_the_per_character_tokens() {
        let long = format!(
            "{}ß{}É東京 {} 12{}",
            "a".repeat(63),
            "b".repeat(70),
            "9".repeat(80),
            "Ω".repeat(40)
        );
        for text in [
            "",
            "Hello, World! 2019-03-22 v2 ١٢ abc 7",
            "ÉCOLE Straße naïve café x東京大学y 東 ok",
            "mixedÉcase12ab3 -- ++ DIGITS123 456",
            long.as_str(),
        ] {
            assert_eq!(runs(text), per_character(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn ascii_runs_match_per_character_on_any_text(text in "(?s)[a-zA-Z0-9 ,.ßÉé東京١٢Ω\\-]{0,200}") {
            proptest::prop_assert_eq!(runs(&text), per_character(&text));
        }
    }

    #[test]
    fn words_are_case_and_punctuation_insensitive() {
        assert_eq!(tokenize("Hello, World!"), tokenize("hello   world"));
        assert_eq!(tokenize("ÉCOLE Straße"), tokenize("école straße"));
        assert_eq!(tokenize("a-b").len(), 2);
        assert_ne!(tokenize("hello"), tokenize("help"));
    }

    #[test]
    fn numeric_tokens_are_flagged() {
        let mut flags = Vec::new();
        Tokenizer::default().feed("2019-03-22 v2 ١٢ abc 7", &mut |_, n| flags.push(n));
        assert_eq!(flags, vec![true, true, true, false, true, false, true]);
    }

    #[test]
    fn cjk_is_cut_into_bigrams() {
        // 4 characters → 3 overlapping bigrams; a lone character is one unigram.
        assert_eq!(tokenize("東京大学").len(), 3);
        assert_eq!(tokenize("東").len(), 1);
        assert_eq!(tokenize("東京 abc 大学").len(), 3);
        assert_eq!(tokenize("東京大学")[0], tokenize("東京")[0]);
    }

    #[test]
    fn long_runs_are_capped() {
        let junk = "x".repeat(10_000);
        assert_eq!(tokenize(&junk).len(), 1);
    }

    #[test]
    fn complete_prefix_keeps_partial_word() {
        assert_eq!(complete_prefix("foo bar"), 4);
        assert_eq!(complete_prefix("foo bar "), 8);
        assert_eq!(complete_prefix("foo"), 0);
        assert_eq!(complete_prefix(""), 0);
        assert_eq!(complete_prefix("a é"), 2);
    }
}
