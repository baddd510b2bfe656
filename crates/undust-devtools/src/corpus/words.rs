//! Word lists and small text helpers for the synthetic corpus: slugs, titles, sentences, hex ids.
//!
//! The lists are written for this crate (no third-party text). They are long enough that two
//! different content ids practically never produce the same paragraph, and varied enough (short
//! and long words, nouns, verbs, adjectives) that the text looks like prose to a tokenizer.

use std::ops::RangeInclusive;

use rand::seq::IndexedRandom;
use rand::Rng;

/// Common words used to build running text.
#[rustfmt::skip]
pub(crate) const WORDS: &[&str] = &[
    "about", "above", "account", "across", "action", "active", "actual", "address", "advance",
    "after", "again", "against", "agency", "agreement", "ahead", "allow", "almost", "alone",
    "along", "already", "although", "always", "amount", "analysis", "animal", "another", "answer",
    "anyone", "appear", "apply", "approach", "area", "argue", "around", "arrive", "article",
    "artist", "assume", "attack", "attention", "audience", "author", "available", "avoid",
    "balance", "battery", "beautiful", "because", "become", "before", "begin", "behavior",
    "behind", "believe", "benefit", "better", "between", "beyond", "billion", "board", "bottle",
    "branch", "bridge", "bright", "brother", "budget", "build", "business", "camera", "campaign",
    "cancel", "capital", "career", "careful", "carry", "castle", "catalog", "center", "central",
    "century", "certain", "chair", "challenge", "chance", "change", "chapter", "charge", "check",
    "choice", "choose", "church", "citizen", "city", "civil", "claim", "class", "clear", "climate",
    "close", "coach", "coast", "cold", "collect", "college", "color", "column", "comfort",
    "common", "community", "company", "compare", "complete", "concern", "condition", "conference",
    "consider", "contain", "continue", "control", "copper", "corner", "cost", "cotton", "council",
    "country", "county", "couple", "course", "court", "cover", "create", "credit", "crowd",
    "culture", "current", "customer", "cycle", "damage", "dance", "danger", "daughter", "debate",
    "decade", "decide", "decision", "deep", "defense", "degree", "delivery", "demand", "depend",
    "describe", "design", "detail", "develop", "device", "differ", "difficult", "dinner",
    "direction", "discover", "discuss", "disease", "distance", "doctor", "document", "dollar",
    "domestic", "double", "draft", "drama", "dream", "drive", "during", "early", "earth",
    "economy", "edge", "editor", "effect", "effort", "eight", "either", "election", "element",
    "energy", "engine", "enjoy", "enough", "entire", "environment", "equal", "error", "escape",
    "estate", "evening", "event", "evidence", "exact", "example", "expect", "expert", "explain",
    "factor", "failure", "family", "famous", "farmer", "feature", "federal", "feeling", "field",
    "figure", "filter", "final", "finance", "finger", "finish", "flight", "floor", "flower",
    "focus", "follow", "forest", "forget", "formal", "former", "forward", "frame", "freedom",
    "friend", "front", "future", "garden", "gather", "general", "gentle", "glass", "global",
    "golden", "government", "gravity", "great", "green", "ground", "group", "growth", "guard",
    "guess", "guide", "habit", "handle", "happen", "harbor", "health", "heart", "heavy", "height",
    "history", "holiday", "honest", "hospital", "hotel", "house", "however", "human", "hundred",
    "hunter", "idea", "image", "impact", "improve", "include", "income", "increase", "indeed",
    "industry", "inform", "inside", "instead", "interest", "island", "issue", "itself", "journey",
    "judge", "junior", "justice", "kitchen", "knowledge", "label", "ladder", "language", "large",
    "later", "launch", "lawyer", "leader", "learn", "leather", "legal", "lesson", "letter",
    "level", "library", "light", "limit", "listen", "little", "local", "lovely", "machine",
    "magazine", "maintain", "major", "manage", "market", "master", "matter", "meadow", "measure",
    "media", "medical", "member", "memory", "mention", "message", "method", "middle", "million",
    "minute", "mirror", "mission", "model", "modern", "moment", "money", "month", "morning",
    "mother", "motion", "mountain", "movement", "music", "narrow", "nation", "nature", "nearly",
    "network", "never", "night", "normal", "north", "notice", "number", "object", "occur", "ocean",
    "offer", "office", "often", "opinion", "orange", "order", "other", "outside", "owner", "paint",
    "paper", "parent", "partner", "party", "pattern", "peace", "people", "perform", "period",
    "person", "picture", "piece", "planet", "plastic", "player", "pocket", "police", "policy",
    "popular", "position", "positive", "power", "practice", "prepare", "present", "pressure",
    "pretty", "prevent", "price", "private", "problem", "process", "produce", "program", "project",
    "property", "protect", "prove", "public", "purpose", "quality", "quarter", "question", "quick",
    "quiet", "radio", "rather", "reach", "ready", "reason", "receive", "recent", "record",
    "reduce", "region", "remain", "remove", "report", "request", "research", "resource", "respond",
    "result", "return", "reveal", "river", "rocket", "rubber", "saddle", "safety", "salmon",
    "sample", "scene", "school", "science", "season", "second", "section", "security", "select",
    "senior", "series", "service", "settle", "seven", "shadow", "share", "shelter", "shoulder",
    "signal", "silver", "simple", "single", "sister", "skill", "smile", "social", "soldier",
    "source", "south", "space", "speak", "special", "spring", "square", "stable", "staff", "stage",
    "standard", "station", "stone", "story", "strategy", "street", "strong", "student", "study",
    "style", "subject", "success", "summer", "supply", "support", "surface", "system", "table",
    "talent", "teacher", "theory", "thought", "thousand", "ticket", "timber", "today", "together",
    "tomorrow", "tonight", "total", "toward", "track", "trade", "traffic", "travel", "treat",
    "trouble", "truth", "tunnel", "under", "union", "until", "upper", "valley", "value", "various",
    "velvet", "version", "victory", "village", "visit", "voice", "volume", "wagon", "wander",
    "water", "weather", "weekend", "weight", "western", "whatever", "whether", "window", "winter",
    "within", "without", "wonder", "worker", "world", "writer", "yellow", "young", "yourself",
    "zone",
];

/// Short function words mixed into sentences so they read like prose.
#[rustfmt::skip]
pub(crate) const GLUE: &[&str] = &[
    "the", "a", "of", "to", "and", "in", "for", "with", "on", "by", "at", "from", "is", "was",
    "are", "that", "this", "it", "as", "or", "but", "not", "we", "they", "has", "had", "will",
];

/// First names for forum posters, authors and wiki editors.
#[rustfmt::skip]
pub(crate) const NAMES: &[&str] = &[
    "alice", "bruno", "chen", "dmitri", "elena", "farid", "greta", "hiro", "ines", "jonas",
    "kavya", "liam", "mara", "nadia", "oskar", "priya", "quentin", "rosa", "sven", "tariq", "ulla",
    "victor", "wen", "ximena", "yusuf", "zora",
];

/// Colours for shop variants.
pub(crate) const COLOURS: &[&str] = &[
    "red", "blue", "green", "black", "white", "grey", "navy", "olive", "beige", "purple",
];

/// Sizes for shop variants.
pub(crate) const SIZES: &[&str] = &["xs", "s", "m", "l", "xl", "xxl"];

/// Top-level domains for generated hosts.
pub(crate) const TLDS: &[&str] = &["com", "net", "org", "io", "de", "co.uk", "info", "fr"];

/// Picks one word.
pub(crate) fn word<R: Rng>(rng: &mut R) -> &'static str {
    WORDS.choose(rng).copied().unwrap_or("page")
}

/// Picks one element of a non-empty constant list (falls back to `fallback` if it is empty).
pub(crate) fn pick<R: Rng>(
    rng: &mut R,
    list: &[&'static str],
    fallback: &'static str,
) -> &'static str {
    list.choose(rng).copied().unwrap_or(fallback)
}

/// A lowercase slug of `n` (a random count in the range) words joined by `-`.
pub(crate) fn slug<R: Rng>(rng: &mut R, n: RangeInclusive<usize>) -> String {
    join_words(rng, n, "-")
}

/// `n` (a random count in the range) words joined by `sep`.
pub(crate) fn join_words<R: Rng>(rng: &mut R, n: RangeInclusive<usize>, sep: &str) -> String {
    let n = count(rng, n);
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(word(rng));
    }
    out
}

/// A count drawn from `range`, at least 1 (an empty range gives its start).
fn count<R: Rng>(rng: &mut R, range: RangeInclusive<usize>) -> usize {
    let (lo, hi) = (*range.start(), *range.end());
    let n = if hi > lo {
        rng.random_range(lo..=hi)
    } else {
        lo
    };
    n.max(1)
}

/// Uppercases the first character of an ASCII word.
pub(crate) fn capitalize(w: &str) -> String {
    let mut chars = w.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// A title of `n` (a random count in the range) capitalized words separated by `sep` (e.g. `Widget_Assembly` or `Widget Assembly`).
pub(crate) fn title<R: Rng>(rng: &mut R, n: RangeInclusive<usize>, sep: &str) -> String {
    let n = count(rng, n);
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&capitalize(word(rng)));
    }
    out
}

/// `len` random lowercase hex digits.
pub(crate) fn hex<R: Rng>(rng: &mut R, len: usize) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    (0..len)
        .map(|_| DIGITS[rng.random_range(0..16)] as char)
        .collect()
}

/// `len` random characters from `[a-z0-9]`, the alphabet of most session ids.
pub(crate) fn alnum<R: Rng>(rng: &mut R, len: usize) -> String {
    const DIGITS: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..len)
        .map(|_| DIGITS[rng.random_range(0..36)] as char)
        .collect()
}

/// One sentence of running text: glue words interleaved with content words, capitalized, ending in
/// a full stop (sometimes a question mark).
pub(crate) fn sentence<R: Rng>(rng: &mut R) -> String {
    let len = rng.random_range(5..=18);
    let mut out = String::with_capacity(len * 7);
    for i in 0..len {
        let w = if i % 3 == 1 && rng.random_bool(0.7) {
            pick(rng, GLUE, "the")
        } else {
            word(rng)
        };
        if i == 0 {
            out.push_str(&capitalize(w));
        } else {
            out.push(' ');
            out.push_str(w);
            if i + 2 < len && rng.random_bool(0.06) {
                out.push(',');
            }
        }
    }
    out.push(if rng.random_bool(0.08) { '?' } else { '.' });
    out
}

/// A paragraph of `sentences` (a random count in the range) sentences.
pub(crate) fn paragraph<R: Rng>(rng: &mut R, sentences: RangeInclusive<usize>) -> String {
    let n = count(rng, sentences);
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&sentence(rng));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn words_are_url_and_html_safe() {
        for w in WORDS
            .iter()
            .chain(GLUE)
            .chain(NAMES)
            .chain(COLOURS)
            .chain(SIZES)
        {
            assert!(!w.is_empty());
            assert!(w.bytes().all(|b| b.is_ascii_lowercase()), "{w}");
        }
        assert!(WORDS.len() > 400);
        // Generators cut word prefixes of up to four bytes for made-up names.
        assert!(WORDS.iter().all(|w| w.len() >= 4));
    }

    #[test]
    fn helpers_produce_expected_shapes() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let s = slug(&mut rng, 3..=3);
        assert_eq!(s.split('-').count(), 3);
        let t = title(&mut rng, 2..=2, "_");
        assert!(t.chars().next().is_some_and(|c| c.is_ascii_uppercase()));
        assert_eq!(hex(&mut rng, 12).len(), 12);
        let sent = sentence(&mut rng);
        assert!(sent.ends_with('.') || sent.ends_with('?'));
        assert!(sent.split(' ').count() >= 5);
    }
}
