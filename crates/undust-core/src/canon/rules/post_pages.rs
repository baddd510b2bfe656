//! A number written in the URL that opens the page holding it
//! ([`SiteAction::PostToPage`](super::SiteAction::PostToPage)).
//!
//! Forum software links a post as its thread's address followed by the post's number, and
//! serves that address as the page of the thread that holds the post: Discourse's
//! `/t/slug/5/25` is `/t/slug/5?page=2` (its topic view's canonical path: page
//! `(post - 1) / 20 + 1`, written only when above 1), NodeBB's `/topic/5/slug/25` is
//! `/topic/5/slug?page=2` (`1 + floor((index - 1) / postsPerPage)`, its `postsPerPage` a
//! setting). With `k` posts per page, post `M` is on page `P = ceil(M / k)`, and page 1 is the
//! thread's own address without a page.
//!
//! `k` is a property of the site (of its configuration), not of the URL, and the learner only
//! knows bounds on it: each pair of a post's address and its page's shown in one duplicate
//! cluster says `M / P <= k < M / (P - 1)`. A rule holds the range `[per_page_min,
//! per_page_max]` those pairs leave, and rewrites a post number only when every `k` of the
//! range puts it on the same page; a post number whose page depends on where in the range `k`
//! is stays as it is. Without a pair beyond the first page the range has no upper bound, and
//! only post numbers up to `per_page_min` (page 1 for every `k` of the range) are rewritten.

/// Largest page size a rule may hold: forum software pages by a few dozen posts; a range
/// reaching beyond this is no page size.
pub const MAX_PER_PAGE: u32 = 10_000;

/// Most path segments a rule keeps between its prefix and the post number (the thread's id and
/// slug).
pub const MAX_KEPT_SEGMENTS: u16 = 8;

/// Most digits of a post number (a thread of a billion posts is no thread).
const MAX_POST_DIGITS: usize = 9;

/// A compiled [`SiteAction::PostToPage`](super::SiteAction::PostToPage).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PostPage {
    /// Literal path before the thread's segments: starts and ends with `/`.
    prefix: String,
    /// Segments of the thread's address after `prefix` (its id, its slug).
    kept: u16,
    /// The query parameter the page form writes its page number in; empty when the rule
    /// writes page 1 only.
    key: String,
    /// Lowest page size the samples allow.
    per_page_min: u32,
    /// Highest page size the samples allow; `None` when they show no page beyond the first.
    per_page_max: Option<u32>,
}

impl PostPage {
    pub(crate) fn new(
        prefix: &str,
        kept: u16,
        key: &str,
        per_page_min: u32,
        per_page_max: Option<u32>,
    ) -> Self {
        PostPage {
            prefix: prefix.to_owned(),
            kept,
            key: key.to_owned(),
            per_page_min,
            per_page_max,
        }
    }

    /// The page form of `path` and `query` when the path is a thread's address and a post
    /// number whose page the range decides: the thread's address, and the URL's own query
    /// with `key=P` after it for a page `P` beyond the first. `None` when the path is not of
    /// the rule's shape, the page depends on `k`, or the query names a page already (which of
    /// the two would the software serve?).
    pub(crate) fn apply(
        &self,
        path: &str,
        query: Option<&str>,
    ) -> Option<(String, Option<String>)> {
        let (thread, post) = post_in_path(&self.prefix, self.kept, path)?;
        let page = page_holding(post, self.per_page_min, self.per_page_max)?;
        let own = query.filter(|q| !q.is_empty());
        if let Some(q) = own {
            if q.split('&').any(|part| names_key(part, &self.key)) {
                return None;
            }
        }
        let query = match (own, page) {
            (own, 1) => own.map(str::to_owned),
            (None, p) => Some(format!("{}={p}", self.key)),
            (Some(own), p) => Some(format!("{own}&{}={p}", self.key)),
        };
        Some((thread.to_owned(), query))
    }
}

/// Whether query part `part` is parameter `key` (with or without a value). An empty key
/// (a rule that writes page 1 only) names no part.
fn names_key(part: &str, key: &str) -> bool {
    !key.is_empty() && part.split_once('=').map_or(part, |(name, _)| name) == key
}

/// The thread's address and the post number of `path`: `prefix`, then `kept` non-empty
/// segments, then a last segment that is a post number (digits, no leading zero, at most nine).
pub fn post_in_path<'p>(prefix: &str, kept: u16, path: &'p str) -> Option<(&'p str, u64)> {
    let rest = path.strip_prefix(prefix)?;
    let slash = rest.rfind('/')?;
    let (thread, last) = (&rest[..slash], &rest[slash + 1..]);
    let post = post_number(last)?;
    let mut segments = 0u16;
    for segment in thread.split('/') {
        if segment.is_empty() {
            return None;
        }
        segments += 1;
        if segments > kept {
            return None;
        }
    }
    (segments == kept).then(|| (&path[..prefix.len() + slash], post))
}

/// A post number: one to nine ASCII digits without a leading zero.
pub fn post_number(segment: &str) -> Option<u64> {
    let ok = !segment.is_empty()
        && segment.len() <= MAX_POST_DIGITS
        && !segment.starts_with('0')
        && segment.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| segment.parse().ok()).flatten()
}

/// The page holding post `post` for every page size in `[min, max]`, or `None` when the pages
/// differ across the range. Without `max` only page 1 is decided: posts up to `min`.
pub fn page_holding(post: u64, min: u32, max: Option<u32>) -> Option<u64> {
    let page = |k: u32| post.div_ceil(u64::from(k.max(1)));
    match max {
        None => (post <= u64::from(min)).then_some(1),
        Some(max) => {
            let first = page(min);
            (first == page(max)).then_some(first)
        }
    }
}

/// Why a post-to-page rule of a rule file is malformed, or `None`.
pub fn post_page_error(
    prefix: &str,
    kept: u16,
    key: &str,
    per_page_min: u32,
    per_page_max: Option<u32>,
) -> Option<&'static str> {
    if !prefix.starts_with('/') || !prefix.ends_with('/') || prefix.contains(['?', '#']) {
        return Some("a post-to-page rule's prefix starts and ends with / and has no ? or #");
    }
    if kept == 0 || kept > MAX_KEPT_SEGMENTS {
        return Some("a post-to-page rule keeps between 1 and 8 segments of the thread's address");
    }
    if key.contains(['&', '=', '#', '?']) {
        return Some("a post-to-page rule's page parameter has no & = ? #");
    }
    if per_page_min == 0 || per_page_min > MAX_PER_PAGE {
        return Some("a post-to-page rule's lowest page size is between 1 and 10000");
    }
    match per_page_max {
        Some(max) if max < per_page_min || max > MAX_PER_PAGE => {
            Some("a post-to-page rule's highest page size is between its lowest and 10000")
        }
        Some(_) if key.is_empty() => {
            Some("a post-to-page rule that writes pages beyond the first names their parameter")
        }
        None if !key.is_empty() => {
            Some("a post-to-page rule with a page parameter bounds its page size from above")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discourse(min: u32, max: Option<u32>) -> PostPage {
        let key = if max.is_some() { "page" } else { "" };
        PostPage::new("/t/", 2, key, min, max)
    }

    #[test]
    fn a_post_number_opens_the_page_holding_it() {
        let r = discourse(20, Some(20));
        let form = |p: &str, q: Option<&str>| r.apply(p, q);
        let thread = "/t/a-topic/5".to_owned();
        assert_eq!(form("/t/a-topic/5/3", None), Some((thread.clone(), None)));
        assert_eq!(form("/t/a-topic/5/20", None), Some((thread.clone(), None)));
        assert_eq!(
            form("/t/a-topic/5/21", None),
            Some((thread.clone(), Some("page=2".into())))
        );
        assert_eq!(
            form("/t/a-topic/5/61", Some("u=bob")),
            Some((thread.clone(), Some("u=bob&page=4".into())))
        );
        assert_eq!(
            form("/t/a-topic/5/7", Some("u=bob")),
            Some((thread, Some("u=bob".into())))
        );
        // A page named already, another shape, no post number.
        assert_eq!(form("/t/a-topic/5/25", Some("page=3")), None);
        assert_eq!(form("/t/a-topic/5/25", Some("page")), None);
        assert_eq!(form("/t/5/25", None), None);
        assert_eq!(form("/t/x/a-topic/5/25", None), None);
        assert_eq!(form("/t//5/25", None), None);
        assert_eq!(form("/t/a-topic/5/025", None), None);
        assert_eq!(form("/t/a-topic/5/0", None), None);
        assert_eq!(form("/t/a-topic/5/1234567890", None), None);
        assert_eq!(form("/t/a-topic/5/", None), None);
        assert_eq!(form("/c/a-topic/5/25", None), None);
        // The page form is not read again: the rewrite is a fixpoint.
        assert_eq!(form("/t/a-topic/5", Some("page=2")), None);
        // Another parameter whose name starts like the key is not the key.
        assert_eq!(
            form("/t/a-topic/5/25", Some("pages=1")),
            Some(("/t/a-topic/5".into(), Some("pages=1&page=2".into())))
        );
    }

    #[test]
    fn a_post_whose_page_depends_on_the_page_size_is_left_alone() {
        // Pairs left k in [18, 22].
        assert_eq!(page_holding(15, 18, Some(22)), Some(1));
        assert_eq!(page_holding(18, 18, Some(22)), Some(1));
        assert_eq!(page_holding(19, 18, Some(22)), None);
        assert_eq!(page_holding(22, 18, Some(22)), None);
        assert_eq!(page_holding(23, 18, Some(22)), Some(2));
        assert_eq!(page_holding(36, 18, Some(22)), Some(2));
        assert_eq!(page_holding(37, 18, Some(22)), None);
        assert_eq!(page_holding(44, 18, Some(22)), None);
        assert_eq!(page_holding(45, 18, Some(22)), Some(3));
        // No page beyond the first shown: page 1 up to the lowest size, nothing beyond.
        assert_eq!(page_holding(12, 12, None), Some(1));
        assert_eq!(page_holding(13, 12, None), None);
        let thin = discourse(12, None);
        assert_eq!(
            thin.apply("/t/a-topic/5/12", None),
            Some(("/t/a-topic/5".into(), None))
        );
        assert_eq!(thin.apply("/t/a-topic/5/13", None), None);
    }

    #[test]
    fn malformed_post_pages_are_named() {
        let ok = |prefix: &str, kept: u16, key: &str, min: u32, max: Option<u32>| {
            post_page_error(prefix, kept, key, min, max).is_none()
        };
        assert!(ok("/t/", 2, "page", 20, Some(20)));
        assert!(ok("/", 1, "", 5, None));
        assert!(!ok("t/", 2, "page", 20, Some(20)));
        assert!(!ok("/t", 2, "page", 20, Some(20)));
        assert!(!ok("/t?/", 2, "page", 20, Some(20)));
        assert!(!ok("/t/", 0, "page", 20, Some(20)));
        assert!(!ok("/t/", 9, "page", 20, Some(20)));
        assert!(!ok("/t/", 2, "pa=ge", 20, Some(20)));
        assert!(!ok("/t/", 2, "page", 0, Some(20)));
        assert!(!ok("/t/", 2, "page", 21, Some(20)));
        assert!(!ok("/t/", 2, "page", 20, Some(10_001)));
        assert!(!ok("/t/", 2, "", 20, Some(20)));
        assert!(!ok("/t/", 2, "page", 20, None));
    }
}
