//! Mirror sets from confirmed alignments: sites joined transitively (union-find, as the paper's
//! pooled evaluation does), one canonical site per set, the evidence of every alias.
//!
//! The canonical site of a set is, in order of preference: a whole origin (no folder), the one
//! with the most fetched pages and URLs (the primary rather than a partial copy), https, the
//! shorter host name, the smaller origin text. A set never holds two folders of one origin:
//! only the preferred one stays (a site copied under two folder names of one host is that host's
//! own DUST, for its per-host rules).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::confirm::{Alignment, PairEvidence};
use super::summary::HostSummary;
use super::Technique;
use crate::canon::rules::{MirrorAlias, MirrorEvidence, MirrorSet, MirrorSite};

/// A confirmed alignment with the techniques that proposed it.
#[derive(Clone, Debug)]
pub struct ConfirmedPair {
    /// The aligned sites.
    pub alignment: Alignment,
    /// Content evidence.
    pub evidence: PairEvidence,
    /// Techniques that proposed it.
    pub techniques: Vec<Technique>,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Builds mirror sets from confirmed pairs.
pub fn build(hosts: &[HostSummary], confirmed: &[ConfirmedPair]) -> Vec<MirrorSet> {
    let mut nodes: FxHashMap<(u32, String), usize> = FxHashMap::default();
    let mut keys: Vec<(u32, String)> = Vec::new();
    let mut node = |h: u32, p: &str, keys: &mut Vec<(u32, String)>| -> usize {
        *nodes.entry((h, p.to_owned())).or_insert_with(|| {
            keys.push((h, p.to_owned()));
            keys.len() - 1
        })
    };
    let mut edges = Vec::new();
    for c in confirmed {
        let x = node(c.alignment.a, &c.alignment.prefix_a, &mut keys);
        let y = node(c.alignment.b, &c.alignment.prefix_b, &mut keys);
        edges.push((x, y));
    }
    let mut parent: Vec<usize> = (0..keys.len()).collect();
    for &(x, y) in &edges {
        let (rx, ry) = (find(&mut parent, x), find(&mut parent, y));
        if rx != ry {
            parent[rx.max(ry)] = rx.min(ry);
        }
    }
    let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for n in 0..keys.len() {
        let r = find(&mut parent, n);
        components.entry(r).or_default().push(n);
    }
    let rank = |n: &usize| {
        let (h, p) = &keys[*n];
        let s = &hosts[*h as usize];
        (
            !p.is_empty(),
            std::cmp::Reverse(s.pages.len() as u64 + s.size()),
            !s.origin.starts_with("https:"),
            s.host.len(),
            s.origin.clone(),
            p.clone(),
        )
    };
    let mut sets = Vec::new();
    for (_, mut members) in components {
        members.sort_by_key(|n| rank(n));
        let mut seen_hosts = Vec::new();
        members.retain(|&n| {
            let h = keys[n].0;
            if seen_hosts.contains(&h) {
                false
            } else {
                seen_hosts.push(h);
                true
            }
        });
        if members.len() < 2 {
            continue;
        }
        let site = |n: usize| MirrorSite {
            origin: hosts[keys[n].0 as usize].origin.clone(),
            path_prefix: keys[n].1.clone(),
        };
        let canonical = site(members[0]);
        let aliases = members[1..]
            .iter()
            .map(|&n| {
                // The strongest confirmed pair touching this site is its evidence.
                let best = confirmed
                    .iter()
                    .zip(&edges)
                    .filter(|(_, &(x, y))| x == n || y == n)
                    .max_by_key(|(c, _)| c.evidence.matches)
                    .map(|(c, _)| c);
                MirrorAlias {
                    site: site(n),
                    pinned: false,
                    evidence: best.map(|c| MirrorEvidence {
                        techniques: c.techniques.iter().map(|t| t.name().to_owned()).collect(),
                        matching_pages: c.evidence.matches,
                        mismatching_pages: c.evidence.mismatches,
                        examples: c.evidence.examples.clone(),
                    }),
                }
            })
            .collect();
        sets.push(MirrorSet {
            id: format!("mirror:{}", canonical.display()),
            canonical,
            aliases,
            forbidden: Vec::new(),
        });
    }
    sets
}

/// Applies an operator's decisions from a previous rule file to freshly detected sets: a
/// forbidden site never joins its set, a pinned alias stays even when detection no longer
/// finds it (detection noise must not flip an asserted alias off).
pub fn apply_decisions(detected: Vec<MirrorSet>, previous: &[MirrorSet]) -> Vec<MirrorSet> {
    let mut sets = detected;
    for prev in previous {
        let forbidden: Vec<&MirrorSite> = prev.forbidden.iter().collect();
        // The detected set holding the previous canonical site (or any of its sites).
        let pos = sets.iter().position(|s| {
            s.canonical == prev.canonical || s.aliases.iter().any(|a| a.site == prev.canonical)
        });
        let set = match pos {
            Some(i) => &mut sets[i],
            None => {
                sets.push(MirrorSet {
                    id: prev.id.clone(),
                    canonical: prev.canonical.clone(),
                    aliases: Vec::new(),
                    forbidden: Vec::new(),
                });
                let last = sets.len() - 1;
                &mut sets[last]
            }
        };
        set.aliases.retain(|a| !forbidden.contains(&&a.site));
        set.forbidden = prev.forbidden.clone();
        for pinned in prev.aliases.iter().filter(|a| a.pinned) {
            match set.aliases.iter_mut().find(|a| a.site == pinned.site) {
                Some(a) => a.pinned = true,
                None if set.canonical != pinned.site => set.aliases.push(pinned.clone()),
                None => {}
            }
        }
    }
    // A pinned alias wins over its appearance in another detected set.
    let pinned: Vec<MirrorSite> = sets
        .iter()
        .flat_map(|s| {
            s.aliases
                .iter()
                .filter(|a| a.pinned)
                .map(|a| a.site.clone())
        })
        .collect();
    for s in &mut sets {
        s.aliases.retain(|a| a.pinned || !pinned.contains(&a.site));
    }
    sets.retain(|s| !s.aliases.is_empty());
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(o: &str) -> MirrorSite {
        MirrorSite {
            origin: o.into(),
            path_prefix: String::new(),
        }
    }

    fn alias(o: &str, pinned: bool) -> MirrorAlias {
        MirrorAlias {
            site: site(o),
            pinned,
            evidence: None,
        }
    }

    #[test]
    fn operator_pins_survive_relearning_and_forbidden_aliases_never_join() {
        let previous = vec![MirrorSet {
            id: "mirror:https://www.a.org".into(),
            canonical: site("https://www.a.org"),
            aliases: vec![
                alias("http://old-a.org", true),
                alias("http://a.org", false),
            ],
            forbidden: vec![site("https://blog.a.org")],
        }];
        // Detection this time: a.org and (wrongly) blog.a.org, not the pinned old-a.org.
        let detected = vec![MirrorSet {
            id: "mirror:https://www.a.org".into(),
            canonical: site("https://www.a.org"),
            aliases: vec![
                alias("http://a.org", false),
                alias("https://blog.a.org", false),
            ],
            forbidden: vec![],
        }];
        let sets = apply_decisions(detected, &previous);
        assert_eq!(sets.len(), 1);
        let names: Vec<&str> = sets[0]
            .aliases
            .iter()
            .map(|a| a.site.origin.as_str())
            .collect();
        assert_eq!(names, ["http://a.org", "http://old-a.org"]);
        assert_eq!(sets[0].forbidden, [site("https://blog.a.org")]);
        crate::canon::rules::mirror::validate_mirror_sets(&sets).unwrap();
        // Nothing detected at all: the pinned alias still stands.
        let sets = apply_decisions(Vec::new(), &previous);
        assert_eq!(sets[0].aliases, [alias("http://old-a.org", true)]);
    }
}
