//! How a site spells one page's address in more than one shape, applied by
//! [`super::SiteRewriter`]: an id written inside a templated path segment that is also a query
//! value, a default the software fills in inside a value, and a default view written as
//! trailing path segments.
//!
//! - **Templated segment ↔ query value** ([`super::SiteAction::TemplatedSegmentToQuery`]): a
//!   front controller's query `script?name=V` written as a path segment `before` + `V` + `after`
//!   under a directory. Simple Machines Forum's `queryless_urls` writes `index.php?topic=5.0` as
//!   `index.php/topic,5.0.html`; phpBB and MyBB "SEO URL" modifications write
//!   `viewtopic.php?t=5` as `topic5.html` and `showthread.php?tid=5` as `thread-5.html`. A
//!   titled template reads a title before `before` and ignores it: osCommerce's Ultimate SEO
//!   URLs write `product_info.php?products_id=5` as `a-name-p-5.html` and their rewrite rules
//!   read only the id after `-p-`, so a renamed product's old address answers too. The
//!   query is what the software parses (the path is an output-buffer or rewrite-rule spelling of
//!   it), so the query is the form written, and the query's own rules (parameters dropped,
//!   defaults filled in) then apply to both spellings.
//! - **Templated segment ↔ two query numbers** ([`super::SiteAction::TemplatedPairToQuery`]):
//!   the same with two numbers in the segment, `before` + `N` + `between` + `M` + `after`.
//!   MyBB's rewrite rules write `showthread.php?tid=5&page=2` as `thread-5-page-2.html` and
//!   `forumdisplay.php?fid=3&page=2` as `forum-3-page-2.html`; phpBB SEO writes
//!   `viewtopic.php?t=5&start=15` as `topic5-15.html`. Both values are digit runs, so the
//!   literals around them split the segment one way only. A pair template is tried before the
//!   one-value templates of its directory: `thread-5-page-2.html` is no thread `5-page-2`.
//! - **A default inside a value** ([`super::SiteAction::DefaultValueSuffix`]): a bare numeric value
//!   that the software completes with a fixed suffix (SMF's request cleaner reads `topic=5` as
//!   `topic=5.0`, the offset 0); the complete form is written.
//! - **A default view as trailing segments** ([`super::SiteAction::DefaultViewTail`]): a literal
//!   tail of segments naming the view a page shows when none is named (Discourse's
//!   `/c/slug/5/l/latest` is `/c/slug/5`; Gitea's `/owner/repo/src/branch/main` is the
//!   repository's home `/owner/repo`; a listing's `/page/1`); the page without it is written.
//! - **An item reached from a section** ([`super::SiteAction::ContextTail`]): the segments after
//!   an item's id that name where it was reached from (Piwigo's `picture.php?/123/category/5`,
//!   `/123/most_visited`, `/123/tags/4-sea`: photo 123 in each); the item without them is
//!   written.
//!
//! Each function here is one action's rewrite, a fixpoint of itself (its output is not rewritten
//! again by it), and bounded by the input's length.

/// One [`super::SiteAction::TemplatedSegmentToQuery`], as the rewriter holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SegmentTemplate {
    /// Directory the segment is in: starts and ends with `/`.
    pub(crate) dir: String,
    /// Literal before the value in the segment.
    pub(crate) before: String,
    /// Literal after the value in the segment.
    pub(crate) after: String,
    /// Path of the query form.
    pub(crate) script: String,
    /// Parameter holding the value in the query form.
    pub(crate) name: String,
    /// Whether the value must be a bare number ([`is_pair_number`]).
    pub(crate) numbers: bool,
    /// A second number and the literal between the two (`TemplatedPairToQuery`); both values
    /// are then bare numbers.
    pub(crate) second: Option<SecondNumber>,
    /// Query parts the query form holds besides the values, written before them (may be
    /// empty).
    pub(crate) fixed: String,
    /// Whether an unread title stands before `before` (one-value templates only).
    pub(crate) titled: bool,
}

impl SegmentTemplate {
    /// The template of a [`super::SiteAction::TemplatedSegmentToQuery`] or
    /// [`super::SiteAction::TemplatedPairToQuery`]; `None` for any other action. The one reading
    /// of both actions that the rewriter, the rule file's checks and the learner share.
    pub(crate) fn of(action: &super::SiteAction) -> Option<SegmentTemplate> {
        match action {
            super::SiteAction::TemplatedSegmentToQuery {
                dir,
                before,
                after,
                script,
                name,
                numbers,
                fixed,
                titled,
            } => Some(SegmentTemplate {
                dir: dir.clone(),
                before: before.clone(),
                after: after.clone(),
                script: script.clone(),
                name: name.clone(),
                numbers: *numbers,
                second: None,
                fixed: fixed.clone(),
                titled: *titled,
            }),
            super::SiteAction::TemplatedPairToQuery {
                dir,
                before,
                between,
                after,
                script,
                first,
                second,
                fixed,
            } => Some(SegmentTemplate {
                dir: dir.clone(),
                before: before.clone(),
                after: after.clone(),
                script: script.clone(),
                name: first.clone(),
                numbers: true,
                second: Some(SecondNumber {
                    between: between.clone(),
                    name: second.clone(),
                }),
                fixed: fixed.clone(),
                titled: false,
            }),
            _ => None,
        }
    }

    /// Whether the template reads `path` (see [`templated_value`]).
    pub(crate) fn reads(&self, path: &str) -> bool {
        templated_value(self, path).is_some()
    }
}

/// The second value of a [`super::SiteAction::TemplatedPairToQuery`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SecondNumber {
    /// Literal between the two numbers: not empty, neither end a digit.
    pub(crate) between: String,
    /// Parameter holding the second number in the query form.
    pub(crate) name: String,
}

/// Most digits of a number a pair template reads (an id or a page fits in 19).
const MAX_PAIR_DIGITS: usize = 19;

/// Whether `v` is a bare number a pair template reads: 1 to [`MAX_PAIR_DIGITS`] ASCII digits.
pub fn is_pair_number(v: &str) -> bool {
    (1..=MAX_PAIR_DIGITS).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `before`, `between` and `after` delimit two digit runs one way only: `between` not
/// empty, and no digit where a literal touches a number.
pub fn pair_literals_delimit(before: &str, between: &str, after: &str) -> bool {
    let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
    !between.is_empty()
        && !digit(before.bytes().last())
        && !digit(between.bytes().next())
        && !digit(between.bytes().last())
        && !digit(after.bytes().next())
}

/// The two numbers `segment` (the part between a pair template's `before` and `after`) holds
/// around `between`, or `None` when it is not two bare numbers joined by it.
pub fn pair_numbers<'s>(segment: &'s str, between: &str) -> Option<(&'s str, &'s str)> {
    let digits = segment.bytes().take_while(u8::is_ascii_digit).count();
    let (first, rest) = segment.split_at(digits);
    let second = rest.strip_prefix(between)?;
    (is_pair_number(first) && is_pair_number(second)).then_some((first, second))
}

/// Whether `fixed` is a template's fixed query parts: empty, or `name=value` parts joined by
/// `&`, each with a name and a value, neither holding `#` (a query form's page-type selectors,
/// `mod=forumdisplay`).
pub fn fixed_query_parts(fixed: &str) -> bool {
    fixed.is_empty() || fixed.split('&').all(fixed_query_part)
}

/// Whether `part` is one of a template's fixed query parts (see [`fixed_query_parts`]).
pub fn fixed_query_part(part: &str) -> bool {
    part.split_once('=').is_some_and(|(name, value)| {
        !name.is_empty() && !value.is_empty() && !value.contains('=') && !part.contains('#')
    })
}

/// Whether a value taken from a path segment means the same as a query value: non-empty, and
/// none of the characters that a query reads otherwise (`&`, `=`, `;` separate parameters, `+`
/// is a space, `?` and `#` end it, `'` is percent-encoded by the URL parser in the query of a
/// special scheme but not in its path), nor `/`.
pub fn query_safe_segment_value(v: &str) -> bool {
    !v.is_empty() && !v.contains(['&', '=', ';', '+', '?', '#', '\'', '/', '\\'])
}

/// Whether a titled template reads `title` as a title: two letters and no digit (a number
/// before the marker may be another id of the segment, `thread-5-post-12.html`). Percent escapes
/// are read as the bytes they encode: a non-ASCII byte is part of a letter
/// (`m%C3%BCller-p-5.html`), an escaped digit is a digit.
pub fn is_template_title(title: &str) -> bool {
    let bytes = title.as_bytes();
    let hex = |at: usize| bytes.get(at).and_then(|&b| (b as char).to_digit(16));
    let (mut letters, mut at) = (0, 0);
    while at < bytes.len() {
        let (byte, width) = match (bytes[at], hex(at + 1), hex(at + 2)) {
            (b'%', Some(high), Some(low)) => ((high * 16 + low) as u8, 3),
            (b, _, _) => (b, 1),
        };
        if byte.is_ascii_digit() {
            return false;
        }
        letters += usize::from(byte.is_ascii_alphabetic() || !byte.is_ascii());
        at += width;
    }
    letters >= 2
}

/// Whether a value read after a title is an id: a digit first, no letter, at most 64 bytes,
/// and read the same in a query ([`query_safe_segment_value`]): `1279`, osCommerce's category
/// path `3_10`. A title's own words never read as one, so a marker inside a title
/// (`a-c-b-p-5.html` under the `-c-` template) is not taken for the end of it.
pub fn is_titled_template_id(v: &str) -> bool {
    v.len() <= 64
        && v.starts_with(|c: char| c.is_ascii_digit())
        && !v.bytes().any(|b| b.is_ascii_alphabetic())
        && query_safe_segment_value(v)
}

/// The value a template reads in `path`: the last segment under `dir`, `before` + value +
/// `after` (title + `before` + value + `after` when titled, the value what follows the last
/// `before`), the value [`query_safe_segment_value`]; with a second number, the two numbers.
pub(crate) fn templated_value<'p>(
    template: &SegmentTemplate,
    path: &'p str,
) -> Option<(&'p str, Option<&'p str>)> {
    let segment = path.strip_prefix(template.dir.as_str())?;
    if segment.contains('/') {
        return None;
    }
    let body = segment.strip_suffix(template.after.as_str())?;
    let value = if template.titled {
        // The last marker ends the title: the id is what follows it (never empty, so an empty
        // marker reads nothing).
        let (title, value) = body.rsplit_once(template.before.as_str())?;
        (is_template_title(title) && is_titled_template_id(value)).then_some(value)?
    } else {
        body.strip_prefix(template.before.as_str())?
    };
    match &template.second {
        None if template.numbers => is_pair_number(value).then_some((value, None)),
        None => query_safe_segment_value(value).then_some((value, None)),
        Some(second) => {
            pair_numbers(value, &second.between).map(|(first, other)| (first, Some(other)))
        }
    }
}

/// The query form of a path a template matches (the first that does; the rewriter keeps pair
/// templates first): its script path, and the query of the template's fixed parts, `name=V`
/// (and the second number's part), then the URL's own query, if any.
pub(crate) fn segment_to_query(
    templates: &[SegmentTemplate],
    path: &str,
    query: Option<&str>,
) -> Option<(String, String)> {
    templates.iter().find_map(|t| {
        let (value, other) = templated_value(t, path)?;
        let mut q = String::with_capacity(
            t.fixed.len() + t.name.len() + value.len() + 1 + query.map_or(0, str::len) + 24,
        );
        if !t.fixed.is_empty() {
            q.push_str(&t.fixed);
            q.push('&');
        }
        q.push_str(&t.name);
        q.push('=');
        q.push_str(value);
        if let (Some(second), Some(other)) = (&t.second, other) {
            q.push('&');
            q.push_str(&second.name);
            q.push('=');
            q.push_str(other);
        }
        if let Some(rest) = query.filter(|r| !r.is_empty()) {
            q.push('&');
            q.push_str(rest);
        }
        Some((t.script.clone(), q))
    })
}

/// Whether a value is bare: all ASCII digits, at most 19 (a number), so a default suffix may
/// complete it.
fn is_bare_number(v: &str) -> bool {
    !v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a suffix may complete bare numbers ([`super::SiteAction::DefaultValueSuffix`]): one
/// to eight characters, the first not a digit (so the completed value is not bare again), none
/// that separates or ends query parameters.
pub fn is_value_suffix(suffix: &str) -> bool {
    (1..=8).contains(&suffix.len())
        && !suffix.starts_with(|c: char| c.is_ascii_digit())
        && !suffix.contains(['&', '=', ';', '+', '?', '#', '/', '\''])
}

/// `q` with every part `name=N` (`N` bare, [`is_bare_number`]) of a `(name, suffix)` in
/// `defaults` written `name=N` + suffix, or `None` when no part is.
pub(crate) fn complete_default_values(defaults: &[(String, String)], q: &str) -> Option<String> {
    // Most hosts have no default suffix, and every rewritten query comes through here.
    if defaults.is_empty() {
        return None;
    }
    let suffix_of = |part: &str| {
        let (name, value) = part.split_once('=')?;
        if !is_bare_number(value) {
            return None;
        }
        defaults
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
    };
    if !q.split('&').any(|p| suffix_of(p).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(q.len() + 8);
    for (i, part) in q.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(part);
        if let Some(suffix) = suffix_of(part) {
            out.push_str(suffix);
        }
    }
    Some(out)
}

/// Whether `tail` can be a default view's tail ([`super::SiteAction::DefaultViewTail`]): one to
/// [`MAX_TAIL_SEGMENTS`] segments, each after a `/`, each a name holding an ASCII letter (a
/// view, a branch: not a number, which is an id or a position, nor `.` or `..`), no query or
/// fragment. A number would also end other paths: a post's `/4` dropped site-wide would take
/// category 4's id off `/c/news/4`.
pub fn is_view_tail(tail: &str) -> bool {
    let Some(rest) = tail.strip_prefix('/') else {
        return false;
    };
    let segments = rest.split('/').count();
    (1..=MAX_TAIL_SEGMENTS).contains(&segments)
        && !tail.contains(['?', '#'])
        && rest
            .split('/')
            .all(|s| s.bytes().any(|b| b.is_ascii_alphabetic()))
}

/// Most segments of a default view's tail (Gitea's `/src/branch/main` has three).
pub const MAX_TAIL_SEGMENTS: usize = 3;

/// The length of `path` without a default view's tail, dropped as long as one ends it and
/// something is left before it that is not a file, or `None` when none does. A view of a file
/// is a page about the file, not the file (Plone's `/scan.pdf/view` beside the PDF's bytes).
pub(crate) fn without_view_tail(tails: &[String], path: &str) -> Option<usize> {
    let mut end = path.len();
    // Each round removes at least one byte: bounded by the path's length.
    while let Some(tail) = tails
        .iter()
        .find(|t| view_tail_base(&path[..end], t).is_some())
    {
        end -= tail.len();
    }
    (end < path.len()).then_some(end)
}

/// The path `path` stands for when `tail` is a default view's tail: `path` without `tail`, when
/// it ends with it and something that is not a file is left before it; else `None`. The one
/// reading of where a tail applies, shared by the rewriter and the learner's evidence.
pub(crate) fn view_tail_base<'a>(path: &'a str, tail: &str) -> Option<&'a str> {
    path.strip_suffix(tail).filter(|rest| {
        rest.len() > 1 && !super::files::names_a_file(rest.rsplit('/').next().unwrap_or(""))
    })
}

/// Whether `tail` can be the section an item was reached from ([`super::SiteAction::ContextTail`]):
/// one or more segments, each after a `/`, the first a name holding an ASCII letter (a section:
/// not a number, which is a position, a post or a page), none empty but for a trailing slash
/// (Magento's `/id/5/category/3/`), no query or fragment.
pub fn is_context_tail(tail: &str) -> bool {
    let Some(rest) = tail.strip_prefix('/') else {
        return false;
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    !tail.contains(['?', '#'])
        && rest.split('/').all(|s| !s.is_empty())
        && rest
            .split('/')
            .next()
            .is_some_and(|first| first.bytes().any(|b| b.is_ascii_alphabetic()))
}

/// Where `path`'s item segment ends when a context tail follows it under `dir`: `path` is `dir`,
/// a segment starting with an ASCII digit, and a tail that [`is_context_tail`] accepts. The one
/// reading of where [`super::SiteAction::ContextTail`] applies, shared by the rewriter and the
/// learner's evidence.
pub(crate) fn context_item_end(dir: &str, path: &str) -> Option<usize> {
    let rest = path.strip_prefix(dir)?;
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let slash = rest.find('/')?;
    is_context_tail(&rest[slash..]).then_some(dir.len() + slash)
}

/// The length of `path` without the context tail of the first of `dirs` it has one under
/// ([`context_item_end`]), or `None`. The item's segment is left, so the result has no tail
/// under that directory: a fixpoint.
pub(crate) fn without_context_tail(dirs: &[String], path: &str) -> Option<usize> {
    dirs.iter().find_map(|dir| context_item_end(dir, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smf() -> SegmentTemplate {
        SegmentTemplate {
            dir: "/forum/index.php/".into(),
            before: "topic,".into(),
            after: ".html".into(),
            script: "/forum/index.php".into(),
            name: "topic".into(),
            numbers: false,
            second: None,
            fixed: String::new(),
            titled: false,
        }
    }

    /// MyBB's thread pages: `thread-N-page-M.html` is `showthread.php?tid=N&page=M`.
    fn mybb_pages() -> SegmentTemplate {
        SegmentTemplate {
            dir: "/forum/".into(),
            before: "thread-".into(),
            after: ".html".into(),
            script: "/forum/showthread.php".into(),
            name: "tid".into(),
            numbers: true,
            second: Some(SecondNumber {
                between: "-page-".into(),
                name: "page".into(),
            }),
            fixed: String::new(),
            titled: false,
        }
    }

    #[test]
    fn a_title_is_words_with_its_escapes_read_as_bytes() {
        assert!(is_template_title("red-kettle"));
        assert!(is_template_title("m%C3%BCller-tasse"));
        assert!(is_template_title("%C3%A9t%C3%A9"));
        assert!(!is_template_title("thread-5"));
        assert!(!is_template_title("mug-%32%30"));
        assert!(!is_template_title("a"));
        assert!(!is_template_title("%20-%2D"));
    }

    #[test]
    fn a_segment_with_two_numbers_becomes_both_query_values() {
        let thread = SegmentTemplate {
            second: None,
            numbers: false,
            ..mybb_pages()
        };
        // The pair first, as the rewriter keeps them.
        let t = [mybb_pages(), thread];
        assert_eq!(
            segment_to_query(&t, "/forum/thread-5-page-2.html", Some("highlight=x")),
            Some((
                "/forum/showthread.php".into(),
                "tid=5&page=2&highlight=x".into()
            ))
        );
        assert_eq!(
            segment_to_query(&t, "/forum/thread-5.html", None),
            Some(("/forum/showthread.php".into(), "tid=5".into()))
        );
        // Not two numbers around the literal: left to the one-value template, or to nothing.
        for path in [
            "/forum/thread-5-page-.html",
            "/forum/thread--page-2.html",
            "/forum/thread-5a-page-2.html",
            "/forum/thread-5-page-2x.html",
            "/forum/thread-5-page-2-page-3.html",
            "/forum/thread-12345678901234567890-page-2.html",
        ] {
            assert_eq!(segment_to_query(&t[..1], path, None), None, "{path}");
        }
        assert_eq!(
            segment_to_query(&t, "/forum/thread-5-lastpost.html", None),
            Some(("/forum/showthread.php".into(), "tid=5-lastpost".into()))
        );
        // A one-value template learned from numbers reads numbers only.
        let numbers = [SegmentTemplate {
            numbers: true,
            ..t[1].clone()
        }];
        assert_eq!(
            segment_to_query(&numbers, "/forum/thread-5.html", None),
            Some(("/forum/showthread.php".into(), "tid=5".into()))
        );
        assert_eq!(
            segment_to_query(&numbers, "/forum/thread-5-lastpost.html", None),
            None
        );
        assert!(pair_literals_delimit("thread-", "-page-", ".html"));
        assert!(pair_literals_delimit("topic", "-", ".html"));
        assert!(!pair_literals_delimit("thread-", "", ".html"));
        assert!(!pair_literals_delimit("t1", "-", ".html"));
        assert!(!pair_literals_delimit("t", "2-", ".html"));
        assert!(!pair_literals_delimit("t", "-", "0.html"));
    }

    #[test]
    fn a_templated_segment_becomes_its_query_form() {
        let t = [smf()];
        assert_eq!(
            segment_to_query(&t, "/forum/index.php/topic,5.0.html", None),
            Some(("/forum/index.php".into(), "topic=5.0".into()))
        );
        assert_eq!(
            segment_to_query(&t, "/forum/index.php/topic,5.15.html", Some("x=1")),
            Some(("/forum/index.php".into(), "topic=5.15&x=1".into()))
        );
        // Another directory, a deeper path, an empty value, a value the query reads otherwise.
        for path in [
            "/index.php/topic,5.0.html",
            "/forum/index.php/board,5.0/topic,5.0.html",
            "/forum/index.php/topic,.html",
            "/forum/index.php/topic,5&x=1.html",
            "/forum/index.php/topic,it's.html",
            "/forum/index.php",
        ] {
            assert_eq!(segment_to_query(&t, path, None), None, "{path}");
        }
    }

    #[test]
    fn bare_numbers_get_their_default_suffix_once() {
        let d = [("topic".to_owned(), ".0".to_owned())];
        assert_eq!(
            complete_default_values(&d, "topic=5"),
            Some("topic=5.0".into())
        );
        assert_eq!(
            complete_default_values(&d, "a=1&topic=5&b=2"),
            Some("a=1&topic=5.0&b=2".into())
        );
        for q in [
            "topic=5.0",
            "topic=5.15",
            "topic=x",
            "topic=",
            "board=5",
            "topic",
        ] {
            assert_eq!(complete_default_values(&d, q), None, "{q}");
        }
        // No default suffix learned: nothing to complete.
        assert_eq!(complete_default_values(&[], "topic=5"), None);
        assert!(is_value_suffix(".0"));
        assert!(!is_value_suffix("0"));
        assert!(!is_value_suffix(""));
        assert!(!is_value_suffix(".0&x=1"));
    }

    #[test]
    fn a_default_view_tail_is_dropped_from_the_end_only() {
        let tails = ["/l/latest".to_owned()];
        fn cut<'p>(tails: &[String], p: &'p str) -> Option<&'p str> {
            without_view_tail(tails, p).map(|n| &p[..n])
        }
        let cut = |p| cut(&tails, p);
        assert_eq!(cut("/c/news/5/l/latest"), Some("/c/news/5"));
        assert_eq!(cut("/c/news/5/l/latest/l/latest"), Some("/c/news/5"));
        assert_eq!(cut("/c/news/5/l/top"), None);
        assert_eq!(cut("/c/news/5/l/latest/x"), None);
        // Nothing is left before it: the site's root keeps it.
        assert_eq!(cut("/l/latest"), None);
        // A file's view is not the file.
        assert_eq!(cut("/c/scan.pdf/l/latest"), None);
        assert!(is_view_tail("/src/branch/main"));
        assert!(!is_view_tail("/a/b/c/d"));
        assert!(!is_view_tail("l/latest"));
        assert!(!is_view_tail("/l//latest"));
        assert!(!is_view_tail("/l/.."));
        assert!(!is_view_tail("/4"));
        assert!(!is_view_tail("/page/2"));
    }

    #[test]
    fn a_section_after_an_item_is_dropped_down_to_the_item() {
        let dirs = ["/piwigo/picture.php/".to_owned()];
        let cut = |p: &'static str| without_context_tail(&dirs, p).map(|n| &p[..n]);
        assert_eq!(
            cut("/piwigo/picture.php/123/category/5"),
            Some("/piwigo/picture.php/123")
        );
        assert_eq!(
            cut("/piwigo/picture.php/123-sea.jpg/tags/4-sea/"),
            Some("/piwigo/picture.php/123-sea.jpg")
        );
        // The item alone, a trailing slash, a position after it, an item that is no id.
        assert_eq!(cut("/piwigo/picture.php/123"), None);
        assert_eq!(cut("/piwigo/picture.php/123/"), None);
        assert_eq!(cut("/piwigo/picture.php/123/4"), None);
        assert_eq!(cut("/piwigo/picture.php/about/category/5"), None);
        // Under another directory.
        assert_eq!(cut("/piwigo/index.php/123/category/5"), None);
        assert!(is_context_tail("/s/a-product/category/45/"));
        assert!(!is_context_tail("/category//5"));
        assert!(!is_context_tail("/category/5?x"));
        assert!(!is_context_tail("/2/category"));
        assert!(!is_context_tail("category"));
    }
}
