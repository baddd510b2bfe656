//! Host name matching, algorithm *hosts* (section 3.2.1 of the paper).
//!
//! Terms are the substrings of the host name delimited by dots or its ends (`www.x.co.uk` gives
//! `www`, `x`, `co`, `uk`, `www.x`, `x.co`, …, `www.x.co.uk`); an IP literal gives its first two,
//! three and four octets. A term's weight is `log(len) / (1 + log(df))`, `len` its number of
//! segments: single labels weigh nothing, long specific substrings most.

use xxhash_rust::xxh3::xxh3_64;

use super::summary::HostSummary;
use super::terms::{self, TermList, TermParams};
use super::Candidate;

/// The terms of one host name, each with its segment count.
pub fn host_terms(host: &str) -> TermList {
    let labels: Vec<&str> = if host.parse::<std::net::Ipv4Addr>().is_ok() {
        let octets: Vec<&str> = host.split('.').collect();
        return (2..=4)
            .map(|n| {
                let term = octets[..n].join(".");
                (xxh3_64(term.as_bytes()), n as f64)
            })
            .collect();
    } else {
        host.split('.').filter(|l| !l.is_empty()).collect()
    };
    let mut out = Vec::new();
    for start in 0..labels.len() {
        for end in start + 1..=labels.len() {
            let term = labels[start..end].join(".");
            out.push((xxh3_64(term.as_bytes()), (end - start) as f64));
        }
    }
    out
}

/// Ranks host pairs by host name similarity.
pub fn rank(hosts: &[HostSummary], params: &TermParams) -> Vec<Candidate> {
    let lists: Vec<TermList> = hosts.iter().map(|h| host_terms(&h.host)).collect();
    terms::rank(
        &lists,
        params,
        |df, len| len.ln() / (1.0 + (df.max(1) as f64).ln()),
        terms::cosine,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn www_and_bare_host_share_their_registrable_name() {
        let hosts: Vec<HostSummary> = ["www.oelejr.dk", "oelejr.dk", "www.kb.dk", "base.kb.dk"]
            .iter()
            .map(|h| HostSummary::new(&format!("http://{h}"), h))
            .collect();
        let out = rank(&hosts, &TermParams::default());
        let pairs: Vec<(u32, u32)> = out.iter().map(|c| (c.a, c.b)).collect();
        assert!(pairs.contains(&(0, 1)));
        assert!(pairs.contains(&(2, 3)));
        assert!(
            !pairs.contains(&(0, 2)),
            "sharing only `www` and `dk` weighs nothing"
        );
    }
}
