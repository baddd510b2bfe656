//! Compiled per-host rule engine: learned rules applied after static normalization.
//!
//! [`HostRules::compile`] indexes a host's rules so that a URL finds its rule without trying
//! each rule in turn:
//!
//! 1. the URL's *shape* (the set of its keys, hashed order-independently) selects the few rules
//!    whose source pattern has exactly those keys (patterns are closed: see
//!    [`crate::canon::rules::pattern`]);
//! 2. within a shape, rules are indexed by the value of the key most of them fix to a literal
//!    (usually a directory or script name), plus a short list of rules that leave that key open;
//! 3. among the matching rules the most specific (most literals) wins, ties by rule order.
//!
//! Applying costs one key-value decomposition (no allocation beyond a small key buffer), a hash
//! lookup or two, literal comparisons, and the output string.
//!
//! Learned rule sets are built so that a canonical form matches no rule (see
//! `learn::select`); the engine itself never loops: it applies one rule, once.
//!
//! A host's declared aliases ([`crate::canon::rules::aliases`]) are looked up last, in one hash
//! map built when the set is compiled: the canonical form the rules give (or the URL itself when
//! no rule changes it) is replaced by its alias target when it is a `from`. Hosts without
//! aliases pay nothing (the map is not consulted). Compiling checks that every `to` is a fixed
//! point of the host's rules and no `to` is a `from`, so canonicalization stays idempotent. A
//! URL folded onto its mirror set's canonical origin is looked up as folded, with the rules
//! (and so the aliases) its fold is given, so aliases learned on the canonical host apply to its
//! mirrors' URLs too.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cell::Cell;
use url::Url;

use crate::canon::rules::files;
use crate::canon::rules::key::{
    decompose, decompose_view, escape_for, Key, KeyRef, MAX_KEYS_PER_URL,
};
use crate::canon::rules::pattern::{key_name, url_layout, Piece, ValuePattern};
use crate::canon::rules::{
    Alias, Extract, HostRuleSet, Operation, Pattern, Rule, RuleError, SiteAction, SiteRewriter,
    ValidatedRule,
};
use crate::canon::view::UrlView;

/// A URL rewritten by the host's site rules, a pattern rule, or both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// The canonical URL text.
    pub canonical: String,
    /// Index of the pattern rule in the host's rule set ([`HostRules::rule_id`] names it);
    /// `None` when only site rules changed the URL.
    pub rule_index: Option<usize>,
}

/// A rewrite that is not a fixpoint: its output does not parse back to itself, or the rules
/// rewrite it again. Deployed rules must never produce one (the learner removes the rule, the
/// live-rule gate refuses the set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixpointViolation {
    /// The URL rewritten.
    pub url: String,
    /// Its rewrite.
    pub first: Rewrite,
    /// What the rewrite became: parsed again and, when a rule applies, rewritten again (the
    /// rewrite itself when it does not parse).
    pub second: String,
}

/// Why a URL was rewritten: the site rules that changed it, the pattern rule that matched,
/// the declared alias that replaced their result, and the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    /// Site rules that changed the URL (id and action), in the order they apply.
    pub site_rules: Vec<(String, String)>,
    /// The pattern rule that matched, if any.
    pub rule: Option<RuleMatch>,
    /// The host's declared alias whose `from` is what the rules gave (or the URL itself when
    /// no rule changed it), and which replaced it by its `to`; applied last.
    pub alias: Option<Alias>,
    /// The canonical URL.
    pub canonical: String,
}

/// The pattern rule that rewrote a URL and the pattern it matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleMatch {
    /// Index of the rule in the host's rule set.
    pub rule_index: usize,
    /// The rule's id.
    pub rule_id: String,
    /// The source pattern (tree node) the URL matched.
    pub source_pattern: String,
    /// The pattern of the result.
    pub target_pattern: String,
    /// The operations, as text (`ignore query:sid`, ...).
    pub operations: Vec<String>,
}

#[derive(Debug)]
enum COp {
    /// Literal value (keep, or ignore with fill).
    Literal(Key, String),
    /// Value of the source entry at this index.
    Replace {
        key: Key,
        from: usize,
        lowercase: bool,
        extract: Option<Extract>,
    },
}

impl COp {
    /// The key this operation writes.
    fn key(&self) -> &Key {
        match self {
            COp::Literal(key, _) | COp::Replace { key, .. } => key,
        }
    }
}

#[derive(Debug)]
struct CompiledRule {
    id: String,
    source_text: String,
    target_text: String,
    ops_text: Vec<String>,
    /// Source entries: key, its hash, literal value if any.
    source: Vec<(Key, u64, Option<String>)>,
    /// Source entries whose `*` matches only values that do not name a file
    /// ([`Rule::not_files`]); mostly empty.
    not_files: Vec<usize>,
    /// Source entries read both as their first and as their last number: the rule applies only
    /// where such a value holds two ([`Extract::splits`]); mostly empty.
    split_values: Vec<usize>,
    /// The order [`HostRules::matches`] checks the source entries in: literals of the path
    /// and query first (where the rules of one shape differ), the host's entries last (every
    /// URL the host's rules see mostly has them), so a rule that does not match fails early.
    check_order: Vec<usize>,
    ops: Vec<COp>,
    /// How the output is written: [`url_layout`] of the operations' keys (`Name` and `Value`
    /// index `ops`), computed once here so a rewrite writes straight into its string.
    layout: Vec<Piece>,
    /// Bytes of the output that do not come from the URL (fixed text, names, literals).
    fixed_bytes: usize,
    literals: usize,
    /// Whether this rule's output could be matched by a rule again (then `apply` re-checks).
    chains: bool,
    /// Whether the output's path carries a value moved from another component (a query value),
    /// which the site rules' path actions may need to normalize again.
    moves_values: bool,
}

#[derive(Debug, Default)]
struct ShapeIndex {
    /// Discriminating key (hash, key) and rules by its literal value.
    disc: Option<(u64, Key)>,
    by_value: FxHashMap<String, Vec<u32>>,
    /// Rules that leave the discriminating key open (or all, without one).
    rest: Vec<u32>,
}

/// A host's rules, compiled. `Send + Sync`; share behind an `Arc`.
#[derive(Debug)]
pub struct HostRules {
    host: String,
    version: u64,
    /// Host-wide actions applied before the pattern rules.
    site: SiteRewriter,
    /// Site rule ids and actions (for `explain`, which builds each one's rewriter when asked:
    /// kept compiled, they took more memory than all the rest of a host's rules).
    site_rules: Vec<(String, SiteAction)>,
    rules: Vec<CompiledRule>,
    shapes: FxHashMap<u64, ShapeIndex>,
    /// Most rules one URL can go through (longest chain of the acyclic could-match graph).
    max_steps: usize,
    /// Declared aliases, `from` → `to` (canonical forms; see the module documentation).
    aliases: FxHashMap<String, String>,
}

/// Finalizer of splitmix64: spreads key hashes before they are summed into a shape hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn shape_of<'a>(keys: impl Iterator<Item = KeyRef<'a>>) -> u64 {
    keys.fold(0u64, |acc, k| acc.wrapping_add(mix(k.hash64())))
}

impl HostRules {
    /// Validates and compiles a host's rules.
    pub fn compile(set: &HostRuleSet) -> Result<Self, RuleError> {
        let validated = set.validate()?;
        let mut rules = Vec::with_capacity(set.rules.len());
        let mut shapes: FxHashMap<u64, ShapeIndex> = FxHashMap::default();
        let mut members: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (i, (rule, v)) in set.rules.iter().zip(&validated).enumerate() {
            let source: Vec<(Key, u64, Option<String>)> = v
                .source
                .entries
                .iter()
                .map(|(k, val)| {
                    let lit = match val {
                        ValuePattern::Any => None,
                        ValuePattern::Literal(l) => Some(l.clone()),
                    };
                    (k.clone(), k.as_ref().hash64(), lit)
                })
                .collect();
            let mut ops = Vec::new();
            for op in &rule.operations {
                match op {
                    Operation::Keep { key, value }
                    | Operation::Ignore {
                        key,
                        fill: Some(value),
                    } => ops.push(COp::Literal(key.clone(), value.clone())),
                    Operation::Replace {
                        key,
                        from,
                        lowercase,
                        extract,
                    } => {
                        let from =
                            source
                                .iter()
                                .position(|(k, _, _)| k == from)
                                .ok_or_else(|| RuleError::BadOperations {
                                    rule: rule.id.clone(),
                                    reason: format!("{from} not in source"),
                                })?;
                        ops.push(COp::Replace {
                            key: key.clone(),
                            from,
                            lowercase: *lowercase,
                            extract: *extract,
                        });
                    }
                    Operation::Ignore { fill: None, .. } => {}
                }
            }
            let not_files: Vec<usize> = rule
                .not_files
                .iter()
                .filter_map(|key| source.iter().position(|(k, _, _)| k == key))
                .collect();
            let reads = |j: usize, e: Extract| {
                ops.iter().any(|op| {
                    matches!(op, COp::Replace { from, extract: Some(x), .. } if *from == j && *x == e)
                })
            };
            let split_values: Vec<usize> = (0..source.len())
                .filter(|&j| reads(j, Extract::FirstNumber) && reads(j, Extract::LastNumber))
                .collect();
            let mut check_order: Vec<usize> = (0..source.len()).collect();
            check_order.sort_by_key(|&j| {
                let (key, _, literal) = &source[j];
                let of_host = matches!(key, Key::Scheme | Key::Auth(_) | Key::Port);
                (of_host, literal.is_none())
            });
            let shape = shape_of(v.source.entries.iter().map(|(k, _)| k.as_ref()));
            members.entry(shape).or_default().push(i as u32);
            let moves_values = rule.operations.iter().any(|op| {
                matches!(op, Operation::Replace { key, from, .. }
                    if key.component() != from.component() && matches!(key, Key::Path(_)))
            });
            let keys: Vec<KeyRef<'_>> = ops.iter().map(|op| op.key().as_ref()).collect();
            let layout = url_layout(&keys);
            let fixed_bytes = layout
                .iter()
                .map(|piece| match *piece {
                    Piece::Text(text) => text.len(),
                    Piece::Name(j) => key_name(&keys[j]).len(),
                    Piece::Value(j) => match &ops[j] {
                        COp::Literal(_, value) => value.len(),
                        COp::Replace { .. } => 0,
                    },
                })
                .sum();
            drop(keys);
            rules.push(CompiledRule {
                id: rule.id.clone(),
                source_text: rule.source_pattern.clone(),
                target_text: rule.target_pattern.clone(),
                ops_text: rule.operations.iter().map(ToString::to_string).collect(),
                literals: v.source.literal_count(),
                source,
                not_files,
                split_values,
                ops,
                layout,
                fixed_bytes,
                chains: false,
                moves_values,
                check_order,
            });
        }
        for (shape, mut ids) in members {
            ids.sort_by_key(|&i| (std::cmp::Reverse(rules[i as usize].literals), i));
            // The key fixed to a literal by most rules of this shape discriminates best.
            let mut counts: FxHashMap<&Key, usize> = FxHashMap::default();
            for &i in &ids {
                for (k, _, lit) in &rules[i as usize].source {
                    if lit.is_some() {
                        *counts.entry(k).or_default() += 1;
                    }
                }
            }
            let disc = counts
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(k, _)| k.clone());
            let mut index = ShapeIndex::default();
            for &i in &ids {
                let lit = disc.as_ref().and_then(|d| {
                    rules[i as usize]
                        .source
                        .iter()
                        .find(|(k, _, _)| k == d)
                        .and_then(|(_, _, l)| l.clone())
                });
                match lit {
                    Some(l) => index.by_value.entry(l).or_default().push(i),
                    None => index.rest.push(i),
                }
            }
            index.disc = disc.map(|k| (k.as_ref().hash64(), k));
            shapes.insert(shape, index);
        }
        let max_steps = chain_bound(set, &validated, &mut rules)?;
        let site = SiteRewriter::new(set.site_rules.iter().map(|r| &r.action));
        let site_rules = set
            .site_rules
            .iter()
            .map(|r| (r.id.clone(), r.action.clone()))
            .collect();
        let mut compiled = HostRules {
            host: set.host.clone(),
            version: set.version,
            site,
            site_rules,
            rules,
            shapes,
            max_steps,
            aliases: FxHashMap::default(),
        };
        // Every target must be what the rules leave as it is: then a URL mapped to it is mapped
        // no further, and canonicalization stays idempotent. (Validation already refused a
        // target that is also a `from`.)
        for alias in &set.aliases {
            let moved = Url::parse(&alias.to)
                .ok()
                .and_then(|to| compiled.apply(&to))
                .map(|rewrite| rewrite.canonical);
            if let Some(moved) = moved {
                return Err(RuleError::BadAlias {
                    host: set.host.clone(),
                    from: alias.from.clone(),
                    to: alias.to.clone(),
                    reason: format!(
                        "`to` is not canonical: the host's rules rewrite it to {moved}"
                    ),
                });
            }
        }
        compiled.aliases = set
            .aliases
            .iter()
            .map(|alias| (alias.from.clone(), alias.to.clone()))
            .collect();
        Ok(compiled)
    }

    /// Number of declared aliases.
    pub fn alias_count(&self) -> usize {
        self.aliases.len()
    }

    /// The rule set's version.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The host these rules are for.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Number of rules, site rules included.
    pub fn len(&self) -> usize {
        self.rules.len() + self.site_rules.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.site_rules.is_empty()
    }

    /// The id of rule `index`.
    pub fn rule_id(&self, index: usize) -> Option<&str> {
        self.rules.get(index).map(|r| r.id.as_str())
    }

    /// Checks that rewriting `url` reaches a fixpoint: the rewrite parses back to itself and no rule
    /// changes it again. `None` when it does (or when no rule applies).
    pub fn fixpoint_violation(&self, url: &Url) -> Option<FixpointViolation> {
        self.apply_checked(url).err()
    }

    /// [`HostRules::apply`] checked as [`HostRules::fixpoint_violation`] checks it: the rewrite
    /// (`None` when nothing changes the URL) or the violation, for a caller that needs both.
    pub fn apply_checked(&self, url: &Url) -> Result<Option<Rewrite>, FixpointViolation> {
        let Some(first) = self.apply(url) else {
            return Ok(None);
        };
        let second = match Url::parse(&first.canonical) {
            Ok(again) if again.as_str() == first.canonical => match self.apply(&again) {
                Some(rewrite) if rewrite.canonical != first.canonical => rewrite.canonical,
                _ => return Ok(Some(first)),
            },
            Ok(again) => String::from(again),
            Err(_) => first.canonical.clone(),
        };
        Err(FixpointViolation {
            url: url.to_string(),
            first,
            second,
        })
    }

    /// Rewrites `url` with the site rules, then the most specific matching pattern rule.
    /// `None` when nothing changes the URL.
    pub fn apply(&self, url: &Url) -> Option<Rewrite> {
        self.apply_view(&UrlView::of(url)?)
    }

    /// [`HostRules::apply`] on a URL's parts (the hot path: a URL folded onto its mirror set's
    /// canonical site is a view, not a parsed URL).
    pub fn apply_view(&self, url: &UrlView<'_>) -> Option<Rewrite> {
        let rewrite = self.apply_rules_view(url);
        if self.aliases.is_empty() {
            return rewrite;
        }
        self.aliased(url, rewrite)
    }

    /// The canonical form `rewrite` (or `url` itself when `None`) replaced by its declared alias
    /// target when it has one: one hash lookup.
    fn aliased(&self, url: &UrlView<'_>, rewrite: Option<Rewrite>) -> Option<Rewrite> {
        match rewrite {
            Some(mut rw) => {
                if let Some(to) = self.aliases.get(rw.canonical.as_str()) {
                    rw.canonical.clone_from(to);
                }
                Some(rw)
            }
            None => {
                let text = url.text_with(url.scheme, &url.path, url.query);
                self.aliases.get(text.as_str()).map(|to| Rewrite {
                    canonical: to.clone(),
                    rule_index: None,
                })
            }
        }
    }

    /// The site rules and pattern rules alone (no alias): [`HostRules::apply_view`]'s first step.
    fn apply_rules_view(&self, url: &UrlView<'_>) -> Option<Rewrite> {
        if self.site.is_empty() {
            return self.apply_rules_to(url, url.scheme, &url.path, url.query);
        }
        // The pattern rules see the rewritten path and query directly: the site actions only
        // lower-case letters, drop segments or whole parameters, reorder parameters and move
        // values between path and query that read the same in both, so the text stays a
        // serialized URL and needs no second parse.
        let scheme = self.site.scheme_of(url.scheme, url.port.is_some());
        let (path, query, changed) = self.site.rewrite_parts(&url.path, url.query);
        let rewrite = match self.apply_rules_to(url, scheme, &path, query.as_deref()) {
            Some(rw) => Some(self.site_again(rw)),
            None if changed || scheme != url.scheme => Some(Rewrite {
                canonical: url.text_with(scheme, &path, query.as_deref()),
                rule_index: None,
            }),
            None => None,
        };
        if self.site.writes_back_query_paths() {
            return self.written_back(url, rewrite);
        }
        rewrite
    }

    /// `rewrite` of `url` (or `url` itself when nothing rewrote it) written back in a
    /// script's query spelling ([`SiteRewriter::write_back_query_path`]): last, so every rule
    /// sees the path-info spelling the learner learned on. `None` when the result is `url`.
    fn written_back(&self, url: &UrlView<'_>, rewrite: Option<Rewrite>) -> Option<Rewrite> {
        let input = || url.text_with(url.scheme, &url.path, url.query);
        let Some(mut rw) = rewrite else {
            let text = input();
            let back = self.site.write_back_query_path(&text)?;
            return (back != text).then_some(Rewrite {
                canonical: back,
                rule_index: None,
            });
        };
        if let Some(back) = self.site.write_back_query_path(&rw.canonical) {
            if back == input() {
                return None;
            }
            rw.canonical = back;
        }
        Some(rw)
    }

    /// Site rules applied to a pattern rule's output that carries moved values (a mixed-case
    /// query value written into the path), so the result is a fixpoint of both.
    fn site_again(&self, mut rw: Rewrite) -> Rewrite {
        let moved = rw
            .rule_index
            .and_then(|i| self.rules.get(i))
            .is_some_and(|r| r.moves_values);
        if moved && self.site.changes_paths() {
            if let Some(again) = Url::parse(&rw.canonical)
                .ok()
                .and_then(|u| self.site.rewrite(&u))
            {
                rw.canonical = again;
            }
        }
        rw
    }

    /// Rewrites `url` with its scheme, path and query replaced by the most specific matching
    /// pattern rule, if any.
    ///
    /// When the rule's output could be matched by a rule again (a chain the learner did not
    /// concatenate), the output is rewritten again, at most as many times as the longest
    /// chain of the compiled rules; `rule_index` names the first rule.
    fn apply_rules_to(
        &self,
        url: &UrlView<'_>,
        scheme: &str,
        path: &str,
        query: Option<&str>,
    ) -> Option<Rewrite> {
        if self.rules.is_empty() {
            return None;
        }
        let mut slots = [0u8; MAX_KEYS_PER_URL];
        let (index, mut canonical) = with_key_values(|kv| {
            decompose_view(url, scheme, path, query, kv).ok()?;
            let index = self.find(kv, &mut slots)?;
            Some((index, self.build(index, kv, &slots)?))
        })?;
        let mut chains = self.rules[index].chains;
        let mut steps = 1;
        while chains && steps < self.max_steps {
            let Ok(next) = Url::parse(&canonical) else {
                break;
            };
            let again = with_key_values(|kv| {
                decompose(&next, kv).ok()?;
                let j = self.find(kv, &mut slots)?;
                Some((j, self.build(j, kv, &slots)?))
            });
            let Some((j, out)) = again else {
                break;
            };
            if out == canonical {
                break;
            }
            chains = self.rules[j].chains;
            canonical = out;
            steps += 1;
        }
        Some(Rewrite {
            canonical,
            rule_index: Some(index),
        })
    }

    /// Like [`HostRules::apply`], with the site rules and the pattern rule that explain the
    /// rewrite.
    pub fn explain(&self, url: &Url) -> Option<Explained> {
        let rewrite = self.apply(url)?;
        let alias = if self.aliases.is_empty() {
            None
        } else {
            let view = UrlView::of(url)?;
            let from = self.apply_rules_view(&view).map_or_else(
                || view.text_with(view.scheme, &view.path, view.query),
                |rules_only| rules_only.canonical,
            );
            self.aliases.get(&from).map(|to| Alias {
                to: to.clone(),
                from,
            })
        };
        let site_rules = self
            .site_rules
            .iter()
            .filter(|(_, action)| SiteRewriter::new([action]).rewrite(url).is_some())
            .map(|(id, action)| (id.clone(), action.to_string()))
            .collect();
        let rule = rewrite.rule_index.and_then(|i| {
            let rule = self.rules.get(i)?;
            Some(RuleMatch {
                rule_index: i,
                rule_id: rule.id.clone(),
                source_pattern: rule.source_text.clone(),
                target_pattern: rule.target_text.clone(),
                operations: rule.ops_text.clone(),
            })
        });
        Some(Explained {
            site_rules,
            rule,
            alias,
            canonical: rewrite.canonical,
        })
    }

    /// Finds the rule matching a decomposed URL; fills `slots[j]` with the index in `kv` of
    /// source entry `j`.
    fn find(&self, kv: &[(KeyRef<'_>, &str)], slots: &mut [u8; MAX_KEYS_PER_URL]) -> Option<usize> {
        let mut hashes = [0u64; MAX_KEYS_PER_URL];
        for (h, (k, _)) in hashes.iter_mut().zip(kv.iter()) {
            *h = k.hash64();
        }
        let hashes = &hashes[..kv.len()];
        let shape = hashes.iter().fold(0u64, |acc, &h| acc.wrapping_add(mix(h)));
        let index = self.shapes.get(&shape)?;
        let first_match = |ids: &[u32], slots: &mut [u8; MAX_KEYS_PER_URL]| -> Option<u32> {
            ids.iter()
                .copied()
                .find(|&i| self.matches(i as usize, kv, hashes, slots))
        };
        let from_value = index.disc.as_ref().and_then(|(dh, dk)| {
            let pos = hashes
                .iter()
                .zip(kv.iter())
                .position(|(h, (k, _))| h == dh && *k == dk.as_ref())?;
            index.by_value.get(kv[pos].1)
        });
        let mut scratch = [0u8; MAX_KEYS_PER_URL];
        let a = from_value.and_then(|ids| first_match(ids, slots));
        let b = first_match(&index.rest, &mut scratch);
        let pick = match (a, b) {
            (Some(a), Some(b)) => {
                let (ra, rb) = (&self.rules[a as usize], &self.rules[b as usize]);
                if (std::cmp::Reverse(rb.literals), b) < (std::cmp::Reverse(ra.literals), a) {
                    *slots = scratch;
                    b
                } else {
                    a
                }
            }
            (Some(a), None) => a,
            (None, Some(b)) => {
                *slots = scratch;
                b
            }
            (None, None) => return None,
        };
        Some(pick as usize)
    }

    fn matches(
        &self,
        i: usize,
        kv: &[(KeyRef<'_>, &str)],
        hashes: &[u64],
        slots: &mut [u8; MAX_KEYS_PER_URL],
    ) -> bool {
        let rule = &self.rules[i];
        if rule.source.len() != kv.len() {
            return false;
        }
        // Source entries are in key order and a URL's keys in URL order, which agree but for
        // path parameters and the order of query parameters: the search for an entry starts
        // after the previous entry's place, so within the path and the query it mostly looks
        // once (a key is in a URL once, so where the search starts never changes its place).
        let mut next = 0;
        for &j in &rule.check_order {
            let (key, h, lit) = &rule.source[j];
            let is_key = |pos: &usize| hashes[*pos] == *h && kv[*pos].0 == key.as_ref();
            let Some(pos) = (next..kv.len())
                .find(is_key)
                .or_else(|| (0..next.min(kv.len())).find(is_key))
            else {
                return false;
            };
            if lit
                .as_deref()
                .is_some_and(|l| !short_eq(kv[pos].1.as_bytes(), l.as_bytes()))
            {
                return false;
            }
            slots[j] = pos as u8;
            next = pos + 1;
        }
        // A fenced `*` leaves files to their own URLs (checked last: most rules have none).
        rule.not_files
            .iter()
            .all(|&j| !files::names_a_file(kv[usize::from(slots[j])].1))
    }

    /// Writes rule `i`'s output for a decomposed URL whose source entries are at `slots`;
    /// `None` when a value lacks the number the rule extracts.
    fn build(
        &self,
        i: usize,
        kv: &[(KeyRef<'_>, &str)],
        slots: &[u8; MAX_KEYS_PER_URL],
    ) -> Option<String> {
        let rule = self.rules.get(i)?;
        let source_value =
            |from: usize| -> Option<&(KeyRef<'_>, &str)> { kv.get(usize::from(*slots.get(from)?)) };
        // First every value must exist (a value without the number to extract: the rule does
        // not apply, and the URL is left to the site rules; no rewrite beats a made-up one),
        // and the output's size is known.
        if !rule
            .split_values
            .iter()
            .all(|&j| source_value(j).is_some_and(|(_, v)| Extract::splits(v)))
        {
            return None;
        }
        let mut bytes = rule.fixed_bytes;
        for op in &rule.ops {
            if let COp::Replace { from, extract, .. } = op {
                let (_, v) = source_value(*from)?;
                bytes += match extract {
                    Some(e) => e.apply(v)?.len(),
                    None => v.len(),
                };
            }
        }
        let mut out = String::with_capacity(bytes);
        for piece in &rule.layout {
            match *piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Name(j) => out.push_str(key_name(&rule.ops.get(j)?.key().as_ref())),
                Piece::Value(j) => match rule.ops.get(j)? {
                    COp::Literal(_, v) => out.push_str(v),
                    COp::Replace {
                        key,
                        from,
                        lowercase,
                        extract,
                    } => {
                        let (fk, v) = source_value(*from)?;
                        let v = match extract {
                            Some(e) => e.apply(v)?,
                            None => v,
                        };
                        let mut val: Cow<'_, str> = Cow::Borrowed(v);
                        if *lowercase && val.bytes().any(|b| b.is_ascii_uppercase()) {
                            val = Cow::Owned(val.to_ascii_lowercase());
                        }
                        let comp = key.component();
                        if fk.component() != comp {
                            if let Some(e) = escape_for(comp, &val) {
                                val = Cow::Owned(e);
                            }
                        }
                        out.push_str(&val);
                    }
                },
            }
        }
        Some(out)
    }
}

/// `a == b` for the short values a rule compares (schemes, host labels, script names): byte by
/// byte after the lengths, cheaper there than a call to the C library's `memcmp`.
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// A decomposed URL's `(key, value)` pairs, borrowed from the URL being rewritten.
type KeyValues<'a> = Vec<(KeyRef<'a>, &'a str)>;

thread_local! {
    /// Each thread's key-value buffer (empty between uses), so rewriting a URL allocates no
    /// vector after the thread's first URL.
    static KEY_VALUES: Cell<KeyValues<'static>> = const { Cell::new(Vec::new()) };
}

/// `buffer`, emptied, for pairs borrowed for another lifetime. Collecting an iterator over a
/// vector into a vector of a type of the same size and alignment reuses its allocation (the
/// standard library's in-place collection), so this costs no allocation.
// `filter` cannot change the element type's lifetime: the closure that yields none must be
// typed with the new one.
#[allow(clippy::unnecessary_filter_map)]
fn relend<'b>(mut buffer: KeyValues<'_>) -> KeyValues<'b> {
    buffer.clear();
    buffer.into_iter().filter_map(|_| None).collect()
}

/// Runs `f` with this thread's key-value buffer (a fresh one if `f` itself asks for it).
fn with_key_values<'a, R>(f: impl FnOnce(&mut KeyValues<'a>) -> R) -> R {
    let mut buffer = relend(KEY_VALUES.take());
    let result = f(&mut buffer);
    KEY_VALUES.set(relend(buffer));
    result
}

/// Whether a URL of pattern `out` (a rule's target) could match pattern `src` (a source).
fn could_match(out: &Pattern, src: &Pattern) -> bool {
    out.entries.len() == src.entries.len()
        && src.entries.iter().all(|(k, v)| match (out.get(k), v) {
            (None, _) => false,
            (Some(_), ValuePattern::Any) | (Some(ValuePattern::Any), _) => true,
            (Some(ValuePattern::Literal(a)), ValuePattern::Literal(b)) => a == b,
        })
}

/// A rule maps its own output to itself when every replace copies a key onto itself.
fn self_idempotent(rule: &Rule) -> bool {
    rule.operations.iter().all(|o| match o {
        Operation::Replace { key, from, .. } => key == from,
        _ => true,
    })
}

/// Builds the could-match graph (rule `i` to rule `j` when `i`'s output could be matched by
/// `j`), rejects cycles, marks rules whose output could chain, and returns the longest chain
/// plus one: the number of rewrites that always reaches a fixpoint.
fn chain_bound(
    set: &HostRuleSet,
    validated: &[ValidatedRule],
    rules: &mut [CompiledRule],
) -> Result<usize, RuleError> {
    let n = validated.len();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in 0..n {
            if (i != j || !self_idempotent(&set.rules[i]))
                && could_match(&validated[i].target, &validated[j].source)
            {
                next[i].push(j);
            }
        }
        // A rule copying every key onto itself gives its own output back unchanged: no need
        // to look again.
        rules[i].chains = !next[i].is_empty();
    }
    // Longest path by memoized DFS with colours; a grey node reached again is a cycle.
    let mut state = vec![0u8; n];
    let mut longest = vec![0usize; n];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&w) = next[v].get(*i) {
                *i += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        return Err(RuleError::BadOperations {
                            rule: set.rules[v].id.clone(),
                            reason: format!(
                                "its output can be rewritten back by rule {} (a cycle)",
                                set.rules[w].id
                            ),
                        })
                    }
                    _ => {}
                }
            } else {
                longest[v] = next[v].iter().map(|&w| longest[w] + 1).max().unwrap_or(0);
                state[v] = 2;
                stack.pop();
            }
        }
    }
    Ok(longest.iter().copied().max().unwrap_or(0) + 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::Rule;

    /// A host whose one site rule drops `sid` everywhere, with `aliases` (`from`, `to` paths).
    fn with_aliases(aliases: &[(&str, &str)]) -> Result<HostRules, RuleError> {
        use crate::canon::rules::site::{SiteAction, SiteRule};
        use crate::canon::rules::Alias;
        HostRules::compile(&HostRuleSet {
            host: "site.test".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: vec![SiteRule {
                id: "site.test#s1".into(),
                action: SiteAction::IgnoreParam {
                    name: "sid".into(),
                    beside: None,
                },
                support: 10,
                support_clusters: 3,
                false_positive_rate: 0.0,
                pooled: None,
            }],
            rules: Vec::new(),
            aliases: aliases
                .iter()
                .map(|(from, to)| Alias {
                    from: format!("http://site.test{from}"),
                    to: format!("http://site.test{to}"),
                })
                .collect(),
        })
    }

    fn canonical_of(rules: &HostRules, url: &str) -> String {
        let url = Url::parse(url).expect("valid");
        rules
            .apply(&url)
            .map_or_else(|| url.to_string(), |rewrite| rewrite.canonical)
    }

    #[test]
    fn aliases_replace_the_rules_result_and_stay_idempotent() {
        let rules = with_aliases(&[("/node/5", "/about-us"), ("/?p=7", "/2019/05/hello/")])
            .expect("compiles");
        assert_eq!(rules.alias_count(), 2);
        for (url, want) in [
            // Looked up as the rules leave it: untouched, or after the site rule.
            ("http://site.test/node/5", "http://site.test/about-us"),
            (
                "http://site.test/node/5?sid=abc",
                "http://site.test/about-us",
            ),
            (
                "http://site.test/?p=7&sid=x",
                "http://site.test/2019/05/hello/",
            ),
            ("http://site.test/?p=7", "http://site.test/2019/05/hello/"),
            // Not a `from`: as the rules leave it.
            ("http://site.test/node/6?sid=1", "http://site.test/node/6"),
            ("http://site.test/about-us", "http://site.test/about-us"),
            (
                "http://site.test/node/5/edit",
                "http://site.test/node/5/edit",
            ),
        ] {
            let once = canonical_of(&rules, url);
            assert_eq!(once, want, "{url}");
            assert_eq!(canonical_of(&rules, &once), once, "canon(canon({url}))");
            assert_eq!(
                rules.fixpoint_violation(&Url::parse(url).expect("valid")),
                None,
                "{url}"
            );
        }
        // The unaliased URL keeps its own rewrite; an aliased one names no pattern rule.
        let rewrite = rules
            .apply(&Url::parse("http://site.test/node/5").expect("valid"))
            .expect("aliased");
        assert_eq!(rewrite.rule_index, None);
        assert_eq!(
            rules.apply(&Url::parse("http://site.test/about-us").expect("valid")),
            None
        );
        // The same set without its table leaves the id URL alone.
        let bare = with_aliases(&[]).expect("compiles");
        assert_eq!(bare.alias_count(), 0);
        assert_eq!(
            canonical_of(&bare, "http://site.test/node/5?sid=abc"),
            "http://site.test/node/5"
        );
    }

    /// An operator asking why a URL got its form is told which declared alias made it, with
    /// the site rule that ran first; a URL no alias touches names none.
    #[test]
    fn explain_names_the_alias_that_made_the_canonical_form() {
        let rules = with_aliases(&[("/node/5", "/about-us")]).expect("compiles");
        let explain = |url: &str| rules.explain(&Url::parse(url).expect("valid"));
        let aliased = explain("http://site.test/node/5?sid=abc").expect("rewritten");
        assert_eq!(aliased.canonical, "http://site.test/about-us");
        assert_eq!(
            aliased.alias,
            Some(Alias {
                from: "http://site.test/node/5".into(),
                to: "http://site.test/about-us".into(),
            })
        );
        assert_eq!(aliased.site_rules.len(), 1, "{:?}", aliased.site_rules);
        let bare = explain("http://site.test/node/5").expect("aliased");
        assert_eq!(bare.site_rules, Vec::new());
        assert_eq!(
            bare.alias.map(|a| a.from),
            Some("http://site.test/node/5".into())
        );
        let unaliased = explain("http://site.test/node/6?sid=1").expect("site rule");
        assert_eq!(unaliased.alias, None);
        assert_eq!(explain("http://site.test/about-us"), None);
    }

    #[test]
    fn an_alias_whose_target_the_rules_rewrite_is_refused() {
        let err = with_aliases(&[("/node/5", "/about-us?sid=1")])
            .expect_err("the target is not canonical");
        let text = err.to_string();
        assert!(
            text.contains(
                "host site.test: alias http://site.test/node/5 -> http://site.test/about-us?sid=1"
            ) && text.contains("rewrite it to http://site.test/about-us"),
            "{text}"
        );
        // Validation runs first: a chain is refused by name.
        let err = with_aliases(&[("/a", "/b"), ("/b", "/c")]).expect_err("a chain");
        assert!(err.to_string().contains("is itself the `from`"), "{err}");
    }

    fn op(text: &str) -> Operation {
        // Test helper: "keep k=v" / "replace k <- f" / "ignore k" / "ignore k -> v".
        let parts: Vec<&str> = text.split(' ').collect();
        match parts.as_slice() {
            ["keep", kv] => {
                let (k, v) = kv.split_once('=').unwrap();
                Operation::Keep {
                    key: k.parse().unwrap(),
                    value: v.into(),
                }
            }
            ["replace", k, "<-", f] => {
                let mut extract = None;
                let mut f = *f;
                for (name, e) in [
                    ("first_number(", Extract::FirstNumber),
                    ("last_number(", Extract::LastNumber),
                ] {
                    if let Some(inner) = f.strip_prefix(name).and_then(|f| f.strip_suffix(')')) {
                        (f, extract) = (inner, Some(e));
                    }
                }
                let inner = f.strip_prefix("lower(").and_then(|f| f.strip_suffix(')'));
                Operation::Replace {
                    key: k.parse().unwrap(),
                    from: inner.unwrap_or(f).parse().unwrap(),
                    lowercase: inner.is_some(),
                    extract,
                }
            }
            ["ignore", k] => Operation::Ignore {
                key: k.parse().unwrap(),
                fill: None,
            },
            ["ignore", k, "->", v] => Operation::Ignore {
                key: k.parse().unwrap(),
                fill: Some((*v).into()),
            },
            _ => panic!("bad op {text}"),
        }
    }

    fn rule(id: &str, src: &str, dst: &str, ops: &[&str]) -> Rule {
        Rule {
            id: id.into(),
            source_pattern: src.into(),
            target_pattern: dst.into(),
            operations: ops.iter().map(|o| op(o)).collect(),
            support: 1,
            false_positive_rate: 0.0,
            support_clusters: 1,
            not_files: Vec::new(),
        }
    }

    fn host(rules: Vec<Rule>) -> HostRules {
        HostRules::compile(&HostRuleSet {
            host: "example.com".into(),
            version: 7,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules,
            aliases: Vec::new(),
        })
        .unwrap()
    }

    const HOST_KEEP: [&str; 3] = ["keep scheme=http", "keep auth_0=example", "keep auth_1=com"];

    fn ops(extra: &[&'static str]) -> Vec<&'static str> {
        HOST_KEEP
            .iter()
            .copied()
            .chain(extra.iter().copied())
            .collect()
    }

    #[test]
    fn the_key_value_buffer_is_handed_on_without_a_new_allocation() {
        let url = Url::parse("http://example.com/a/b?c=d&e=f").unwrap();
        let mut kv = Vec::with_capacity(MAX_KEYS_PER_URL);
        decompose(&url, &mut kv).unwrap();
        let (capacity, address) = (kv.capacity(), kv.as_ptr() as usize);
        let again: KeyValues<'static> = relend(kv);
        assert!(again.is_empty());
        assert_eq!(again.capacity(), capacity);
        assert_eq!(again.as_ptr() as usize, address);
    }

    #[test]
    fn figure_4_rule_rewrites_and_is_idempotent() {
        // Node A (forum.php?pageid=*&sid=* on any mirror) to node B (/*/<pageid>/display).
        let r = rule(
            "example.com#1",
            "http://example.com/*/forum.php?pageid=*&sid=*",
            "http://example.com/archive/*/display",
            &ops(&[
                "ignore path_0 -> archive",
                "replace path_1 <- query:pageid",
                "keep path_2=display",
                "ignore query:sid",
            ]),
        );
        let h = host(vec![r]);
        assert_eq!(h.version(), 7);
        let u = Url::parse("http://example.com/archive3/forum.php?pageid=21&sid=9f8e").unwrap();
        let rw = h.apply(&u).unwrap();
        assert_eq!(rw.canonical, "http://example.com/archive/21/display");
        assert_eq!(h.rule_id(rw.rule_index.unwrap()), Some("example.com#1"));
        let again = Url::parse(&rw.canonical).unwrap();
        assert_eq!(h.apply(&again), None, "canonical form is a fixpoint");
        let ex = h.explain(&u).unwrap().rule.unwrap();
        assert_eq!(
            ex.source_pattern,
            "http://example.com/*/forum.php?pageid=*&sid=*"
        );
        assert!(ex.operations.contains(&"ignore query:sid".to_string()));
        // Extra key: closed-world pattern does not match.
        let u = Url::parse("http://example.com/a/forum.php?pageid=21&sid=9&page=2").unwrap();
        assert_eq!(h.apply(&u), None);
    }

    /// A rule learned on documents (`/f/report/view` ≡ `/f/report`) whose `*` is fenced off
    /// files leaves a file and the page about it apart (`/f/scan.pdf/view` is not the PDF's
    /// bytes), and a less specific rule of the same shape still sees the file.
    #[test]
    fn a_wildcard_fenced_off_files_leaves_files_to_other_rules() {
        let mut view = rule(
            "v",
            "http://example.com/f/*/view",
            "http://example.com/f/*",
            &ops(&["keep path_0=f", "replace path_1 <- path_1", "ignore path_2"]),
        );
        let any = |text: &str| Url::parse(text).unwrap();
        let unfenced = host(vec![view.clone()]);
        assert_eq!(
            unfenced
                .apply(&any("http://example.com/f/scan.pdf/view"))
                .map(|r| r.canonical),
            Some("http://example.com/f/scan.pdf".to_owned()),
            "without the fence the file meets its view page"
        );
        view.not_files = vec![Key::Path(1)];
        let h = host(vec![view.clone()]);
        assert_eq!(
            h.apply(&any("http://example.com/f/report/view"))
                .map(|r| r.canonical),
            Some("http://example.com/f/report".to_owned())
        );
        for file in ["scan.pdf", "photo.JPG", "archive.tar.gz"] {
            assert_eq!(
                h.apply(&any(&format!("http://example.com/f/{file}/view"))),
                None,
                "{file}"
            );
        }
        // Not files: a version, a titled id.
        for page in ["v1.2", "a-title.123"] {
            assert!(h
                .apply(&any(&format!("http://example.com/f/{page}/view")))
                .is_some());
        }
        let catch_all = rule(
            "c",
            "http://example.com/*/*/*",
            "http://example.com/*/*/*",
            &ops(&[
                "replace path_0 <- path_0",
                "replace path_1 <- lower(path_1)",
                "replace path_2 <- path_2",
            ]),
        );
        let h = host(vec![view, catch_all]);
        let explained = h
            .explain(&any("http://example.com/f/Scan.PDF/view"))
            .unwrap();
        assert_eq!(explained.rule.unwrap().rule_id, "c");
    }

    /// `not_files` names path segments the source leaves `*`, once each.
    #[test]
    fn a_fence_on_a_literal_or_a_query_key_is_refused() {
        let base = rule(
            "v",
            "http://example.com/f/*/view?p=*",
            "http://example.com/f/*?p=*",
            &ops(&[
                "keep path_0=f",
                "replace path_1 <- path_1",
                "ignore path_2",
                "replace query:p <- query:p",
            ]),
        );
        for fence in [
            vec![Key::Path(0)],
            vec!["query:p".parse().unwrap()],
            vec![Key::Path(1), Key::Path(1)],
            vec![Key::Path(5)],
        ] {
            let mut r = base.clone();
            r.not_files = fence.clone();
            assert!(r.validate().is_err(), "{fence:?}");
        }
        let mut r = base;
        r.not_files = vec![Key::Path(1)];
        assert!(r.validate().is_ok());
    }

    #[test]
    fn most_specific_rule_wins_and_index_finds_by_literal() {
        let general = rule(
            "g",
            "http://example.com/*?sid=*",
            "http://example.com/*",
            &ops(&["replace path_0 <- path_0", "ignore query:sid"]),
        );
        let specific = rule(
            "s",
            "http://example.com/cart?sid=*",
            "http://example.com/cart?sid=*",
            &ops(&["keep path_0=cart", "replace query:sid <- query:sid"]),
        );
        let h = host(vec![general, specific]);
        let u = Url::parse("http://example.com/cart?sid=1").unwrap();
        assert_eq!(h.explain(&u).unwrap().rule.unwrap().rule_id, "s");
        let u = Url::parse("http://example.com/news?sid=1").unwrap();
        assert_eq!(h.apply(&u).unwrap().canonical, "http://example.com/news");
    }

    #[test]
    fn moved_values_are_escaped_and_lowercase_applies() {
        let r = rule(
            "m",
            "http://example.com/item.php?id=*",
            "http://example.com/item/*",
            &ops(&[
                "keep path_0=item",
                "replace path_1 <- query:id",
                "ignore path_0",
            ]),
        );
        let err = HostRules::compile(&HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: vec![r],
            aliases: Vec::new(),
        });
        assert!(err.is_err(), "two operations on path_0 are rejected");
        let r = rule(
            "m",
            "http://example.com/item.php?id=*",
            "http://example.com/item/*",
            &ops(&["keep path_0=item", "replace path_1 <- lower(query:id)"]),
        );
        let h = host(vec![r]);
        let u = Url::parse("http://example.com/item.php?id=A/B?C").unwrap();
        let c = h.apply(&u).unwrap().canonical;
        assert_eq!(c, "http://example.com/item/a%2Fb%3Fc");
        assert_eq!(Url::parse(&c).unwrap().as_str(), c);
    }

    #[test]
    fn numbers_are_extracted_from_slugs_and_urls_without_digits_are_not_rewritten() {
        let r = rule(
            "x",
            "http://example.com/threads/*",
            "http://example.com/showthread.php?t=*",
            &ops(&[
                "keep path_0=showthread.php",
                "replace query:t <- first_number(path_1)",
            ]),
        );
        let l = rule(
            "y",
            "http://example.com/products/*",
            "http://example.com/item.php?id=*",
            &ops(&[
                "keep path_0=item.php",
                "replace query:id <- last_number(path_1)",
            ]),
        );
        let h = host(vec![r, l]);
        let apply = |u: &str| h.apply(&Url::parse(u).unwrap()).map(|r| r.canonical);
        assert_eq!(
            apply("http://example.com/threads/7869-radio-quick").as_deref(),
            Some("http://example.com/showthread.php?t=7869")
        );
        assert_eq!(
            apply("http://example.com/products/top-10-health-1742.html").as_deref(),
            Some("http://example.com/item.php?id=1742")
        );
        assert_eq!(apply("http://example.com/threads/radio-quick"), None);
        assert_eq!(apply("http://example.com/showthread.php?t=7869"), None);
        let explained = h
            .explain(&Url::parse("http://example.com/threads/12-a").unwrap())
            .unwrap();
        assert!(explained
            .rule
            .unwrap()
            .operations
            .contains(&"replace query:t <- first_number(path_1)".to_string()));
    }

    /// MyBB's `forum-55-page-2.html` is `forumdisplay.php?fid=55&page=2`; a value holding one
    /// number (`thread-13077.html`, `forum-55.html`) is left alone instead of written as
    /// `fid=13077&page=13077`, which merged a thread with its last post (seed 43's MyBB host).
    #[test]
    fn two_numbers_read_from_one_value_need_two_numbers_in_it() {
        let r = rule(
            "x",
            "http://example.com/forums/*",
            "http://example.com/forums/forumdisplay.php?fid=*&page=*",
            &ops(&[
                "keep path_0=forums",
                "keep path_1=forumdisplay.php",
                "replace query:fid <- first_number(path_1)",
                "replace query:page <- last_number(path_1)",
            ]),
        );
        let h = host(vec![r]);
        let apply = |u: &str| h.apply(&Url::parse(u).unwrap()).map(|r| r.canonical);
        assert_eq!(
            apply("http://example.com/forums/forum-55-page-2.html").as_deref(),
            Some("http://example.com/forums/forumdisplay.php?fid=55&page=2")
        );
        assert_eq!(apply("http://example.com/forums/thread-13077.html"), None);
        assert_eq!(
            apply("http://example.com/forums/thread-13077-lastpost.html"),
            None
        );
        assert_eq!(apply("http://example.com/forums/forum-55.html"), None);
        assert!(Extract::splits("a1b22"));
        assert!(!Extract::splits("a-122-b"));
        assert!(!Extract::splits("none"));
    }

    #[test]
    fn cyclic_rules_are_rejected_and_chains_reach_a_fixpoint() {
        let a_to_b = rule(
            "a",
            "http://example.com/a/*",
            "http://example.com/b/*",
            &ops(&["keep path_0=b", "replace path_1 <- path_1"]),
        );
        let b_to_c = rule(
            "b",
            "http://example.com/b/*",
            "http://example.com/c/*",
            &ops(&["keep path_0=c", "replace path_1 <- path_1"]),
        );
        let h = host(vec![a_to_b.clone(), b_to_c.clone()]);
        let u = Url::parse("http://example.com/a/7").unwrap();
        let rw = h.apply(&u).unwrap();
        assert_eq!(
            rw.canonical, "http://example.com/c/7",
            "the chain is followed"
        );
        assert_eq!(h.rule_id(rw.rule_index.unwrap()), Some("a"));
        assert_eq!(h.apply(&Url::parse(&rw.canonical).unwrap()), None);
        let c_to_a = rule(
            "c",
            "http://example.com/c/*",
            "http://example.com/a/*",
            &ops(&["keep path_0=a", "replace path_1 <- path_1"]),
        );
        let err = HostRules::compile(&HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: vec![a_to_b, b_to_c, c_to_a],
            aliases: Vec::new(),
        })
        .unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }
}
