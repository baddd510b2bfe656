//! A sample's stored bytes written directly: postcard's encoding of a [`Sample`] (what the store
//! and the fleet read back with postcard), produced without going through serde.
//!
//! Postcard writes a digest one serde call per simhash lane (a page holds a 64-lane vector per
//! pagelet and per text block, thousands of lanes), and those calls were most of the sample
//! encoding (5% of the sidecar's CPU per ingested page at stop 24). Here each vector is written
//! into a stack buffer and appended at once. The format is postcard's and nothing else: unsigned
//! integers as LEB128 varints, `i16` zigzag-encoded then as a varint, a sequence or a string as
//! its length then its items, an `Option` as a 0 or 1 byte then the value, struct fields in
//! order. Every struct is taken apart exhaustively, so a field added to one of them is a compile
//! error here, not a record that silently differs; and the tests compare these bytes with
//! postcard's own.

use crate::content::pagelet::{BlockDigest, PageDigest, PageletDigest};
use crate::pipeline::EvidencePage;

use super::samples::Sample;

/// Bytes of one vector lane at most: an `i16`, zigzag-encoded, takes up to 3 varint bytes.
const MAX_LANE_BYTES: usize = 3;
/// Lanes written through one stack buffer at a time.
const LANES_PER_CHUNK: usize = 64;

/// Appends postcard's encoding of `sample` to `out`.
pub(super) fn append_sample(out: &mut Vec<u8>, sample: &Sample) {
    let Sample { id, page } = sample;
    varint(out, *id);
    let EvidencePage {
        url,
        final_url,
        rel_canonical,
        digest,
        // Not encoded: see `EvidencePage::shortlink` (postcard skips it too).
        shortlink: _,
    } = &**page;
    string(out, url);
    optional_string(out, final_url.as_deref());
    optional_string(out, rel_canonical.as_deref());
    append_digest(out, digest);
}

fn append_digest(out: &mut Vec<u8>, digest: &PageDigest) {
    let PageDigest {
        pagelets,
        page_exact,
        page_tokens,
    } = digest;
    length(out, pagelets.len());
    for pagelet in pagelets {
        let PageletDigest {
            identity,
            tokens,
            link_tokens,
            exact,
            vector,
            blocks,
        } = pagelet;
        varint(out, *identity);
        varint(out, u64::from(*tokens));
        varint(out, u64::from(*link_tokens));
        varint(out, *exact);
        lanes(out, vector);
        length(out, blocks.len());
        for block in blocks {
            let BlockDigest {
                identity,
                tokens,
                link_tokens,
                vector,
            } = block;
            varint(out, *identity);
            varint(out, u64::from(*tokens));
            varint(out, u64::from(*link_tokens));
            lanes(out, vector);
        }
    }
    varint(out, *page_exact);
    varint(out, u64::from(*page_tokens));
}

/// An unsigned integer as postcard writes every one (`u16` to `u64`, `usize`): LEB128.
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A sequence's or a string's length.
fn length(out: &mut Vec<u8>, len: usize) {
    varint(out, len as u64);
}

fn string(out: &mut Vec<u8>, text: &str) {
    length(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

fn optional_string(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        None => out.push(0),
        Some(text) => {
            out.push(1);
            string(out, text);
        }
    }
}

/// A vector of `i16` lanes: its length, then each lane zigzag-encoded as a varint, written
/// through a stack buffer.
fn lanes(out: &mut Vec<u8>, vector: &[i16]) {
    length(out, vector.len());
    let mut buffer = [0u8; LANES_PER_CHUNK * MAX_LANE_BYTES];
    for chunk in vector.chunks(LANES_PER_CHUNK) {
        // Most chunks hold only lanes of one byte (a lane is a sum of ±1 per feature: a
        // pagelet's or a block's tens to hundreds of features keep it within ±63), which are
        // written in one pass without a varint loop per lane.
        if chunk.iter().all(|&lane| (-64..64).contains(&lane)) {
            out.extend(chunk.iter().map(|&lane| ((lane << 1) ^ (lane >> 15)) as u8));
            continue;
        }
        let mut at = 0;
        for &lane in chunk {
            let mut zigzag = ((lane << 1) ^ (lane >> 15)) as u16;
            while zigzag >= 0x80 {
                buffer[at] = (zigzag as u8) | 0x80;
                at += 1;
                zigzag >>= 7;
            }
            buffer[at] = zigzag as u8;
            at += 1;
        }
        out.extend_from_slice(&buffer[..at]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{self, ContentConfig};

    fn encoded(sample: &Sample) -> Vec<u8> {
        let mut out = Vec::new();
        append_sample(&mut out, sample);
        out
    }

    /// Every lane value an `i16` can hold (each varint length and sign, the extremes), integers
    /// at each varint length's edges, empty and present optional strings, empty and long
    /// vectors: the bytes are postcard's.
    #[test]
    fn samples_are_written_as_postcard_writes_them() {
        let edges: Vec<u64> = (0..64)
            .flat_map(|bit| {
                let at = 1u64 << bit;
                [at - 1, at, at + 1]
            })
            .chain([u64::MAX])
            .collect();
        let small = |i: usize| edges[i % edges.len()];
        let all_lanes: Vec<i16> = (i16::MIN..=i16::MAX).collect();
        let block = |i: usize, vector: Vec<i16>| BlockDigest {
            identity: small(i),
            tokens: small(i + 1) as u32,
            link_tokens: small(i + 2) as u32,
            vector,
        };
        let pagelets = vec![
            PageletDigest {
                identity: u64::MAX,
                tokens: u32::MAX,
                link_tokens: 0,
                exact: 1 << 63,
                vector: all_lanes.clone(),
                blocks: vec![block(3, all_lanes[..1000].to_vec()), block(7, Vec::new())],
            },
            PageletDigest {
                identity: 0,
                tokens: 127,
                link_tokens: 128,
                exact: 16_383,
                vector: Vec::new(),
                blocks: Vec::new(),
            },
        ];
        for (i, &id) in edges.iter().enumerate() {
            let sample = Sample {
                id,
                page: std::sync::Arc::new(EvidencePage {
                    url: "x".repeat(i * 5),
                    final_url: (i % 2 == 0).then(|| format!("http://a.org/{i}")),
                    rel_canonical: (i % 3 == 0).then(String::new),
                    digest: PageDigest {
                        pagelets: if i % 4 == 0 {
                            pagelets.clone()
                        } else {
                            Vec::new()
                        },
                        page_exact: small(i + 5),
                        page_tokens: small(i + 9) as u32,
                    },
                    // Never encoded, by either writer.
                    shortlink: (i % 2 == 1).then(|| format!("http://a.org/node/{i}")),
                }),
            };
            assert_eq!(
                encoded(&sample),
                postcard::to_allocvec(&sample).unwrap(),
                "sample {i}"
            );
        }
    }

    /// A real page's digest (pagelets with blocks) is written as postcard writes it.
    #[test]
    fn an_analysed_page_is_written_as_postcard_writes_it() {
        let html = format!(
            "<html><body><nav>{}</nav><article>{}</article><footer>Rendered 2024</footer></body>\
             </html>",
            (0..12)
                .map(|k| format!("<a href=\"/s/{k}\">Section {k}</a>"))
                .collect::<String>(),
            (0..30)
                .map(|k| format!(
                    "<p>Paragraph {k} with words w{k} and x{k}, {}</p>",
                    "y ".repeat(k)
                ))
                .collect::<String>()
        );
        let digest = content::analyze(html.as_bytes(), &ContentConfig::default()).digest;
        assert!(digest.pagelets.iter().any(|p| !p.blocks.is_empty()));
        let sample = Sample {
            id: 123_456,
            page: std::sync::Arc::new(EvidencePage {
                url: "http://a.org/story/1".into(),
                final_url: None,
                rel_canonical: Some("http://a.org/story/1?canonical".into()),
                digest,
                shortlink: None,
            }),
        };
        assert_eq!(encoded(&sample), postcard::to_allocvec(&sample).unwrap());
    }
}
