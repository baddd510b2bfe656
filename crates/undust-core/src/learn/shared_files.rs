//! Site-rule candidate for static files a site keeps a copy of in each folder
//! ([`SiteAction::SharedFiles`]).
//!
//! A static site built with relative links (`<img src="logo.gif">` in every page) needs its
//! template images, stylesheets and scripts in every folder, and its authors copy them there:
//! a real 2006 crawl of `www.pligtaflevering.dk` holds one `logo.gif`, one `faq.gif` and one
//! stylesheet under ten paths each (`/logo.gif`, `/faq/logo.gif`, `/film/logo.gif`, ...). No
//! rule over the folders holds (the folders' pages differ), but the file's name does: every copy
//! of the name is one file, and a crawler that meets the name in a new folder has it already.
//!
//! Proposed on what every other action leaves: a name of a static file
//! ([`names_a_static_file`]: an image, not a page) in a folder and its subfolders whose samples
//! there all lie in one duplicate cluster, under at least [`MIN_MOVED_ID_VALUES`] directories
//! (a scheme of the site, not two copies by chance). Only the folder and its subfolders one
//! level down: that is how a site copies its template files, while one name deeper in the tree
//! is a file seen through another view or revision (a code browser's `/src/branch/main/x.md`
//! and `/raw/branch/main/x.md` are a page and a file). A name with samples in two clusters
//! there is a file of that name per folder (a translated button under `/dutch/`), never
//! proposed. The copy is the shallowest path, the smallest of those. The table is then
//! measured by `learn::site` like every action, and one merge of different pages refuses it.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use super::site::MIN_MOVED_ID_VALUES;
use crate::canon::rules::files::names_a_static_file;
use crate::canon::rules::site::{SharedFile, MAX_SHARED_FILES};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// What the samples show of one name in one folder and its subfolders.
struct Shown<'a> {
    cluster: u64,
    /// Samples of another cluster carry the name there too.
    in_two_clusters: bool,
    directories: FxHashSet<&'a str>,
    /// The shallowest path, the smallest of those.
    copy: &'a str,
    samples: Vec<u32>,
}

/// The table of shared files the samples show, with the samples it may change, or `None`.
/// `cluster_of` gives a sample's duplicate cluster.
pub(super) fn shared_files(
    outputs: &[Output<'_>],
    cluster_of: impl Fn(usize) -> u64,
) -> Option<(SiteAction, Vec<u32>)> {
    // (folder, name) -> what the folder and its subfolders show of the name.
    let mut shown: FxHashMap<(&str, &str), Shown<'_>> = FxHashMap::default();
    for (i, (path, _)) in outputs.iter().enumerate() {
        let Some(slash) = path.rfind('/') else {
            continue;
        };
        let name = &path[slash + 1..];
        if !names_a_static_file(name) {
            continue;
        }
        let cluster = cluster_of(i);
        let directory = &path[..=slash];
        // The file in its own folder, and as a copy in a subfolder of the folder above.
        let above = directory[..directory.len() - 1]
            .rfind('/')
            .map(|s| &directory[..=s]);
        for folder in std::iter::once(directory).chain(above) {
            let entry = shown.entry((folder, name)).or_insert_with(|| Shown {
                cluster,
                in_two_clusters: false,
                directories: FxHashSet::default(),
                copy: path,
                samples: Vec::new(),
            });
            entry.in_two_clusters |= entry.cluster != cluster;
            entry.directories.insert(directory);
            let depth = |p: &str| p.matches('/').count();
            if (depth(path), path.as_ref()) < (depth(entry.copy), entry.copy) {
                entry.copy = path;
            }
            entry.samples.push(i as u32);
        }
    }
    let mut shared: Vec<((&str, &str), Shown<'_>)> = shown
        .into_iter()
        .filter(|(_, s)| !s.in_two_clusters && s.directories.len() >= MIN_MOVED_ID_VALUES)
        .collect();
    if shared.is_empty() {
        return None;
    }
    // The most widely copied first, then by folder and name, when a table cannot hold them.
    shared.sort_by(|a, b| {
        b.1.directories
            .len()
            .cmp(&a.1.directories.len())
            .then(a.0.cmp(&b.0))
    });
    // One entry per name and sample: a copy in `/a/b/` shown under the folder `/a/` is not
    // proposed again under `/a/b/` (the wider folder, with more directories, comes first).
    let mut taken: FxHashSet<u32> = FxHashSet::default();
    shared.retain(|(_, s)| {
        let fresh = s.samples.iter().all(|i| !taken.contains(i));
        if fresh {
            taken.extend(s.samples.iter().copied());
        }
        fresh
    });
    shared.truncate(MAX_SHARED_FILES);
    shared.sort_by(|a, b| a.0.cmp(&b.0));
    let mut samples: Vec<u32> = shared
        .iter()
        .flat_map(|(_, s)| s.samples.iter().copied())
        .collect();
    samples.sort_unstable();
    let files = shared
        .into_iter()
        .map(|((folder, name), s)| SharedFile {
            folder: folder.to_owned(),
            name: name.to_owned(),
            copy: s.copy.to_owned(),
        })
        .collect();
    Some((SiteAction::SharedFiles { files }, samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(paths: &[&'static str]) -> Vec<Output<'static>> {
        paths.iter().map(|&p| (Cow::Borrowed(p), None)).collect()
    }

    #[test]
    fn a_file_in_three_folders_of_one_cluster_is_shared_and_written_at_its_shallowest() {
        let paths = outputs(&[
            "/faq/logo.gif",
            "/film/logo.gif",
            "/logo.gif",
            "/radio/logo.gif",
            "/faq/index.htm",
            "/film/index.htm",
        ]);
        // The logos one cluster, every page its own.
        let cluster = |i: usize| if i < 4 { 1 } else { 10 + i as u64 };
        let (action, samples) = shared_files(&paths, cluster).unwrap();
        assert_eq!(
            action,
            SiteAction::SharedFiles {
                files: vec![SharedFile {
                    folder: "/".into(),
                    name: "logo.gif".into(),
                    copy: "/logo.gif".into()
                }]
            }
        );
        assert_eq!(samples, vec![0, 1, 2, 3]);
    }

    #[test]
    fn one_name_deeper_than_a_subfolder_is_another_view_not_a_copy() {
        // A code browser: one file's page at three revisions, its raw bytes elsewhere.
        let paths = outputs(&[
            "/o/r/src/branch/main/doc/version.md",
            "/o/r/src/commit/abc1/doc/version.md",
            "/o/r/src/tag/v1/doc/version.md",
        ]);
        assert!(shared_files(&paths, |_| 1).is_none());
    }

    #[test]
    fn a_name_in_two_clusters_in_two_folders_or_of_a_page_is_not_shared() {
        // A translated button: one name, two images.
        let paths = outputs(&[
            "/a/knap.gif",
            "/b/knap.gif",
            "/dutch/knap.gif",
            "/c/knap.gif",
        ]);
        assert!(shared_files(&paths, |i| u64::from(i == 2)).is_none());
        // Two folders only.
        let paths = outputs(&["/a/x.gif", "/b/x.gif", "/b/x.gif"]);
        assert!(shared_files(&paths, |_| 1).is_none());
        // A page answering in every folder is a catch-all's, not a copy.
        let paths = outputs(&["/a/index.html", "/b/index.html", "/c/index.html"]);
        assert!(shared_files(&paths, |_| 1).is_none());
    }
}
