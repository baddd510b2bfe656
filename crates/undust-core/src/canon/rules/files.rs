//! What "a path segment names a file" means, one notion for every mechanism that must keep a
//! file apart from the pages about it.
//!
//! Web software that publishes a content tree serves a file's bytes at its bare URL and pages
//! about it after it: Zope and Plone (`/scan.pdf` is the PDF, `/scan.pdf/view` an HTML page
//! showing it), WebDAV and SharePoint document libraries (`/Shared Documents/a.docx` versus
//! `/Shared Documents/Forms/AllItems.aspx`), MediaWiki (`/images/a/ab/X.png` versus
//! `/wiki/File:X.png`), Apache and nginx static files beside the directory's index. A view, a
//! default view's tail, a trailing slash or a default document after a file is never the file.
//!
//! A segment names a file when its value ends with a file extension
//! ([`super::site::is_extension`]: a dot and one to eight ASCII letters or digits, at least one
//! a letter) after a non-empty stem: `scan.pdf`, `photo.JPG`, `index.html`. No list of types:
//! the extensions a host serves are whatever its software writes, and a page written with an
//! extension (`page.html`) is a file to its server as well. Not files: `v1.2` (no letter after
//! the dot), `.htaccess` (no stem), `report` (no dot).
//!
//! Users: the learner's proofing (a rule whose `*` becomes or stops being the last segment is
//! fenced off files, [`crate::canon::rules::Rule::not_files`]), the engine matching such a rule,
//! and default view tails (never dropped after a file).

/// The extension of `segment` with its dot (`.pdf`, as written) when the segment names a file
/// (see the module docs), `None` otherwise.
pub fn file_extension(segment: &str) -> Option<&str> {
    let dot = segment.rfind('.').filter(|&d| d > 0)?;
    let ext = &segment[dot..];
    super::site::is_extension(ext).then_some(ext)
}

/// Whether `segment` names a file (see the module docs).
pub fn names_a_file(segment: &str) -> bool {
    file_extension(segment).is_some()
}

/// Extensions of the pages web software generates (compared without case): a page answers for
/// its own path, while an image, a stylesheet, a script or a document is a file its site may
/// copy into every folder beside the pages that link it.
const PAGE_EXTENSIONS: [&str; 18] = [
    ".htm", ".html", ".shtml", ".xhtml", ".php", ".php3", ".php4", ".php5", ".phtml", ".asp",
    ".aspx", ".jsp", ".jspx", ".cfm", ".cgi", ".pl", ".do", ".action",
];

/// Whether `segment` names a file that is not a page: an image, a stylesheet, a script, a
/// document (see [`PAGE_EXTENSIONS`]). Static sites built with relative links keep a copy of
/// such a file in each folder (`/faq/logo.gif`, `/film/logo.gif`, `/logo.gif`): one file under
/// many paths, where many paths under one page are a catch-all.
pub fn names_a_static_file(segment: &str) -> bool {
    file_extension(segment)
        .is_some_and(|ext| !PAGE_EXTENSIONS.iter().any(|p| p.eq_ignore_ascii_case(ext)))
}

/// Whether `segment` names a file that is a page ([`PAGE_EXTENSIONS`]): a script that may read
/// path info after its name (`product_info.php/products_id/5`).
pub fn names_a_page_file(segment: &str) -> bool {
    file_extension(segment)
        .is_some_and(|ext| PAGE_EXTENSIONS.iter().any(|p| p.eq_ignore_ascii_case(ext)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_a_stem_and_an_extension_with_a_letter() {
        for (segment, ext) in [
            ("scan.pdf", ".pdf"),
            ("photo.JPG", ".JPG"),
            ("archive.tar.gz", ".gz"),
            ("index.html", ".html"),
            ("clip.mp4", ".mp4"),
        ] {
            assert_eq!(file_extension(segment), Some(ext), "{segment}");
            assert!(names_a_file(segment), "{segment}");
        }
        for segment in [
            "report",
            "v1.2",
            ".htaccess",
            "a-title.123",
            "",
            "view",
            "name.with-dash",
            "x.toolongext",
        ] {
            assert_eq!(file_extension(segment), None, "{segment}");
            assert!(!names_a_file(segment), "{segment}");
        }
    }

    #[test]
    fn static_files_are_files_that_are_not_pages() {
        for segment in [
            "logo.gif",
            "site.CSS",
            "menu.js",
            "guide.pdf",
            "archive.tar.gz",
        ] {
            assert!(names_a_static_file(segment), "{segment}");
        }
        for segment in [
            "index.html",
            "Default.ASPX",
            "viewtopic.php",
            "report",
            "v1.2",
        ] {
            assert!(!names_a_static_file(segment), "{segment}");
        }
    }
}
