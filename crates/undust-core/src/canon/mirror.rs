//! Mirror sets compiled for the hot path: an alias URL's canonical form on the canonical site.
//!
//! [`MirrorTable::compile`] validates the rule file's mirror sets and indexes their aliases by
//! host name; [`MirrorTable::fold`] costs one hash lookup for a URL of a host that is no alias,
//! and a prefix comparison and one string for an alias URL. The longest matching alias prefix of
//! an origin wins. The folded URL is only the dedup key: the frontier still fetches the URL it
//! discovered (the statically normalized input).

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use url::Url;

use super::rules::mirror::validate_mirror_sets;
use super::rules::{MirrorSet, RuleError};
use super::view::UrlView;

#[derive(Debug)]
struct AliasEntry {
    scheme: String,
    port: Option<u16>,
    prefix: String,
    canonical_origin: String,
    canonical_prefix: String,
    /// The canonical origin's parts, for rewriting a parsed URL in place.
    canonical_scheme: String,
    canonical_host: String,
    canonical_port: Option<u16>,
    /// The same as text, for folding a [`UrlView`]: the alias's port digits, the canonical
    /// port's digits, and whether the canonical host is a domain name.
    port_text: Option<String>,
    canonical_port_text: Option<String>,
    canonical_host_is_domain: bool,
    /// Whether the canonical prefix is stored by the URL parser as written (no escapes to add,
    /// no dot segments), so a folded path is the prefix and the rest joined. When it is not,
    /// [`MirrorTable::fold_view`] lets the parser write the path, as `set_path` does.
    canonical_prefix_as_parsed: bool,
    set: usize,
}

/// Compiled mirror sets. `Send + Sync`; share behind an `Arc`.
#[derive(Debug, Default)]
pub struct MirrorTable {
    by_host: FxHashMap<String, Vec<AliasEntry>>,
    sets: Vec<MirrorSet>,
}

/// A URL folded onto its mirror set's canonical site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folded {
    /// The URL on the canonical site.
    pub url: String,
    /// Id of the mirror set.
    pub set_id: String,
}

impl MirrorTable {
    /// Validates and indexes mirror sets.
    pub fn compile(sets: &[MirrorSet]) -> Result<Self, RuleError> {
        validate_mirror_sets(sets)?;
        let mut by_host: FxHashMap<String, Vec<AliasEntry>> = FxHashMap::default();
        for (i, set) in sets.iter().enumerate() {
            let Ok(canonical) = Url::parse(&set.canonical.origin) else {
                continue;
            };
            let Some(canonical_host) = canonical.host_str() else {
                continue;
            };
            let canonical_prefix_as_parsed = {
                let mut with_prefix = canonical.clone();
                with_prefix.set_path(&set.canonical.path_prefix);
                set.canonical.path_prefix.is_empty()
                    || with_prefix.path() == set.canonical.path_prefix
            };
            for alias in &set.aliases {
                // Validation guarantees the origin parses as a bare http(s) origin.
                let Ok(origin) = Url::parse(&alias.site.origin) else {
                    continue;
                };
                let Some(host) = origin.host_str() else {
                    continue;
                };
                by_host
                    .entry(host.to_owned())
                    .or_default()
                    .push(AliasEntry {
                        scheme: origin.scheme().to_owned(),
                        port: origin.port(),
                        prefix: alias.site.path_prefix.clone(),
                        canonical_origin: set.canonical.origin.clone(),
                        canonical_prefix: set.canonical.path_prefix.clone(),
                        canonical_scheme: canonical.scheme().to_owned(),
                        canonical_host: canonical_host.to_owned(),
                        canonical_port: canonical.port(),
                        port_text: origin.port().map(|p| p.to_string()),
                        canonical_port_text: canonical.port().map(|p| p.to_string()),
                        canonical_host_is_domain: matches!(
                            canonical.host(),
                            Some(url::Host::Domain(_))
                        ),
                        canonical_prefix_as_parsed,
                        set: i,
                    });
            }
        }
        for entries in by_host.values_mut() {
            entries.sort_by_key(|e| std::cmp::Reverse(e.prefix.len()));
        }
        Ok(MirrorTable {
            by_host,
            sets: sets.to_vec(),
        })
    }

    /// Whether no alias is loaded.
    pub fn is_empty(&self) -> bool {
        self.by_host.is_empty()
    }

    /// The mirror sets, as loaded.
    pub fn sets(&self) -> &[MirrorSet] {
        &self.sets
    }

    /// Aliases summed over sets.
    pub fn alias_count(&self) -> usize {
        self.sets.iter().map(|s| s.aliases.len()).sum()
    }

    /// The alias entry `url` is under: same scheme and port, and the longest alias prefix its
    /// path is under.
    fn entry(&self, url: &Url) -> Option<&AliasEntry> {
        let entries = self.by_host.get(url.host_str()?)?;
        let path = url.path();
        entries.iter().find(|e| {
            e.scheme == url.scheme()
                && e.port == url.port()
                && (e.prefix.is_empty()
                    || path
                        .strip_prefix(e.prefix.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
        })
    }

    /// [`MirrorTable::entry`] for a view.
    fn entry_of_view(&self, view: &UrlView<'_>) -> Option<&AliasEntry> {
        let entries = self.by_host.get(view.host)?;
        let path: &str = &view.path;
        entries.iter().find(|e| {
            // The byte after the prefix first: a host with many folder aliases (a mirror
            // network's) rules most of them out without comparing text.
            (e.prefix.is_empty()
                || matches!(path.as_bytes().get(e.prefix.len()), None | Some(b'/')))
                && e.scheme == view.scheme
                && e.port_text.as_deref() == view.port
                && (e.prefix.is_empty() || path.starts_with(e.prefix.as_str()))
        })
    }

    /// The path on the canonical site of an alias URL's `path`.
    fn canonical_path(entry: &AliasEntry, path: &str) -> String {
        let rest = &path[entry.prefix.len()..];
        let mut out = String::with_capacity(entry.canonical_prefix.len() + rest.len() + 1);
        out.push_str(&entry.canonical_prefix);
        if rest.is_empty() && entry.canonical_prefix.is_empty() {
            out.push('/');
        } else {
            out.push_str(rest);
        }
        out
    }

    /// The URL on the canonical site when `url` is on an alias; `None` otherwise.
    pub fn fold(&self, url: &Url) -> Option<Folded> {
        let entry = self.entry(url)?;
        let path = Self::canonical_path(entry, url.path());
        let mut out = String::with_capacity(url.as_str().len() + entry.canonical_prefix.len());
        out.push_str(&entry.canonical_origin);
        out.push_str(&path);
        if let Some(q) = url.query() {
            out.push('?');
            out.push_str(q);
        }
        Some(Folded {
            url: out,
            set_id: self.sets[entry.set].id.clone(),
        })
    }

    /// [`MirrorTable::fold_url`] on a view, for the hot path: the canonical site's scheme, host
    /// and port borrowed from the table, the path moved under the canonical prefix only under a
    /// folder alias, the rest of the view kept (the same URL `fold_url` gives, without
    /// re-parsing a host or cloning a `Url`). `None` when the view is on no alias.
    pub fn fold_view<'a>(&'a self, view: &UrlView<'a>) -> Option<UrlView<'a>> {
        let entry = self.entry_of_view(view)?;
        let path = if entry.prefix == entry.canonical_prefix {
            view.path.clone()
        } else if entry.canonical_prefix_as_parsed {
            Cow::Owned(Self::canonical_path(entry, &view.path))
        } else {
            // A canonical prefix the parser would store otherwise: let it write the path.
            let mut url = Url::parse(&entry.canonical_origin).ok()?;
            url.set_path(&Self::canonical_path(entry, &view.path));
            Cow::Owned(url.path().to_owned())
        };
        Some(UrlView {
            scheme: &entry.canonical_scheme,
            userinfo: view.userinfo,
            host: &entry.canonical_host,
            host_is_domain: entry.canonical_host_is_domain,
            port: entry.canonical_port_text.as_deref(),
            path,
            query: view.query,
            fragment: view.fragment,
        })
    }

    /// [`MirrorTable::fold`] for the hot path: the folded URL parsed, made from `url` by
    /// rewriting its scheme, host, port and (under a folder alias) path in place, which costs
    /// a fraction of parsing the folded text and gives the same URL (the parts come from a
    /// parsed origin and an already normalized path). `None` when `url` is on no alias.
    pub fn fold_url(&self, url: &Url) -> Option<Url> {
        let entry = self.entry(url)?;
        let mut out = url.clone();
        if entry.prefix != entry.canonical_prefix {
            out.set_path(&Self::canonical_path(entry, url.path()));
        }
        if out.scheme() != entry.canonical_scheme {
            out.set_scheme(&entry.canonical_scheme).ok()?;
        }
        if out.host_str() != Some(entry.canonical_host.as_str()) {
            out.set_host(Some(&entry.canonical_host)).ok()?;
        }
        if out.port() != entry.canonical_port {
            out.set_port(entry.canonical_port).ok()?;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::{MirrorAlias, MirrorSite};

    fn site(origin: &str, prefix: &str) -> MirrorSite {
        MirrorSite {
            origin: origin.into(),
            path_prefix: prefix.into(),
        }
    }

    fn set(canonical: MirrorSite, aliases: Vec<MirrorSite>) -> MirrorSet {
        MirrorSet {
            id: format!("mirror:{}", canonical.display()),
            canonical,
            aliases: aliases
                .into_iter()
                .map(|site| MirrorAlias {
                    site,
                    pinned: false,
                    evidence: None,
                })
                .collect(),
            forbidden: vec![],
        }
    }

    #[test]
    fn aliases_fold_onto_the_canonical_site_and_other_folders_stay() {
        let table = MirrorTable::compile(&[set(
            site("https://www.site.org", ""),
            vec![
                site("http://site.org", ""),
                site("http://mirror.example.edu", "/pub/site"),
            ],
        )])
        .unwrap();
        let fold = |u: &str| table.fold(&Url::parse(u).unwrap()).map(|f| f.url);
        assert_eq!(
            fold("http://site.org/a/b.html?x=1").as_deref(),
            Some("https://www.site.org/a/b.html?x=1")
        );
        assert_eq!(
            fold("http://mirror.example.edu/pub/site/a.html").as_deref(),
            Some("https://www.site.org/a.html")
        );
        assert_eq!(
            fold("http://mirror.example.edu/pub/site").as_deref(),
            Some("https://www.site.org/")
        );
        assert_eq!(fold("http://mirror.example.edu/pub/sitex/a.html"), None);
        assert_eq!(fold("http://mirror.example.edu/pub/other/a.html"), None);
        assert_eq!(fold("https://site.org/a.html"), None, "another origin");
        assert_eq!(
            fold("https://www.site.org/a.html"),
            None,
            "the canonical itself"
        );
    }

    #[test]
    fn folding_the_parsed_url_gives_the_folded_text_parsed() {
        let table = MirrorTable::compile(&[
            set(
                site("https://www.site.org", ""),
                vec![
                    site("http://site.org", ""),
                    site("http://site.org:8080", ""),
                    site("https://10.0.0.7", ""),
                    site("http://mirror.example.edu", "/pub/site"),
                ],
            ),
            set(
                site("http://archive.example.net:8080", "/sites/other"),
                vec![
                    site("https://other.org", ""),
                    site("http://mirror.example.edu", "/pub/other/v2"),
                ],
            ),
        ])
        .unwrap();
        let urls = [
            "http://site.org/",
            "http://site.org/a/b.html?x=1&y=%20z",
            "http://site.org:8080/a%2Fb/c;p=1?q",
            "https://10.0.0.7/x/",
            "http://mirror.example.edu/pub/site",
            "http://mirror.example.edu/pub/site/",
            "http://mirror.example.edu/pub/site/%C3%A9t%C3%A9/index.html?a=b",
            "http://mirror.example.edu/pub/other/v2",
            "http://mirror.example.edu/pub/other/v2/x?y",
            "https://other.org/",
            "https://other.org/deep/path/?q=%7E",
        ];
        for text in urls {
            let url = Url::parse(text).unwrap();
            let folded = table.fold(&url).expect(text);
            let parsed = table.fold_url(&url).expect(text);
            assert_eq!(parsed, Url::parse(&folded.url).unwrap(), "{text}");
            assert_eq!(parsed.as_str(), folded.url, "{text}");
            let view = UrlView::of(&url).unwrap();
            let viewed = table.fold_view(&view).expect(text);
            assert_eq!(viewed, UrlView::of(&parsed).unwrap(), "{text}");
        }
        for text in [
            "https://site.org/a",
            "http://mirror.example.edu/pub/sitex",
            "https://www.site.org/a",
        ] {
            let url = Url::parse(text).unwrap();
            assert_eq!(table.fold_url(&url), None, "{text}");
            assert_eq!(table.fold_view(&UrlView::of(&url).unwrap()), None, "{text}");
        }
    }

    #[test]
    fn folding_a_view_keeps_user_info_and_writes_odd_prefixes_as_the_parser_does() {
        let table = MirrorTable::compile(&[
            set(
                site("https://www.site.org", "/a b/./c"),
                vec![site("http://mirror.example.edu", "/pub/site")],
            ),
            set(
                site("http://other.org:8080", ""),
                vec![site("https://10.0.0.9", "")],
            ),
        ])
        .unwrap();
        for text in [
            "http://mirror.example.edu/pub/site/x/y?q#f",
            "http://mirror.example.edu/pub/site",
            "http://user:pw@mirror.example.edu/pub/site/z",
            "https://u@10.0.0.9/p/q?r=s",
        ] {
            let url = Url::parse(text).unwrap();
            let parsed = table.fold_url(&url).expect(text);
            let view = UrlView::of(&url).unwrap();
            let viewed = table.fold_view(&view).expect(text);
            assert_eq!(viewed.to_text(), parsed.as_str(), "{text}");
            assert_eq!(viewed, UrlView::of(&parsed).unwrap(), "{text}");
        }
    }

    #[test]
    fn invalid_mirror_sets_are_refused_with_the_reason() {
        let err = |sets: &[MirrorSet]| MirrorTable::compile(sets).unwrap_err().to_string();
        let e = err(&[set(
            site("https://a.org/x", ""),
            vec![site("http://b.org", "")],
        )]);
        assert!(e.contains("must be a lower-case http(s)://host"), "{e}");
        let e = err(&[set(
            site("https://a.org", ""),
            vec![site("http://b.org", "/x/")],
        )]);
        assert!(e.contains("path prefix \"/x/\""), "{e}");
        let e = err(&[
            set(site("https://a.org", ""), vec![site("http://b.org", "")]),
            set(site("https://c.org", ""), vec![site("http://b.org", "")]),
        ]);
        assert!(e.contains("already in mirror set"), "{e}");
        let e = err(&[set(site("https://a.org", ""), vec![])]);
        assert!(e.contains("at least one alias"), "{e}");
        let mut forbidden = set(site("https://a.org", ""), vec![site("http://b.org", "")]);
        forbidden.forbidden.push(site("http://b.org", ""));
        let e = err(&[forbidden]);
        assert!(e.contains("both a member and forbidden"), "{e}");
    }
}
