//! Query parameters written as `key/value` pairs after a script, read as the query again
//! ([`super::SiteAction::PathPairsToQuery`]).
//!
//! A family of PHP software turns the query into path segments when "search-engine safe" URLs
//! are on: osCommerce 2.x's `tep_href_link` writes `product_info.php?cPath=3_10&products_id=5` as
//! `product_info.php/cPath/3_10/products_id/5`, and its `application_top.php` (Zen Cart's
//! `init_sefu.php`, Loaded Commerce's `seo` service alike) splits `PATH_INFO` on `/` and sets
//! each even segment as a `$_GET` key with the next segment as its value. Zend Framework 1's
//! default route reads the segments after an action the same way. Both spellings reach the same
//! page; the query is what the script reads, so the query is the form written, and the
//! parameter rules (a breadcrumb parameter dropped, a default spelled out) then apply to both.
//!
//! A path is read only when what follows the script is whole pairs: an even number of segments,
//! every key a parameter name ([`is_pair_key`]) and every value readable unchanged in a query
//! ([`query_safe_segment_value`]), no key twice and none the URL's own query names (PHP would let
//! the path's value win; leaving such a URL alone keeps the reading exact).

use super::segments::query_safe_segment_value;

/// Longest key read as a parameter name: real software's keys are short (`products_id`,
/// `manufacturers_id`); a long segment is a title, not a key.
const MAX_KEY_LEN: usize = 40;

/// Most pairs read from one path: real software writes a handful; a longer run is not read, which
/// also keeps the check for a repeated key short on a hostile path.
const MAX_PAIRS: usize = 32;

/// Whether `segment` reads as a parameter name: ASCII letters, digits and `_`, not starting
/// with a digit (a number is a value, `page/2`), at most [`MAX_KEY_LEN`] bytes.
pub fn is_pair_key(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_KEY_LEN
        && !bytes[0].is_ascii_digit()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The pairs `rest` (what follows a script's path and its `/`) writes, as `key=value` parts,
/// or `None` when it is not whole pairs. One trailing `/` is read as none.
pub fn pairs_of(rest: &str) -> Option<Vec<(&str, &str)>> {
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let mut segments = rest.split('/');
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    while let Some(key) = segments.next() {
        let value = segments.next()?;
        if pairs.len() == MAX_PAIRS
            || !is_pair_key(key)
            || !query_safe_segment_value(value)
            || pairs.iter().any(|&(k, _)| k == key)
        {
            return None;
        }
        pairs.push((key, value));
    }
    (!pairs.is_empty()).then_some(pairs)
}

/// The path and query when one of `scripts` is followed by whole pairs in `path`: the script,
/// and the pairs as parameters before the URL's own query. `None` when no script applies, the
/// pairs are not whole, or the query names one of their keys. With `fold_path` the script is
/// compared without case (a case-insensitive host), with `fold_query` the keys.
pub fn read(
    scripts: &[String],
    path: &str,
    query: Option<&str>,
    fold_path: bool,
    fold_query: bool,
) -> Option<(String, Option<String>)> {
    let script = script_under(scripts, path, fold_path)?;
    let pairs = pairs_of(&path[script.len() + 1..])?;
    let own = query.filter(|q| !q.is_empty());
    if let Some(own) = own {
        let named = |part: &str| {
            let name = part.split_once('=').map_or(part, |(n, _)| n);
            pairs.iter().any(|&(key, _)| {
                if fold_query {
                    key.eq_ignore_ascii_case(name)
                } else {
                    key == name
                }
            })
        };
        if own.split('&').any(named) {
            return None;
        }
    }
    let mut written = String::with_capacity(path.len() - script.len() + own.map_or(0, str::len));
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            written.push('&');
        }
        written.push_str(key);
        written.push('=');
        written.push_str(value);
    }
    if let Some(own) = own {
        written.push('&');
        written.push_str(own);
    }
    Some((path[..script.len()].to_owned(), Some(written)))
}

/// Whether `path` lies under one of `scripts` (the script, then `/`): a query value moved into
/// such a path would be read back as pairs, so that move is not made.
pub fn under_a_script(scripts: &[String], path: &str, fold_path: bool) -> bool {
    script_under(scripts, path, fold_path).is_some()
}

/// The first of `scripts` that `path` lies under: the script, then `/`.
fn script_under<'s>(scripts: &'s [String], path: &str, fold_path: bool) -> Option<&'s String> {
    scripts.iter().find(|script| {
        path.len() > script.len()
            && path.as_bytes()[script.len()] == b'/'
            && if fold_path {
                path[..script.len()].eq_ignore_ascii_case(script)
            } else {
                path.starts_with(script.as_str())
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts() -> Vec<String> {
        vec!["/catalog/product_info.php".to_owned()]
    }

    #[test]
    fn whole_pairs_after_the_script_become_the_query() {
        assert_eq!(
            read(
                &scripts(),
                "/catalog/product_info.php/cPath/3_10/products_id/5",
                None,
                false,
                false
            ),
            Some((
                "/catalog/product_info.php".to_owned(),
                Some("cPath=3_10&products_id=5".to_owned())
            ))
        );
        // The URL's own query follows, and one trailing slash is none.
        assert_eq!(
            read(
                &scripts(),
                "/catalog/product_info.php/products_id/5/",
                Some("osCsid=abc"),
                false,
                false
            ),
            Some((
                "/catalog/product_info.php".to_owned(),
                Some("products_id=5&osCsid=abc".to_owned())
            ))
        );
    }

    #[test]
    fn anything_but_whole_pairs_is_left_alone() {
        for path in [
            // The script itself, an odd segment, an empty value, a numeric key, a key twice.
            "/catalog/product_info.php",
            "/catalog/product_info.php/products_id",
            "/catalog/product_info.php/products_id/5/extra",
            "/catalog/product_info.php/products_id//x/1",
            "/catalog/product_info.php/5/products_id",
            "/catalog/product_info.php/a/1/a/2",
            // A value that means something else in a query.
            "/catalog/product_info.php/q/a+b",
            "/catalog/product_info.php/q/a=b",
            // Another script whose name starts the same.
            "/catalog/product_info.php5/products_id/5",
        ] {
            assert_eq!(read(&scripts(), path, None, false, false), None, "{path}");
        }
        // More pairs than any software writes; as many as it may, read.
        let pairs = |n: usize| (0..n).map(|i| format!("/k{i}/v")).collect::<String>();
        let long = format!("/catalog/product_info.php{}", pairs(MAX_PAIRS + 1));
        assert_eq!(read(&scripts(), &long, None, false, false), None);
        let most = format!("/catalog/product_info.php{}", pairs(MAX_PAIRS));
        assert!(read(&scripts(), &most, None, false, false).is_some());
        // The query names a key the path writes too.
        assert_eq!(
            read(
                &scripts(),
                "/catalog/product_info.php/products_id/5",
                Some("products_id=6"),
                false,
                false
            ),
            None
        );
    }

    #[test]
    fn a_case_insensitive_host_compares_the_script_and_the_keys_without_case() {
        assert_eq!(
            read(
                &scripts(),
                "/Catalog/Product_Info.php/products_id/5",
                Some("PRODUCTS_ID=6"),
                true,
                false
            ),
            Some((
                "/Catalog/Product_Info.php".to_owned(),
                Some("products_id=5&PRODUCTS_ID=6".to_owned())
            ))
        );
        assert_eq!(
            read(
                &scripts(),
                "/catalog/product_info.php/products_id/5",
                Some("PRODUCTS_ID=6"),
                false,
                true
            ),
            None
        );
    }
}
