//! Site rules: host-wide normalizations applied before the pattern rules.
//!
//! Some DUST is a property of the whole site rather than of one page type: a session or
//! tracking parameter the server ignores everywhere, a server that treats paths
//! case-insensitively, parameters accepted in any order, a directory that serves its default
//! document. The pattern tree sees such a property once per page type, and every combination
//! of two of them fragments the tree (`?sid=…&ref=…` on a mixed-case path is its own node), so
//! the learner first looks for these properties over all of a host's samples
//! (`learn::site`), and the engine applies them to every URL of the host before it looks
//! for a pattern rule.
//!
//! In the rule file a site rule reads like this:
//!
//! ```json
//! {"id": "example.com#s1", "op": "ignore_param", "name": "sid",
//!  "support": 412, "support_clusters": 97, "false_positive_rate": 0.0}
//! {"id": "example.com#s2", "op": "ignore_param", "name": "f", "beside": "t", ...}
//! {"id": "example.com#s3", "op": "ignore_param_value", "name": "id_lang", "value": "1",
//!  "beside": "id_product", ...}
//! ```
//!
//! Every action is idempotent, and [`SiteRewriter::rewrite`] applies them in a fixed order
//! (scheme, a path written as the query string read as the path, a query value moved into the
//! path, lower-case the path (and the query), segment
//! aliases, dropped segments, slugs beside ids, ids ending slugs to short links, strip a
//! default view's tail, strip a default document, strip a file extension, strip trailing
//! slashes, complete bare values with their default, drop titles from ids in query values, drop
//! parameters, sort the query; then a templated segment left in the path back to its query
//! value, or a listed route's id to its query form, or a post's address to the page of its
//! thread that holds it (`canon::rules::post_pages`), and every action again on that form;
//! after a vocabulary, last, a static file copied into the site's folders written as its one
//! copy), so the result does not depend on the
//! order of the rules in the file. The three actions on how one address is
//! spelled in several shapes (templated segments, defaults inside values, default views as
//! trailing segments) are written in `canon::rules::segments`.

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use url::Url;

use super::path_pairs;
use super::post_pages::PostPage;
use super::routed_ids::RoutedId;
use super::segments;
pub(crate) use super::segments::{context_item_end, view_tail_base, SegmentTemplate};
pub use super::segments::{
    fixed_query_part, fixed_query_parts, is_context_tail, is_pair_number, is_template_title,
    is_titled_template_id, is_value_suffix, is_view_tail, pair_literals_delimit, pair_numbers,
    query_safe_segment_value,
};
use super::vocabulary::Vocabulary;
use crate::canon::split::{split_byte, split_once_byte};
use crate::canon::view::UrlView;

/// What a site rule does to every URL of its host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SiteAction {
    /// Every occurrence of query parameter `name` (raw, as serialized) is dropped; with
    /// `beside`, only from queries that also hold parameter `beside`: a parameter redundant
    /// next to an id (phpBB's forum `f` beside the topic `t`) that names the page elsewhere (`f`
    /// alone on the forum listings). A `beside` written `name=value` asks for that exact part:
    /// the page type is a query value (Joomla's menu item `Itemid` is context beside
    /// `view=article` and names the page beside `view=category`); several joined by `&` must
    /// all be present (`id&view=article`).
    IgnoreParam {
        /// The parameter name.
        name: String,
        /// The parameter the query must also hold, or `None` for every URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        beside: Option<String>,
    },
    /// Query part `name=value` is dropped, every other value of `name` kept: a parameter
    /// written at its default value names the page the URL without it names, while its other
    /// values name other pages (`?page=1` beside `?page=2`, a list's `state=open` beside
    /// `state=closed`, a profile's `tab=repositories`, MediaWiki's `action=view`). Compared
    /// after the query is lower-cased, when it is.
    IgnoreParamValue {
        /// The parameter name.
        name: String,
        /// The one value dropped (may be empty: `q=`).
        value: String,
        /// As [`SiteAction::IgnoreParam`]'s: the parts the query must also hold, or `None` for
        /// every URL. A language at its default beside a product id (PrestaShop's `id_lang=1`
        /// beside `id_product`) is the product's page in its one language, while on the pages
        /// of manufacturers and CMS articles the sample may not show it redundant.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        beside: Option<String>,
    },
    /// ASCII letters of the path are lower-cased (percent escapes are left as they are).
    LowercasePath,
    /// ASCII letters of the first `segments` path segments are lower-cased, the rest kept: an
    /// application that looks up its first names case-insensitively in front of a
    /// case-sensitive part (a forge's `/Owner/Repo` before git paths, where `xt_DSCP.h` and
    /// `xt_dscp.h` are two files). Implied by [`SiteAction::LowercasePath`].
    LowercaseSegments {
        /// How many segments from the first are folded (at least one).
        segments: u16,
    },
    /// ASCII letters of the path and of the query, keys and values, are lower-cased: a
    /// case-insensitive server in front of a case-insensitive database (IIS/ASP.NET), where
    /// `/Item.aspx?ID=5` and `/item.aspx?id=5` are one page. Implies [`SiteAction::LowercasePath`].
    LowercasePathAndQuery,
    /// A final path segment equal to `name` is removed: `/dir/name` becomes `/dir/`.
    DefaultDocument {
        /// The default document's file name.
        name: String,
    },
    /// Query parameters are sorted by name; repeated names keep their relative order.
    SortQuery,
    /// `http` URLs without an explicit port become `https`.
    UseHttps,
    /// A path segment equal to `value` at position `segment`, not the last one, is removed:
    /// `/boards/print/story` becomes `/boards/story` (print, AMP or mobile variants under a
    /// path prefix).
    DropSegment {
        /// Segment index.
        segment: u16,
        /// The segment value removed.
        value: String,
    },
    /// Path segment `segment` (0-based) equal to one of `aliases` becomes `canonical`: the same
    /// pages under several prefixes (`/mirror1/…`, `/mirror2/…`) or section names.
    SegmentAlias {
        /// Segment index.
        segment: u16,
        /// The value written.
        canonical: String,
        /// The values replaced.
        aliases: Vec<String>,
        /// Only where the segment is a folder, not the path's last segment: the values were
        /// shown interchangeable only above other pages (a shop's product under whichever
        /// collection it was opened from, `/collections/a/products/p` ≡
        /// `/collections/b/products/p`), which says nothing of the pages they name themselves
        /// (`/collections/a` is not `/collections/b`). Absent from older rule files: everywhere.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        folders_only: bool,
    },
    /// Trailing slashes are removed from every path but the root: `/dir/` becomes `/dir`.
    StripTrailingSlash,
    /// An id that moves from a query value into the path: a URL whose path is `path` and whose
    /// query holds parameter `name` once, with a value that reads the same as path segments
    /// ([`path_safe_value`]), becomes `prefix` followed by the value, without that parameter
    /// (the other parameters stay): MediaWiki's `/w/index.php?title=T` is `/wiki/T`, Drupal's
    /// `/index.php?q=node/5` is `/node/5` (`prefix` `/`). With an empty `name` the value is
    /// the query's one part without `=`, a route written as the query string (XenForo's
    /// `/index.php?threads/a-title.1/` is `/threads/a-title.1/`, vBulletin's
    /// `/showthread.php?123-Title` is `/threads/123-Title`); it may end with one `/`.
    QueryValueToPath {
        /// The script path the query form uses (`/index.php`, `/`).
        path: String,
        /// The parameter holding the id; empty for the query's part without a name.
        name: String,
        /// What the value is appended to: starts and ends with `/`.
        prefix: String,
        /// A character the value separates namespaces with that the path form writes as `/`:
        /// DokuWiki set to write slashes links `/doku.php?id=ns:page` as `/ns/page`. `None`
        /// (and absent from older rule files): the value is written as it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace_separator: Option<char>,
    },
    /// A path written as the query string is read as the path: a URL whose path is `path` (a
    /// script such as `/index.php`) and whose query's first part is a path ([`query_path_part`]:
    /// it starts with `/` and holds no `=`) becomes `path` followed by that part, the query's
    /// other parts kept: Piwigo's `/picture.php?/123/category/5&metadata` is
    /// `/picture.php/123/category/5?metadata`, CodeIgniter's `/index.php?/blog/view/5` is
    /// `/index.php/blog/view/5`. Both programs route the path-info spelling the same way
    /// (Piwigo when `question_mark_in_urls` is off, CodeIgniter always), so the result is an
    /// address of the same page, and the path actions and the pattern rules see its segments.
    QueryPath {
        /// The script whose query strings are paths.
        path: String,
        /// Whether the canonical form is written back in the query spelling once every other
        /// rule has applied (`/picture.php/123?metadata` becomes `/picture.php?/123&metadata`):
        /// the site links to that spelling, and it may be the only one it serves (a default
        /// Piwigo does not route the path-info spelling), so a crawler that fetches canonical
        /// URLs must get it. Absent from older rule files: the path-info spelling is kept.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        written_back: bool,
    },
    /// Query parameters written as `key/value` path segments after a script are read as the
    /// query again (`canon::rules::path_pairs`): a URL whose path is `script`, `/`, and whole
    /// pairs becomes `script?key=value&…`, the URL's own query after them. osCommerce's
    /// search-engine safe `product_info.php/cPath/3_10/products_id/5` is
    /// `product_info.php?cPath=3_10&products_id=5`, which its `application_top.php` reads from
    /// `PATH_INFO`. Applied first, with [`SiteAction::QueryPath`], so the parameter actions see
    /// the pairs.
    PathPairsToQuery {
        /// The script whose path info is written as pairs.
        script: String,
    },
    /// A slug beside a numeric id under a page type's literal `prefix` is dropped: with
    /// `before_id` false, `prefix` + `N/x` (`x` the last segment, whatever it holds) becomes
    /// `prefix` + `N` (`/questions/5/how-to` is `/questions/5`, `/q/5/77` is `/q/5`); with
    /// `before_id` true, `prefix` + `slug/N…` becomes `prefix` + `N…` (`/t/how-to/5/3` is
    /// `/t/5/3`), the slug not all digits. The id is all digits.
    SlugBesideId {
        /// Literal segments of the page type: starts and ends with `/`.
        prefix: String,
        /// Whether the slug comes before the id.
        before_id: bool,
    },
    /// An id at the end of a slug moves to the site's short path: a path of `depth` segments
    /// whose last segment is `slug-N` followed by `suffix` (`N` all digits, the slug not empty)
    /// becomes `short` + `N`, the query kept: a news site's
    /// `/world/some-title-59721801.html` is its short link `/a/59721801`.
    IdInSlug {
        /// The short form's path before the id: starts and ends with `/`.
        short: String,
        /// Segments of the long form's path.
        depth: u16,
        /// What follows the id in the long form's last segment (`.html`, or empty).
        suffix: String,
    },
    /// A numeric id written with its title in one path segment loses the title: under a page
    /// type's literal `prefix`, the next segment `title` + `separator` + `N` (or `N` +
    /// `separator` + `title` when `id_first`) becomes `N`, the rest of the URL kept. XenForo's
    /// `/threads/some-title.123/page-2` is `/threads/123/page-2`; vBulletin's
    /// `/threads/123-Some-Title` is `/threads/123`. The id is all digits, the title holds two
    /// letters ([`titled_id`]).
    SlugInSegment {
        /// Literal segments of the page type: starts and ends with `/`.
        prefix: String,
        /// The character between title and id (`.`, `-`, `:`, `_`, `~`, `,`).
        separator: char,
        /// Whether the id comes before the title.
        id_first: bool,
    },
    /// A page reachable with and without its file extension: a last path segment `stem` +
    /// `extension` becomes `stem` (`/guide/install.html` is `/guide/install`; Joomla's "Add
    /// Suffix to URL", static site generators served by a server that tries `$uri.html`). The
    /// stem must be non-empty and must not itself end with the extension, so the result is a
    /// fixpoint. Applied after default documents, so `index.html` still names one.
    StripExtension {
        /// The extension with its dot (`.html`).
        extension: String,
    },
    /// An abbreviated object id names the object its full id names: the path segment after a
    /// segment `after` (`commit`), lowercase hexadecimal longer than `length` digits (a full
    /// 40- or 64-digit hash, or a longer abbreviation), is cut to its first `length` digits.
    /// Git hosts resolve any unambiguous prefix of an object's id and write abbreviations in
    /// their own links: Gitea's `/o/r/commit/f3e1a67f98` is `/o/r/commit/f3e1a67f98…` in full.
    /// Two objects of one repository of `n` share a prefix of `length` digits in about
    /// `n² / 2 / 16^length` pairs (a handful at 7 digits in 100,000 commits, none at Gitea's 10),
    /// so the length is the one the host links, never shorter than git's default.
    AbbreviatedHash {
        /// The segment before the object id (`commit`).
        after: String,
        /// Hexadecimal digits kept ([`MIN_HASH_ABBREVIATION`] to [`MAX_HASH_ABBREVIATION`]).
        length: u8,
    },
    /// A numeric id written with its title in a query value loses the title: the value of
    /// parameter `name`, `N` + `separator` + `title` when `id_first` (or `title` + `separator` +
    /// `N`), becomes `N`, the other parameters kept. Joomla's non-SEF
    /// `?view=article&id=5:an-alias` is `?view=article&id=5`; a calendar's
    /// `event.php?e=42-summer-fair` is `event.php?e=42`. The id is all digits, the title holds
    /// two letters ([`titled_id`]), so `?v=1.2` or `?d=2024-05` are left alone.
    TitledIdInQuery {
        /// The parameter whose value writes the id and the title.
        name: String,
        /// The character between title and id (`.`, `-`, `:`, `_`, `~`, `,`).
        separator: char,
        /// Whether the id comes before the title.
        id_first: bool,
    },
    /// A query value written inside a templated path segment becomes the query again: a path
    /// `dir` + `before` + `V` + `after` (one segment under `dir`, `V` non-empty and read the
    /// same in a query, [`query_safe_segment_value`]) becomes `script?name=V`, the URL's own
    /// query after it; with `numbers`, `V` must be a bare number. Simple Machines Forum's
    /// `index.php/topic,5.0.html` is `index.php?topic=5.0`; phpBB's SEO modifications'
    /// `topic5.html` is `viewtopic.php?t=5` (`canon::rules::segments`).
    TemplatedSegmentToQuery {
        /// The directory the segment is in: starts and ends with `/`.
        dir: String,
        /// Literal before the value in the segment (may be empty).
        before: String,
        /// Literal after the value in the segment (may be empty; not both).
        after: String,
        /// The path of the query form: starts with `/`.
        script: String,
        /// The parameter that holds the value in the query form.
        name: String,
        /// Whether the value is a bare number ([`is_pair_number`]): a template learned from
        /// numbers reads numbers only, so `thread-5-lastpost.html` (the last page) is not read
        /// as thread `5-lastpost` by MyBB's `thread-V.html`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        numbers: bool,
        /// Query parts the query form holds besides the value, written before it
        /// (`mod=forumdisplay`: Discuz!'s `forum-5-2.html` is
        /// `forum.php?mod=forumdisplay&fid=5&page=2`): the page type a front controller's
        /// script needs named. Empty when the value is all the query form holds (absent from
        /// older rule files).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        fixed: String,
        /// Whether a title stands before `before` in the segment, not read: the segment is
        /// title + `before` + `V` + `after`, the title two letters and no digit
        /// ([`is_template_title`]) and `V` an id (a digit first, no letter:
        /// [`is_titled_template_id`]). osCommerce's Ultimate SEO URLs
        /// write `product_info.php?products_id=5` as `a-name-p-5.html` and `index.php?cPath=3_10`
        /// as `a-name-c-3_10.html`, and read only what follows the marker, so an old name still
        /// answers; phpBB SEO writes `viewtopic.php?t=5` as `a-title-t5.html`. `before` then
        /// starts with a character that is no letter or digit (the title's end is plain).
        /// Absent from older rule files: no title.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        titled: bool,
    },
    /// Two query numbers written inside one templated path segment become the query again: a
    /// path `dir` + `before` + `N` + `between` + `M` + `after` (one segment under `dir`, `N` and
    /// `M` bare numbers) becomes `script?first=N&second=M`, the URL's own query after it.
    /// MyBB's `thread-5-page-2.html` is `showthread.php?tid=5&page=2`; phpBB SEO's
    /// `topic5-15.html` is `viewtopic.php?t=5&start=15` (`canon::rules::segments`). Tried
    /// before the one-value templates.
    TemplatedPairToQuery {
        /// The directory the segment is in: starts and ends with `/`.
        dir: String,
        /// Literal before the first number (may be empty; no digit at its end).
        before: String,
        /// Literal between the numbers (not empty; no digit at either end).
        between: String,
        /// Literal after the second number (may be empty; no digit at its start).
        after: String,
        /// The path of the query form: starts with `/`.
        script: String,
        /// The parameter that holds the first number in the query form.
        first: String,
        /// The parameter that holds the second number in the query form.
        second: String,
        /// Query parts the query form holds besides the value, written before it
        /// (`mod=forumdisplay`: Discuz!'s `forum-5-2.html` is
        /// `forum.php?mod=forumdisplay&fid=5&page=2`): the page type a front controller's
        /// script needs named. Empty when the value is all the query form holds (absent from
        /// older rule files).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        fixed: String,
    },
    /// A bare numeric value of parameter `name` is completed with `suffix`, the default the
    /// software fills in: SMF's `topic=5` is `topic=5.0` (offset 0), while `topic=5.15` stays
    /// (`canon::rules::segments`).
    DefaultValueSuffix {
        /// The parameter name.
        name: String,
        /// What completes a bare number ([`is_value_suffix`]: its first character not a digit).
        suffix: String,
    },
    /// A path ending with the literal segments `tail`, something before them, loses them: the
    /// view a page shows when none is named, written out (Discourse's `/c/slug/5/l/latest` is
    /// `/c/slug/5`, Gitea's `/owner/repo/src/branch/main` is `/owner/repo`); sibling views
    /// (`/l/top`) stay (`canon::rules::segments`).
    DefaultViewTail {
        /// One to three segments, starting with `/` ([`is_view_tail`]).
        tail: String,
    },
    /// An item's page reached from a section of the site keeps the item and loses the section:
    /// a path `dir` + an item segment (starting with a digit) + a context tail (its first
    /// segment a name, [`is_context_tail`]) becomes `dir` + the item segment. Piwigo's
    /// `picture.php?/123/category/5` and `picture.php?/123/most_visited` are photo 123, the
    /// section changing only the links to the previous and next photo
    /// (`canon::rules::segments`).
    ContextTail {
        /// Where the items are: starts and ends with `/`, at least one segment.
        dir: String,
    },
    /// An id written as the last segment of a menu route becomes the query form of its page
    /// (`canon::rules::routed_ids`): a path `dir` + one of `routes` + `/` + `N-title`
    /// becomes `script?` + the `fixed` parts with `name=N` written at position `at`, the URL's own
    /// query after them. Joomla 3's `/index.php/news/1607-a-title` is
    /// `/index.php?option=com_content&view=article&id=1607`.
    RoutedIdToQuery {
        /// Where the routes start: begins and ends with `/`.
        dir: String,
        /// The menu routes shown (one or more segments each), at most
        /// [`super::routed_ids::MAX_ROUTES`].
        routes: Vec<String>,
        /// The path of the query form.
        script: String,
        /// The query form's other parts, in order (`option=com_content`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fixed: Vec<String>,
        /// The parameter holding the id.
        name: String,
        /// The id part's position among `fixed`.
        #[serde(default)]
        at: usize,
        /// The file extension the id's segment was shown with (`.html`, or empty for none):
        /// another extension under the same route is another page type. Absent from older rule
        /// files: every extension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extension: Option<String>,
    },
    /// An id written as a part of a script's query without a key becomes the parameter `name`:
    /// on path `script`, the one query part that is `N` or `N-title` (no `=`, [`keyless_part`])
    /// is written `name=N` in its place, the other parts kept, unless a part names `name`.
    /// vBulletin 3.8/4's friendly URLs write `showthread.php?t=5` as
    /// `showthread.php?5-A-Title` and `forumdisplay.php?f=2` as `forumdisplay.php?2-Name`.
    KeylessIdInQuery {
        /// The script's path: starts with `/`.
        script: String,
        /// The parameter the id is written in otherwise.
        name: String,
    },
    /// A number written as the last path segment opens the page that holds it
    /// (`canon::rules::post_pages`): a path `prefix` + `kept` segments + `/M` (`M` a post
    /// number) becomes `prefix` + those segments with `key=P` added to the query, `P` the page
    /// holding post `M` at `k` posts per page (`ceil(M / k)`), no page at all for page 1; only
    /// when every `k` in `[per_page_min, per_page_max]` gives the same page. Discourse's
    /// `/t/slug/5/25` is `/t/slug/5?page=2`; NodeBB's `/topic/5/slug/25` is
    /// `/topic/5/slug?page=2`.
    PostToPage {
        /// Literal path before the thread's segments: starts and ends with `/`.
        prefix: String,
        /// Segments of the thread's address after `prefix`, at most
        /// [`super::post_pages::MAX_KEPT_SEGMENTS`].
        kept: u16,
        /// The query parameter a page beyond the first is written in; empty (and absent from
        /// the file) when the samples showed no such page, and only page 1 is written.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        key: String,
        /// Lowest page size the samples allow.
        per_page_min: u32,
        /// Highest page size the samples allow; absent when they showed no page beyond the
        /// first (then only posts up to `per_page_min` are rewritten).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        per_page_max: Option<u32>,
    },
    /// A host's small vocabulary (`canon::rules::vocabulary`): an id in the table, the value of
    /// parameter `name` on script `path` (or, with `name` empty, the last segment under the
    /// directory `path`), names the page its alias path names: Joomla's
    /// `/index.php?Itemid=106` is `/index.php/central-respond`, Drupal's `/taxonomy/term/5` is
    /// `/category/finish-increase`. The URL gets the alias as its path, the query's other
    /// parameters kept, those in `renamed` renamed (Joomla's `limitstart` is `start` on the
    /// route). Applied to what the other actions leave, then every action again on the alias.
    Vocabulary {
        /// The script (query form) or the directory ending with `/` (path form).
        path: String,
        /// The parameter holding the id; empty for the path form.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        name: String,
        /// (id, alias path), at most [`super::vocabulary::MAX_VOCABULARY_ENTRIES`].
        entries: Vec<(String, String)>,
        /// (name in the id form, name in the alias form) of parameters renamed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        renamed: Vec<(String, String)>,
    },
    /// Static files a site keeps a copy of in each subfolder of a folder (a site built with
    /// relative links: `/faq/logo.gif`, `/film/logo.gif` and `/logo.gif` are one image): a
    /// path that is a file's folder + its name, or the folder + one segment + `/` + its name,
    /// gets the file's copy as its path, the query kept. Applied to what every other action
    /// leaves. At most [`MAX_SHARED_FILES`] files.
    SharedFiles {
        /// The files and their copies.
        files: Vec<SharedFile>,
    },
}

/// One file of [`SiteAction::SharedFiles`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SharedFile {
    /// The folder whose subfolders hold the copies, starting and ending with `/`.
    pub folder: String,
    /// The file's name, a static file ([`super::files::names_a_static_file`]).
    pub name: String,
    /// The path the copies are written as: `folder` + `name`, or `folder` + one segment + `/`
    /// + `name`.
    pub copy: String,
}

impl SharedFile {
    /// Whether `path` is one of this file's copies (`folder` + `name`, or `folder` + one
    /// non-empty segment + `/` + `name`).
    pub(crate) fn holds(&self, path: &str) -> bool {
        let Some(inner) = path
            .strip_prefix(self.folder.as_str())
            .and_then(|rest| rest.strip_suffix(self.name.as_str()))
        else {
            return false;
        };
        inner.is_empty()
            || inner
                .strip_suffix('/')
                .is_some_and(|segment| !segment.is_empty() && !segment.contains('/'))
    }

    /// Why this file cannot be applied, or `None`.
    pub(crate) fn error(&self) -> Option<&'static str> {
        let folder_ok = self.folder.starts_with('/')
            && self.folder.ends_with('/')
            && !self.folder.contains(['?', '#'])
            && !self.folder.contains("//");
        let name_ok = super::files::names_a_static_file(&self.name)
            && !self.name.contains(['/', '?', '#', '%']);
        let copy_ok = !self.copy.contains(['?', '#']) && self.holds(&self.copy);
        (!(folder_ok && name_ok && copy_ok)).then_some(
            "a shared file needs a folder starting and ending with / without ? # or an empty segment, a static file's name (not a page) and a copy that is the folder + the name or the folder + one segment + / + the name",
        )
    }
}

/// Most names of one [`SiteAction::SharedFiles`]: a site's template images, stylesheets and
/// scripts are a few dozen; more names than this copied everywhere is a catch-all's doing.
pub const MAX_SHARED_FILES: usize = 256;

/// A template's fixed query parts as its query form starts with them: `mod=x&`, or nothing.
fn fixed_prefix(fixed: &str) -> String {
    if fixed.is_empty() {
        String::new()
    } else {
        format!("{fixed}&")
    }
}

impl fmt::Display for SiteAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SiteAction::IgnoreParam { name, beside: None } => {
                write!(f, "ignore query:{name} on every URL")
            }
            SiteAction::IgnoreParam {
                name,
                beside: Some(beside),
            } => write!(f, "ignore query:{name} beside query:{beside}"),
            SiteAction::IgnoreParamValue {
                name,
                value,
                beside: None,
            } => write!(f, "ignore query:{name}={value} on every URL"),
            SiteAction::IgnoreParamValue {
                name,
                value,
                beside: Some(beside),
            } => write!(f, "ignore query:{name}={value} beside query:{beside}"),
            SiteAction::LowercasePath => f.write_str("lower-case the path"),
            SiteAction::LowercaseSegments { segments } => {
                write!(f, "lower-case the first {segments} path segments")
            }
            SiteAction::LowercasePathAndQuery => f.write_str("lower-case the path and the query"),
            SiteAction::DefaultDocument { name } => {
                write!(f, "strip the default document /{name}")
            }
            SiteAction::SortQuery => f.write_str("sort query parameters by name"),
            SiteAction::UseHttps => f.write_str("use https"),
            SiteAction::DropSegment { segment, value } => {
                write!(f, "drop path_{segment}={value}")
            }
            SiteAction::SegmentAlias {
                segment,
                canonical,
                aliases,
                folders_only,
            } => {
                write!(f, "path_{segment}: {} -> {canonical}", aliases.join(", "))?;
                if *folders_only {
                    f.write_str(" in folders")?;
                }
                Ok(())
            }
            SiteAction::StripTrailingSlash => f.write_str("strip trailing slashes"),
            SiteAction::QueryValueToPath {
                path,
                name,
                prefix,
                namespace_separator,
            } => {
                if name.is_empty() {
                    write!(f, "{path}?V -> {prefix}V")?;
                } else {
                    write!(f, "{path}?{name}=V -> {prefix}V")?;
                }
                match namespace_separator {
                    Some(c) => write!(f, " with {c:?} as '/'"),
                    None => Ok(()),
                }
            }
            SiteAction::PathPairsToQuery { script } => {
                write!(f, "{script}/K/V… -> {script}?K=V…")
            }
            SiteAction::QueryPath { path, written_back } => {
                write!(f, "{path}?/P -> {path}/P")?;
                if *written_back {
                    write!(f, ", written back as {path}?/P")?;
                }
                Ok(())
            }
            SiteAction::SlugBesideId { prefix, before_id } => {
                if *before_id {
                    write!(f, "{prefix}slug/N -> {prefix}N")
                } else {
                    write!(f, "{prefix}N/slug -> {prefix}N")
                }
            }
            SiteAction::IdInSlug {
                short,
                depth,
                suffix,
            } => {
                let dirs = "/*".repeat(usize::from(*depth).saturating_sub(1));
                write!(f, "{dirs}/slug-N{suffix} -> {short}N")
            }
            SiteAction::SlugInSegment {
                prefix,
                separator,
                id_first,
            } => {
                if *id_first {
                    write!(f, "{prefix}N{separator}title -> {prefix}N")
                } else {
                    write!(f, "{prefix}title{separator}N -> {prefix}N")
                }
            }
            SiteAction::StripExtension { extension } => {
                write!(f, "strip the extension {extension}")
            }
            SiteAction::AbbreviatedHash { after, length } => {
                write!(f, "{after}/HASH -> {after}/HASH cut to {length} digits")
            }
            SiteAction::TitledIdInQuery {
                name,
                separator,
                id_first,
            } => {
                if *id_first {
                    write!(f, "query:{name}=N{separator}title -> N")
                } else {
                    write!(f, "query:{name}=title{separator}N -> N")
                }
            }
            SiteAction::TemplatedSegmentToQuery {
                dir,
                before,
                after,
                script,
                name,
                numbers,
                fixed,
                titled,
            } => {
                let v = if *numbers { "N" } else { "V" };
                let fixed = fixed_prefix(fixed);
                let title = if *titled { "title" } else { "" };
                write!(
                    f,
                    "{dir}{title}{before}{v}{after} -> {script}?{fixed}{name}={v}"
                )
            }
            SiteAction::TemplatedPairToQuery {
                dir,
                before,
                between,
                after,
                script,
                first,
                second,
                fixed,
            } => {
                let fixed = fixed_prefix(fixed);
                write!(
                    f,
                    "{dir}{before}N{between}M{after} -> {script}?{fixed}{first}=N&{second}=M"
                )
            }
            SiteAction::DefaultValueSuffix { name, suffix } => {
                write!(f, "query:{name}=N -> N{suffix}")
            }
            SiteAction::KeylessIdInQuery { script, name } => {
                write!(f, "{script}?N-title -> {script}?{name}=N")
            }
            SiteAction::DefaultViewTail { tail } => {
                write!(f, "strip the default view {tail}")
            }
            SiteAction::ContextTail { dir } => {
                write!(f, "{dir}N/SECTION -> {dir}N")
            }
            SiteAction::RoutedIdToQuery {
                dir,
                routes,
                script,
                fixed,
                name,
                at,
                extension,
            } => {
                let mut parts: Vec<String> = fixed.clone();
                parts.insert((*at).min(parts.len()), format!("{name}=N"));
                write!(
                    f,
                    "{dir}ROUTE/N-title{} -> {script}?{} ({} routes{})",
                    extension.as_deref().unwrap_or(""),
                    parts.join("&"),
                    routes.len(),
                    if extension.is_none() {
                        ", any extension"
                    } else {
                        ""
                    }
                )
            }
            SiteAction::PostToPage {
                prefix,
                kept,
                key,
                per_page_min,
                per_page_max,
            } => {
                let dirs = "*/".repeat(usize::from(*kept));
                write!(
                    f,
                    "{prefix}{dirs}M -> {prefix}{}",
                    dirs.trim_end_matches('/')
                )?;
                match (key.as_str(), per_page_max) {
                    ("", _) | (_, None) => {
                        write!(f, " for M <= {per_page_min} (page 1)")
                    }
                    (key, Some(max)) => write!(
                        f,
                        "?{key}=ceil(M/k), k in [{per_page_min}, {max}], page 1 without {key}"
                    ),
                }
            }
            SiteAction::Vocabulary {
                path,
                name,
                entries,
                renamed,
            } => {
                if name.is_empty() {
                    write!(f, "{path}V -> alias of V")?;
                } else {
                    write!(f, "{path}?{name}=V -> alias of V")?;
                }
                write!(f, " ({} entries", entries.len())?;
                for (from, to) in renamed {
                    write!(f, ", query:{from} -> query:{to}")?;
                }
                f.write_str(")")
            }
            SiteAction::SharedFiles { files } => {
                write!(f, "FOLDER[*/]NAME -> one copy ({} files", files.len())?;
                for file in files.iter().take(3) {
                    write!(f, ", {}[*/]{} -> {}", file.folder, file.name, file.copy)?;
                }
                if files.len() > 3 {
                    f.write_str(", ...")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// One learned site rule with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteRule {
    /// Stable identifier (`host#s1`).
    pub id: String,
    /// What the rule does.
    #[serde(flatten)]
    pub action: SiteAction,
    /// Training URL pairs the rule made identical that the duplicate clusters confirm.
    pub support: u64,
    /// Distinct duplicate clusters among those pairs.
    pub support_clusters: u64,
    /// Pairs the rule made identical that the clusters say differ, over all pairs it made
    /// identical (Lei et al., eq. 3).
    pub false_positive_rate: f64,
    /// What the other hosts of the crawl showed of the action, when this host's own clusters
    /// were too few and theirs made up the count (`learn::shared_evidence`); absent when the
    /// host's own evidence sufficed, and from rule files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooled: Option<PooledSupport>,
}

/// The support other hosts lent a site rule ([`SiteRule::pooled`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PooledSupport {
    /// Duplicate clusters of the other hosts' samples the action merged, none contradicting it.
    pub clusters: u64,
    /// Hosts they came from.
    pub hosts: u64,
}

/// A compiled [`SiteAction::QueryValueToPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct QueryToPath {
    script: String,
    name: String,
    prefix: String,
    namespace_separator: Option<char>,
}

/// The site actions of one host, ready to apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteRewriter {
    /// (name, beside) of [`SiteAction::IgnoreParam`].
    ignored_params: Vec<(String, Option<String>)>,
    /// Query parts `name=value` of [`SiteAction::IgnoreParamValue`].
    ignored_values: Vec<(String, Option<String>)>,
    lowercase_path: bool,
    /// Segments folded by [`SiteAction::LowercaseSegments`] (the largest asked; 0 for none).
    lowercase_segments: u16,
    lowercase_query: bool,
    default_documents: Vec<String>,
    sort_query: bool,
    use_https: bool,
    strip_trailing_slash: bool,
    /// (segment, canonical, aliases).
    /// (segment, canonical, aliases, folders only) of [`SiteAction::SegmentAlias`].
    segment_aliases: Vec<(u16, String, Vec<String>, bool)>,
    /// (segment, value) removed, highest segment first.
    dropped_segments: Vec<(u16, String)>,
    /// (path, name, prefix) of [`SiteAction::QueryValueToPath`].
    query_to_path: Vec<QueryToPath>,
    /// Scripts of [`SiteAction::QueryPath`].
    query_paths: Vec<String>,
    /// The scripts among them whose canonical form is written back in the query spelling.
    query_paths_written_back: Vec<String>,
    /// Scripts of [`SiteAction::PathPairsToQuery`].
    pair_scripts: Vec<String>,
    /// (prefix, before_id) of [`SiteAction::SlugBesideId`].
    slugs: Vec<(String, bool)>,
    /// (short, depth, suffix) of [`SiteAction::IdInSlug`].
    ids_in_slugs: Vec<(String, u16, String)>,
    /// (prefix, separator, id_first) of [`SiteAction::SlugInSegment`].
    titled_ids: Vec<(String, char, bool)>,
    /// Extensions of [`SiteAction::StripExtension`], with their dot.
    extensions: Vec<String>,
    /// (after, length) of [`SiteAction::AbbreviatedHash`].
    abbreviated_hashes: Vec<(String, u8)>,
    /// (name, separator, id_first) of [`SiteAction::TitledIdInQuery`].
    titled_values: Vec<(String, char, bool)>,
    /// Templates of [`SiteAction::TemplatedSegmentToQuery`].
    segment_templates: Vec<SegmentTemplate>,
    /// (name, suffix) of [`SiteAction::DefaultValueSuffix`].
    value_defaults: Vec<(String, String)>,
    /// Tails of [`SiteAction::DefaultViewTail`].
    view_tails: Vec<String>,
    /// Directories of [`SiteAction::ContextTail`].
    context_dirs: Vec<String>,
    /// (script, name) of [`SiteAction::KeylessIdInQuery`].
    keyless_ids: Vec<(String, String)>,
    /// Routes of [`SiteAction::RoutedIdToQuery`].
    routed_ids: Vec<RoutedId>,
    /// Threads of [`SiteAction::PostToPage`].
    post_pages: Vec<PostPage>,
    /// Tables of [`SiteAction::Vocabulary`].
    vocabularies: Vec<Vocabulary>,
    /// Files of [`SiteAction::SharedFiles`], by name.
    shared_files: FxHashMap<String, Vec<SharedFile>>,
}

impl SiteRewriter {
    /// The rewriter for a set of actions (duplicates are harmless).
    pub fn new<'a>(actions: impl IntoIterator<Item = &'a SiteAction>) -> Self {
        let mut r = SiteRewriter::default();
        for a in actions {
            r.add(a);
        }
        r
    }

    /// Adds one action.
    pub fn add(&mut self, action: &SiteAction) {
        match action {
            SiteAction::IgnoreParam { name, beside } => {
                let entry = (name.clone(), beside.clone());
                if !self.ignored_params.contains(&entry) {
                    self.ignored_params.push(entry);
                }
            }
            SiteAction::IgnoreParamValue {
                name,
                value,
                beside,
            } => {
                let entry = (format!("{name}={value}"), beside.clone());
                if !self.ignored_values.contains(&entry) {
                    self.ignored_values.push(entry);
                }
            }
            SiteAction::LowercasePath => self.lowercase_path = true,
            SiteAction::LowercaseSegments { segments } => {
                self.lowercase_segments = self.lowercase_segments.max(*segments);
            }
            SiteAction::LowercasePathAndQuery => {
                self.lowercase_path = true;
                self.lowercase_query = true;
            }
            SiteAction::DefaultDocument { name } => {
                if !self.default_documents.contains(name) {
                    self.default_documents.push(name.clone());
                }
            }
            SiteAction::SortQuery => self.sort_query = true,
            SiteAction::UseHttps => self.use_https = true,
            SiteAction::DropSegment { segment, value } => {
                let entry = (*segment, value.clone());
                if !self.dropped_segments.contains(&entry) {
                    self.dropped_segments.push(entry);
                    self.dropped_segments.sort_by(|a, b| b.cmp(a));
                }
            }
            SiteAction::SegmentAlias {
                segment,
                canonical,
                aliases,
                folders_only,
            } => {
                let entry = (*segment, canonical.clone(), aliases.clone(), *folders_only);
                if !self.segment_aliases.contains(&entry) {
                    self.segment_aliases.push(entry);
                }
            }
            SiteAction::StripTrailingSlash => self.strip_trailing_slash = true,
            SiteAction::QueryValueToPath {
                path,
                name,
                prefix,
                namespace_separator,
            } => {
                let entry = QueryToPath {
                    script: path.clone(),
                    name: name.clone(),
                    prefix: prefix.clone(),
                    namespace_separator: *namespace_separator,
                };
                if !self.query_to_path.contains(&entry) {
                    self.query_to_path.push(entry);
                }
            }
            SiteAction::PathPairsToQuery { script } => {
                if !self.pair_scripts.contains(script) {
                    self.pair_scripts.push(script.clone());
                }
            }
            SiteAction::QueryPath { path, written_back } => {
                if !self.query_paths.contains(path) {
                    self.query_paths.push(path.clone());
                }
                if *written_back && !self.query_paths_written_back.contains(path) {
                    self.query_paths_written_back.push(path.clone());
                }
            }
            SiteAction::SlugBesideId { prefix, before_id } => {
                let entry = (prefix.clone(), *before_id);
                if !self.slugs.contains(&entry) {
                    self.slugs.push(entry);
                }
            }
            SiteAction::IdInSlug {
                short,
                depth,
                suffix,
            } => {
                let entry = (short.clone(), *depth, suffix.clone());
                if !self.ids_in_slugs.contains(&entry) {
                    self.ids_in_slugs.push(entry);
                }
            }
            SiteAction::SlugInSegment {
                prefix,
                separator,
                id_first,
            } => {
                let entry = (prefix.clone(), *separator, *id_first);
                if !self.titled_ids.contains(&entry) {
                    self.titled_ids.push(entry);
                }
            }
            SiteAction::StripExtension { extension } => {
                if !self.extensions.contains(extension) {
                    self.extensions.push(extension.clone());
                }
            }
            SiteAction::AbbreviatedHash { after, length } => {
                let entry = (after.clone(), *length);
                if !self.abbreviated_hashes.contains(&entry) {
                    self.abbreviated_hashes.push(entry);
                }
            }
            SiteAction::TitledIdInQuery {
                name,
                separator,
                id_first,
            } => {
                let entry = (name.clone(), *separator, *id_first);
                if !self.titled_values.contains(&entry) {
                    self.titled_values.push(entry);
                }
            }
            SiteAction::TemplatedSegmentToQuery { .. }
            | SiteAction::TemplatedPairToQuery { .. } => {
                // Always `Some` in this arm.
                let entry = SegmentTemplate::of(action)
                    .filter(|entry| !self.segment_templates.contains(entry));
                if let Some(entry) = entry {
                    // Pair templates first: a segment with two numbers is no one-value
                    // template's value (`thread-5-page-2.html` is no thread `5-page-2`).
                    let at = if entry.second.is_some() {
                        self.segment_templates
                            .iter()
                            .take_while(|t| t.second.is_some())
                            .count()
                    } else {
                        self.segment_templates.len()
                    };
                    self.segment_templates.insert(at, entry);
                }
            }
            SiteAction::DefaultValueSuffix { name, suffix } => {
                let entry = (name.clone(), suffix.clone());
                if !self.value_defaults.contains(&entry) {
                    self.value_defaults.push(entry);
                }
            }
            SiteAction::DefaultViewTail { tail } => {
                if !self.view_tails.contains(tail) {
                    self.view_tails.push(tail.clone());
                }
            }
            SiteAction::ContextTail { dir } => {
                if !self.context_dirs.contains(dir) {
                    self.context_dirs.push(dir.clone());
                }
            }
            SiteAction::KeylessIdInQuery { script, name } => {
                let entry = (script.clone(), name.clone());
                if !self.keyless_ids.contains(&entry) {
                    self.keyless_ids.push(entry);
                }
            }
            SiteAction::RoutedIdToQuery {
                dir,
                routes,
                script,
                fixed,
                name,
                at,
                extension,
            } => {
                let entry =
                    RoutedId::new(dir, routes, script, fixed, name, *at, extension.as_deref());
                if !self.routed_ids.contains(&entry) {
                    self.routed_ids.push(entry);
                }
            }
            SiteAction::PostToPage {
                prefix,
                kept,
                key,
                per_page_min,
                per_page_max,
            } => {
                let entry = PostPage::new(prefix, *kept, key, *per_page_min, *per_page_max);
                if !self.post_pages.contains(&entry) {
                    self.post_pages.push(entry);
                }
            }
            SiteAction::Vocabulary {
                path,
                name,
                entries,
                renamed,
            } => {
                let entry = Vocabulary::new(path, name, entries, renamed);
                if !self.vocabularies.contains(&entry) {
                    self.vocabularies.push(entry);
                }
            }
            SiteAction::SharedFiles { files } => {
                for file in files {
                    let of_name = self.shared_files.entry(file.name.clone()).or_default();
                    if !of_name.contains(file) {
                        of_name.push(file.clone());
                    }
                }
            }
        }
    }

    /// Whether an action looks at the path (case, default documents, trailing slashes).
    pub fn changes_paths(&self) -> bool {
        self.lowercase_path
            || self.lowercase_segments > 0
            || !self.default_documents.is_empty()
            || self.strip_trailing_slash
            || !self.segment_aliases.is_empty()
            || !self.dropped_segments.is_empty()
            || !self.query_to_path.is_empty()
            || !self.query_paths.is_empty()
            || !self.pair_scripts.is_empty()
            || !self.slugs.is_empty()
            || !self.ids_in_slugs.is_empty()
            || !self.titled_ids.is_empty()
            || !self.extensions.is_empty()
            || !self.abbreviated_hashes.is_empty()
            || !self.segment_templates.is_empty()
            || !self.view_tails.is_empty()
            || !self.context_dirs.is_empty()
            || !self.keyless_ids.is_empty()
            || !self.routed_ids.is_empty()
            || !self.post_pages.is_empty()
            || !self.vocabularies.is_empty()
            || !self.shared_files.is_empty()
    }

    /// Whether the rewriter does nothing.
    pub fn is_empty(&self) -> bool {
        self.ignored_params.is_empty()
            && self.ignored_values.is_empty()
            && !self.lowercase_path
            && self.lowercase_segments == 0
            && !self.lowercase_query
            && self.default_documents.is_empty()
            && !self.sort_query
            && !self.use_https
            && !self.strip_trailing_slash
            && self.segment_aliases.is_empty()
            && self.dropped_segments.is_empty()
            && self.query_to_path.is_empty()
            && self.query_paths.is_empty()
            && self.pair_scripts.is_empty()
            && self.slugs.is_empty()
            && self.ids_in_slugs.is_empty()
            && self.titled_ids.is_empty()
            && self.extensions.is_empty()
            && self.abbreviated_hashes.is_empty()
            && self.titled_values.is_empty()
            && self.segment_templates.is_empty()
            && self.value_defaults.is_empty()
            && self.view_tails.is_empty()
            && self.context_dirs.is_empty()
            && self.keyless_ids.is_empty()
            && self.routed_ids.is_empty()
            && self.post_pages.is_empty()
            && self.vocabularies.is_empty()
            && self.shared_files.is_empty()
    }

    /// The scheme `url` gets: `https` for an `http` URL without an explicit port when
    /// [`SiteAction::UseHttps`] is on (a port would change meaning), its own otherwise.
    pub fn scheme<'a>(&self, url: &'a Url) -> &'a str {
        self.scheme_of(url.scheme(), url.port().is_some())
    }

    /// [`SiteRewriter::scheme`] of a URL with scheme `scheme`, with or without an explicit port.
    pub fn scheme_of<'a>(&self, scheme: &'a str, has_port: bool) -> &'a str {
        if self.use_https && scheme == "http" && !has_port {
            "https"
        } else {
            scheme
        }
    }

    /// The URL with every site action applied, or `None` when no action changes it.
    pub fn rewrite(&self, url: &Url) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let view = UrlView::of(url)?;
        let scheme = self.scheme(url);
        let (path, query, changed) = self.rewrite_parts(url.path(), url.query());
        (changed || scheme != url.scheme()).then(|| view.text_with(scheme, &path, query.as_deref()))
    }

    /// The path and query with every action applied, and whether anything changed. A query
    /// left empty is `None`.
    pub fn rewrite_parts<'a>(
        &self,
        path: &'a str,
        query: Option<&'a str>,
    ) -> (Cow<'a, str>, Option<Cow<'a, str>>, bool) {
        let (out_path, out_query, changed) = self.rewrite_parts_before_vocabularies(path, query);
        // On what every other action leaves (the learner found the table on those outputs),
        // then every action again on the alias; once only: an alias is never an id's address
        // (the rule file's check).
        let named = self
            .vocabularies
            .iter()
            .find_map(|v| v.apply(&out_path, out_query.as_deref()));
        let (out_path, out_query, changed) = match named {
            Some((alias, rest)) => {
                reparsed(self.rewrite_parts_before_vocabularies(&alias, rest.as_deref()))
            }
            None => (out_path, out_query, changed),
        };
        // Last, on the path every other action wrote (the learner found the names there); a
        // copy's path ends with its own name, so it is left as it is.
        match self.shared_file_path(&out_path) {
            Some(copy) if copy != out_path => (Cow::Owned(copy.to_owned()), out_query, true),
            _ => (out_path, out_query, changed),
        }
    }

    /// The copy [`SiteAction::SharedFiles`] names for `path` (the first file holding it).
    fn shared_file_path(&self, path: &str) -> Option<&str> {
        if self.shared_files.is_empty() {
            return None;
        }
        let name = &path[path.rfind('/')? + 1..];
        self.shared_files
            .get(name)?
            .iter()
            .find(|file| file.holds(path))
            .map(|file| file.copy.as_str())
    }

    /// [`SiteRewriter::rewrite_parts`] but for vocabularies.
    fn rewrite_parts_before_vocabularies<'a>(
        &self,
        path: &'a str,
        query: Option<&'a str>,
    ) -> (Cow<'a, str>, Option<Cow<'a, str>>, bool) {
        let (out_path, out_query, changed) = self.rewrite_parts_after_templates(path, query);
        if self.segment_templates.is_empty()
            && self.routed_ids.is_empty()
            && self.post_pages.is_empty()
        {
            return (out_path, out_query, changed);
        }
        // On the path the other actions leave (the learner found the template or the route on
        // that path, lower-cased or without a default view's tail), then every action again on
        // the query form; once only: a script never reads as a templated segment or a listed
        // route (the rule file's checks).
        let moved =
            segments::segment_to_query(&self.segment_templates, &out_path, out_query.as_deref())
                .or_else(|| {
                    self.routed_ids
                        .iter()
                        .find_map(|r| r.apply(&out_path, out_query.as_deref()))
                });
        if let Some((script, moved)) = moved {
            return reparsed(self.rewrite_parts_after_templates(&script, Some(&moved)));
        }
        // A post's address read as its thread's page, then every action again on the page
        // form; once only: the thread's address has one segment fewer than the rule's shape.
        match self
            .post_pages
            .iter()
            .find_map(|r| r.apply(&out_path, out_query.as_deref()))
        {
            Some((thread, page)) => {
                reparsed(self.rewrite_parts_after_templates(&thread, page.as_deref()))
            }
            None => (out_path, out_query, changed),
        }
    }

    /// [`SiteRewriter::rewrite_parts`] but for templated segments.
    fn rewrite_parts_after_templates<'a>(
        &self,
        path: &'a str,
        query: Option<&'a str>,
    ) -> (Cow<'a, str>, Option<Cow<'a, str>>, bool) {
        let mut changed = false;
        let mut path: Cow<'a, str> = Cow::Borrowed(path);
        // First, so every path action applies to the path the query wrote or the id moved into.
        if let Some((moved, rest)) = self
            .read_query_path(&path, query)
            .or_else(|| self.read_path_pairs(&path, query))
            .or_else(|| self.move_query_value(&path, query))
            .or_else(|| self.key_the_id(&path, query))
        {
            return reparsed(self.rewrite_parts_after_templates(&moved, rest.as_deref()));
        }
        if self.lowercase_path && has_upper_outside_escapes(&path) {
            path = Cow::Owned(lower_outside_escapes(&path));
            changed = true;
        } else if !self.lowercase_path && self.lowercase_segments > 0 {
            let end = segments_end(&path, self.lowercase_segments);
            if has_upper_outside_escapes(&path[..end]) {
                let mut folded = lower_outside_escapes(&path[..end]);
                folded.push_str(&path[end..]);
                path = Cow::Owned(folded);
                changed = true;
            }
        }
        if !self.segment_aliases.is_empty() {
            if let Some(aliased) = self.alias_segments(&path) {
                path = Cow::Owned(aliased);
                changed = true;
            }
        }
        if !self.dropped_segments.is_empty() {
            if let Some(dropped) = self.drop_segments(&path) {
                path = Cow::Owned(dropped);
                changed = true;
            }
        }
        if !self.abbreviated_hashes.is_empty() {
            if let Some(cut) = abbreviate_hashes(&self.abbreviated_hashes, &path) {
                path = Cow::Owned(cut);
                changed = true;
            }
        }
        // Before the item's own rules (a title after its id), which read the item's segment as
        // the last one.
        if let Some(end) = segments::without_context_tail(&self.context_dirs, &path) {
            changed = true;
            path = truncated(path, end);
        }
        if !self.titled_ids.is_empty() {
            if let Some(bare) = self.drop_titles(&path) {
                path = Cow::Owned(bare);
                changed = true;
            }
        }
        if !self.slugs.is_empty() {
            if let Some(without) = self.drop_slug(&path) {
                path = Cow::Owned(without);
                changed = true;
            }
        }
        if !self.ids_in_slugs.is_empty() {
            if let Some(short) = self.short_form(&path) {
                path = Cow::Owned(short);
                changed = true;
            }
        }
        if let Some(end) = segments::without_view_tail(&self.view_tails, &path) {
            changed = true;
            path = truncated(path, end);
        }
        if !self.default_documents.is_empty() {
            if let Some(slash) = path.rfind('/') {
                let last = &path[slash + 1..];
                if self.default_documents.iter().any(|d| d == last) {
                    changed = true;
                    path = truncated(path, slash + 1);
                }
            }
        }
        if let Some(stem) = self.stem(&path) {
            changed = true;
            path = truncated(path, stem);
        }
        if self.strip_trailing_slash && path.len() > 1 && path.ends_with('/') {
            changed = true;
            let keep = path.trim_end_matches('/').len().max(1);
            path = truncated(path, keep);
        }
        let new_query = query.and_then(|q| self.rewrite_query(q));
        // Dropped or sorted parameters may leave a path first in the query: read it too, so
        // the result is a fixpoint.
        if let Some((moved, rest)) = self.read_query_path(&path, new_query.as_deref()) {
            return reparsed(self.rewrite_parts(&moved, rest.as_deref()));
        }
        changed |= !matches!(
            (&new_query, query),
            (Some(Cow::Borrowed(_)), _) | (None, None)
        );
        (path, new_query, changed)
    }

    /// Whether a canonical form may be written back in a script's query spelling
    /// ([`SiteRewriter::write_back_query_path`]).
    pub fn writes_back_query_paths(&self) -> bool {
        !self.query_paths_written_back.is_empty()
    }

    /// `canonical` (a serialized URL, every rule applied) in the query spelling of a
    /// [`SiteAction::QueryPath`] written back: `script/rest?q` becomes `script?/rest&q`.
    /// `None` when its path is not under such a script, or when the query spelling would not
    /// read back as exactly this path and query (a path holding `&` or `=`): then the
    /// path-info spelling stays, so two canonical forms never meet in one spelling.
    pub fn write_back_query_path(&self, canonical: &str) -> Option<String> {
        if self.query_paths_written_back.is_empty() {
            return None;
        }
        let url = Url::parse(canonical).ok()?;
        let path = url.path();
        let script_len = self.query_paths_written_back.iter().find_map(|script| {
            let head = path.get(..script.len())?;
            let same = if self.lowercase_path {
                head.eq_ignore_ascii_case(script)
            } else {
                head == script
            };
            (same && path.as_bytes().get(script.len()) == Some(&b'/')).then_some(script.len())
        })?;
        let (script, rest) = path.split_at(script_len);
        let query = match url.query() {
            Some(q) => format!("{rest}&{q}"),
            None => rest.to_owned(),
        };
        let (written, left) = query_path_part(&query)?;
        if written != rest || left != url.query() {
            return None;
        }
        let mut out = String::with_capacity(canonical.len() + 2);
        out.push_str(&canonical[..url[..url::Position::BeforePath].len()]);
        out.push_str(script);
        out.push('?');
        out.push_str(&query);
        if let Some(fragment) = url.fragment() {
            out.push('#');
            out.push_str(fragment);
        }
        // The URL parser must keep the spelling as written, or the form is not a fixpoint.
        Url::parse(&out)
            .is_ok_and(|u| u.as_str() == out)
            .then_some(out)
    }

    /// The path and the query left when a [`SiteAction::QueryPath`] applies: the script path
    /// compares without case when the site's paths are case-insensitive.
    fn read_query_path(&self, path: &str, query: Option<&str>) -> Option<(String, Option<String>)> {
        if self.query_paths.is_empty() {
            return None;
        }
        let (written, rest) = query_path_part(query?)?;
        self.query_paths
            .iter()
            .any(|script| {
                if self.lowercase_path {
                    script.eq_ignore_ascii_case(path)
                } else {
                    script == path
                }
            })
            .then(|| (format!("{path}{written}"), rest.map(str::to_owned)))
    }

    /// The path and the query when a [`SiteAction::PathPairsToQuery`] applies
    /// (`path_pairs::read`): the script compares without case when the site's paths are
    /// case-insensitive, the keys when its query keys are.
    fn read_path_pairs(&self, path: &str, query: Option<&str>) -> Option<(String, Option<String>)> {
        if self.pair_scripts.is_empty() {
            return None;
        }
        path_pairs::read(
            &self.pair_scripts,
            path,
            query,
            self.lowercase_path,
            self.lowercase_query,
        )
    }

    /// The path and the query with its keyless id keyed, when a [`SiteAction::KeylessIdInQuery`]
    /// applies ([`keyless_part`], and no part names the parameter already, so the result is a
    /// fixpoint): the script path and the name compare without case when the site is
    /// case-insensitive.
    fn key_the_id(&self, path: &str, query: Option<&str>) -> Option<(String, Option<String>)> {
        if self.keyless_ids.is_empty() {
            return None;
        }
        let query = query?;
        let (at, id) = keyless_part(query)?;
        let (_, name) = self.keyless_ids.iter().find(|(script, _)| {
            if self.lowercase_path {
                script.eq_ignore_ascii_case(path)
            } else {
                script == path
            }
        })?;
        let named = query.split('&').any(|part| {
            let n = part.split_once('=').map_or(part, |(n, _)| n);
            if self.lowercase_query {
                n.eq_ignore_ascii_case(name)
            } else {
                n == name
            }
        });
        if named {
            return None;
        }
        let keyed: Vec<Cow<'_, str>> = query
            .split('&')
            .enumerate()
            .map(|(i, part)| {
                if i == at {
                    Cow::Owned(format!("{name}={id}"))
                } else {
                    Cow::Borrowed(part)
                }
            })
            .collect();
        Some((path.to_owned(), Some(keyed.join("&"))))
    }

    /// The path and the query left when a [`SiteAction::QueryValueToPath`] applies: the script
    /// path and the parameter name compare without case when the site is case-insensitive.
    fn move_query_value(
        &self,
        path: &str,
        query: Option<&str>,
    ) -> Option<(String, Option<String>)> {
        if self.query_to_path.is_empty() {
            return None;
        }
        let query = query?;
        let same_path = |a: &str| {
            if self.lowercase_path {
                a.eq_ignore_ascii_case(path)
            } else {
                a == path
            }
        };
        let same_name = |a: &str, b: &str| {
            if self.lowercase_query {
                a.eq_ignore_ascii_case(b)
            } else {
                a == b
            }
        };
        for QueryToPath {
            script,
            name,
            prefix,
            namespace_separator,
        } in &self.query_to_path
        {
            if !same_path(script) {
                continue;
            }
            let mut found: Option<(usize, &str)> = None;
            let mut repeated = false;
            for (i, part) in split_byte(query, b'&').enumerate() {
                let named = match part.split_once('=') {
                    Some((n, v)) => (!name.is_empty() && same_name(n, name)).then_some(v),
                    None => (name.is_empty() && !part.is_empty()).then_some(part),
                };
                if let Some(v) = named {
                    repeated |= found.is_some();
                    found = Some((i, v));
                }
            }
            let Some((at, value)) = found else { continue };
            let value = match namespace_separator {
                Some(c) => Cow::Owned(value.replace(*c, "/")),
                None => Cow::Borrowed(value),
            };
            let safe = if name.is_empty() {
                route_safe_value(&value)
            } else {
                path_safe_value(&value)
            };
            // A value moved under a script whose path info is read as pairs would be read back
            // into the query: the two actions would undo each other forever.
            if repeated
                || !safe
                || (!self.pair_scripts.is_empty()
                    && path_pairs::under_a_script(
                        &self.pair_scripts,
                        &format!("{prefix}{value}"),
                        self.lowercase_path,
                    ))
            {
                continue;
            }
            let rest: Vec<&str> = query
                .split('&')
                .enumerate()
                .filter(|&(i, _)| i != at)
                .map(|(_, p)| p)
                .collect();
            let rest = (!rest.iter().all(|p| p.is_empty())).then(|| rest.join("&"));
            return Some((format!("{prefix}{value}"), rest));
        }
        None
    }

    /// The path without the slug beside its id ([`SiteAction::SlugBesideId`], the first that
    /// applies), or `None`.
    fn drop_slug(&self, path: &str) -> Option<String> {
        let is_id = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let is_slug = |s: &str| !s.is_empty() && !is_id(s);
        for (prefix, before_id) in &self.slugs {
            let Some(rest) = path.strip_prefix(prefix.as_str()) else {
                continue;
            };
            if *before_id {
                let Some((slug, after)) = rest.split_once('/') else {
                    continue;
                };
                let id = after.split('/').next().unwrap_or("");
                if is_slug(slug) && is_id(id) {
                    return Some(format!("{prefix}{after}"));
                }
            } else {
                let Some((id, slug)) = rest.split_once('/') else {
                    continue;
                };
                if is_id(id) && !slug.is_empty() && !slug.contains('/') {
                    return Some(format!("{prefix}{id}"));
                }
            }
        }
        None
    }

    /// The path with the title dropped from an id's segment ([`SiteAction::SlugInSegment`], the
    /// first that applies), or `None`.
    fn drop_titles(&self, path: &str) -> Option<String> {
        for (prefix, separator, id_first) in &self.titled_ids {
            let Some(rest) = path.strip_prefix(prefix.as_str()) else {
                continue;
            };
            let (segment, after) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            if let Some(id) = titled_id(segment, *separator, *id_first) {
                let mut out = String::with_capacity(path.len());
                out.push_str(prefix);
                out.push_str(id);
                out.push_str(after);
                return Some(out);
            }
        }
        None
    }

    /// The length of `path` without the extension of its last segment
    /// ([`SiteAction::StripExtension`], the first that applies), or `None`.
    fn stem(&self, path: &str) -> Option<usize> {
        if self.extensions.is_empty() {
            return None;
        }
        let last = &path[path.rfind('/')? + 1..];
        self.extensions.iter().find_map(|ext| {
            let stem = last.strip_suffix(ext.as_str())?;
            (!stem.is_empty() && !stem.ends_with(ext.as_str())).then(|| path.len() - ext.len())
        })
    }

    /// The short path of an id at the end of a slug ([`SiteAction::IdInSlug`], the first that
    /// applies), or `None`.
    fn short_form(&self, path: &str) -> Option<String> {
        let rest = path.strip_prefix('/')?;
        let depth = rest.split('/').count();
        let last = rest.rsplit('/').next()?;
        for (short, want, suffix) in &self.ids_in_slugs {
            if usize::from(*want) != depth {
                continue;
            }
            if let Some((_, id, _)) = slug_id_suffix(last).filter(|(_, _, s)| s == suffix) {
                return Some(format!("{short}{id}"));
            }
        }
        None
    }

    /// The path with aliased segments replaced, or `None` when no segment is an alias.
    fn alias_segments(&self, path: &str) -> Option<String> {
        let rest = path.strip_prefix('/')?;
        // Most paths match no alias: look before allocating.
        let any = self.segment_aliases.iter().any(|(segment, _, aliases, _)| {
            split_byte(rest, b'/')
                .nth(usize::from(*segment))
                .is_some_and(|v| aliases.iter().any(|a| a == v))
        });
        if !any {
            return None;
        }
        let segments: Vec<&str> = rest.split('/').collect();
        // A folder has a non-empty segment after it (`/a/` names `a` as much as `/a` does).
        let is_folder = |i: usize| segments[i + 1..].iter().any(|s| !s.is_empty());
        let mut out: Option<Vec<&str>> = None;
        for (segment, canonical, aliases, folders_only) in &self.segment_aliases {
            let i = usize::from(*segment);
            let current = out.as_ref().map_or(segments.get(i), |o| o.get(i));
            if current.is_some_and(|v| aliases.iter().any(|a| a == v))
                && (!folders_only || is_folder(i))
            {
                out.get_or_insert_with(|| segments.clone())[i] = canonical;
            }
        }
        out.map(|o| join_segments(&o, path.len()))
    }

    /// The path with dropped segments removed, or `None` when none is present. A segment is
    /// removed only when it is not the last one and the next one differs from it, and removal
    /// repeats until nothing changes, so the result is a fixpoint.
    fn drop_segments(&self, path: &str) -> Option<String> {
        let rest = path.strip_prefix('/')?;
        let mut segments: Vec<&str> = rest.split('/').collect();
        let mut changed = false;
        for _ in 0..segments.len() {
            let mut round = false;
            for (segment, value) in &self.dropped_segments {
                let i = usize::from(*segment);
                if i + 1 < segments.len()
                    && segments[i] == value
                    && segments[i + 1] != value.as_str()
                {
                    segments.remove(i);
                    round = true;
                }
            }
            if !round {
                break;
            }
            changed = true;
        }
        changed.then(|| join_segments(&segments, path.len()))
    }

    fn rewrite_query<'a>(&self, q: &'a str) -> Option<Cow<'a, str>> {
        if !self.lowercase_query
            && !self.sort_query
            && self.ignored_params.is_empty()
            && self.ignored_values.is_empty()
            && self.titled_values.is_empty()
            && self.value_defaults.is_empty()
        {
            // No query action: what `drop_and_sort` would find after a look at every parameter.
            return Some(Cow::Borrowed(q));
        }
        // Names are compared after lower-casing: the learner saw them so.
        let lower = (self.lowercase_query && has_upper_outside_escapes(q))
            .then(|| lower_outside_escapes(q));
        let lowered = lower.as_deref().unwrap_or(q);
        // A default filled into a bare value before titles and dropped parameters, which then
        // read the value as the software does.
        let completed = segments::complete_default_values(&self.value_defaults, lowered);
        let lower = completed.or(lower);
        let lowered = lower.as_deref().unwrap_or(q);
        // Titles leave ids before parameters are dropped, so a parameter dropped beside the id
        // is decided on the query as it reads.
        match (self.drop_value_titles(lowered), lower.is_some()) {
            (Some(bare), _) => self
                .drop_and_sort(&bare)
                .map(|c| Cow::Owned(c.into_owned())),
            (None, true) => self
                .drop_and_sort(lowered)
                .map(|c| Cow::Owned(c.into_owned())),
            (None, false) => self.drop_and_sort(q),
        }
    }

    /// The query with the titles dropped from ids written with them
    /// ([`SiteAction::TitledIdInQuery`]), or `None` when no value is one.
    fn drop_value_titles(&self, q: &str) -> Option<String> {
        if self.titled_values.is_empty() {
            return None;
        }
        let bare = |part| titled_part(&self.titled_values, part);
        if !q.split('&').any(|part| bare(part).is_some()) {
            return None;
        }
        let mut out = String::with_capacity(q.len());
        for (i, part) in q.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match bare(part) {
                Some((name, id)) => {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(id);
                }
                None => out.push_str(part),
            }
        }
        Some(out)
    }

    /// Whether query part `part` of query `q` is dropped: a parameter ignored at this value, or
    /// an ignored parameter, and when it is ignored only beside another one, `q` holds that one.
    fn drops(&self, part: &str, q: &str) -> bool {
        let holds = |beside: &Option<String>| holds_beside(q, beside.as_deref());
        if self
            .ignored_values
            .iter()
            .any(|(value, beside)| value == part && holds(beside))
        {
            return true;
        }
        let name = param_name(part);
        self.ignored_params
            .iter()
            .any(|(ignored, beside)| ignored == name && holds(beside))
    }

    /// The query without ignored parameters and sorted when asked, `None` when nothing is left.
    fn drop_and_sort<'a>(&self, q: &'a str) -> Option<Cow<'a, str>> {
        // One pass decides whether anything changes; most queries are left as they are.
        let mut any_dropped = false;
        let mut unsorted = false;
        let mut prev: Option<&str> = None;
        for part in split_byte(q, b'&') {
            let name = param_name(part);
            any_dropped = any_dropped || self.drops(part, q);
            if self.sort_query {
                unsorted |= prev.is_some_and(|p| p > name);
                prev = Some(name);
            }
        }
        if !any_dropped && !unsorted {
            return Some(Cow::Borrowed(q));
        }
        if !self.sort_query {
            // The kept parameters written straight into the result, joined by `&` as they were.
            let mut out = String::with_capacity(q.len());
            let mut first = true;
            let mut any_text = false;
            for part in split_byte(q, b'&').filter(|p| !self.drops(p, q)) {
                if !first {
                    out.push('&');
                }
                first = false;
                any_text |= !part.is_empty();
                out.push_str(part);
            }
            return any_text.then_some(Cow::Owned(out));
        }
        let mut parts: Vec<&str> = q.split('&').filter(|p| !self.drops(p, q)).collect();
        parts.sort_by(|a, b| param_name(a).cmp(param_name(b)));
        if parts.iter().all(|p| p.is_empty()) {
            return None;
        }
        Some(Cow::Owned(parts.join("&")))
    }
}

/// Whether a query value reads the same as path segments, so moving it into the path keeps
/// its meaning: non-empty, no `+` (a space in a query, a plus in a path), no escaped slash, no
/// empty, `.` or `..` segment (the URL parser would resolve them).
pub fn path_safe_value(v: &str) -> bool {
    !v.is_empty()
        && !v.contains(['+', '?', '#', '\\'])
        && !v.to_ascii_lowercase().contains("%2f")
        && !v.to_ascii_lowercase().contains("%2e")
        && v.split('/').all(|s| !s.is_empty() && s != "." && s != "..")
}

/// The path a query string writes as its first part, and the query's other parts (`None` when
/// there are none): `/123/category/5&metadata` is (`/123/category/5`, `metadata`). The part
/// starts with `/`, holds no `=` (a parameter, not a path) and reads the same as path segments:
/// at least one segment, none empty (one trailing `/` aside), `.` or `..`, and no byte that
/// means something else in a path (`;` starts a path parameter, `+` is a space in a query) or
/// that the URL parser escapes in a path but not in a query (`` ` ``, `{`, `}`, `^`), no escaped
/// slash or dot.
pub fn query_path_part(query: &str) -> Option<(&str, Option<&str>)> {
    let (first, rest) = match split_once_byte(query, b'&') {
        Some((first, rest)) => (first, (!rest.is_empty()).then_some(rest)),
        None => (query, None),
    };
    let segments = first.strip_prefix('/')?;
    let inner = segments.strip_suffix('/').unwrap_or(segments);
    let escaped_slash_or_dot = inner.contains('%') && {
        let lower = inner.to_ascii_lowercase();
        lower.contains("%2f") || lower.contains("%2e")
    };
    let readable = !inner.is_empty()
        && !inner.contains(['=', ';', '+', '?', '#', '\\', '`', '{', '}', '^'])
        && !escaped_slash_or_dot
        && inner
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
    readable.then_some((first, rest))
}

/// Whether a query part without a name reads the same as path segments (a route written as
/// the query string, [`SiteAction::QueryValueToPath`] with an empty name): as
/// [`path_safe_value`], with one trailing `/` allowed, and holding a letter (a bare number is a
/// parameter, not a route).
pub fn route_safe_value(v: &str) -> bool {
    let inner = v.strip_suffix('/').unwrap_or(v);
    path_safe_value(inner) && inner.bytes().any(|b| b.is_ascii_alphabetic())
}

/// The id at the end of a path's last segment, split as (slug, id, suffix): `some-title-123.html`
/// is (`some-title`, `123`, `.html`). The suffix is empty or a dot and letters, so the id is the
/// last number of the segment.
pub fn slug_id_suffix(last: &str) -> Option<(&str, &str, &str)> {
    let dot = last
        .rfind('.')
        .filter(|&d| last[d + 1..].bytes().all(|b| b.is_ascii_alphabetic()))
        .unwrap_or(last.len());
    let (stem, suffix) = last.split_at(dot);
    let (slug, id) = stem.rsplit_once('-')?;
    (!slug.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .then_some((slug, id, suffix))
}

/// Fewest hexadecimal digits an [`SiteAction::AbbreviatedHash`] keeps: git's default
/// abbreviation. Shorter prefixes are shared by different objects of a large repository, and a
/// shorter number written in hexadecimal digits (`/commit/2024`) is no abbreviation.
pub const MIN_HASH_ABBREVIATION: u8 = 7;
/// Most hexadecimal digits an [`SiteAction::AbbreviatedHash`] keeps: one fewer than a full SHA-1
/// id, so there is something to cut.
pub const MAX_HASH_ABBREVIATION: u8 = 39;
/// Most digits of an object id: a SHA-256 id.
const MAX_HASH_DIGITS: usize = 64;

/// Whether `segment` is an object id (or a prefix of one) as a git host writes it: lowercase
/// hexadecimal, at most [`MAX_HASH_DIGITS`] digits.
pub(crate) fn is_object_id(segment: &str) -> bool {
    !segment.is_empty()
        && segment.len() <= MAX_HASH_DIGITS
        && segment
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `path` with every object id after a listed segment cut to its listed length
/// ([`SiteAction::AbbreviatedHash`]), or `None` when none is longer.
pub(crate) fn abbreviate_hashes(hashes: &[(String, u8)], path: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let mut previous: Option<&str> = None;
    let mut start = 0;
    for segment in path.split('/') {
        let end = start + segment.len();
        let cut = previous.and_then(|before| {
            hashes
                .iter()
                .find(|(after, _)| after == before)
                .map(|(_, length)| usize::from(*length))
                .filter(|&length| segment.len() > length && is_object_id(segment))
        });
        if let Some(length) = cut {
            let text = out.get_or_insert_with(|| path[..start].to_owned());
            text.push_str(&segment[..length]);
        } else if let Some(text) = out.as_mut() {
            text.push_str(segment);
        }
        if end < path.len() {
            if let Some(text) = out.as_mut() {
                text.push('/');
            }
        }
        previous = Some(segment);
        start = end + 1;
    }
    out
}

/// Whether `ext` is a file extension a page may be reachable without
/// ([`SiteAction::StripExtension`]): a dot and one to eight ASCII letters or digits, at least one
/// a letter (`.html`, `.php5`; not `.2`, which is a version or a decimal).
pub fn is_extension(ext: &str) -> bool {
    ext.strip_prefix('.').is_some_and(|e| {
        (1..=8).contains(&e.len())
            && e.bytes().all(|b| b.is_ascii_alphanumeric())
            && e.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// Characters that join a title and an id in one path segment.
pub const TITLE_SEPARATORS: [char; 6] = ['.', '-', ':', '_', '~', ','];

/// The id of a segment that writes an id and a title together (`title.123` with `.` as
/// separator, or `123-title` when `id_first`): the id is all digits (at most 19, so it is a
/// number) and the title holds at least two letters (a word), so `v1.2` or `2024-05` are not
/// titled ids. A title that is a few letters and then a number (`msg316400`, `page2`, `p15`) is
/// a typed reference to something else, not a title: SMF's `topic=5.msg310` names the page
/// holding message 310, which is not always the topic's first. Nor is a title glued parameters
/// (`;` or `=` in it): SMF's `topic=5.0;all` is the whole topic on one page. Nor one whose word
/// beside the id is a number: that is a second id (PrestaShop 1.7's `2725-2322-name`, product
/// 2725 in combination 2322), and a title opening with a number (`5-10-best-tips`) is left as
/// it is rather than risk it.
pub fn titled_id(segment: &str, separator: char, id_first: bool) -> Option<&str> {
    let (title, id) = if id_first {
        let (id, title) = segment.split_once(separator)?;
        (title, id)
    } else {
        segment.rsplit_once(separator)?
    };
    let id_ok = !id.is_empty() && id.len() <= 19 && id.bytes().all(|b| b.is_ascii_digit());
    let letters = title
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .take(2)
        .count();
    // The title's word next to the id is a second number: a second id, not a title word
    // (PrestaShop 1.7 writes `2725-2322-name.html`, product 2725 in combination 2322).
    let next_word = if id_first {
        title.split(separator).next()
    } else {
        title.rsplit(separator).next()
    };
    let second_id =
        next_word.is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()));
    let words = !title.contains([';', '=']) && !is_typed_reference(title) && !second_id;
    (id_ok && letters == 2 && words).then_some(id)
}

/// A rewrite of a form another action wrote (an alias, a query form, a path read from the query):
/// the parts owned, since they outlive that form, and marked changed.
fn reparsed<'a>(
    (path, query, _): (Cow<'_, str>, Option<Cow<'_, str>>, bool),
) -> (Cow<'a, str>, Option<Cow<'a, str>>, bool) {
    (
        Cow::Owned(path.into_owned()),
        query.map(|q| Cow::Owned(q.into_owned())),
        true,
    )
}

/// The position and id of the one part of `query` that is a keyless id ([`keyless_id`]), or
/// `None` when no part is or several are (`?5-a&6-b` names no one page).
pub fn keyless_part(query: &str) -> Option<(usize, &str)> {
    let mut found = None;
    for (i, part) in query.split('&').enumerate() {
        if let Some(id) = keyless_id(part) {
            if found.is_some() {
                return None;
            }
            found = Some((i, id));
        }
    }
    found
}

/// The id of a query part that writes an id without a key ([`SiteAction::KeylessIdInQuery`]):
/// the part is all digits (at most 19), or digits, `-` and a title ([`titled_id`]); a part with
/// `=` is a parameter, not an id.
pub fn keyless_id(part: &str) -> Option<&str> {
    if part.contains('=') {
        return None;
    }
    let bare = !part.is_empty() && part.len() <= 19 && part.bytes().all(|b| b.is_ascii_digit());
    if bare {
        return Some(part);
    }
    titled_id(part, '-', true)
}

/// Whether a would-be title is a short word and then a number: `msg316400`, `page2`, `p15`.
fn is_typed_reference(title: &str) -> bool {
    let digits_at = title
        .bytes()
        .position(|b| b.is_ascii_digit())
        .unwrap_or(title.len());
    let (word, number) = title.split_at(digits_at);
    (1..=5).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_alphabetic())
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// The name of a query part and the id its value writes with a title, when the part is one of
/// `titled` (name, separator, id first) ([`SiteAction::TitledIdInQuery`]).
fn titled_part<'p>(titled: &[(String, char, bool)], part: &'p str) -> Option<(&'p str, &'p str)> {
    let (name, value) = part.split_once('=')?;
    titled
        .iter()
        .filter(|(n, _, _)| n == name)
        .find_map(|&(_, separator, id_first)| titled_id(value, separator, id_first))
        .map(|id| (name, id))
}

/// The byte length of the first `segments` segments of `path` with their leading slashes
/// (`/A/B/c` and 2: the length of `/A/B`), the whole path when it has fewer.
fn segments_end(path: &str, segments: u16) -> usize {
    let mut seen = 0u16;
    for (i, b) in path.bytes().enumerate().skip(1) {
        if b == b'/' {
            seen += 1;
            if seen == segments {
                return i;
            }
        }
    }
    path.len()
}

/// A path from its segments (`["a", "b"]` is `/a/b`).
fn join_segments(segments: &[&str], capacity: usize) -> String {
    let mut p = String::with_capacity(capacity);
    for seg in segments {
        p.push('/');
        p.push_str(seg);
    }
    p
}

fn param_name(p: &str) -> &str {
    split_once_byte(p, b'=').map_or(p, |(n, _)| n)
}

/// Whether query `q` holds what a dropped parameter's `beside` asks for (always, without one):
/// every part of it joined by `&`, a name as any value of that parameter, `name=value` as
/// exactly that part.
pub(crate) fn holds_beside(q: &str, beside: Option<&str>) -> bool {
    beside.is_none_or(|beside| {
        beside.split('&').all(|wanted| {
            if wanted.contains('=') {
                split_byte(q, b'&').any(|p| p == wanted)
            } else {
                split_byte(q, b'&').any(|p| param_name(p) == wanted)
            }
        })
    })
}

/// Whether `s` has a byte passing `test` that is not one of the two hex digits of a `%XX`
/// escape: `caf%C3%A9` has no digit and no uppercase letter of its own. The engine folds case
/// with it and the learner reads words with it, so both agree on what an escape is.
pub(crate) fn any_byte_outside_escapes(s: &str, test: impl Fn(u8) -> bool) -> bool {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if is_escape_at(bytes, i) {
            i += 3;
            continue;
        }
        if test(bytes[i]) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether `bytes[i]` starts a `%XX` escape.
fn is_escape_at(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'%'
        && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
        && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
}

fn has_upper_outside_escapes(path: &str) -> bool {
    any_byte_outside_escapes(path, |b| b.is_ascii_uppercase())
}

/// `path` with ASCII letters lowercased, but the hex digits of its `%XX` escapes kept.
fn lower_outside_escapes(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    // Hex digits still to copy as they are; they are ASCII, one char per byte.
    let mut escape_digits = 0;
    for (i, c) in path.char_indices() {
        if escape_digits > 0 {
            escape_digits -= 1;
            out.push(c);
        } else if is_escape_at(bytes, i) {
            escape_digits = 2;
            out.push(c);
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// `path` cut to its first `end` bytes, borrowed as it came or truncated in place.
fn truncated(path: Cow<'_, str>, end: usize) -> Cow<'_, str> {
    match path {
        Cow::Borrowed(p) => Cow::Borrowed(&p[..end]),
        Cow::Owned(mut p) => {
            p.truncate(end);
            Cow::Owned(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyless_ids_are_a_number_alone_or_before_a_title() {
        assert_eq!(keyless_id("142097-Some-Title"), Some("142097"));
        assert_eq!(keyless_id("142097"), Some("142097"));
        // Parameters, routes, dates and typed references are not keyless ids.
        assert_eq!(keyless_id("t=142097"), None);
        assert_eq!(keyless_id("/category/5"), None);
        assert_eq!(keyless_id("2024-05"), None);
        assert_eq!(keyless_id("5-page2"), None);
        assert_eq!(keyless_id(""), None);
        let rw = SiteRewriter::new([&SiteAction::KeylessIdInQuery {
            script: "/vb/showthread.php".into(),
            name: "t".into(),
        }]);
        let canon = |u: &str| rw.rewrite(&Url::parse(u).unwrap());
        assert_eq!(
            canon("http://a.example/vb/showthread.php?5-A-Title&page=2").as_deref(),
            Some("http://a.example/vb/showthread.php?t=5&page=2")
        );
        assert_eq!(canon("http://a.example/vb/showthread.php?t=5"), None);
        assert_eq!(
            canon("http://a.example/vb/showthread.php?s=ab12&5-A-Title").as_deref(),
            Some("http://a.example/vb/showthread.php?s=ab12&t=5")
        );
        // Two ids, or the key written already: no one page to key.
        assert_eq!(
            canon("http://a.example/vb/showthread.php?5-A-Title&6-B-Title"),
            None
        );
        assert_eq!(
            canon("http://a.example/vb/showthread.php?t=5&6-B-Title"),
            None
        );
        assert_eq!(canon("http://a.example/vb/member.php?5-someone"), None);
    }

    #[test]
    fn titled_ids_need_a_number_and_a_title_with_a_letter() {
        assert_eq!(titled_id("some-title.123", '.', false), Some("123"));
        assert_eq!(titled_id("123-Some-Title", '-', true), Some("123"));
        assert_eq!(titled_id("2593:an-alias", ':', true), Some("2593"));
        // Versions, dates and bare numbers are not titled ids.
        assert_eq!(titled_id("v1.2", '.', false), None);
        assert_eq!(titled_id("1.2", '.', false), None);
        assert_eq!(titled_id("2024-05", '-', false), None);
        assert_eq!(titled_id("some-title.", '.', false), None);
        assert_eq!(titled_id("title.12345678901234567890", '.', false), None);
        // A typed reference after the id is not its title (SMF's message links).
        assert_eq!(titled_id("10072.msg316400", '.', true), None);
        assert_eq!(titled_id("page2-77", '-', false), None);
        assert_eq!(titled_id("12087.0;all", '.', true), None);
        assert_eq!(titled_id("77-top10-tips", '-', true), Some("77"));
        // A second number beside the id is a second id (PrestaShop 1.7's combination).
        assert_eq!(titled_id("2725-2322-people-travel", '-', true), None);
        assert_eq!(titled_id("2725-people-travel", '-', true), Some("2725"));
        assert_eq!(titled_id("people-travel-2322-2725", '-', false), None);
        assert!(route_safe_value("threads/a-title.1/"));
        assert!(!route_safe_value("123"));
        assert!(!route_safe_value("a//b"));
    }

    #[test]
    fn a_title_beside_an_id_and_a_route_in_the_query_are_rewritten_in_place() {
        let rw = SiteRewriter::new(&[
            SiteAction::QueryValueToPath {
                path: "/forum/index.php".into(),
                name: String::new(),
                prefix: "/forum/".into(),
                namespace_separator: None,
            },
            SiteAction::SlugInSegment {
                prefix: "/forum/threads/".into(),
                separator: '.',
                id_first: false,
            },
        ]);
        let canon = |u: &str| {
            let url = Url::parse(u).unwrap();
            rw.rewrite(&url).unwrap_or_else(|| url.to_string())
        };
        assert_eq!(
            canon("http://f.example/forum/threads/a-title.42/page-2?x=1"),
            "http://f.example/forum/threads/42/page-2?x=1"
        );
        assert_eq!(
            canon("http://f.example/forum/index.php?threads/a-title.42/&x=1"),
            "http://f.example/forum/threads/42/?x=1"
        );
        // Not under the page type, or not a titled id: unchanged.
        for u in [
            "http://f.example/forum/members/a-name.42/",
            "http://f.example/forum/threads/v1.2/",
            "http://f.example/forum/index.php?x=1",
        ] {
            assert_eq!(canon(u), u);
        }
    }

    #[test]
    fn an_extension_is_stripped_from_the_last_segment_only() {
        let strip = [
            SiteAction::DefaultDocument {
                name: "index.html".into(),
            },
            SiteAction::StripExtension {
                extension: ".html".into(),
            },
        ];
        assert_rewrites(
            &strip,
            "http://d.example/guide/install.html?v=2",
            "http://d.example/guide/install?v=2",
        );
        // The default document is stripped first; other extensions, an empty stem, a
        // doubled extension and directories named like files stay as they are.
        assert_rewrites(
            &strip,
            "http://d.example/guide/index.html",
            "http://d.example/guide/",
        );
        for u in [
            "http://d.example/guide/install.htm",
            "http://d.example/guide/.html",
            "http://d.example/guide/a.html.html",
            "http://d.example/a.html/b",
        ] {
            assert_eq!(rw(&strip, u), u);
        }
        assert!(is_extension(".html") && is_extension(".php5"));
        assert!(!is_extension(".2") && !is_extension("html") && !is_extension(".a-b"));
    }

    #[test]
    fn a_title_leaves_an_id_in_a_query_value_before_parameters_are_dropped_beside_it() {
        let actions = [
            SiteAction::TitledIdInQuery {
                name: "id".into(),
                separator: ':',
                id_first: true,
            },
            SiteAction::IgnoreParam {
                name: "Itemid".into(),
                beside: Some("id".into()),
            },
            SiteAction::SortQuery,
        ];
        assert_rewrites(
            &actions,
            "http://j.example/index.php?view=article&id=5:an-alias&Itemid=7",
            "http://j.example/index.php?id=5&view=article",
        );
        // Only the named parameter, only an id with a title; the menu item alone stays.
        for u in [
            "http://j.example/index.php?Itemid=7",
            "http://j.example/index.php?catid=5:an-alias",
            "http://j.example/index.php?id=2024:05",
            "http://j.example/index.php?id=a:5",
        ] {
            assert_eq!(rw(&actions, u), u);
        }
        assert_eq!(
            actions[0].to_string(),
            "query:id=N:title -> N",
            "shown in the rule listing"
        );
        // Beside parts with their values: the page type is a query value.
        let by_type = [SiteAction::IgnoreParam {
            name: "Itemid".into(),
            beside: Some("id&view=article".into()),
        }];
        assert_rewrites(
            &by_type,
            "http://j.example/index.php?view=article&id=5&Itemid=7",
            "http://j.example/index.php?view=article&id=5",
        );
        for u in [
            "http://j.example/index.php?view=category&id=5&Itemid=7",
            "http://j.example/index.php?view=article&Itemid=7",
            "http://j.example/index.php?view=articles&id=5&Itemid=7",
        ] {
            assert_eq!(rw(&by_type, u), u);
        }
    }

    fn rw(actions: &[SiteAction], url: &str) -> String {
        let u = Url::parse(url).unwrap();
        SiteRewriter::new(actions).rewrite(&u).unwrap_or(u.into())
    }

    /// `input` becomes `want`, which parses back to itself and is a fixpoint.
    fn assert_rewrites(actions: &[SiteAction], input: &str, want: &str) {
        let got = rw(actions, input);
        assert_eq!(got, want, "{input}");
        assert_eq!(
            Url::parse(&got).unwrap().as_str(),
            got,
            "{input}: parses back"
        );
        assert_eq!(rw(actions, &got), got, "{input}: idempotent");
    }

    #[test]
    fn a_shared_file_anywhere_is_its_one_copy_after_every_other_action() {
        let actions = [
            SiteAction::SharedFiles {
                files: vec![
                    SharedFile {
                        folder: "/".into(),
                        name: "logo.gif".into(),
                        copy: "/logo.gif".into(),
                    },
                    SharedFile {
                        folder: "/docs/".into(),
                        name: "site.css".into(),
                        copy: "/docs/faq/site.css".into(),
                    },
                ],
            },
            SiteAction::LowercasePath,
        ];
        assert_rewrites(
            &actions,
            "http://h.example/film/logo.gif",
            "http://h.example/logo.gif",
        );
        // Found on the lower-cased path, the query kept.
        assert_rewrites(
            &actions,
            "http://h.example/Radio/Logo.GIF?v=2",
            "http://h.example/logo.gif?v=2",
        );
        assert_rewrites(
            &actions,
            "http://h.example/docs/site.css",
            "http://h.example/docs/faq/site.css",
        );
        assert_rewrites(
            &actions,
            "http://h.example/docs/api/site.css",
            "http://h.example/docs/faq/site.css",
        );
        // The copy itself, deeper than one subfolder, beside the folder, another name, a
        // folder's page: as they are.
        for u in [
            "http://h.example/logo.gif",
            "http://h.example/radio/tv/logo.gif",
            "http://h.example/site.css",
            "http://h.example/film/logo.png",
            "http://h.example/film/index.htm",
            "http://h.example/logo.gif/",
        ] {
            assert_eq!(rw(&actions, u), u);
        }
    }

    #[test]
    fn case_folding_keeps_escapes_and_reads_a_stray_percent_as_text() {
        assert_eq!(lower_outside_escapes("/Caf%C3%A9/%2f"), "/caf%C3%A9/%2f");
        assert_eq!(lower_outside_escapes("/A%ZZ/%4"), "/a%zz/%4");
        assert!(!has_upper_outside_escapes("/caf%C3%A9"));
        assert!(has_upper_outside_escapes("/a%ZZ"));
    }

    #[test]
    fn lowercasing_the_query_happens_before_dropping_and_sorting() {
        let rw = SiteRewriter::new(&[
            SiteAction::LowercasePathAndQuery,
            SiteAction::IgnoreParam {
                name: "sid".into(),
                beside: None,
            },
            SiteAction::SortQuery,
        ]);
        let url = Url::parse("http://h.example/Shop/Item.aspx?SID=X1&ID=5&Cat=B%C3%A9").unwrap();
        assert_eq!(
            rw.rewrite(&url).as_deref(),
            Some("http://h.example/shop/item.aspx?cat=b%C3%A9&id=5")
        );
        let plain = Url::parse("http://h.example/shop/item.aspx?id=5").unwrap();
        assert_eq!(rw.rewrite(&plain), None, "nothing to change");
        assert_eq!(
            SiteAction::LowercasePathAndQuery.to_string(),
            "lower-case the path and the query"
        );
    }

    #[test]
    fn actions_apply_in_a_fixed_order_and_are_idempotent() {
        let actions = [
            SiteAction::SortQuery,
            SiteAction::IgnoreParam {
                name: "sid".into(),
                beside: None,
            },
            SiteAction::DefaultDocument {
                name: "index.htm".into(),
            },
            SiteAction::LowercasePath,
        ];
        let more = [
            SiteAction::SegmentAlias {
                segment: 0,
                canonical: "m2".into(),
                aliases: vec!["m1".into(), "m3".into()],
                folders_only: false,
            },
            SiteAction::UseHttps,
            SiteAction::StripTrailingSlash,
            SiteAction::DropSegment {
                segment: 1,
                value: "print".into(),
            },
            SiteAction::DropSegment {
                segment: 0,
                value: "amp".into(),
            },
            SiteAction::DefaultDocument {
                name: "index.htm".into(),
            },
        ];
        for (input, want) in [
            ("http://a.example/dir/", "https://a.example/dir"),
            (
                "http://a.example/dir/index.htm?x=1",
                "https://a.example/dir?x=1",
            ),
            ("http://a.example/", "https://a.example/"),
            ("http://a.example:8080/a//", "http://a.example:8080/a"),
            ("https://a.example/a", "https://a.example/a"),
            (
                "https://a.example/m1/docs/m3",
                "https://a.example/m2/docs/m3",
            ),
            ("https://a.example/m3/", "https://a.example/m2"),
            ("https://a.example/m1", "https://a.example/m2"),
            ("https://a.example/b/print/s", "https://a.example/b/s"),
            ("https://a.example/amp/b/print/s", "https://a.example/b/s"),
            ("https://a.example/b/print", "https://a.example/b/print"),
            (
                "https://a.example/b/print/print/s",
                "https://a.example/b/print/print/s",
            ),
        ] {
            assert_rewrites(&more, input, want);
        }
        let cases = [
            (
                "http://a.example/Dir/INDEX.HTM?t=2&sid=9&f=1",
                "http://a.example/dir/?f=1&t=2",
            ),
            ("http://a.example/x?sid=1", "http://a.example/x"),
            ("http://a.example/x?sid", "http://a.example/x"),
            ("http://a.example/A%2Fb/C", "http://a.example/a%2Fb/c"),
            (
                "http://a.example/x?b=1&a=2&b=0",
                "http://a.example/x?a=2&b=1&b=0",
            ),
            ("http://a.example/x?sids=1", "http://a.example/x?sids=1"),
            ("http://a.example/index.html", "http://a.example/index.html"),
        ];
        for (input, want) in cases {
            assert_rewrites(&actions, input, want);
        }
        assert_eq!(
            SiteRewriter::new(&actions).rewrite(&Url::parse("http://a.example/x?a=1").unwrap()),
            None
        );
    }

    #[test]
    fn a_query_value_moves_into_the_path_only_when_it_reads_as_segments() {
        let actions = [
            SiteAction::QueryValueToPath {
                path: "/index.php".into(),
                name: "q".into(),
                prefix: "/".into(),
                namespace_separator: None,
            },
            SiteAction::LowercasePath,
            SiteAction::StripTrailingSlash,
        ];
        for (input, want) in [
            (
                "http://d.example/index.php?q=node/5",
                "http://d.example/node/5",
            ),
            (
                "http://d.example/index.php?q=node/5&page=1",
                "http://d.example/node/5?page=1",
            ),
            (
                "http://d.example/Index.php?page=1&q=Node/5",
                "http://d.example/node/5?page=1",
            ),
            // Not segments, or not one value: left alone.
            (
                "http://d.example/index.php?q=a+b",
                "http://d.example/index.php?q=a+b",
            ),
            (
                "http://d.example/index.php?q=a%2Fb",
                "http://d.example/index.php?q=a%2Fb",
            ),
            (
                "http://d.example/index.php?q=../x",
                "http://d.example/index.php?q=../x",
            ),
            (
                "http://d.example/index.php?q=",
                "http://d.example/index.php?q=",
            ),
            (
                "http://d.example/index.php?q=a&q=b",
                "http://d.example/index.php?q=a&q=b",
            ),
            (
                "http://d.example/other.php?q=x",
                "http://d.example/other.php?q=x",
            ),
        ] {
            assert_rewrites(&actions, input, want);
        }
    }

    #[test]
    fn a_default_value_beside_a_parameter_is_dropped_there_only() {
        let rule: SiteRule = serde_json::from_str(
            r#"{"id":"x#s1","op":"ignore_param_value","name":"id_lang","value":"1","beside":"id_product","support":3,"support_clusters":3,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        assert_eq!(
            rule.action.to_string(),
            "ignore query:id_lang=1 beside query:id_product"
        );
        let rw = SiteRewriter::new([&rule.action]);
        let b = "https://shop.example/index.php";
        let product = Url::parse(&format!("{b}?id_product=7&id_lang=1")).unwrap();
        assert_eq!(
            rw.rewrite(&product).as_deref(),
            Some(format!("{b}?id_product=7").as_str())
        );
        for kept in [
            format!("{b}?id_product=7&id_lang=2"),
            format!("{b}?id_cms=7&id_lang=1"),
        ] {
            assert_eq!(rw.rewrite(&Url::parse(&kept).unwrap()), None, "{kept}");
        }
        let text = serde_json::to_string(&rule).unwrap();
        assert_eq!(serde_json::from_str::<SiteRule>(&text).unwrap(), rule);
    }

    #[test]
    fn parameters_written_as_path_pairs_are_read_as_the_query_the_script_takes() {
        let rule: SiteRule = serde_json::from_str(
            r#"{"id":"x#s1","op":"path_pairs_to_query","script":"/catalog/product_info.php","support":3,"support_clusters":3,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        assert_eq!(
            rule.action.to_string(),
            "/catalog/product_info.php/K/V… -> /catalog/product_info.php?K=V…"
        );
        let ignore_cpath = SiteAction::IgnoreParam {
            name: "cPath".into(),
            beside: Some("products_id".into()),
        };
        let rw = SiteRewriter::new([&rule.action, &ignore_cpath]);
        let b = "http://shop.example/catalog";
        for (input, want) in [
            (
                format!("{b}/product_info.php/cPath/3_10/products_id/5"),
                Some(format!("{b}/product_info.php?products_id=5")),
            ),
            (
                format!("{b}/product_info.php/products_id/5?osCsid=x"),
                Some(format!("{b}/product_info.php?products_id=5&osCsid=x")),
            ),
            // Not whole pairs, another script, a key the query names too: left alone.
            (format!("{b}/product_info.php/products_id"), None),
            (format!("{b}/index.php/cPath/3"), None),
            (
                format!("{b}/product_info.php/products_id/5?products_id=6"),
                None,
            ),
        ] {
            assert_eq!(rw.rewrite(&Url::parse(&input).unwrap()), want, "{input}");
        }
        let text = serde_json::to_string(&rule).unwrap();
        assert_eq!(serde_json::from_str::<SiteRule>(&text).unwrap(), rule);
    }

    #[test]
    fn an_object_id_after_its_segment_is_cut_to_the_abbreviation() {
        let rule: SiteRule = serde_json::from_str(
            r#"{"id":"x#s1","op":"abbreviated_hash","after":"commit","length":10,"support":3,"support_clusters":3,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        assert_eq!(
            rule.action.to_string(),
            "commit/HASH -> commit/HASH cut to 10 digits"
        );
        let rw = SiteRewriter::new([&rule.action]);
        let b = "https://git.example/owner/repo";
        let full = "f3e1a67f984c504e29c5293461d29721d5924f03";
        for (input, want) in [
            (
                format!("{b}/commit/{full}"),
                Some(format!("{b}/commit/f3e1a67f98")),
            ),
            // Deeper in the path, with a file after it and a query.
            (
                format!("{b}/src/commit/{full}/docs/a.md?display=source"),
                Some(format!(
                    "{b}/src/commit/f3e1a67f98/docs/a.md?display=source"
                )),
            ),
            // A longer abbreviation, and a SHA-256 id.
            (
                format!("{b}/commit/f3e1a67f984c"),
                Some(format!("{b}/commit/f3e1a67f98")),
            ),
            (
                format!("{b}/commit/{full}{}", &full[..24]),
                Some(format!("{b}/commit/f3e1a67f98")),
            ),
            // The abbreviation itself, a shorter one, a name that is no id, capitals, an id
            // after another segment, an id too long to be one: left alone.
            (format!("{b}/commit/f3e1a67f98"), None),
            (format!("{b}/commit/f3e1a67"), None),
            (format!("{b}/commit/feature-branch-name"), None),
            (
                format!("{b}/commit/F3E1A67F984C504E29C5293461D29721D5924F03"),
                None,
            ),
            (format!("{b}/commits/{full}"), None),
            (format!("{b}/commit/{full}{full}"), None),
        ] {
            assert_eq!(rw.rewrite(&Url::parse(&input).unwrap()), want, "{input}");
        }
        let text = serde_json::to_string(&rule).unwrap();
        assert_eq!(serde_json::from_str::<SiteRule>(&text).unwrap(), rule);
        // The rule file refuses a length with nothing to cut, or no segment to follow.
        for (after, length) in [("commit", 40), ("commit", 6), ("", 10), ("a/b", 10)] {
            let action = SiteAction::AbbreviatedHash {
                after: after.into(),
                length,
            };
            let set = crate::canon::rules::HostRuleSet {
                host: "git.example".into(),
                version: 1,
                learned_at_unix_ms: 0,
                site_rules: vec![SiteRule {
                    action,
                    ..rule.clone()
                }],
                rules: Vec::new(),
                aliases: Vec::new(),
            };
            let err = set.validate().unwrap_err().to_string();
            assert!(err.contains("abbreviated hash"), "{err}");
        }
        let set = crate::canon::rules::HostRuleSet {
            host: "git.example".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: vec![rule.clone()],
            rules: Vec::new(),
            aliases: Vec::new(),
        };
        assert!(set.validate().is_ok());
    }

    /// A query value moved into the path under a script whose pairs are read as the query would
    /// be read back, and moved again: the move is not made, and rewriting ends.
    #[test]
    fn a_value_is_not_moved_under_a_script_read_as_pairs() {
        let actions = [
            SiteAction::PathPairsToQuery {
                script: "/p.php".into(),
            },
            SiteAction::QueryValueToPath {
                path: "/p.php".into(),
                name: "id".into(),
                prefix: "/p.php/id/".into(),
                namespace_separator: None,
            },
        ];
        let rw = SiteRewriter::new(actions.iter());
        for input in ["http://s.example/p.php?id=5", "http://s.example/p.php/id/5"] {
            assert_eq!(
                rw.rewrite(&Url::parse(input).unwrap())
                    .unwrap_or_else(|| input.to_owned()),
                "http://s.example/p.php?id=5",
                "{input}"
            );
        }
    }

    #[test]
    fn a_default_value_is_dropped_and_its_other_values_kept() {
        let actions = [
            SiteAction::IgnoreParamValue {
                name: "state".into(),
                value: "open".into(),
                beside: None,
            },
            SiteAction::IgnoreParamValue {
                name: "page".into(),
                value: "1".into(),
                beside: None,
            },
            SiteAction::IgnoreParamValue {
                name: "q".into(),
                value: String::new(),
                beside: None,
            },
        ];
        for (input, want) in [
            (
                "http://g.example/o/r/issues?state=open",
                "http://g.example/o/r/issues",
            ),
            (
                "http://g.example/o/r/issues?q=&state=open&page=1",
                "http://g.example/o/r/issues",
            ),
            (
                "http://g.example/o/r/issues?state=open&page=2",
                "http://g.example/o/r/issues?page=2",
            ),
            (
                "http://g.example/o/r/issues?state=closed&page=1",
                "http://g.example/o/r/issues?state=closed",
            ),
            // Another value, a longer one, another name, a bare flag, a repeated value.
            (
                "http://g.example/o/r/issues?state=opened&page=10&q=x&state",
                "http://g.example/o/r/issues?state=opened&page=10&q=x&state",
            ),
            (
                "http://g.example/o/r/issues?xstate=open",
                "http://g.example/o/r/issues?xstate=open",
            ),
            (
                "http://g.example/o/r/issues?page=1&page=1",
                "http://g.example/o/r/issues",
            ),
        ] {
            assert_rewrites(&actions, input, want);
        }
        assert_eq!(
            actions[0].to_string(),
            "ignore query:state=open on every URL"
        );
        // On a case-insensitive query the value is compared lower-cased, as the learner saw it.
        let folded = [
            SiteAction::LowercasePathAndQuery,
            SiteAction::IgnoreParamValue {
                name: "tab".into(),
                value: "overview".into(),
                beside: None,
            },
        ];
        assert_rewrites(
            &folded,
            "http://g.example/u?Tab=Overview",
            "http://g.example/u",
        );
    }

    #[test]
    fn scoped_case_folding_leaves_the_segments_after_the_scope() {
        let actions = [SiteAction::LowercaseSegments { segments: 2 }];
        for (input, want) in [
            (
                "http://g.example/Torvalds/Linux/src/branch/main/xt_DSCP.h",
                "http://g.example/torvalds/linux/src/branch/main/xt_DSCP.h",
            ),
            (
                "http://g.example/Torvalds/Linux",
                "http://g.example/torvalds/linux",
            ),
            ("http://g.example/Torvalds/", "http://g.example/torvalds/"),
            ("http://g.example/Torvalds", "http://g.example/torvalds"),
            ("http://g.example/", "http://g.example/"),
            (
                "http://g.example/A%C3%A9/B/C?X=1",
                "http://g.example/a%C3%A9/b/C?X=1",
            ),
            (
                "http://g.example/torvalds/linux/README",
                "http://g.example/torvalds/linux/README",
            ),
        ] {
            assert_rewrites(&actions, input, want);
        }
        assert_eq!(
            SiteRewriter::new(&actions).rewrite(&Url::parse("http://g.example/a/b/C").unwrap()),
            None,
            "nothing to change"
        );
        // The whole path's fold implies the scoped one.
        let both = [
            SiteAction::LowercaseSegments { segments: 1 },
            SiteAction::LowercasePath,
        ];
        assert_rewrites(&both, "http://g.example/A/B/C", "http://g.example/a/b/c");
        assert_eq!(
            actions[0].to_string(),
            "lower-case the first 2 path segments"
        );
    }

    #[test]
    fn a_path_written_as_the_query_string_is_read_as_the_path() {
        let actions = [
            SiteAction::QueryPath {
                path: "/gallery/picture.php".into(),
                written_back: false,
            },
            SiteAction::SlugInSegment {
                prefix: "/gallery/picture.php/".into(),
                separator: '-',
                id_first: true,
            },
            SiteAction::SortQuery,
        ];
        for (input, want) in [
            (
                "http://g.example/gallery/picture.php?/123/category/5",
                "http://g.example/gallery/picture.php/123/category/5",
            ),
            // Segment actions apply to the path the query wrote; parameters after it stay
            // parameters, sorted as any others.
            (
                "http://g.example/gallery/picture.php?/123-img_2041/category/5&metadata&b=1",
                "http://g.example/gallery/picture.php/123/category/5?b=1&metadata",
            ),
            // The path-info spelling of the same page is already its own reading.
            (
                "http://g.example/gallery/picture.php/123/category/5",
                "http://g.example/gallery/picture.php/123/category/5",
            ),
            // Another script, a first part that is a parameter or does not read as segments,
            // a path part that is not first: left alone.
            (
                "http://g.example/gallery/index.php?/category/5",
                "http://g.example/gallery/index.php?/category/5",
            ),
            (
                "http://g.example/gallery/picture.php?/a=1",
                "http://g.example/gallery/picture.php?/a=1",
            ),
            (
                "http://g.example/gallery/picture.php?/a//b",
                "http://g.example/gallery/picture.php?/a//b",
            ),
            (
                "http://g.example/gallery/picture.php?/a+b",
                "http://g.example/gallery/picture.php?/a+b",
            ),
            (
                "http://g.example/gallery/picture.php?/",
                "http://g.example/gallery/picture.php?/",
            ),
        ] {
            assert_rewrites(&actions, input, want);
        }
        // A path the sorted query puts first is read as well, so the result is a fixpoint.
        assert_rewrites(
            &actions,
            "http://g.example/gallery/picture.php?x=1&/123",
            "http://g.example/gallery/picture.php/123?x=1",
        );
        assert_eq!(
            query_path_part("/category/5/start-15&x=1"),
            Some(("/category/5/start-15", Some("x=1")))
        );
        assert_eq!(query_path_part("/a/"), Some(("/a/", None)));
        assert_eq!(query_path_part("/a&"), Some(("/a", None)));
        for bad in [
            "a/b",
            "/",
            "//a",
            "/a;b",
            "/a%2Fb",
            "/%2e%2e/x",
            "/a{b}",
            "/a/./b",
        ] {
            assert_eq!(query_path_part(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_query_path_rule_reads_from_the_rule_file_and_the_engine_applies_it() {
        use crate::canon::engine::HostRules;
        use crate::canon::rules::HostRuleSet;
        let text = r#"{"host":"g.example","version":1,"learned_at_unix_ms":0,"site_rules":[{"id":"g.example#s1","op":"query_path","path":"/picture.php","support":0,"support_clusters":0,"false_positive_rate":0.0}],"rules":[]}"#;
        let set: HostRuleSet = serde_json::from_str(text).unwrap();
        assert_eq!(
            set.site_rules[0].action,
            SiteAction::QueryPath {
                path: "/picture.php".into(),
                written_back: false,
            }
        );
        assert_eq!(
            serde_json::from_str::<HostRuleSet>(&serde_json::to_string(&set).unwrap()).unwrap(),
            set
        );
        let engine = HostRules::compile(&set).unwrap();
        let url = Url::parse("http://g.example/picture.php?/12/category/5&metadata").unwrap();
        assert_eq!(
            engine.apply(&url).map(|r| r.canonical).as_deref(),
            Some("http://g.example/picture.php/12/category/5?metadata")
        );
        assert!(engine
            .apply(&Url::parse("http://g.example/picture.php?id=12").unwrap())
            .is_none());
        // A directory is not a script: refused by the rule file's validation.
        let mut bad = set.clone();
        bad.site_rules[0].action = SiteAction::QueryPath {
            path: "/g/".into(),
            written_back: false,
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn a_query_path_written_back_is_the_spelling_the_site_serves() {
        use crate::canon::engine::HostRules;
        use crate::canon::rules::HostRuleSet;
        let text = r#"{"host":"g.example","version":1,"learned_at_unix_ms":0,"site_rules":[{"id":"g.example#s1","op":"query_path","path":"/picture.php","written_back":true,"support":0,"support_clusters":0,"false_positive_rate":0.0},{"id":"g.example#s2","op":"slug_in_segment","prefix":"/picture.php/","separator":"-","id_first":true,"support":0,"support_clusters":0,"false_positive_rate":0.0}],"rules":[]}"#;
        let set: HostRuleSet = serde_json::from_str(text).unwrap();
        assert_eq!(
            set.site_rules[0].action,
            SiteAction::QueryPath {
                path: "/picture.php".into(),
                written_back: true,
            }
        );
        assert_eq!(
            serde_json::from_str::<HostRuleSet>(&serde_json::to_string(&set).unwrap()).unwrap(),
            set
        );
        let engine = HostRules::compile(&set).unwrap();
        let apply = |u: &str| engine.apply(&Url::parse(u).unwrap()).map(|r| r.canonical);
        // Both spellings, with and without the photo's name, become the query spelling the
        // rules see as segments, and that spelling is a fixpoint.
        let want = "http://g.example/picture.php?/12/category/5&metadata";
        for input in [
            "http://g.example/picture.php?/12-img_7/category/5&metadata",
            "http://g.example/picture.php/12-img_7/category/5?metadata",
            "http://g.example/picture.php/12/category/5?metadata",
        ] {
            assert_eq!(apply(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(apply(want), None);
        assert_eq!(engine.fixpoint_violation(&Url::parse(want).unwrap()), None);
        // A path the query spelling would not read back as (a `&` inside it) stays path-info,
        // and URLs outside the script are left alone.
        assert_eq!(apply("http://g.example/picture.php/12&x/category/5"), None);
        assert_eq!(apply("http://g.example/other.php/12"), None);
        assert_eq!(apply("http://g.example/picture.php"), None);
    }

    #[test]
    fn an_alias_shown_only_on_folders_leaves_the_pages_the_values_name() {
        let alias = SiteAction::SegmentAlias {
            segment: 1,
            canonical: "b".into(),
            aliases: vec!["a".into()],
            folders_only: true,
        };
        for (input, want) in [
            (
                "http://s.example/collections/a/products/p",
                "http://s.example/collections/b/products/p",
            ),
            (
                "http://s.example/collections/a",
                "http://s.example/collections/a",
            ),
            (
                "http://s.example/collections/a/",
                "http://s.example/collections/a/",
            ),
            (
                "http://s.example/collections/a?page=2",
                "http://s.example/collections/a?page=2",
            ),
        ] {
            assert_rewrites(std::slice::from_ref(&alias), input, want);
        }
        // Stored only when set: files written before the field read as aliases everywhere.
        let json = serde_json::to_string(&alias).unwrap();
        assert!(json.contains(r#""folders_only":true"#), "{json}");
        let plain = r#"{"op":"segment_alias","segment":1,"canonical":"b","aliases":["a"]}"#;
        let read: SiteAction = serde_json::from_str(plain).unwrap();
        assert!(matches!(
            read,
            SiteAction::SegmentAlias {
                folders_only: false,
                ..
            }
        ));
        assert_eq!(serde_json::to_string(&read).unwrap(), plain);
        assert_rewrites(
            &[read],
            "http://s.example/collections/a",
            "http://s.example/collections/b",
        );
    }

    #[test]
    fn a_namespaced_query_value_moves_into_the_path_as_segments() {
        // DokuWiki set to write slashes: `doku.php?id=ns:sub:page` is `/ns/sub/page`.
        let actions = [SiteAction::QueryValueToPath {
            path: "/doku.php".into(),
            name: "id".into(),
            prefix: "/".into(),
            namespace_separator: Some(':'),
        }];
        for (input, want) in [
            (
                "http://w.example/doku.php?id=ns:sub:page",
                "http://w.example/ns/sub/page",
            ),
            (
                "http://w.example/doku.php?id=start",
                "http://w.example/start",
            ),
            (
                "http://w.example/doku.php?id=ns:page&do=edit",
                "http://w.example/ns/page?do=edit",
            ),
            // An empty namespace would be an empty segment: left alone.
            (
                "http://w.example/doku.php?id=:ns:page",
                "http://w.example/doku.php?id=:ns:page",
            ),
            (
                "http://w.example/doku.php?id=ns::page",
                "http://w.example/doku.php?id=ns::page",
            ),
        ] {
            assert_rewrites(&actions, input, want);
        }
        // Stored only when set, so files written before the field read as before.
        let json = serde_json::to_string(&actions[0]).unwrap();
        assert!(json.contains(r#""namespace_separator":":""#), "{json}");
        let plain = r#"{"op":"query_value_to_path","path":"/doku.php","name":"id","prefix":"/"}"#;
        let read: SiteAction = serde_json::from_str(plain).unwrap();
        assert_eq!(
            read,
            SiteAction::QueryValueToPath {
                path: "/doku.php".into(),
                name: "id".into(),
                prefix: "/".into(),
                namespace_separator: None,
            }
        );
        assert_eq!(serde_json::to_string(&read).unwrap(), plain);
    }

    #[test]
    fn site_rules_round_trip_as_json() {
        let rule = SiteRule {
            id: "a.example#s1".into(),
            action: SiteAction::IgnoreParam {
                name: "sid".into(),
                beside: None,
            },
            support: 12,
            support_clusters: 5,
            false_positive_rate: 0.0,
            pooled: None,
        };
        let text = serde_json::to_string(&rule).unwrap();
        assert!(text.contains("\"op\":\"ignore_param\""), "{text}");
        assert_eq!(serde_json::from_str::<SiteRule>(&text).unwrap(), rule);
        let lower: SiteRule = serde_json::from_str(
            r#"{"id":"x#s2","op":"lowercase_path","support":3,"support_clusters":3,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        assert_eq!(lower.action, SiteAction::LowercasePath);
        for action in [
            SiteAction::IgnoreParamValue {
                name: "state".into(),
                value: "open".into(),
                beside: None,
            },
            SiteAction::LowercaseSegments { segments: 2 },
        ] {
            let rule = SiteRule {
                id: "a.example#s3".into(),
                action,
                support: 4,
                support_clusters: 3,
                false_positive_rate: 0.0,
                pooled: None,
            };
            let text = serde_json::to_string(&rule).unwrap();
            assert_eq!(
                serde_json::from_str::<SiteRule>(&text).unwrap(),
                rule,
                "{text}"
            );
        }
        let value: SiteRule = serde_json::from_str(
            r#"{"id":"x#s4","op":"ignore_param_value","name":"page","value":"1","support":3,"support_clusters":3,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        assert_eq!(
            value.action,
            SiteAction::IgnoreParamValue {
                name: "page".into(),
                value: "1".into(),
                beside: None,
            }
        );
        let scoped: SiteRule = serde_json::from_str(
            r#"{"id":"x#s5","op":"lowercase_segments","segments":2,"support":3,"support_clusters":3,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        assert_eq!(scoped.action, SiteAction::LowercaseSegments { segments: 2 });
    }
}
