//! Gitea (and its fork Forgejo): a code forge whose paths name an owner, a repository, a view
//! and a git reference, with owner and repository looked up case-insensitively and everything
//! after them case-sensitive.
//!
//! The repository middleware trims a `.git` suffix from the repository name (so the clone URL
//! `/owner/repo.git` opened in a browser is the repository's home page), and with feeds enabled
//! `.rss` and `.atom` too, which serve the repository's activity feed instead: another content.
//! Owners and repositories are found by their lower-cased names, so `/Owner/Repo` and
//! `/owner/repo` are one page, while file paths inside a tree are git paths and keep their case
//! (a repository may hold `xt_DSCP.h` beside `xt_dscp.h`, as the Linux kernel does). The home
//! page shows the default branch's tree, as `/src/branch/{default}` does. Views of a tree take
//! a typed reference (`/src/branch/x/…`, `/src/tag/…`, `/src/commit/…`); the older untyped
//! `/src/x/…` is kept for backward compatibility and redirected to its typed form. Lists page
//! with `?page=N` (page 1 is the plain list); the issue list's pager writes every filter with
//! its default (`type=all&state=open&milestone=0&project=0&assignee=0&poster=0`, with empty `q`,
//! `sort` and `labels`),
//! the default state being `open`. `/issues/N` of a pull request redirects to `/pulls/N`, a
//! commit is found by an abbreviated hash as well as by the full one, and a user's profile
//! shows its repositories unless another `?tab=` is asked for.
//!
//! Distinct: raw files (`/raw/branch/…`, the bytes) and blame views against the rendered file,
//! other branches, the feed, later list pages and other states, a commit's `.diff` and `.patch`,
//! a pull request's files and commits tabs, other profile tabs, other files and issues.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitted, Emitter, Form, UrlParts};
use crate::corpus::words::{capitalize, hex, pick, slug, word};
use crate::corpus::PageKind;

/// Directories and file names repositories hold.
const DIRS: &[&str] = &[
    "src", "docs", "cmd", "lib", "internal", "pkg", "include", "tests",
];
const EXTENSIONS: &[&str] = &[".go", ".rs", ".c", ".h", ".py", ".md", ".toml", ".js"];
/// Branches beside the default one.
const BRANCHES: &[&str] = &["develop", "next", "release-1.2", "v2", "stable", "dev"];
/// Profile tabs other than the repositories.
const TABS: &[&str] = &["activity", "stars", "followers", "following", "projects"];
/// The issue list pager's filters, all at their defaults (the empty ones, `q=`, `sort=` and
/// `labels=`, left out).
const PAGER_DEFAULTS: &[(&str, &str)] = &[
    ("type", "all"),
    ("state", "open"),
    ("milestone", "0"),
    ("project", "0"),
    ("assignee", "0"),
    ("poster", "0"),
];

struct Repo {
    owner: usize,
    name: String,
    files: Vec<String>,
    listed: bool,
    next_issue: u64,
}

pub(super) struct Gitea {
    base: String,
    /// Owner names as they were registered (their case is the displayed one).
    owners: Vec<String>,
    /// Whether each owner is an organization (no profile tabs).
    organizations: Vec<bool>,
    repos: Vec<Repo>,
    default_branch: &'static str,
    /// Rules: owner and repository in another case, `.git` suffix, the default branch spelled
    /// out, an untyped reference, a list's defaults spelled out, the default profile tab, an
    /// issue number of a pull request, an abbreviated commit hash.
    rules: [usize; 8],
    profiled: HashSet<usize>,
    used_files: HashSet<String>,
}

/// `name` with its letters' case changed so that it differs, if it has letters.
fn recased(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if lower != name {
        lower
    } else {
        capitalize(name)
    }
}

impl Gitea {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!("{base}{}", pick(rng, &["", "", "/git", "/gitea"], ""));
        let mut owners: Vec<String> = Vec::new();
        for _ in 0..rng.random_range(3..=9) {
            let name = if rng.random_bool(0.5) {
                format!("{}{}", capitalize(word(rng)), capitalize(word(rng)))
            } else {
                slug(rng, 1..=2)
            };
            if !owners.iter().any(|o| o.eq_ignore_ascii_case(&name)) {
                owners.push(name);
            }
        }
        let organizations = owners.iter().map(|_| rng.random_bool(0.4)).collect();
        let mut repos: Vec<Repo> = Vec::new();
        for owner in 0..owners.len() {
            for _ in 0..rng.random_range(1..=6) {
                let name = if rng.random_bool(0.3) {
                    capitalize(&slug(rng, 1..=2))
                } else {
                    slug(rng, 1..=2)
                };
                if !repos
                    .iter()
                    .any(|r| r.owner == owner && r.name.eq_ignore_ascii_case(&name))
                {
                    repos.push(Repo {
                        owner,
                        name,
                        files: Vec::new(),
                        listed: false,
                        next_issue: 1,
                    });
                }
            }
        }
        let mut gitea = Gitea {
            owners,
            organizations,
            repos,
            default_branch: pick(rng, &["main", "master"], "main"),
            rules: [0; 8],
            profiled: HashSet::new(),
            used_files: HashSet::new(),
            base,
        };
        let at = |path: &str| UrlParts::new(format!("{}/{path}", gitea.base));
        let home = at("{Owner}/{Repo}");
        gitea.rules = [
            alias_rule(
                em,
                &at("{owner}/{repo}/{view}"),
                &at("{Owner}/{Repo}/{view}"),
                "owner and repository names in another case",
            ),
            alias_rule(
                em,
                &at("{Owner}/{Repo}.git"),
                &home,
                "the clone URL opened in a browser",
            ),
            alias_rule(
                em,
                &at("{Owner}/{Repo}/src/branch/{default}"),
                &home,
                "the default branch's tree is the home page",
            ),
            alias_rule(
                em,
                &at("{Owner}/{Repo}/src/{ref}/{path}"),
                &at("{Owner}/{Repo}/src/branch/{ref}/{path}"),
                "an untyped git reference (legacy URL)",
            ),
            alias_rule(
                em,
                &at("{Owner}/{Repo}/issues").q("state", "open"),
                &at("{Owner}/{Repo}/issues"),
                "a list's defaults spelled out (`page=1`, `state=open`, the pager's filters)",
            ),
            alias_rule(
                em,
                &at("{Owner}").q("tab", "repositories"),
                &at("{Owner}"),
                "the default profile tab",
            ),
            alias_rule(
                em,
                &at("{Owner}/{Repo}/issues/{n}"),
                &at("{Owner}/{Repo}/pulls/{n}"),
                "a pull request by its issue number",
            ),
            alias_rule(
                em,
                &at("{Owner}/{Repo}/commit/{short}"),
                &at("{Owner}/{Repo}/commit/{sha}"),
                "a commit by an abbreviated hash",
            ),
        ];
        if rng.random_bool(0.3) {
            add_tracking(em, rng, 1);
        }
        gitea
    }

    /// `/{owner}/{repo}{rest}` with the names as registered, and the same in another case.
    fn repo_paths(&self, r: usize, rest: &str) -> (UrlParts, UrlParts) {
        let repo = &self.repos[r];
        let owner = &self.owners[repo.owner];
        (
            UrlParts::new(format!("{}/{owner}/{}{rest}", self.base, repo.name)),
            UrlParts::new(format!(
                "{}/{}/{}{rest}",
                self.base,
                recased(owner),
                recased(&repo.name)
            )),
        )
    }

    /// A view of repository `r` at `rest`, with its other-case form when `recase` holds.
    fn view(&self, r: usize, rest: &str, recase: bool) -> Vec<(UrlParts, Option<usize>)> {
        let (plain, other) = self.repo_paths(r, rest);
        let mut forms = vec![(plain, None)];
        if recase {
            forms.push((other, Some(self.rules[0])));
        }
        forms
    }

    fn home_forms(&self, r: usize, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let mut forms = self.view(r, "", rng.random_bool(0.3));
        let branch = self.default_branch;
        forms.push((self.repo_paths(r, ".git").0, Some(self.rules[1])));
        forms.push((
            self.repo_paths(r, &format!("/src/branch/{branch}")).0,
            Some(self.rules[2]),
        ));
        if rng.random_bool(0.2) {
            forms.push((
                self.repo_paths(r, &format!("/src/{branch}")).0,
                Some(self.rules[3]),
            ));
        }
        forms_of(forms)
    }

    /// A file or tree view (`kind` is `src`, `raw` or `blame`) of `path` on `branch`.
    fn file_forms(
        &self,
        r: usize,
        kind: &str,
        branch: &str,
        path: &str,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let typed = format!("/{kind}/branch/{branch}/{path}");
        let mut forms = self.view(r, &typed, rng.random_bool(0.2));
        if kind != "blame" && rng.random_bool(0.25) {
            forms.push((
                self.repo_paths(r, &format!("/{kind}/{branch}/{path}")).0,
                Some(self.rules[3]),
            ));
        }
        forms_of(forms)
    }

    /// Page `page` (1 = first) of the list at `rest` (`/issues`, `/commits/branch/x`), in
    /// `state` for issues (`None`: the default, open).
    fn list_forms(&self, r: usize, rest: &str, page: u32, state: Option<&str>) -> Vec<Form> {
        let (plain, _) = self.repo_paths(r, rest);
        let issues = rest == "/issues";
        let with_state = |p: UrlParts| match state {
            Some(s) => p.q("state", s),
            None => p,
        };
        let first = if page > 1 {
            with_state(plain.clone()).q("page", page.to_string())
        } else {
            with_state(plain.clone())
        };
        let mut forms = vec![(first, None)];
        if state.is_none() && (issues || page == 1) {
            // The pager's link: every filter at its default, then the page.
            let mut pager = plain.clone();
            if issues {
                for (k, v) in PAGER_DEFAULTS {
                    pager = pager.q(k, *v);
                }
            }
            forms.push((pager.q("page", page.to_string()), Some(self.rules[4])));
            if issues && page == 1 {
                forms.push((plain.q("state", "open"), Some(self.rules[4])));
            }
        }
        forms_of(forms)
    }

    fn new_file(&mut self, r: usize, rng: &mut ChaCha8Rng) -> String {
        let repo = &self.repos[r];
        let mut path = match rng.random_range(0..6) {
            0 => pick(
                rng,
                &["README.md", "LICENSE", "Makefile", ".gitignore"],
                "README.md",
            )
            .into(),
            _ => format!(
                "{}/{}{}",
                pick(rng, DIRS, "src"),
                word(rng),
                pick(rng, EXTENSIONS, ".go")
            ),
        };
        let key = |p: &str| format!("{}/{}/{p}", repo.owner, repo.name);
        if self.used_files.contains(&key(&path)) {
            path = format!(
                "{}/{}_{}{}",
                pick(rng, DIRS, "src"),
                word(rng),
                self.used_files.len(),
                pick(rng, EXTENSIONS, ".go")
            );
        }
        self.used_files.insert(key(&path));
        path
    }

    fn file(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, r: usize) {
        let path = if !self.repos[r].files.is_empty() && rng.random_bool(0.3) {
            let files = &self.repos[r].files;
            files[rng.random_range(0..files.len())].clone()
        } else {
            let path = self.new_file(r, rng);
            self.repos[r].files.push(path.clone());
            path
        };
        let branch = if rng.random_bool(0.8) {
            self.default_branch
        } else {
            pick(rng, BRANCHES, "develop")
        };
        // A file already emitted on this branch is not emitted again under a new content.
        if !self.used_files.insert(format!("@{r}/{branch}/{path}")) {
            return;
        }
        let src = self.file_forms(r, "src", branch, &path, rng);
        let shown = em.content(rng, &src, PageKind::Doc);
        if rng.random_bool(0.35) {
            let raw = self.file_forms(r, "raw", branch, &path, rng);
            em.sibling(rng, &shown, &raw, PageKind::Article);
        }
        if rng.random_bool(0.12) {
            let blame = self.file_forms(r, "blame", branch, &path, rng);
            em.sibling(rng, &shown, &blame, PageKind::Doc);
        }
        if branch == self.default_branch && rng.random_bool(0.12) {
            let other = pick(rng, BRANCHES, "develop");
            if self.used_files.insert(format!("@{r}/{other}/{path}")) {
                let forms = self.file_forms(r, "src", other, &path, rng);
                em.sibling(rng, &shown, &forms, PageKind::Doc);
            }
        }
        if rng.random_bool(0.05) {
            // A file whose name differs only in case: another git path, another file.
            if let Some((dir, name)) = path.rsplit_once('/') {
                let twin = format!("{dir}/{}", recased(name));
                let upper = format!("{dir}/{}", name.to_ascii_uppercase());
                let twin = if twin != path { twin } else { upper };
                if twin != path && self.used_files.insert(format!("@{r}/{branch}/{twin}")) {
                    let forms = self.file_forms(r, "src", branch, &twin, rng);
                    em.sibling(rng, &shown, &forms, PageKind::Doc);
                }
            }
        }
    }

    fn lists(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, r: usize) {
        let forms = self.home_forms(r, rng);
        let home = em.content(rng, &forms, PageKind::Listing);
        if rng.random_bool(0.3) {
            let feed = forms_of(vec![(self.repo_paths(r, ".rss").0, None)]);
            em.sibling(rng, &home, &feed, PageKind::Listing);
        }
        if rng.random_bool(0.4) {
            let other = pick(rng, BRANCHES, "develop");
            let forms = forms_of(self.view(r, &format!("/src/branch/{other}"), false));
            em.sibling(rng, &home, &forms, PageKind::Listing);
        }
        let commits = format!("/commits/branch/{}", self.default_branch);
        let mut previous: Option<Emitted> = None;
        for page in 1..=rng.random_range(1..=3) {
            let forms = self.list_forms(r, &commits, page, None);
            previous = Some(match &previous {
                None => em.content(rng, &forms, PageKind::History),
                Some(p) => em.sibling(rng, p, &forms, PageKind::History),
            });
        }
        let open = em.content(
            rng,
            &self.list_forms(r, "/issues", 1, None),
            PageKind::Listing,
        );
        for page in 2..=rng.random_range(1..=3) {
            let forms = self.list_forms(r, "/issues", page, None);
            em.sibling(rng, &open, &forms, PageKind::Listing);
        }
        if rng.random_bool(0.5) {
            let forms = self.list_forms(r, "/issues", 1, Some("closed"));
            em.sibling(rng, &open, &forms, PageKind::Listing);
        }
    }

    fn issue(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, r: usize) {
        self.repos[r].next_issue += rng.random_range(1..5);
        let n = self.repos[r].next_issue;
        let pull = rng.random_bool(0.35);
        let own = if pull { "pulls" } else { "issues" };
        let mut forms = self.view(r, &format!("/{own}/{n}"), rng.random_bool(0.2));
        if pull {
            forms.push((
                self.repo_paths(r, &format!("/issues/{n}")).0,
                Some(self.rules[6]),
            ));
        }
        let shown = em.content(rng, &forms_of(forms), PageKind::Thread);
        if pull && rng.random_bool(0.4) {
            let tab = pick(rng, &["files", "commits"], "files");
            let forms = forms_of(self.view(r, &format!("/pulls/{n}/{tab}"), false));
            em.sibling(rng, &shown, &forms, PageKind::Doc);
        }
        if rng.random_bool(0.1) {
            self.repos[r].next_issue += 1;
            let n = self.repos[r].next_issue;
            let forms = forms_of(self.view(r, &format!("/issues/{n}"), false));
            em.sibling(rng, &shown, &forms, PageKind::Thread);
        }
    }

    fn commit(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, r: usize) {
        let sha = hex(rng, 40);
        let mut forms = self.view(r, &format!("/commit/{sha}"), rng.random_bool(0.15));
        if rng.random_bool(0.2) {
            forms.push((
                self.repo_paths(r, &format!("/commit/{}", &sha[..10])).0,
                Some(self.rules[7]),
            ));
        }
        let shown = em.content(rng, &forms_of(forms), PageKind::Doc);
        if rng.random_bool(0.2) {
            let suffix = pick(rng, &[".diff", ".patch"], ".diff");
            let forms = forms_of(self.view(r, &format!("/commit/{sha}{suffix}"), false));
            em.sibling(rng, &shown, &forms, PageKind::Article);
        }
    }

    fn profile(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, o: usize) {
        let owner = &self.owners[o];
        let at = |name: &str| UrlParts::new(format!("{}/{name}", self.base));
        let mut forms = vec![(at(owner), None)];
        if rng.random_bool(0.3) && recased(owner) != *owner {
            forms.push((at(&recased(owner)), Some(self.rules[0])));
        }
        let user = !self.organizations[o];
        if user {
            forms.push((at(owner).q("tab", "repositories"), Some(self.rules[5])));
        }
        let shown = em.content(rng, &forms_of(forms), PageKind::Listing);
        if user {
            let tab = pick(rng, TABS, "activity");
            let forms = forms_of(vec![(at(owner).q("tab", tab), None)]);
            em.sibling(rng, &shown, &forms, PageKind::Listing);
        }
    }
}

impl Section for Gitea {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let r = rng.random_range(0..self.repos.len());
        let roll = rng.random::<f64>();
        if !self.repos[r].listed && roll < 0.15 {
            self.repos[r].listed = true;
            self.lists(em, rng, r);
        } else if roll < 0.22 {
            let o = self.repos[r].owner;
            if self.profiled.insert(o) {
                self.profile(em, rng, o);
            } else {
                self.commit(em, rng, r);
            }
        } else if roll < 0.5 {
            self.issue(em, rng, r);
        } else if roll < 0.6 {
            self.commit(em, rng, r);
        } else {
            self.file(em, rng, r);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let r = rng.random_range(0..self.repos.len());
        let n = rng.random_range(100_000..200_000u64);
        forms_of(self.view(r, &format!("/issues/{n}"), true))
    }

    fn variant(&self) -> String {
        format!("gitea{}:{}", self.base, self.default_branch)
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{check_family, ids_of};
    use crate::corpus::SiteKind;

    #[test]
    fn gitea_generates_its_scheme() {
        let (mut clone_urls, mut raw, mut recased) = (0, 0, 0);
        for site in check_family(SiteKind::Gitea) {
            let ids = ids_of(&site);
            for (url, id) in &ids {
                // The clone URL is the home page; the feed is not.
                if let Some(home) = url.strip_suffix(".git") {
                    if let Some(other) = ids.get(home) {
                        assert_eq!(other, id, "{url}");
                        clone_urls += 1;
                    }
                }
                if let Some(home) = url.strip_suffix(".rss") {
                    if let Some(other) = ids.get(home) {
                        assert_ne!(other, id, "{url}");
                    }
                }
                // The rendered file and its bytes differ.
                if url.contains("/raw/branch/") {
                    if let Some(other) = ids.get(&url.replacen("/raw/branch/", "/src/branch/", 1)) {
                        assert_ne!(other, id, "{url}");
                        raw += 1;
                    }
                }
            }
            // Owner and repository fold their case; nothing after them does.
            let base = site.variant["gitea".len()..]
                .split(':')
                .next()
                .unwrap_or("");
            let origin = format!("://{}{base}", site.host);
            let mut by_folded: std::collections::HashMap<String, Vec<(&str, u64)>> =
                std::collections::HashMap::new();
            for (url, id) in &ids {
                let Some((_, path)) = url.split_once(&origin) else {
                    continue;
                };
                by_folded
                    .entry(path.to_ascii_lowercase())
                    .or_default()
                    .push((path, *id));
            }
            for urls in by_folded.values().filter(|u| u.len() > 1) {
                for (a, ida) in urls {
                    for (b, idb) in urls {
                        // Same path after the first two segments (up to case of those): one page.
                        let tail = |p: &str| p.splitn(4, '/').nth(3).map(str::to_string);
                        if tail(a) == tail(b) {
                            assert_eq!(ida, idb, "{a} vs {b}");
                            if a != b {
                                recased += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(
            clone_urls > 0 && raw > 0 && recased > 0,
            "clone URLs {clone_urls}, raw {raw}, recased {recased}"
        );
    }
}
