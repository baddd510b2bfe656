//! The IP address based algorithms *IP4* and *IP3* (section 3.1 of the paper).
//!
//! Hosts resolving to one address are often aliases of one server, and hosts on one /24 are
//! often an organization's replicas; but many hosts on one address is virtual hosting, so
//! clusters are listed smallest first, and a cluster lists at most a few pairs (200 for *IP4*,
//! 5 for *IP3*), chosen by a seeded hash when it induces more (the paper picks at random).
//! IPv6 addresses use the whole address for *IP4* and the /64 for *IP3* (the paper predates
//! them; a /64 is one network as a /24 was).

use std::net::IpAddr;

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::summary::HostSummary;
use super::Candidate;

/// Which part of the address clusters hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpGranularity {
    /// The whole address (*IP4*).
    Full,
    /// The first three octets, or the /64 of an IPv6 address (*IP3*).
    Subnet,
}

fn key(ip: IpAddr, granularity: IpGranularity) -> u128 {
    match (ip, granularity) {
        (IpAddr::V4(v4), IpGranularity::Full) => u128::from(u32::from(v4)),
        (IpAddr::V4(v4), IpGranularity::Subnet) => u128::from(u32::from(v4) >> 8),
        (IpAddr::V6(v6), IpGranularity::Full) => (1 << 127) | (u128::from(v6) >> 1),
        (IpAddr::V6(v6), IpGranularity::Subnet) => (1 << 127) | (u128::from(v6) >> 64),
    }
}

/// Ranks host pairs sharing an address (or subnet): clusters in increasing size, at most
/// `pairs_per_cluster` pairs from each; the score is `1 / cluster size`.
pub fn rank(
    hosts: &[HostSummary],
    granularity: IpGranularity,
    pairs_per_cluster: usize,
    seed: u64,
) -> Vec<Candidate> {
    let mut clusters: FxHashMap<u128, Vec<u32>> = FxHashMap::default();
    for (i, h) in hosts.iter().enumerate() {
        if let Some(ip) = h.ip {
            clusters
                .entry(key(ip, granularity))
                .or_default()
                .push(i as u32);
        }
    }
    let mut clusters: Vec<(u128, Vec<u32>)> = clusters
        .into_iter()
        .filter(|(_, members)| members.len() > 1)
        .collect();
    clusters.sort_by_key(|(k, members)| (members.len(), *k));
    let mut out = Vec::new();
    for (k, members) in clusters {
        let n = members.len();
        let score = 1.0 / n as f64;
        let total = n * (n - 1) / 2;
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(total.min(pairs_per_cluster));
        if total <= pairs_per_cluster {
            for (x, &a) in members.iter().enumerate() {
                for &b in &members[x + 1..] {
                    pairs.push((a, b));
                }
            }
        } else {
            // A seeded choice of pairs without enumerating all of them: each member pairs with
            // the members following it in a hashed order, round by round.
            let mut order = members.clone();
            let seed = seed ^ (k as u64);
            order.sort_by_key(|&h| xxh3_64_with_seed(&h.to_le_bytes(), seed));
            'rounds: for step in 1..n {
                for x in 0..n {
                    let y = (x + step) % n;
                    if step * 2 == n && x >= y {
                        continue;
                    }
                    pairs.push((order[x], order[y]));
                    if pairs.len() == pairs_per_cluster {
                        break 'rounds;
                    }
                }
            }
        }
        out.extend(pairs.into_iter().map(|(a, b)| Candidate {
            a: a.min(b),
            b: a.max(b),
            score,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, ip: &str) -> HostSummary {
        let mut h = HostSummary::new(&format!("http://{name}"), name);
        h.ip = Some(ip.parse().unwrap());
        h
    }

    #[test]
    fn small_clusters_rank_before_virtual_hosting() {
        let mut hosts = vec![host("a.org", "10.0.0.1"), host("www.a.org", "10.0.0.1")];
        for i in 0..30 {
            hosts.push(host(&format!("s{i}.net"), "10.0.1.9"));
        }
        let out = rank(&hosts, IpGranularity::Full, 200, 1);
        assert_eq!((out[0].a, out[0].b), (0, 1));
        assert_eq!(out.len(), 1 + 200);
        let ip3 = rank(&hosts, IpGranularity::Subnet, 5, 1);
        // 10.0.0.0/24 holds the pair, 10.0.1.0/24 the 30 virtual hosts (5 pairs listed).
        assert_eq!(ip3.len(), 1 + 5);
    }
}
