//! Proofing (Lei et al., section 5.2.3), made strict: every candidate is run on the whole
//! training set and its merges are checked against the duplicate labels.
//!
//! A rule rewrites the training URLs its source pattern matches; every other URL is its own
//! canonical form. URLs that end up identical form a group; two URLs of a group are a support
//! pair, and a false-positive pair when their clusters differ (eq. 3). Beyond the paper's rule
//! false-positive rate, each key whose value the rule discards ("merged" keys) is checked on
//! its own, so negative evidence cannot be diluted by unrelated support:
//!
//! - among the groups in which the key takes different values, the share of groups holding
//!   different clusters must stay at most `key_negative_rate_max` (pagination, sort orders,
//!   variants, revisions: the samples show the pages differ, the key must not be ignored);
//! - the key's pair-level false-positive rate must stay at most `fpr_max`;
//! - the key must show at least `min_ignored_values` distinct values inside merged duplicates,
//!   compared lower-cased (case variants prove case-insensitivity, not irrelevance).
//!
//! And the rule as a whole must merge URLs of at least `min_support_clusters` distinct clusters,
//! so one cluster that wrongly merged different pages cannot create a rule. A rule that makes
//! its `*` segment the last one or stops it being the last (`/f/*/view` ≡ `/f/*`) reaches
//! files there only where its merges showed files: a file's bare URL is its bytes, its `/view`
//! a page about it (Zope, Plone, WebDAV). A rule shown on documents only has its `*` fenced off
//! every value that names a file ([`crate::canon::rules::files`]); a rule shown on files is
//! refused where the host shows that segment holding files of an extension its merges never
//! showed.
//!
//! Canonical forms are compared by a 64-bit hash of their key-value sequence (the same sequence
//! the engine writes); a collision would need ~2^32 distinct forms per host.

use rustc_hash::{FxHashMap, FxHashSet};

use super::config::LearnConfig;
use super::key::{fold, pair_hash, KeyId, Samples, ValId};
use super::operations::Op;
use super::tree::Cond;
use crate::canon::rules::key::Component;
use crate::canon::rules::Extract;

/// Evidence about one merged key.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct KeyEvidence {
    pub key: KeyId,
    pub support_pairs: u64,
    pub fp_pairs: u64,
    pub groups_varying: u32,
    pub groups_negative: u32,
    pub positive_values: u32,
    /// Frequent values of the key (see `LearnConfig::frequent_value_share`) never shown
    /// irrelevant.
    pub unproven_frequent_values: u32,
    /// Values of the key the rule rewrites although a single other value (absence aside) was
    /// all the merged duplicates showed irrelevant: Plone's `/fr/a/b/view` beside `/fr/a/b`
    /// is no evidence that `/fr/a/b/item` is `/fr/a/b` too. One value seen is never evidence
    /// for every value (as for the site's parameters, `learn::site`); its literal rule is.
    pub unshown_values_reached: u32,
}

/// What running a rule on the training set showed.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Proof {
    /// URLs the rule rewrote (the paper's "support").
    pub matched: u32,
    pub support_pairs: u64,
    pub fp_pairs: u64,
    /// Distinct clusters with two URLs merged.
    pub positive_clusters: u32,
    pub keys: Vec<KeyEvidence>,
    /// Page types (see `Proofer::typed_segments`) the source's `*` would cover while the rule
    /// was shown on identifiers or slugs only, never on a page type: `(key, value)` that must
    /// keep their URLs as they are (deployed as more specific identity rules beside the rule).
    /// A parameter shown irrelevant on products (`a-title-p-7.html?cPath=20`) has shown nothing
    /// about the shop's scripts (`index.php?cPath=20`, where it names the category).
    pub guards: Vec<(KeyId, u32)>,
    /// The rule makes its `*` path segment the last one or stops it being the last
    /// (`/f/*/view` -> `/f/*`), its merges showed files there, and the host shows that segment
    /// holding files of another extension (`see Proofer::file_kinds`): a file's bare URL is its
    /// bytes and `/x.png/view` a page about it, so the rule has no evidence for those and is
    /// refused (its `*` cannot be fenced off files without losing the files it was shown on).
    pub reaches_unshown_files: bool,
    /// The same `*` when no merge of the rule showed a file there: the rule was shown on
    /// documents only, so its `*` is written to match no value that names a file
    /// (`Rule::not_files`), whatever the sample holds of files at that segment: the files
    /// beside the documents keep their URLs, and the documents keep the rule.
    pub fenced_files: Option<KeyId>,
    /// The rule drops a literal last segment that names a view (`/threads/*/latest` ->
    /// `/threads/*`, or `/threads/*/` with the segment left empty), or writes one, while a
    /// cluster of the sample holds `P/latest` beside another view of `P` (`P/page-3`) and not
    /// beside `P`. The tail then names a page of its
    /// own that is sometimes the same as `P` (XenForo's `latest` opens a thread's last page:
    /// its first on a one-page thread), and the rule is refused, as a default view tail is
    /// (`learn::segments`' `stray_tails`). The merge of different pages that would refuse it
    /// needs both of a thread's pages in a 20% sample; the last page's cluster alone shows the
    /// same, and is as common as the tail. A number dropped as the source's last segment is read
    /// the same way, as the position of a post (NodeBB's `/topic/5/its-title/27` opens the
    /// topic at post 27: its first page while the topic is short, its `?page=2` beside it).
    pub strays_from_duplicates: bool,
    /// The rule reads a number out of a value (`Extract`), its merges showed that value in one
    /// spelling shared by many values (MyBB's `thread-#.html`: a type word, not a title), and
    /// the rule also rewrites values of another such spelling its merges never showed
    /// (`user-#.html`, `forum-#.html`, `thread-#-lastpost.html`). The number there is another
    /// page type's id, and the rule has no evidence for it; refused. A slug's title differs
    /// from value to value (`culture-health-1742.html`), so its whole spelling is never shared;
    /// the word written next to its number is, where a type word marks it (`-p-` beside `-pr-`
    /// in `a-title-p-7.html`, see [`Proofer::reads_unshown_marks`]), and the same holds there.
    pub reads_unshown_spellings: bool,
    /// The rule overwrites a literal value with another literal of the same key where one of
    /// the two names a position and the other a view by a word (`/threads/*/page-4` ->
    /// `/threads/*/latest`). The view opens another page of each item (XenForo's `latest` is
    /// the thread's last page), so the two are one page only on items of one length: a
    /// coincidence of the items the sample shows, never a fact about the route. Refused. A
    /// position dropped or written as the item's default (`page-1` -> nothing) is untouched;
    /// see [`super::names_a_position`]. A view named by a word names a position when the rule
    /// drops a number read beside it (`goto=findpost&pid=M`, the page holding post M, written
    /// as `goto=lastpost`, the last page).
    pub trades_a_position_for_a_view: bool,
}

impl Proof {
    /// Eq. 3 on the training set.
    pub fn fpr(&self) -> f64 {
        if self.support_pairs == 0 {
            0.0
        } else {
            self.fp_pairs as f64 / self.support_pairs as f64
        }
    }

    /// Whether the rule is qualified (see the module docs).
    pub fn qualifies(&self, config: &LearnConfig) -> bool {
        if self.support_pairs == 0 || self.fp_pairs == self.support_pairs {
            return false;
        }
        if self.fpr() > config.fpr_max || self.positive_clusters < config.min_support_clusters {
            return false;
        }
        if self.reaches_unshown_files
            || self.strays_from_duplicates
            || self.reads_unshown_spellings
            || self.trades_a_position_for_a_view
        {
            return false;
        }
        self.keys.iter().all(|k| {
            let group_rate = if k.groups_varying == 0 {
                0.0
            } else {
                f64::from(k.groups_negative) / f64::from(k.groups_varying)
            };
            let pair_rate = if k.support_pairs == 0 {
                0.0
            } else {
                k.fp_pairs as f64 / k.support_pairs as f64
            };
            (k.groups_varying == 0 || group_rate <= config.key_negative_rate_max)
                && pair_rate <= config.fpr_max
                // Every discarded key needs its own positive evidence: a key that never
                // varied inside a merged group was never shown irrelevant (an overwritten page
                // number that met no other page of its article in training).
                && k.positive_values >= config.min_ignored_values.max(1)
                && k.unproven_frequent_values == 0
                && k.unshown_values_reached == 0
        })
    }
}

/// A discarded key has page-type markers for values (`print`, `comments`) only when it has at
/// most this many distinct values per matched cluster.
const MARKER_VALUES_MAX_SHARE: f64 = 0.5;

fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// Runs rules on the training set.
#[derive(Clone)]
pub(crate) struct Proofer<'a> {
    samples: &'a Samples,
    by_ident: FxHashMap<u64, u32>,
    mark: Vec<u32>,
    generation: u32,
    frequent_value_share: f64,
    /// `(hash of the path segments before it, path key)` of the segments that take, after that
    /// prefix, a value other than digits in at least two clusters: a page type (a folder or a
    /// script such as `tagged` beside question ids), not an identifier.
    typed_segments: FxHashMap<(u64, KeyId), Vec<u32>>,
    /// Per path key, the file extensions (lower-cased, with their dot) its values take in at
    /// least two clusters anywhere on the host: a page type of files (`.png`, `.pdf`) at that
    /// depth, whatever folder holds them, pooled over folders as a 20% sample shows few files
    /// per folder.
    file_kinds: FxHashMap<KeyId, Vec<String>>,
    /// Per key and way of reading a number out of it, the spellings around the number that
    /// the host writes on several values ([`Proofer::reads_unshown_marks`]), found when a rule
    /// first asks.
    marked_spellings: FxHashMap<(KeyId, Extract), FxHashSet<u64>>,
    /// Of those, the ones the URLs of a key set write at that key, per key set, key and way.
    shape_marks: FxHashMap<(u32, KeyId, Extract), Vec<u64>>,
}

impl<'a> Proofer<'a> {
    pub fn new(samples: &'a Samples, config: &LearnConfig) -> Self {
        let by_ident = samples
            .urls
            .iter()
            .enumerate()
            .map(|(i, u)| (u.ident, i as u32))
            .collect();
        Proofer {
            samples,
            by_ident,
            mark: vec![0; samples.urls.len()],
            generation: 0,
            frequent_value_share: config.frequent_value_share,
            typed_segments: typed_segments(samples),
            file_kinds: file_kinds(samples),
            marked_spellings: FxHashMap::default(),
            shape_marks: FxHashMap::default(),
        }
    }

    /// URLs of `shape` matching the literal conditions of `source`.
    pub fn matching<'s>(
        &'s self,
        source: &'s [(KeyId, Cond)],
        shape: u32,
    ) -> impl Iterator<Item = u32> + 's {
        let lits: Vec<(KeyId, u32)> = source
            .iter()
            .filter_map(|&(k, c)| match c {
                Cond::Lit(v) => Some((k, v)),
                _ => None,
            })
            .collect();
        self.samples
            .by_shape
            .get(shape as usize)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(move |&u| lits.iter().all(|&(k, v)| self.samples.get(u, k) == Some(v)))
    }

    /// The `*` path segment of `source` whose value the rule writes as the output's last
    /// segment while it was not the source's last, or the reverse (`/f/*/view` -> `/f/*`,
    /// `/a/*/view` -> `/b/a/*`, `/f/*` -> `/f/*/view`): where that value is a file name, the
    /// rule maps a file to a page about it.
    fn ending_wildcard(&self, source: &[(KeyId, Cond)], ops: &[Op]) -> Option<KeyId> {
        use crate::canon::rules::key::Key;
        let segment = |k: KeyId| match self.samples.keys[k as usize] {
            Key::Path(i) => Some(i),
            _ => None,
        };
        let last_in = |keys: &mut dyn Iterator<Item = KeyId>| {
            keys.filter_map(|k| segment(k).map(|i| (i, k))).max()
        };
        let (_, last_source) = last_in(&mut source.iter().map(|&(k, _)| k))?;
        let written = ops.iter().filter_map(|op| match *op {
            Op::Keep { key, .. }
            | Op::Replace { key, .. }
            | Op::Ignore {
                key, fill: Some(_), ..
            } => Some(key),
            Op::Ignore { fill: None, .. } => None,
        });
        let (_, last_output) = last_in(&mut written.into_iter())?;
        ops.iter().find_map(|op| match *op {
            // A value moved from the query into the path's end (`?product_id=5` -> `/product/5`)
            // is an id, not a file and its view; and a fence is written on path segments only.
            Op::Replace { key, from, .. }
                if segment(key).is_some()
                    && segment(from).is_some()
                    && source.iter().any(|&(k, c)| k == from && c == Cond::Any)
                    && (from == last_source) != (key == last_output) =>
            {
                Some(from)
            }
            _ => None,
        })
    }

    /// The literal view (key and value) that the rule drops from its source, as its last path
    /// segment or a query parameter (`/threads/*/latest` -> `/threads/*`,
    /// `showthread.php?action=lastpost&tid=*` -> `showthread.php?tid=*`), or writes after the
    /// source's last segment (`/threads/*` -> `/threads/*/latest`), when the value is a word and
    /// no file (a default document is a file's rule); else the source's last segment with no
    /// value (`None`) when the rule drops it whatever it holds, whose numbers are positions
    /// (`/topic/*/*/*` -> `/topic/*`): see [`Proof::strays_from_duplicates`].
    fn dropped_view(&self, source: &[(KeyId, Cond)], ops: &[Op]) -> Option<(KeyId, Option<ValId>)> {
        use crate::canon::rules::key::Key;
        let index = |k: KeyId| match self.samples.keys[k as usize] {
            Key::Path(i) => Some(i),
            _ => None,
        };
        let last_source = source.iter().filter_map(|&(k, _)| index(k)).max();
        let dropped = source.iter().find_map(|&(key, cond)| match cond {
            Cond::Lit(value)
                if (index(key).is_none() || index(key) == last_source)
                    && matches!(
                        self.samples.keys[key as usize],
                        Key::Path(_) | Key::Query { .. }
                    )
                    && ops.iter().any(|op| match *op {
                        Op::Ignore { key: k, fill: None } => k == key,
                        // Written empty: `/threads/*/latest` -> `/threads/*/`, the page's
                        // folder form, drops the view as well.
                        Op::Ignore {
                            key: k,
                            fill: Some(v),
                        }
                        | Op::Keep { key: k, val: v } => {
                            k == key && self.samples.values[v as usize].is_empty()
                        }
                        _ => false,
                    }) =>
            {
                Some((key, value))
            }
            _ => None,
        });
        let written = || {
            let (i, key, value) = ops
                .iter()
                .filter_map(|op| match *op {
                    Op::Keep { key, val }
                    | Op::Ignore {
                        key,
                        fill: Some(val),
                    } => index(key).map(|i| (i, key, val)),
                    _ => None,
                })
                .max_by_key(|&(i, _, _)| i)?;
            // After the source's last segment, or over its empty one (`/threads/*/` ->
            // `/threads/*/latest`: the folder form of the page written as the view).
            let over_empty = source.iter().any(|&(k, c)| {
                k == key && matches!(c, Cond::Lit(v) if self.samples.values[v as usize].is_empty())
            });
            (last_source.is_none_or(|last| i > last) || over_empty).then_some((key, value))
        };
        // A position dropped: the source's last segment, any value, dropped.
        let position = || {
            source.iter().find_map(|&(key, cond)| {
                (cond == Cond::Any
                    && index(key).is_some()
                    && index(key) == last_source
                    && ops
                        .iter()
                        .any(|op| matches!(*op, Op::Ignore { key: k, fill: None } if k == key)))
                .then_some((key, None))
            })
        };
        let Some((key, value)) = dropped.or_else(written) else {
            return position();
        };
        let name = &self.samples.values[value as usize];
        (name.bytes().any(|b| b.is_ascii_alphabetic())
            && !crate::canon::rules::files::names_a_file(name))
        .then_some((key, Some(value)))
    }

    /// Whether a training URL that is the rule's source page (`source`, `shape`) with the
    /// `view` in it (its literal, or any number where the view has none) shares its cluster
    /// with another view of the page the rule writes it as (a URL holding all of that page's
    /// parts and more: `P/page-3`, `P&page=3`) and not with that page itself: see
    /// [`Proof::strays_from_duplicates`]. The page is the rule's output, so a
    /// rule that also renames the script's mode (Discuz!'s `mod=redirect&goto=lastpost&tid=T`
    /// -> `mod=viewthread&tid=T`) or moves the id is judged on the page it writes. One pass over
    /// the training URLs, for the few rules that drop or write a view.
    fn view_strays(
        &self,
        source: &[(KeyId, Cond)],
        shape: u32,
        view: (KeyId, Option<ValId>),
        ops: &[Op],
    ) -> bool {
        let s = self.samples;
        let (key, literal) = view;
        let page_keys = &s.shapes[shape as usize];
        // The view's value on `u`: the literal, or a position (a number) at the key.
        let view_of = |u: u32| {
            s.get(u, key).filter(|&v| match literal {
                Some(value) => v == value,
                None => is_digits(&s.values[v as usize]),
            })
        };
        // The URLs holding the view have the page's keys and the view's key: one shape, whose
        // URLs are read instead of every training URL (a rule dropping its last segment asks
        // for each candidate).
        let view_shape = if page_keys.contains(&key) {
            Some(shape)
        } else {
            let mut keys = page_keys.clone();
            keys.push(key);
            keys.sort_unstable();
            s.shape_of(&keys)
        };
        let Some(view_shape) = view_shape else {
            return false;
        };
        let with_view = |u: u32| {
            view_of(u).is_some()
                && source.iter().all(|&(k, c)| match c {
                    Cond::Lit(v) => k == key || s.get(u, k) == Some(v),
                    _ => true,
                })
        };
        // Whether value `v` of key `k` is a pager's first page, by every value the key takes
        // (one pass over the samples per key, for `0` and `1` only).
        let first_pages: std::cell::RefCell<FxHashMap<(KeyId, u32), bool>> = Default::default();
        let first_page = |k: KeyId, v: u32| {
            let value: &str = &s.values[v as usize];
            matches!(value, "0" | "1")
                && *first_pages.borrow_mut().entry((k, v)).or_insert_with(|| {
                    let held = (0..s.urls.len() as u32)
                        .filter_map(|x| s.get(x, k))
                        .map(|x| &*s.values[x as usize]);
                    super::starts_a_pager(value, held)
                })
        };
        s.by_shape[view_shape as usize]
            .iter()
            .copied()
            .filter(|&u| with_view(u))
            .any(|u| {
                let sample = &s.urls[u as usize];
                let mates = s.cluster(sample.cluster);
                // The page the rule writes `u` as, without the view, pair by pair (values by hash:
                // a moved value need not be one the sample holds). A rule that writes the view
                // (`/threads/*` -> `/threads/*/latest`) is judged on the page it writes it after.
                let Some(mut page) = self.output_pairs(u, ops) else {
                    return false;
                };
                page.retain(|&(k, _)| k != key);
                let page_ident = page.iter().fold(0u64, |h, &(k, vh)| {
                    fold(h, pair_hash(s.key_hash[k as usize], vh))
                });
                let holds = |w: u32, (k, vh): (KeyId, u64)| {
                    s.get(w, k).is_some_and(|v| s.value_hash[v as usize] == vh)
                };
                // Another page of the item in the cluster (`P/page-3` beside `P/latest`), and not
                // the page: the view stood for that other one there. Other addresses of the page
                // (Plone's `/other-folder/x/view` beside `/folder/x/view`), other names of the
                // view (`P/folder_listing`: no number) and the page's first page spelled out
                // (`P?page=1`) say nothing of it.
                let another_view = mates.iter().any(|&w| {
                    w != u
                        && s.urls[w as usize].len as usize > page.len()
                        && s.get(w, key) != view_of(u)
                        && page.iter().all(|&pair| holds(w, pair))
                        && s.pairs_of(w).iter().any(|&(k, v)| {
                            !page.iter().any(|&(pk, _)| pk == k)
                                && super::names_a_position(&s.values[v as usize])
                                && !first_page(k, v)
                        })
                });
                another_view
                    && !mates
                        .iter()
                        .any(|&w| s.urls[w as usize].ident == page_ident)
            })
    }

    /// Whether the rule overwrites a literal of its source with another literal where one names
    /// a position and the other a view by a word: see [`Proof::trades_a_position_for_a_view`].
    fn trades_a_position_for_a_view(
        &self,
        source: &[(KeyId, Cond)],
        ops: &[Op],
        drops_a_position: bool,
    ) -> bool {
        use super::names_a_position;
        let values = &self.samples.values;
        let a_file = |v: &str| crate::canon::rules::files::names_a_file(v);
        let traded = |read: &str, written: &str| {
            if drops_a_position
                && !names_a_position(written)
                && written.bytes().any(|b| b.is_ascii_alphabetic())
                && !a_file(read)
                && !a_file(written)
            {
                // The read view names a position through the number dropped beside it.
                return true;
            }
            let (position, view) = if names_a_position(read) {
                (read, written)
            } else {
                (written, read)
            };
            names_a_position(position)
                && !names_a_position(view)
                && view.bytes().any(|b| b.is_ascii_alphabetic())
                && !a_file(position)
                && !a_file(view)
        };
        ops.iter().any(|op| {
            let (key, written) = match *op {
                Op::Keep { key, val }
                | Op::Ignore {
                    key,
                    fill: Some(val),
                } => (key, val),
                _ => return false,
            };
            source.iter().any(|&(k, cond)| match cond {
                Cond::Lit(read) if k == key && read != written => {
                    traded(&values[read as usize], &values[written as usize])
                }
                _ => false,
            })
        })
    }

    /// Whether `key` is a query parameter, every URL of one cluster in a merged group holds it
    /// with a value, and those values nest, one inside the other (OpenCart's category path
    /// `path=25_28` beside its last id `path=28`): one value written two ways, not a key shown
    /// irrelevant. `run` holds the cluster's (cluster, value) pairs in the group. Path segments
    /// are left out: a folder's names nest by chance (`w` in `wiki`).
    fn values_nest(&self, key: KeyId, run: &[(u32, u32)]) -> bool {
        if !matches!(self.samples.key_comp[key as usize], Component::Query) {
            return false;
        }
        let values: Option<Vec<String>> = run
            .iter()
            .map(|&(_, v)| {
                self.samples
                    .values
                    .get(v as usize)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.to_ascii_lowercase())
            })
            .collect();
        values.is_some_and(|values| super::values_nest(&values))
    }

    /// Hash of the lower-cased value (`u32::MAX`: absent, hashed as [`ABSENT_HASH`]).
    fn lower_hash(&self, v: u32) -> u64 {
        match self.samples.values.get(v as usize) {
            None => ABSENT_HASH,
            Some(s) if s.bytes().any(|b| b.is_ascii_uppercase()) => {
                xxhash_rust::xxh3::xxh3_64(s.to_ascii_lowercase().as_bytes())
            }
            Some(_) => self.samples.value_hash[v as usize],
        }
    }

    /// Hash of the canonical form of `u` under `ops`; `None` where the engine leaves `u` as
    /// it is (a number to extract missing, or one number read as two: [`Extract::splits`]).
    pub fn output_hash(&self, u: u32, ops: &[Op]) -> Option<u64> {
        let s = self.samples;
        let mut h = 0u64;
        self.for_each_output_pair(u, ops, |k, vh| {
            h = fold(h, pair_hash(s.key_hash[k as usize], vh));
        })?;
        Some(h)
    }

    /// The canonical form of `u` under `ops` as (key, value hash) pairs, in the order
    /// [`Proofer::output_hash`] folds them; `None` where it is `None`.
    fn output_pairs(&self, u: u32, ops: &[Op]) -> Option<Vec<(KeyId, u64)>> {
        let mut pairs = Vec::with_capacity(ops.len());
        self.for_each_output_pair(u, ops, |k, vh| pairs.push((k, vh)))?;
        Some(pairs)
    }

    /// Calls `each` with every (key, value hash) pair of the canonical form of `u` under `ops`;
    /// `None` where the engine leaves `u` as it is (the pairs given before it are then to be
    /// discarded).
    fn for_each_output_pair(
        &self,
        u: u32,
        ops: &[Op],
        mut each: impl FnMut(KeyId, u64),
    ) -> Option<()> {
        let s = self.samples;
        for op in ops {
            if let Op::Replace {
                from,
                ext: Some(Extract::FirstNumber),
                ..
            } = *op
            {
                let also_last = ops.iter().any(|o| {
                    matches!(*o, Op::Replace { from: f, ext: Some(Extract::LastNumber), .. } if f == from)
                });
                if also_last && !Extract::splits(&s.values[s.get(u, from)? as usize]) {
                    return None;
                }
            }
        }
        for op in ops {
            let (k, vh) = match *op {
                Op::Keep { key, val }
                | Op::Ignore {
                    key,
                    fill: Some(val),
                } => (key, s.value_hash[val as usize]),
                Op::Replace {
                    key,
                    from,
                    lower,
                    ext,
                } => (
                    key,
                    s.moved_value_hash(s.get(u, from)?, from, key, lower, ext)?,
                ),
                Op::Ignore { fill: None, .. } => continue,
            };
            each(k, vh);
        }
        Some(())
    }

    /// Runs one rule; see the module docs.
    pub fn proof(
        &mut self,
        source: &[(KeyId, Cond)],
        shape: u32,
        ops: &[Op],
        merged: &[KeyId],
    ) -> Proof {
        let proof = self.proof_of(source, shape, ops, merged, None);
        // A rule fenced off files never rewrites them: its evidence is that of the URLs it
        // still matches (a file and its view page in two clusters are no false merge of it).
        match proof.fenced_files {
            Some(k)
                if self
                    .matching(source, shape)
                    .any(|u| self.names_a_file(u, k)) =>
            {
                self.proof_of(source, shape, ops, merged, Some(k))
            }
            _ => proof,
        }
    }

    /// The values of key `k` the URLs `urls` hold, grouped by their spelling (`spelled`, which
    /// leaves out a value by answering `None`): the shapes a rule was shown on or reaches.
    fn values_by_spelling(
        &self,
        k: KeyId,
        urls: impl Iterator<Item = u32>,
        mut spelled: impl FnMut(&str) -> Option<u64>,
    ) -> FxHashMap<u64, FxHashSet<u32>> {
        let mut by_spelling: FxHashMap<u64, FxHashSet<u32>> = FxHashMap::default();
        for u in urls {
            let Some(v) = self.samples.get(u, k) else {
                continue;
            };
            if let Some(sp) = spelled(&self.samples.values[v as usize]) {
                by_spelling.entry(sp).or_default().insert(v);
            }
        }
        by_spelling
    }

    /// Whether a rule reading a number out of key `k` with `ext` was shown on values of one
    /// type word only and reaches values of another ([`marked_spelling`]; `shown` are the URLs
    /// merged with a duplicate, `shape` the key set it matches): the number there is another
    /// page type's id (osCommerce's `a-title-pr-5.html` is product 5's reviews, `-p-5` the
    /// product). A spelling is a type word where the host writes it on
    /// [`MIN_SHARED_SPELLING_VALUES`] values or more, counted over the whole host: a rule
    /// learned for one context (`?cPath=13_19`) matches a few URLs, while the host's pages
    /// show the scheme. Values around which titles are written (`a-title-72826660.amp.html`)
    /// spell the number in many ways, and the words that happen to repeat are no type: a rule
    /// is judged only where two values or more were shown, all of one spelling.
    fn reads_unshown_marks(&mut self, k: KeyId, ext: Extract, shape: u32, shown: &[u32]) -> bool {
        let samples = self.samples;
        let host = self.marked_spellings.entry((k, ext)).or_insert_with(|| {
            let mut values: FxHashMap<u64, FxHashSet<ValId>> = FxHashMap::default();
            for u in 0..samples.urls.len() as u32 {
                if let Some(v) = samples.get(u, k) {
                    if let Some(mark) = marked_spelling(&samples.values[v as usize], ext) {
                        values.entry(mark).or_default().insert(v);
                    }
                }
            }
            values
                .into_iter()
                .filter(|(_, vals)| vals.len() >= MIN_SHARED_SPELLING_VALUES)
                .map(|(mark, _)| mark)
                .collect()
        });
        // The one spelling the shown values have, and whether two values showed it.
        let (mut shown_mark, mut previous_value, mut two_values) = (None, None, false);
        for v in shown.iter().filter_map(|&u| samples.get(u, k)) {
            let Some(mark) = marked_spelling(&samples.values[v as usize], ext) else {
                continue;
            };
            if shown_mark.is_some_and(|m| m != mark) {
                return false;
            }
            shown_mark = Some(mark);
            two_values |= previous_value.is_some_and(|f| f != v);
            previous_value = Some(v);
        }
        let Some(shown_mark) = shown_mark.filter(|m| two_values && host.contains(m)) else {
            return false;
        };
        // The type words of the URLs of the rule's key set, whatever its literals (every URL it
        // matches is one of them): a rule learned for one context matches a few training URLs,
        // and the pages of the other contexts it meets once deployed are written as the host's
        // other URLs of that key set. Kept per key set, as many rules share one.
        let host = &*host;
        self.shape_marks
            .entry((shape, k, ext))
            .or_insert_with(|| {
                let mut marks: Vec<u64> = samples
                    .by_shape
                    .get(shape as usize)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .filter_map(|&u| samples.get(u, k))
                    .filter_map(|v| marked_spelling(&samples.values[v as usize], ext))
                    .filter(|mark| host.contains(mark))
                    .collect();
                marks.sort_unstable();
                marks.dedup();
                marks
            })
            .iter()
            .any(|&mark| mark != shown_mark)
    }

    /// Whether value `v` of path key `k` after the segments hashed as `prefix` is a page type
    /// there ([`typed_segments`]): a folder or a script, not an identifier or a slug.
    fn is_page_type(&self, prefix: u64, k: KeyId, v: u32) -> bool {
        self.typed_segments
            .get(&(prefix, k))
            .is_some_and(|types| types.binary_search(&v).is_ok())
    }

    /// Whether URL `u`'s value of path key `k` names a file ([`crate::canon::rules::files`]).
    fn names_a_file(&self, u: u32, k: KeyId) -> bool {
        self.samples.get(u, k).is_some_and(|v| {
            crate::canon::rules::files::names_a_file(&self.samples.values[v as usize])
        })
    }

    /// [`Proofer::proof`] on the URLs the rule matches, without those whose value of `fence`
    /// names a file.
    fn proof_of(
        &mut self,
        source: &[(KeyId, Cond)],
        shape: u32,
        ops: &[Op],
        merged: &[KeyId],
        fence: Option<KeyId>,
    ) -> Proof {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.generation = 1;
        }
        let gen = self.generation;
        let matched: Vec<u32> = self
            .matching(source, shape)
            .filter(|&u| fence.is_none_or(|k| !self.names_a_file(u, k)))
            .collect();
        // Matched URLs by output: sorted runs rather than a map of vectors, as most outputs
        // are one URL's own (the stable sort keeps each run in matching order).
        let mut outputs: Vec<(u64, u32)> = Vec::with_capacity(matched.len());
        for &u in &matched {
            self.mark[u as usize] = gen;
            if let Some(h) = self.output_hash(u, ops) {
                outputs.push((h, u));
            }
        }
        outputs.sort_by_key(|&(h, _)| h);
        let mut proof = Proof {
            matched: matched.len() as u32,
            keys: merged
                .iter()
                .map(|&key| KeyEvidence {
                    key,
                    ..KeyEvidence::default()
                })
                .collect(),
            ..Proof::default()
        };
        // Path segments the source leaves `*` and the rule keeps, after a literal prefix where
        // the host shows a page type (see `typed_segments`): the rule must not be learned from
        // identifiers alone. `(key, no positive value is a page type, any positive value)`.
        let mut wild: Vec<(KeyId, bool, bool)> = Vec::new();
        let mut prefix = 0u64;
        let mut wild_prefix = 0u64;
        for &(k, c) in source {
            let crate::canon::rules::key::Key::Path(_) = self.samples.keys[k as usize] else {
                continue;
            };
            match c {
                Cond::Lit(v) => {
                    prefix = fold(prefix, self.samples.value_hash[v as usize]);
                }
                Cond::Any => {
                    if !merged.contains(&k) && self.typed_segments.contains_key(&(prefix, k)) {
                        wild.push((k, true, false));
                        wild_prefix = prefix;
                    }
                    break;
                }
                Cond::Absent => break,
            }
        }
        let ending = self.ending_wildcard(source, ops);
        // Keys a number is read out of, and the URLs merged with a duplicate (their spellings
        // are what the rule was shown on: `reads_unshown_spellings`).
        let extracted: Vec<(KeyId, Extract)> = ops
            .iter()
            .filter_map(|op| match *op {
                Op::Replace {
                    from,
                    ext: Some(ext),
                    ..
                } => Some((from, ext)),
                _ => None,
            })
            .collect();
        let mut shown_extracted: Vec<u32> = Vec::new();
        // Extensions of the ending wildcard's values in URLs merged with a duplicate.
        let mut shown_kinds: Vec<Option<String>> = Vec::new();
        let mut positive: FxHashSet<u32> = FxHashSet::default();
        let mut positive_values: Vec<FxHashSet<u64>> = vec![FxHashSet::default(); merged.len()];
        let mut items: Vec<(u32, u32)> = Vec::new();
        for run in outputs.chunk_by(|a, b| a.0 == b.0) {
            // A training URL outside the matched ones whose own form is this output.
            let outside = self
                .by_ident
                .get(&run[0].0)
                .copied()
                .filter(|&w| self.mark[w as usize] != gen);
            if run.len() + usize::from(outside.is_some()) < 2 {
                continue;
            }
            let mut g: Vec<u32> = run.iter().map(|&(_, u)| u).collect();
            g.extend(outside);
            let n = g.len() as u64;
            let mut clusters: Vec<u32> = g
                .iter()
                .map(|&u| self.samples.urls[u as usize].cluster)
                .collect();
            clusters.sort_unstable();
            let same = run_pairs(&clusters);
            proof.support_pairs += pairs(n);
            proof.fp_pairs += pairs(n) - same;
            let mut i = 0;
            let mut here: Vec<u32> = Vec::new();
            while i < clusters.len() {
                let j = clusters[i..]
                    .iter()
                    .take_while(|&&c| c == clusters[i])
                    .count();
                if j >= 2 {
                    positive.insert(clusters[i]);
                    here.push(clusters[i]);
                }
                i += j;
            }
            if !extracted.is_empty() {
                shown_extracted.extend(
                    g.iter()
                        .filter(|&&u| here.contains(&self.samples.urls[u as usize].cluster)),
                );
            }
            if let (Some(k), false) = (ending, here.is_empty()) {
                for &u in &g {
                    if here.contains(&self.samples.urls[u as usize].cluster) {
                        if let Some(v) = self.samples.get(u, k) {
                            let kind = file_kind(&self.samples.values[v as usize]);
                            if !shown_kinds.contains(&kind) {
                                shown_kinds.push(kind);
                            }
                        }
                    }
                }
            }
            if !wild.is_empty() && !here.is_empty() {
                // Values shown by URLs merged with a duplicate of their own.
                for &u in &g {
                    if !here.contains(&self.samples.urls[u as usize].cluster) {
                        continue;
                    }
                    for w in &mut wild {
                        if let Some(v) = self.samples.get(u, w.0) {
                            // Digits are never a page type (`typed_segments`).
                            w.1 &= !self.is_page_type(wild_prefix, w.0, v);
                            w.2 = true;
                        }
                    }
                }
            }
            for (ki, &k) in merged.iter().enumerate() {
                // (value, cluster) per URL; absent = u32::MAX.
                items.clear();
                items.extend(g.iter().map(|&u| {
                    (
                        self.samples.get(u, k).unwrap_or(u32::MAX),
                        self.samples.urls[u as usize].cluster,
                    )
                }));
                let mut by_value: Vec<u32> = items.iter().map(|x| x.0).collect();
                by_value.sort_unstable();
                let same_value = run_pairs(&by_value);
                let cross = pairs(n) - same_value;
                if cross == 0 {
                    continue;
                }
                let mut by_cv: Vec<(u32, u32)> = items.iter().map(|&(v, c)| (c, v)).collect();
                by_cv.sort_unstable();
                let same_cv = run_pairs(&by_cv);
                let cross_same_cluster = same - same_cv;
                let ev = &mut proof.keys[ki];
                ev.support_pairs += cross;
                ev.fp_pairs += cross - cross_same_cluster;
                ev.groups_varying += 1;
                if cross > cross_same_cluster {
                    ev.groups_negative += 1;
                }
                // Values shown irrelevant: different values inside one cluster of the group.
                let mut i = 0;
                while i < by_cv.len() {
                    let j = by_cv[i..].iter().take_while(|x| x.0 == by_cv[i].0).count();
                    // Values differing only by case show case-insensitivity, not that the
                    // key is irrelevant: compare lower-cased.
                    let run = &by_cv[i..i + j];
                    let lowered: Vec<u64> = run.iter().map(|x| self.lower_hash(x.1)).collect();
                    if lowered.iter().any(|h| *h != lowered[0]) && !self.values_nest(k, run) {
                        positive_values[ki].extend(lowered);
                    }
                    i += j;
                }
            }
        }
        proof.positive_clusters = positive.len() as u32;
        proof.reads_unshown_spellings = extracted.iter().any(|&(k, _)| {
            let spelled = |value: &str| Some(spelling(value));
            let shown = self.values_by_spelling(k, shown_extracted.iter().copied(), spelled);
            let shared = |values: &FxHashSet<u32>| values.len() >= MIN_SHARED_SPELLING_VALUES;
            if !shown.values().any(shared) {
                return false;
            }
            let reached = self.values_by_spelling(k, outputs.iter().map(|&(_, u)| u), spelled);
            reached
                .iter()
                .any(|(sp, values)| shared(values) && !shown.contains_key(sp))
        }) || extracted
            .iter()
            .any(|&(k, ext)| self.reads_unshown_marks(k, ext, shape, &shown_extracted));
        proof.strays_from_duplicates = self
            .dropped_view(source, ops)
            .is_some_and(|view| self.view_strays(source, shape, view, ops));
        // A number the source reads and the rule drops names the position its view opens at
        // (Discuz!'s `goto=findpost&pid=M&ptid=T`: the page holding post M), so the source's
        // view is a position even when its name is a word.
        let drops_a_position = ops.iter().any(|op| match *op {
            Op::Ignore { key, fill: None } => {
                source.contains(&(key, Cond::Any))
                    && !ops
                        .iter()
                        .any(|o| matches!(*o, Op::Replace { from, .. } if from == key))
                    && outputs.iter().all(|&(_, u)| {
                        self.samples
                            .get(u, key)
                            .is_some_and(|v| is_digits(&self.samples.values[v as usize]))
                    })
            }
            _ => false,
        });
        // A number read out of values that all share one spelling with a word written after
        // the number (MyBB's `thread-#-lastpost.html`): the word names a view of the item the
        // number identifies (titles differ from value to value, and an extension follows a
        // dot), so the rule writes the view as the item, which it is on one-page items only.
        let reads_a_view_word = extracted.iter().any(|&(k, ext)| {
            // Of the values the merges showed, those the rule reads a number out of.
            let mut word_after = true;
            let spelled = |value: &str| {
                let (_, end) = ext.span(value)?;
                let after = &value[end..];
                word_after &= after.starts_with(['-', '_', ','])
                    && after[1..].starts_with(|c: char| c.is_ascii_alphabetic());
                Some(spelling(value))
            };
            let by_spelling = self.values_by_spelling(k, shown_extracted.iter().copied(), spelled);
            word_after
                && by_spelling.len() == 1
                && by_spelling
                    .values()
                    .all(|values| values.len() >= MIN_SHARED_SPELLING_VALUES)
        });
        proof.trades_a_position_for_a_view =
            reads_a_view_word || self.trades_a_position_for_a_view(source, ops, drops_a_position);
        if shown_kinds.iter().all(Option::is_none) {
            proof.fenced_files = ending;
        } else if let Some(kinds) = ending.and_then(|k| self.file_kinds.get(&k)) {
            proof.reaches_unshown_files = kinds
                .iter()
                .any(|kind| !shown_kinds.iter().flatten().any(|s| s == kind));
        }
        for &(k, digits, shown) in &wild {
            if digits && shown {
                if let Some(vals) = self.typed_segments.get(&(wild_prefix, k)) {
                    proof.guards.extend(vals.iter().map(|&v| (k, v)));
                }
            }
        }
        let matched_clusters: FxHashSet<u32> = matched
            .iter()
            .map(|&u| self.samples.urls[u as usize].cluster)
            .collect();
        let frequent_at = if self.frequent_value_share >= 1.0 {
            f64::INFINITY
        } else {
            (self.frequent_value_share * matched_clusters.len() as f64).max(2.0)
        };
        for (ki, (ev, vals)) in proof.keys.iter_mut().zip(positive_values).enumerate() {
            ev.positive_values = vals.len() as u32;
            let mut shown = vals.iter().filter(|&&h| h != ABSENT_HASH);
            if let (Some(&only), None) = (shown.next(), shown.next()) {
                let reached: FxHashSet<u64> = outputs
                    .iter()
                    .filter_map(|&(_, u)| self.samples.get(u, merged[ki]))
                    .map(|v| self.lower_hash(v))
                    .filter(|&h| h != only)
                    .collect();
                ev.unshown_values_reached = reached.len() as u32;
            }
            let mut clusters_of: FxHashMap<u64, FxHashSet<u32>> = FxHashMap::default();
            for &u in &matched {
                let v = self.samples.get(u, merged[ki]).unwrap_or(u32::MAX);
                clusters_of
                    .entry(self.lower_hash(v))
                    .or_default()
                    .insert(self.samples.urls[u as usize].cluster);
            }
            // Only a key with few values relative to its pages names page types; a slug or an
            // id has about one value per page, and one repeated by chance is no marker.
            if clusters_of.len() as f64 > MARKER_VALUES_MAX_SHARE * matched_clusters.len() as f64 {
                continue;
            }
            ev.unproven_frequent_values = clusters_of
                .iter()
                .filter(|(v, c)| c.len() as f64 >= frequent_at && !vals.contains(v))
                .count() as u32;
        }
        proof
    }
}

/// [`Proofer::lower_hash`] of an absent value.
const ABSENT_HASH: u64 = u64::MAX;

/// Distinct values a spelling needs to be shared (a type word around a number, not a title):
/// below it, a spelling repeated by chance.
const MIN_SHARED_SPELLING_VALUES: usize = 3;

/// Hash of `value` with every run of digits read as one `#`: the spelling of a value around
/// its numbers (`thread-#.html`, `forum-#-page-#.html`).
fn spelling(value: &str) -> u64 {
    let mut out = Vec::with_capacity(value.len());
    let mut in_digits = false;
    for b in value.bytes() {
        let digit = b.is_ascii_digit();
        if !digit {
            out.push(b);
        } else if !in_digits {
            out.push(b'#');
        }
        in_digits = digit;
    }
    xxhash_rust::xxh3::xxh3_64(&out)
}

/// Hash of the spelling of `value` around the number `ext` reads out of it: the word written
/// on each side of the number, past one separator, and nothing further. `p-#.html` for
/// osCommerce's `a-title-p-1088.html` (a product), `pr-#.html` for `a-title-pr-1088.html` (its
/// reviews). Titles differ from value to value, so two values share this spelling only where a
/// type word marks the number (Ultimate SEO URLs' `-p-`, `-c-`, `-m-`, `-pr-`), which
/// [`spelling`] of the whole value sees only when no title surrounds it. `None` for a value
/// without a number.
fn marked_spelling(value: &str, ext: Extract) -> Option<u64> {
    let (start, end) = ext.span(value)?;
    let (before, after) = (&value[..start], &value[end..]);
    let separator = |c: char| !c.is_ascii_alphanumeric();
    let word_before = {
        let sep = usize::from(before.ends_with(separator));
        let word = before[..before.len() - sep]
            .trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .len();
        &before[word..]
    };
    let word_after = {
        let sep = usize::from(after.starts_with(separator));
        let word = after[sep..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .map_or(after.len(), |i| i + sep);
        &after[..word]
    };
    let mut out: Vec<u8> = Vec::with_capacity(word_before.len() + 1 + word_after.len());
    out.extend_from_slice(word_before.as_bytes());
    out.push(b'#');
    out.extend_from_slice(word_after.as_bytes());
    Some(xxhash_rust::xxh3::xxh3_64(&out))
}

fn is_digits(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// The path segments that are page types after their prefix (see `Proofer::typed_segments`):
/// one pass over the samples, cluster by cluster.
fn typed_segments(samples: &Samples) -> FxHashMap<(u64, KeyId), Vec<u32>> {
    use crate::canon::rules::key::Key;
    let mut seen: ClusterCounts<(u64, KeyId, u32)> = ClusterCounts::default();
    let mut path: Vec<(u16, KeyId, u32)> = Vec::new();
    for c in 0..samples.cluster_count {
        for &u in samples.cluster(c) {
            path.clear();
            path.extend(samples.pairs_of(u).iter().filter_map(|&(k, v)| {
                match samples.keys[k as usize] {
                    Key::Path(i) => Some((i, k, v)),
                    _ => None,
                }
            }));
            path.sort_unstable();
            let mut prefix = 0u64;
            for &(_, k, v) in &path {
                if !is_digits(&samples.values[v as usize]) {
                    seen.see((prefix, k, v), c);
                }
                prefix = fold(prefix, samples.value_hash[v as usize]);
            }
        }
    }
    let mut out: FxHashMap<(u64, KeyId), Vec<u32>> = FxHashMap::default();
    for (prefix, k, v) in seen.in_at_least(2) {
        out.entry((prefix, k)).or_default().push(v);
    }
    for vals in out.values_mut() {
        vals.sort_unstable();
    }
    out
}

/// The file extension of a path segment's value, lower-cased with its dot (`.png`), when the
/// value names a file ([`crate::canon::rules::files`]).
fn file_kind(value: &str) -> Option<String> {
    crate::canon::rules::files::file_extension(value).map(str::to_ascii_lowercase)
}

/// Per path key, the file extensions its values take in at least two clusters (see
/// `Proofer::file_kinds`).
fn file_kinds(samples: &Samples) -> FxHashMap<KeyId, Vec<String>> {
    use crate::canon::rules::key::Key;
    let mut seen: ClusterCounts<(KeyId, String)> = ClusterCounts::default();
    for c in 0..samples.cluster_count {
        for &u in samples.cluster(c) {
            for &(k, v) in samples.pairs_of(u) {
                if !matches!(samples.keys[k as usize], Key::Path(_)) {
                    continue;
                }
                if let Some(kind) = file_kind(&samples.values[v as usize]) {
                    seen.see((k, kind), c);
                }
            }
        }
    }
    let mut out: FxHashMap<KeyId, Vec<String>> = FxHashMap::default();
    for (k, kind) in seen.in_at_least(2) {
        out.entry(k).or_default().push(kind);
    }
    for kinds in out.values_mut() {
        kinds.sort_unstable();
    }
    out
}

/// How many distinct clusters each item is seen in, for items seen cluster by cluster (all of
/// one cluster's sightings before the next cluster's).
struct ClusterCounts<K>(FxHashMap<K, (u32, u32)>);

impl<K> Default for ClusterCounts<K> {
    fn default() -> Self {
        ClusterCounts(FxHashMap::default())
    }
}

impl<K: std::hash::Hash + Eq> ClusterCounts<K> {
    /// `item` seen in `cluster`.
    fn see(&mut self, item: K, cluster: u32) {
        // (distinct clusters, last cluster seen)
        let e = self.0.entry(item).or_insert((0, u32::MAX));
        if e.1 != cluster {
            e.0 += 1;
            e.1 = cluster;
        }
    }

    /// The items seen in at least `clusters` distinct clusters, in no particular order.
    fn in_at_least(self, clusters: u32) -> impl Iterator<Item = K> {
        self.0
            .into_iter()
            .filter(move |(_, (n, _))| *n >= clusters)
            .map(|(item, _)| item)
    }
}

/// Pairs of equal adjacent items in a sorted slice.
fn run_pairs<T: PartialEq>(sorted: &[T]) -> u64 {
    let mut total = 0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|x| **x == sorted[i]).count();
        total += pairs(j as u64);
        i += j;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::key::Key;
    use crate::learn::operations::{merged_keys, url_order};

    /// The `*` whose value becomes the last path segment or stops being it is a path segment's:
    /// a query id written as the path's end (`?product_id=5` -> `/product/5`) is an id, not a
    /// file and a page about it. At the fileguard merge such a rule was fenced on its query key,
    /// which no rule file can hold: the rule was dropped, and a shop host of the one-pipeline
    /// test fell to chained value rules the live gate refused.
    #[test]
    fn an_id_moved_from_the_query_to_the_path_end_is_no_ending_wildcard() {
        let mut urls = Vec::new();
        for n in 0..10u64 {
            urls.push((
                format!("http://s.example/catalog/product_view.php?product_id={n}"),
                n,
            ));
            urls.push((format!("http://s.example/product/{n}"), n));
            urls.push((format!("http://s.example/f/doc-{n}/view"), 100 + n));
        }
        let samples = Samples::build(urls.iter().map(|(u, c)| (u.as_str(), *c)), 1000);
        let key_of = |k: &Key| samples.keys.iter().position(|x| x == k).unwrap() as KeyId;
        let value_of = |v: &str| samples.values.iter().position(|x| &**x == v).unwrap() as u32;
        let id = key_of(&Key::Query {
            name: "product_id".into(),
            occurrence: 1,
        });
        let (p0, p1, p2) = (
            key_of(&Key::Path(0)),
            key_of(&Key::Path(1)),
            key_of(&Key::Path(2)),
        );
        let proofer = Proofer::new(&samples, &LearnConfig::default());
        let moved = [
            (p0, Cond::Lit(value_of("catalog"))),
            (p1, Cond::Lit(value_of("product_view.php"))),
            (id, Cond::Any),
        ];
        let moved_ops = [
            Op::Keep {
                key: p0,
                val: value_of("product"),
            },
            Op::Replace {
                key: p1,
                from: id,
                lower: false,
                ext: None,
            },
        ];
        assert_eq!(proofer.ending_wildcard(&moved, &moved_ops), None);
        // A segment kept while it stops being the last is one (`/f/*/view` -> `/f/*`).
        let view = [
            (p0, Cond::Lit(value_of("f"))),
            (p1, Cond::Any),
            (p2, Cond::Lit(value_of("view"))),
        ];
        let view_ops = [
            Op::Keep {
                key: p0,
                val: value_of("f"),
            },
            Op::Replace {
                key: p1,
                from: p1,
                lower: false,
                ext: None,
            },
        ];
        assert_eq!(proofer.ending_wildcard(&view, &view_ops), Some(p1));
    }

    /// The pagination hole (generated news site, seed 11): a candidate whose target fixes
    /// `p=2` while its source matches `p=*`. In this sparse training set no page of an article
    /// meets another page of the same article, so `p` never varies inside a merged group; the
    /// overwrite must still be refused, since nothing shows `p` irrelevant. The same rule
    /// keeping `p` by a replace qualifies (the tracking key `ref` is shown irrelevant).
    #[test]
    fn overwriting_a_wildcard_page_number_needs_ignore_evidence() {
        let mut urls = Vec::new();
        for id in 0..40u64 {
            // Plain page 2 of most articles; tracked page 2, 3 or 4 of a few.
            if !(2..6).contains(&id) {
                urls.push((format!("http://n.example/a/{id}?p=2"), id * 10 + 2));
            }
            if id < 6 {
                let p = if id < 2 { 2 } else { 3 + id % 2 };
                for r in 0..2 {
                    urls.push((
                        format!("http://n.example/a/{id}?p={p}&ref=r{id}x{r}"),
                        id * 10 + p,
                    ));
                }
            }
        }
        let samples = Samples::build(urls.iter().map(|(u, c)| (u.as_str(), *c)), 1000);
        let tracked = samples
            .urls
            .iter()
            .position(|s| {
                samples.shapes[s.shape as usize].iter().any(|&k| {
                    matches!(&samples.keys[k as usize], Key::Query { name, .. } if name == "ref")
                })
            })
            .unwrap();
        let shape = samples.urls[tracked].shape;
        let key_of = |k: &Key| samples.keys.iter().position(|x| x == k).unwrap() as KeyId;
        let p = key_of(&Key::Query {
            name: "p".into(),
            occurrence: 1,
        });
        let two = samples.values.iter().position(|v| &**v == "2").unwrap() as u32;
        let mut source: Vec<(KeyId, Cond)> = samples.shapes[shape as usize]
            .iter()
            .map(|&k| {
                let lit = samples.get(tracked as u32, k).unwrap();
                let any = matches!(samples.keys[k as usize], Key::Path(1) | Key::Query { .. });
                (k, if any { Cond::Any } else { Cond::Lit(lit) })
            })
            .collect();
        source.sort_by(|a, b| {
            url_order(&samples.keys[a.0 as usize]).cmp(&url_order(&samples.keys[b.0 as usize]))
        });
        let ops_with = |p_op: Op| -> Vec<Op> {
            let mut ops: Vec<Op> = source
                .iter()
                .map(|&(k, c)| match (c, &samples.keys[k as usize]) {
                    (_, Key::Query { name, .. }) if name == "ref" => {
                        Op::Ignore { key: k, fill: None }
                    }
                    _ if k == p => p_op.clone(),
                    (Cond::Lit(v), _) => Op::Keep { key: k, val: v },
                    _ => Op::Replace {
                        key: k,
                        from: k,
                        lower: false,
                        ext: None,
                    },
                })
                .collect();
            ops.sort_by_key(|o| matches!(o, Op::Ignore { .. }));
            ops
        };
        let config = LearnConfig::default();
        let mut proofer = Proofer::new(&samples, &LearnConfig::default());
        let overwrite = ops_with(Op::Keep { key: p, val: two });
        let merged = merged_keys(&samples, &source, &overwrite);
        assert!(merged.contains(&p), "an overwritten key is a merged key");
        let proof = proofer.proof(&source, shape, &overwrite, &merged);
        assert_eq!(proof.fp_pairs, 0, "{proof:?}");
        assert!(!proof.qualifies(&config), "{proof:?}");
        let replace = ops_with(Op::Replace {
            key: p,
            from: p,
            lower: false,
            ext: None,
        });
        let merged = merged_keys(&samples, &source, &replace);
        assert!(!merged.contains(&p));
        let proof = proofer.proof(&source, shape, &replace, &merged);
        assert!(proof.qualifies(&config), "{proof:?}");
    }

    /// osCommerce with Ultimate SEO URLs and "add cPath" (`a-title-p-7.html?cPath=20`): the
    /// sample shows products merged with and without `cPath`, and never `index.php?cPath=…`,
    /// the category listing, where `cPath` names the page. A rule learned on slugs alone gets
    /// the host's page types at its `*` as guards, as one learned on numeric ids does, so
    /// `index.php?cPath=20` is not written as the front page.
    #[test]
    fn a_rule_shown_on_slugs_alone_guards_the_page_types_its_wildcard_covers() {
        let mut urls = Vec::new();
        for n in 10..30u64 {
            let slug = format!("http://s.example/shop/title-{n}-p-{n}.html");
            urls.push((format!("{slug}?cPath=20"), n));
            urls.push((slug, n));
        }
        urls.push(("http://s.example/shop/index.php".to_owned(), 900));
        for m in 1..4u64 {
            let brand = format!("http://s.example/shop/index.php?manufacturers_id={m}");
            urls.push((brand, 900 + m));
        }
        let samples = Samples::build(urls.iter().map(|(u, c)| (u.as_str(), *c)), 1000);
        let key_of = |k: &Key| samples.keys.iter().position(|x| x == k).unwrap() as KeyId;
        let value_of = |v: &str| samples.values.iter().position(|x| &**x == v).unwrap() as u32;
        let (p1, cpath) = (
            key_of(&Key::Path(1)),
            key_of(&Key::Query {
                name: "cPath".into(),
                occurrence: 1,
            }),
        );
        let shape = samples.urls[0].shape;
        let mut source: Vec<(KeyId, Cond)> = samples.shapes[shape as usize]
            .iter()
            .map(|&k| {
                let lit = samples.get(0, k).unwrap();
                (k, if k == p1 { Cond::Any } else { Cond::Lit(lit) })
            })
            .collect();
        let order = |k: KeyId| url_order(&samples.keys[k as usize]);
        source.sort_by_key(|&(k, _)| order(k));
        let ops: Vec<Op> = source
            .iter()
            .map(|&(k, c)| match c {
                _ if k == cpath => Op::Ignore { key: k, fill: None },
                Cond::Lit(v) => Op::Keep { key: k, val: v },
                _ => Op::Replace {
                    key: k,
                    from: k,
                    lower: false,
                    ext: None,
                },
            })
            .collect();
        let merged = merged_keys(&samples, &source, &ops);
        let proof =
            Proofer::new(&samples, &LearnConfig::default()).proof(&source, shape, &ops, &merged);
        assert!(proof.qualifies(&LearnConfig::default()), "{proof:?}");
        assert!(
            proof.guards.contains(&(p1, value_of("index.php"))),
            "{proof:?}"
        );
    }

    /// MyBB's seed-43 host: `thread-N.html` beside `showthread.php?tid=N` taught a rule reading
    /// the first number of any value under `/forums/`, which also wrote `user-N.html`,
    /// `forum-N.html` and `thread-N-lastpost.html` as threads. The spellings the merges showed
    /// are shared by many values (a type word), so the rule is refused where it reaches another
    /// shared spelling; titles around an id are not shared, and keep the rule.
    #[test]
    fn a_number_read_from_one_shared_spelling_is_no_evidence_for_another() {
        let proof_on = |others: &dyn Fn(u64) -> String, item: &dyn Fn(u64) -> String| {
            let mut urls = Vec::new();
            for n in 10..20u64 {
                urls.push((format!("http://f.example/forums/{}", item(n)), n));
                urls.push((format!("http://f.example/forums/showthread.php?tid={n}"), n));
                urls.push((
                    format!("http://f.example/forums/{}", others(500 + n)),
                    500 + n,
                ));
            }
            let samples = Samples::build(urls.iter().map(|(u, c)| (u.as_str(), *c)), 1000);
            let key_of = |k: &Key| samples.keys.iter().position(|x| x == k).unwrap() as KeyId;
            let value_of = |v: &str| samples.values.iter().position(|x| &**x == v).unwrap() as u32;
            let (p0, p1) = (key_of(&Key::Path(0)), key_of(&Key::Path(1)));
            let tid = key_of(&Key::Query {
                name: "tid".into(),
                occurrence: 1,
            });
            let first = samples
                .urls
                .iter()
                .position(|u| !samples.shapes[u.shape as usize].contains(&tid))
                .unwrap();
            let shape = samples.urls[first].shape;
            // Scheme, host and `/forums/` as they are, the last segment any value.
            let mut source: Vec<(KeyId, Cond)> = samples.shapes[shape as usize]
                .iter()
                .map(|&k| {
                    let lit = samples.get(first as u32, k).unwrap();
                    (k, if k == p1 { Cond::Any } else { Cond::Lit(lit) })
                })
                .collect();
            let order = |k: KeyId| url_order(&samples.keys[k as usize]);
            source.sort_by_key(|&(k, _)| order(k));
            assert!(source.contains(&(p0, Cond::Lit(value_of("forums")))));
            let mut ops: Vec<Op> = source
                .iter()
                .map(|&(k, c)| match c {
                    Cond::Lit(v) => Op::Keep { key: k, val: v },
                    _ => Op::Keep {
                        key: k,
                        val: value_of("showthread.php"),
                    },
                })
                .collect();
            ops.push(Op::Replace {
                key: tid,
                from: p1,
                lower: false,
                ext: Some(Extract::FirstNumber),
            });
            ops.sort_by_key(|o| order(o.key()));
            let merged = merged_keys(&samples, &source, &ops);
            let mut proofer = Proofer::new(&samples, &LearnConfig::default());
            proofer.proof(&source, shape, &ops, &merged)
        };
        let thread = |n: u64| format!("thread-{n}.html");
        let user = |n: u64| format!("user-{n}.html");
        let proof = proof_on(&user, &thread);
        assert!(proof.support_pairs > 0 && proof.fp_pairs == 0, "{proof:?}");
        assert!(proof.reads_unshown_spellings, "{proof:?}");
        assert!(!proof.qualifies(&LearnConfig::default()), "{proof:?}");
        // Titles around the id: no spelling is shared, the rule stands.
        let words = [
            "radio", "quick", "harbor", "meadow", "civic", "tunnel", "amber",
        ];
        let titled = |n: u64| {
            let w = |i: u64| words[(i % words.len() as u64) as usize];
            format!("{}-{}-{}-{n}.html", w(n), w(n / 3 + 1), w(n / 7 + 2))
        };
        let about = |n: u64| format!("about-{}-{}.html", words[(n % 7) as usize], n % 3);
        let proof = proof_on(&about, &titled);
        assert!(!proof.reads_unshown_spellings, "{proof:?}");
        // Another spelling of the same type word shown merged is evidence for itself only.
        let proof = proof_on(&thread, &thread);
        assert!(!proof.reads_unshown_spellings, "{proof:?}");
        // A type word between a title and the id (osCommerce's Ultimate SEO URLs): merges
        // shown on products (`-p-`) are no evidence for their reviews (`-pr-`), while every
        // whole value is spelled differently.
        let names = [
            "radio", "quick", "harbor", "meadow", "civic", "tunnel", "amber", "north", "lemon",
            "cedar", "delta", "fable", "grain", "heron", "ivory", "jolly", "kite", "lunar",
            "maple", "noble",
        ];
        let title = |n: u64| names[(n % 20) as usize];
        let product = |n: u64| format!("{}-p-{n}.html", title(n));
        let reviews = |n: u64| format!("{}-pr-{n}.html", title(n));
        let proof = proof_on(&reviews, &product);
        assert!(proof.support_pairs > 0 && proof.fp_pairs == 0, "{proof:?}");
        assert!(proof.reads_unshown_spellings, "{proof:?}");
        // Titles alone around the id: the words that repeat are no type word.
        let plain = |n: u64| format!("{}-{n}.html", title(n));
        let proof = proof_on(&plain, &product);
        assert!(!proof.reads_unshown_spellings, "{proof:?}");
    }

    /// Discuz!'s seed-53 host: `forum.php?mod=redirect&goto=findpost&ptid=T&pid=M` (the page of
    /// thread T holding post M) beside `goto=lastpost&tid=T` (its last page) on one-page
    /// threads, where both open page 1, taught `goto=findpost&pid=*&ptid=*` ->
    /// `goto=lastpost&tid=*`, which merged the redirects of a long thread's early posts with its
    /// last page. The number dropped beside `findpost` names the position the view opens at, so
    /// overwriting `findpost` with `lastpost` trades a position for a view. A dropped value that is
    /// no number names no position.
    #[test]
    fn a_view_named_by_a_word_and_a_dropped_number_is_a_position() {
        let proof_with = |post: &dyn Fn(u64, u64) -> String| {
            let mut urls = Vec::new();
            for t in 10..20u64 {
                let base = "http://d.example/forum.php?mod=redirect";
                urls.push((format!("{base}&goto=lastpost&tid={t}"), t));
                for m in 0..2 {
                    let pid = post(t, m);
                    urls.push((format!("{base}&goto=findpost&ptid={t}&pid={pid}"), t));
                }
            }
            let samples = Samples::build(urls.iter().map(|(u, c)| (u.as_str(), *c)), 1000);
            let key_of = |name: &str| {
                let key = Key::Query {
                    name: name.into(),
                    occurrence: 1,
                };
                samples.keys.iter().position(|x| *x == key).unwrap() as KeyId
            };
            let value_of = |v: &str| samples.values.iter().position(|x| &**x == v).unwrap() as u32;
            let (goto, pid, ptid, tid) =
                (key_of("goto"), key_of("pid"), key_of("ptid"), key_of("tid"));
            // The findpost key set: `goto`, `mod`, `pid`, `ptid`.
            let u = (0..samples.urls.len() as u32)
                .find(|&u| samples.get(u, pid).is_some())
                .unwrap();
            let shape = samples.urls[u as usize].shape;
            let mut source: Vec<(KeyId, Cond)> = samples.shapes[shape as usize]
                .iter()
                .map(|&k| match samples.get(u, k) {
                    Some(v) if k != pid && k != ptid => (k, Cond::Lit(v)),
                    _ => (k, Cond::Any),
                })
                .collect();
            let order = |k: KeyId| url_order(&samples.keys[k as usize]);
            source.sort_by_key(|&(k, _)| order(k));
            let mut ops: Vec<Op> = source
                .iter()
                .map(|&(k, c)| match c {
                    _ if k == goto => Op::Keep {
                        key: k,
                        val: value_of("lastpost"),
                    },
                    Cond::Lit(v) => Op::Keep { key: k, val: v },
                    _ => Op::Ignore { key: k, fill: None },
                })
                .collect();
            ops.push(Op::Replace {
                key: tid,
                from: ptid,
                lower: false,
                ext: None,
            });
            ops.sort_by_key(|op| order(op.key()));
            let merged = merged_keys(&samples, &source, &ops);
            Proofer::new(&samples, &LearnConfig::default()).proof(&source, shape, &ops, &merged)
        };
        let by_number = proof_with(&|t, m| format!("{}", 1000 + 10 * t + m));
        assert!(by_number.trades_a_position_for_a_view, "{by_number:?}");
        assert!(!by_number.qualifies(&LearnConfig::default()));
        let by_word = proof_with(&|t, m| format!("ref{}", ["a", "b", "c"][((t + m) % 3) as usize]));
        assert!(!by_word.trades_a_position_for_a_view, "{by_word:?}");
    }
}
