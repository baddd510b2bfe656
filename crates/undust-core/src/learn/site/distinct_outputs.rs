//! The small duplicate clusters with each output under the accepted actions kept once.
//!
//! Once a round's accepted actions have dropped a session id or a tracking parameter, most
//! members of a cluster read the same (`item.php?id=5` and `item.php?id=5&sid=…` are both
//! `item.php?id=5`), and the candidate searches that pair a cluster's members would pair the same
//! two outputs many times over. A search whose proposals are sets of distinct values, and in
//! which two samples with the same output propose nothing together, finds exactly the same
//! candidates from the clusters with each output kept once: a dropped sample proposes only what
//! its earlier twin proposes, earlier in the same loop order, so even the order in which the
//! proposals are first met (and hence the order of their hash maps) is unchanged.

use super::{Round, SmallClusters};

/// `clusters` with every member whose output (path, query and hash) equals an earlier member's
/// left out, the clusters themselves and the map's layout unchanged (a clone, so it is iterated
/// in the same order); `None` when no cluster holds a repeated output, and the caller then uses
/// `clusters` as it is.
pub(super) fn distinct_outputs(
    clusters: &SmallClusters,
    round: &Round<'_>,
) -> Option<SmallClusters> {
    let same = |a: u32, b: u32| {
        round.hashes[a as usize] == round.hashes[b as usize]
            && round.outputs[a as usize] == round.outputs[b as usize]
    };
    let repeats = clusters.values().any(|members| {
        (1..members.len()).any(|k| members[..k].iter().any(|&b| same(members[k], b)))
    });
    if !repeats {
        return None;
    }
    let mut distinct = clusters.clone();
    for members in distinct.values_mut() {
        // A member equal to an earlier one is equal to an earlier kept one (the first of its
        // twins is kept), so comparing with the kept prefix is enough.
        let mut kept = 0;
        for k in 0..members.len() {
            let a = members[k];
            if !members[..kept].iter().any(|&b| same(a, b)) {
                members[kept] = a;
                kept += 1;
            }
        }
        members.truncate(kept);
    }
    Some(distinct)
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::super::{
        extensions_shown, ids_in_slugs, small_clusters, start_round, titled_ids, Parsed,
    };
    use super::*;
    use crate::canon::rules::{SiteAction, SiteRewriter};
    use crate::learn::segments::{default_value_suffixes, default_view_tails, templated_segments};

    fn parsed(urls: &[(&str, u64)]) -> Vec<Parsed> {
        urls.iter()
            .enumerate()
            .map(|(index, &(url, cluster))| Parsed {
                url: Url::parse(url).unwrap(),
                cluster,
                index,
            })
            .collect()
    }

    fn sid_dropped() -> SiteRewriter {
        SiteRewriter::new(&[SiteAction::IgnoreParam {
            name: "sid".into(),
            beside: None,
        }])
    }

    #[test]
    fn the_first_of_each_output_is_kept_in_every_cluster() {
        let p = parsed(&[
            ("http://h.example/item.php?id=5", 1),
            ("http://h.example/item.php?id=5&sid=a1", 1),
            ("http://h.example/product/5", 1),
            ("http://h.example/item.php?id=5&sid=b2", 1),
            ("http://h.example/item.php?id=6&sid=a1", 2),
            ("http://h.example/item.php?id=6", 2),
            ("https://h.example/item.php?id=6", 2),
            ("http://h.example/a", 3),
            ("http://h.example/b", 3),
        ]);
        let clusters = small_clusters(&p);
        let round = start_round(&p, &sid_dropped());
        let distinct = distinct_outputs(&clusters, &round).expect("outputs repeat");
        assert_eq!(distinct[&1], vec![0, 2]);
        // Another scheme is another output.
        assert_eq!(distinct[&2], vec![4, 6]);
        assert_eq!(distinct[&3], vec![7, 8]);
        // Same clusters, visited in the same order.
        let keys: Vec<u64> = clusters.keys().copied().collect();
        let distinct_keys: Vec<u64> = distinct.keys().copied().collect();
        assert_eq!(keys, distinct_keys);
        // Nothing repeats without the dropped parameter.
        let round = start_round(&p, &SiteRewriter::default());
        assert!(distinct_outputs(&clusters, &round).is_none());
    }

    /// A host where every pair search has something to find, each page also written with a
    /// session id that the accepted actions drop (so its clusters repeat outputs).
    fn every_shape() -> Vec<Parsed> {
        let mut urls: Vec<(String, u64)> = Vec::new();
        for n in 1..30u64 {
            let c = n * 100;
            let forms = [
                format!("http://h.example/forum/index.php?topic={n}"),
                format!("http://h.example/forum/index.php?topic={n}.0"),
                format!("http://h.example/forum/index.php/topic,{n}.0.html"),
            ];
            for (k, form) in forms.iter().enumerate() {
                urls.push((form.clone(), c));
                let glue = if k == 2 { '?' } else { '&' };
                urls.push((format!("{form}{glue}sid=s{n}x{k}"), c));
            }
            urls.push((format!("http://h.example/c/area-{n}/{n}"), c + 1));
            urls.push((format!("http://h.example/c/area-{n}/{n}/l/latest"), c + 1));
            urls.push((format!("http://h.example/c/area-{n}/{n}?sid=q{n}"), c + 1));
            urls.push((format!("http://h.example/threads/a-title.{n}/"), c + 2));
            urls.push((format!("http://h.example/threads/{n}"), c + 2));
            urls.push((format!("http://h.example/threads/{n}?sid=t{n}"), c + 2));
            urls.push((format!("http://h.example/p/{n}"), c + 3));
            urls.push((format!("http://h.example/story/some-title-{n}.html"), c + 3));
            urls.push((format!("http://h.example/p/{n}?sid=p{n}"), c + 3));
            urls.push((format!("http://h.example/docs/page{n}.html"), c + 4));
            urls.push((format!("http://h.example/docs/page{n}"), c + 4));
            urls.push((format!("http://h.example/docs/page{n}?sid=d{n}"), c + 4));
        }
        let borrowed: Vec<(&str, u64)> = urls.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        parsed(&borrowed)
    }

    #[test]
    fn pair_searches_find_the_same_candidates_in_the_same_order() {
        let p = every_shape();
        let clusters = small_clusters(&p);
        let round = start_round(&p, &sid_dropped());
        let distinct = distinct_outputs(&clusters, &round).expect("outputs repeat");
        assert!(distinct.values().map(Vec::len).sum::<usize>() < p.len());
        let outputs = &round.outputs[..];
        type Search =
            fn(&[super::super::Output<'_>], &SmallClusters) -> Vec<(SiteAction, Vec<u32>)>;
        let searches: [(&str, Search); 5] = [
            ("ids_in_slugs", ids_in_slugs),
            ("titled_ids", titled_ids),
            ("extensions_shown", extensions_shown),
            ("templated_segments", templated_segments),
            ("default_value_suffixes", default_value_suffixes),
        ];
        for (name, search) in searches {
            let all = search(outputs, &clusters);
            assert!(!all.is_empty(), "{name} finds something here");
            assert_eq!(all, search(outputs, &distinct), "{name}");
        }
        // The default view tails look for their strays in every member, whatever they propose
        // from.
        let paths: Vec<&str> = p.iter().map(|x| x.url.path()).collect();
        let all = default_view_tails(outputs, &clusters, &clusters, &paths);
        assert!(!all.is_empty(), "default_view_tails finds something here");
        assert_eq!(
            all,
            default_view_tails(outputs, &distinct, &clusters, &paths),
            "default_view_tails"
        );
    }
}
