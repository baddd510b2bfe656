//! Interned training samples: every key and value string is stored once and URLs become short
//! arrays of `(key id, value id)` pairs, so the tree build and proofing hash integers only.

use rustc_hash::FxHashMap;
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use crate::canon::rules::key::{decompose, escape_for, Component, Key, KeyRef};
use crate::canon::rules::Extract;

/// Interned key id.
pub(crate) type KeyId = u32;
/// Interned value id.
pub(crate) type ValId = u32;

/// One training URL.
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    /// Range in [`Samples::pairs`].
    pub start: u32,
    /// Number of pairs.
    pub len: u32,
    /// Dense cluster index.
    pub cluster: u32,
    /// Interned key set.
    pub shape: u32,
    /// Hash of the URL's key-value sequence ([`Samples::pair_hash`] folded in URL order).
    pub ident: u64,
}

/// Interned training set of one host.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    pub keys: Vec<Key>,
    key_ids: FxHashMap<Key, KeyId>,
    /// Key ids by [`KeyRef::hash64`]: a key already seen is found from its borrowed form
    /// without building an owned `Key` (a `String` for every query key of every URL).
    key_ids_by_hash: FxHashMap<u64, KeyId>,
    pub key_hash: Vec<u64>,
    pub key_comp: Vec<Component>,
    /// Sort rank of each key in URL order (scheme, host, port, path, query).
    pub key_rank: Vec<u32>,
    pub values: Vec<Box<str>>,
    value_ids: FxHashMap<Box<str>, ValId>,
    pub value_hash: Vec<u64>,
    pub pairs: Vec<(KeyId, ValId)>,
    pub urls: Vec<Sample>,
    /// Shapes: sorted key ids.
    pub shapes: Vec<Vec<KeyId>>,
    shape_ids: FxHashMap<Vec<KeyId>, u32>,
    /// URLs of each shape.
    pub by_shape: Vec<Vec<u32>>,
    /// Number of dense clusters.
    pub cluster_count: u32,
    /// URLs of each cluster (CSR: `cluster_start[c]..cluster_start[c+1]` in `cluster_urls`).
    pub cluster_start: Vec<u32>,
    pub cluster_urls: Vec<u32>,
    /// Samples that could not be used (unparseable, no host, too many keys, duplicates).
    pub skipped: usize,
}

/// A training URL as [`Samples::build_parsed`] receives it.
pub(crate) enum Parsing<'a> {
    /// Parsed already, from the sample's text.
    Parsed(&'a Url),
    /// The text, to parse.
    Text(&'a str),
}

/// Order-dependent fold of pair hashes: equal sequences give equal hashes.
#[inline]
pub(crate) fn fold(acc: u64, pair: u64) -> u64 {
    let z = (acc ^ pair).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z ^ (z >> 29)
}

#[inline]
pub(crate) fn pair_hash(key_hash: u64, value_hash: u64) -> u64 {
    let z = key_hash.rotate_left(17) ^ value_hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z ^ (z >> 31)
}

impl Samples {
    /// Interns `(url, cluster)` samples; URLs are parsed with the WHATWG parser.
    #[cfg(test)]
    pub fn build<'a>(samples: impl Iterator<Item = (&'a str, u64)>, max: usize) -> Samples {
        Samples::build_parsed(
            samples.map(|(text, cluster)| (Parsing::Text(text), cluster)),
            max,
        )
    }

    /// Interns `(url, cluster)` samples, some of them parsed already (by the site-rule search),
    /// the others parsed here: a URL is parsed once per learning run where it can be.
    pub fn build_parsed<'a>(
        samples: impl Iterator<Item = (Parsing<'a>, u64)>,
        max: usize,
    ) -> Samples {
        let mut s = Samples::default();
        let mut cluster_ids: FxHashMap<u64, u32> = FxHashMap::default();
        let mut seen: FxHashMap<u64, ()> = FxHashMap::default();
        let mut tmp: Vec<(KeyId, ValId)> = Vec::new();
        let mut shape_key: Vec<KeyId> = Vec::new();
        for (n, (text, cluster)) in samples.enumerate() {
            if n >= max {
                s.skipped += 1;
                continue;
            }
            let parsed;
            let url = match text {
                Parsing::Parsed(url) => url,
                Parsing::Text(text) => match Url::parse(text) {
                    Ok(url) => {
                        parsed = url;
                        &parsed
                    }
                    Err(_) => {
                        s.skipped += 1;
                        continue;
                    }
                },
            };
            // Room for a typical URL's keys at once rather than growing through 4, 8, 16.
            let mut kv = Vec::with_capacity(16);
            if decompose(url, &mut kv).is_err() {
                s.skipped += 1;
                continue;
            }
            tmp.clear();
            let mut ident = 0u64;
            for (k, v) in &kv {
                let kid = s.intern_key(*k);
                let vid = s.intern_value(v);
                ident = fold(
                    ident,
                    pair_hash(s.key_hash[kid as usize], s.value_hash[vid as usize]),
                );
                tmp.push((kid, vid));
            }
            // The same URL twice (possibly labelled twice) is one sample: the first label wins.
            if seen.insert(ident, ()).is_some() {
                s.skipped += 1;
                continue;
            }
            shape_key.clear();
            shape_key.extend(tmp.iter().map(|(k, _)| *k));
            shape_key.sort_unstable();
            // Looked up before inserting: most URLs share a known shape, and the key set is
            // copied only for a new one.
            let shape = match s.shape_ids.get(&shape_key) {
                Some(&shape) => shape,
                None => {
                    let shape = s.shapes.len() as u32;
                    s.shape_ids.insert(shape_key.clone(), shape);
                    s.shapes.push(shape_key.clone());
                    s.by_shape.push(Vec::new());
                    shape
                }
            };
            let next_cluster = cluster_ids.len() as u32;
            let cluster = *cluster_ids.entry(cluster).or_insert(next_cluster);
            let id = s.urls.len() as u32;
            s.by_shape[shape as usize].push(id);
            s.urls.push(Sample {
                start: s.pairs.len() as u32,
                len: tmp.len() as u32,
                cluster,
                shape,
                ident,
            });
            s.pairs.extend_from_slice(&tmp);
        }
        s.cluster_count = cluster_ids.len() as u32;
        let mut counts = vec![0u32; s.cluster_count as usize + 1];
        for u in &s.urls {
            counts[u.cluster as usize + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        s.cluster_start = counts.clone();
        s.cluster_urls = vec![0; s.urls.len()];
        for (i, u) in s.urls.iter().enumerate() {
            let slot = &mut counts[u.cluster as usize];
            s.cluster_urls[*slot as usize] = i as u32;
            *slot += 1;
        }
        // Rank keys in URL order for deterministic tie-breaks and output order.
        let mut order: Vec<KeyId> = (0..s.keys.len() as u32).collect();
        order.sort_by(|a, b| s.keys[*a as usize].cmp(&s.keys[*b as usize]));
        s.key_rank = vec![0; s.keys.len()];
        for (rank, k) in order.into_iter().enumerate() {
            s.key_rank[k as usize] = rank as u32;
        }
        s
    }

    fn intern_key(&mut self, key: KeyRef<'_>) -> KeyId {
        let hash = key.hash64();
        if let Some(&id) = self.key_ids_by_hash.get(&hash) {
            if self.keys[id as usize].as_ref() == key {
                return id;
            }
        }
        // New, or its hash is taken by another key: the owned map decides.
        let owned = key.to_key();
        if let Some(&id) = self.key_ids.get(&owned) {
            return id;
        }
        let id = self.keys.len() as KeyId;
        self.key_hash.push(hash);
        self.key_comp.push(owned.component());
        self.key_ids.insert(owned.clone(), id);
        self.key_ids_by_hash.entry(hash).or_insert(id);
        self.keys.push(owned);
        id
    }

    /// Interns a value string (also used for lower-cased variants).
    pub fn intern_value(&mut self, v: &str) -> ValId {
        if let Some(&id) = self.value_ids.get(v) {
            return id;
        }
        let id = self.values.len() as ValId;
        self.values.push(v.into());
        self.value_ids.insert(v.into(), id);
        self.value_hash.push(xxh3_64(v.as_bytes()));
        id
    }

    /// The pairs of URL `u` in URL order.
    #[inline]
    pub fn pairs_of(&self, u: u32) -> &[(KeyId, ValId)] {
        let s = &self.urls[u as usize];
        &self.pairs[s.start as usize..(s.start + s.len) as usize]
    }

    /// Value of key `k` in URL `u`.
    #[inline]
    pub fn get(&self, u: u32, k: KeyId) -> Option<ValId> {
        self.pairs_of(u)
            .iter()
            .find(|(kk, _)| *kk == k)
            .map(|(_, v)| *v)
    }

    /// The shape whose key set is `keys` (sorted key ids), when a sample has it.
    pub fn shape_of(&self, keys: &[KeyId]) -> Option<u32> {
        self.shape_ids.get(keys).copied()
    }

    /// URLs of cluster `c`.
    pub fn cluster(&self, c: u32) -> &[u32] {
        let (a, b) = (
            self.cluster_start[c as usize] as usize,
            self.cluster_start[c as usize + 1] as usize,
        );
        &self.cluster_urls[a..b]
    }

    /// Hash of value `v` written into key `to` after coming from key `from` (extraction,
    /// escaping and lower-casing as the engine does), so proofing judges exactly the URLs the
    /// engine would write. `None` when the extraction finds no number: the engine then does
    /// not rewrite the URL.
    pub fn moved_value_hash(
        &self,
        v: ValId,
        from: KeyId,
        to: KeyId,
        lowercase: bool,
        extract: Option<Extract>,
    ) -> Option<u64> {
        let whole = &self.values[v as usize];
        let text = match extract {
            Some(e) => e.apply(whole)?,
            None => whole,
        };
        let to_comp = self.key_comp[to as usize];
        let needs_lower = lowercase && text.bytes().any(|b| b.is_ascii_uppercase());
        let moved = self.key_comp[from as usize] != to_comp;
        if !needs_lower && !moved && text.len() == whole.len() {
            return Some(self.value_hash[v as usize]);
        }
        let mut s: std::borrow::Cow<'_, str> = std::borrow::Cow::Borrowed(text);
        if needs_lower {
            s = std::borrow::Cow::Owned(s.to_ascii_lowercase());
        }
        if moved {
            if let Some(e) = escape_for(to_comp, &s) {
                s = std::borrow::Cow::Owned(e);
            }
        }
        Some(xxh3_64(s.as_bytes()))
    }
}
