//! A hand-rolled HTML tokenizer for `content::pagelet::analyze`: start tags with their
//! attributes, end tags and text, nothing else, read from a `&str` without allocating per token.
//!
//! # Why hand-rolled
//!
//! The project's rule is to use a well-kept crate over hand-rolled code unless a measurement says
//! otherwise. It does here. `analyze` used to run on `lol_html` (Cloudflare's streaming rewriter),
//! but `undust clusters` has to reach 100 MB/s end to end on a crawl of small pages on a 2-core
//! machine, and a *bare* `lol_html` pass over the same pages (`benches/parse_ceiling.rs`: a `*`
//! element handler with end-tag handlers and a text handler, nothing else) ran at only 100–140
//! MB/s on `/tmp/small.jsonl` (14 000 pages, 67 MB), where `undust clusters` ran at 65 MB/s:
//! half of `analyze`'s time went to `lol_html`'s selector VM, its boxed per-element end-tag
//! handlers, the rewriter's serializer (a rewriter always serializes) and its tree-builder
//! simulation, none of which this pass needs (measured again when this scanner replaced it, at
//! load 3–4 on the same machine: 45–96 MB/s, median 76 MB/s). This scanner does only what the
//! pass needs: alone, with a consumer that does nothing, it reads the same pages at 460–920 MB/s
//! on one thread (by the load of the moment), and `analyze` on it runs twice as fast as on
//! `lol_html` (`pagelet.rs`, "Parser choice"; BENCHMARKS.md).
//!
//! # What it implements
//!
//! The WHATWG HTML tokenizer (§13.2.5) for the states that decide what is a tag and what is text:
//!
//! - the data state: text is handed over raw (character references are *not* decoded here; the
//!   pass decodes entities in text itself, as it did with `lol_html`, which hands raw text too);
//! - tag open, end tag open, tag name, the attribute states (double-, single- and unquoted
//!   values, attributes without values), self-closing start tag; tag names are ASCII-lowercased;
//!   `<` not followed by a letter, `!`, `/` or `?` is text; `</` followed by anything but a letter
//!   or `>` opens a bogus comment; `</>` is dropped; a tag cut by the end of input is dropped;
//! - markup declarations: comments (with the abrupt `<!-->` and `<!--->` ends and the `--!>`
//!   end), `<!DOCTYPE …>` (ends at its first `>`, quoted identifiers included, as the spec's
//!   states do), bogus comments (`<!…>`, `<?…>`, `</ …>`), all skipped;
//! - CDATA sections (`<![CDATA[…]]>`) only in foreign content (SVG, MathML), as text of the
//!   non-data kind; in HTML content `<![CDATA[` opens a bogus comment;
//! - RCDATA (`title`, `textarea`), RAWTEXT (`style`, `xmp`, `iframe`, `noembed`, `noframes`,
//!   `noscript`: scripting is taken as enabled), script data with its escaped and double-escaped
//!   states (so `</script>` inside `<!-- <script> … -->` in a script does not end it, as in
//!   browsers), and PLAINTEXT: their content is text of the non-data kind until the matching end
//!   tag (ASCII case-insensitive, followed by whitespace, `/` or `>`);
//! - the tree builder's feedback that decides the text states: the namespace stack that
//!   `lol_html` simulates (`<svg>`/`<math>` enter foreign content; integration points such as
//!   `<foreignObject>`, `<desc>`, `<title>` in SVG and `<mi>`…`<mtext>`, `<annotation-xml
//!   encoding=text/html>` in MathML return to HTML; the HTML elements that break out of foreign
//!   content leave it one level, as `lol_html` does), and the void elements that cannot have
//!   content (`area base basefont bgsound br col embed hr img input keygen link meta param source
//!   track wbr` in HTML; any self-closing element in foreign content).
//!
//! Not implemented, because the pass does not need them: character reference decoding, the
//! DOCTYPE's name and identifiers, comment text, CR/LF normalization, NUL replacement (text and
//! names are handed over as written), and tree construction (the pass applies the implied-end
//! rules it needs itself). Where the spec and `lol_html` disagree, this follows the spec:
//! `<svg/>` and `<math/>` (self-closing) do not enter foreign content, and `<script x=>` still
//! switches to script data (`lol_html` returns to the data state after an attribute without a
//! value that ends a tag).
//!
//! # Bounds
//!
//! Memory: one reused list of attribute spans (at most [`MAX_ATTRIBUTES`] a tag) and the
//! namespace stack (one byte per open `<svg>`/`<math>`, bounded by the input). A single tag,
//! comment or doctype longer than the limit given to [`Scanner::new`] stops the scan
//! ([`Outcome::TooLong`]), as `lol_html`'s memory limit on its token buffer did.

use memchr::{memchr, memchr2};

/// Attributes of one tag kept for [`StartTag::attr`]; later ones are not read (a tag with more
/// is a data blob or an attack, not markup the pass looks into).
pub(crate) const MAX_ATTRIBUTES: usize = 1024;

/// What a scan reports to its consumer, in document order.
pub(crate) trait Sink {
    /// A run of text: `data` when it is ordinary text (data state), not the content of a
    /// `<title>`, `<textarea>`, `<script>`, `<style>`, … or a CDATA section.
    fn text(&mut self, text: &str, data: bool);
    /// A start tag; [`Flow::Stop`] ends the scan right after it.
    fn start_tag(&mut self, tag: &StartTag<'_>) -> Flow;
    /// An end tag (`name` ASCII-lowercased; its attributes are ignored).
    fn end_tag(&mut self, name: &str);
}

/// Whether the scan goes on after a start tag.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// How a scan ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Outcome {
    /// The whole input was read.
    Finished,
    /// The sink asked to stop after a start tag ending at this byte offset.
    Stopped(usize),
    /// A tag, comment or doctype was longer than the scanner's token limit; nothing after the
    /// text before it was read.
    TooLong,
}

/// One start tag, as the sink sees it.
pub(crate) struct StartTag<'a> {
    /// ASCII-lowercased name.
    pub name: &'a str,
    /// False for elements that cannot have content: void elements in HTML, self-closing
    /// elements in foreign content. Their end is the start tag itself.
    pub can_have_content: bool,
    src: &'a str,
    attrs: &'a [Attr],
}

impl<'a> StartTag<'a> {
    /// The raw value (entities not decoded) of the first attribute called `name` (given in
    /// lowercase; attribute names compare ASCII case-insensitively); `""` for an attribute
    /// without a value.
    pub fn attr(&self, name: &str) -> Option<&'a str> {
        let src = self.src;
        self.attrs
            .iter()
            .find(|a| {
                src.get(a.name.0..a.name.1)
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
            .map(|a| src.get(a.value.0..a.value.1).unwrap_or_default())
    }
}

/// Byte spans of one attribute's name and value in the input.
#[derive(Clone, Copy, Debug)]
struct Attr {
    name: (usize, usize),
    value: (usize, usize),
}

/// Which text state the tokenizer is in between tokens.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Data,
    /// RCDATA or RAWTEXT (they differ only in character references, which are not decoded
    /// here), ended by the end tag of this name.
    Raw(&'static str),
    ScriptData,
    PlainText,
}

/// A namespace of the (simulated) tree builder's stack.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ns {
    Html,
    Svg,
    MathMl,
}

/// What reading one tag gave.
enum Read {
    /// The tag ends at this offset; what the sink said of it.
    Done(usize, Flow),
    /// The input ended inside the tag: it is dropped.
    Eof,
    /// The tag is longer than the token limit.
    TooLong,
}

/// Hands `src[from..to]` to the sink as text, when not empty.
fn emit_text(sink: &mut impl Sink, src: &str, from: usize, to: usize, data: bool) {
    if to > from {
        if let Some(text) = src.get(from..to) {
            sink.text(text, data);
        }
    }
}

/// The end of one tag in the input.
struct TagEnd {
    name_end: usize,
    /// The name has ASCII capitals (to lowercase).
    name_has_capitals: bool,
    end: usize,
    self_closing: bool,
}

/// Tokenizer state kept across [`Scanner::scan`] calls, so that a scan stopped after a start
/// tag (to decode the rest of the input differently) resumes where it was.
pub(crate) struct Scanner {
    mode: Mode,
    /// The simulated tree builder's namespace stack; never empty (HTML at the bottom).
    ns: Vec<Ns>,
    attrs: Vec<Attr>,
    /// The lowercased tag name, when the input's has ASCII capitals.
    name_buf: String,
    max_token: usize,
}

/// Byte classes of the tag states, looked up in [`CLASS`]: one table load per byte instead of
/// up to eight comparisons in the loops over names and values.
const WS: u8 = 1;
const SLASH: u8 = 2;
const GT: u8 = 4;
const EQ: u8 = 8;
const UPPER: u8 = 16;

const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b' ' as usize] = WS;
    table[b'\n' as usize] = WS;
    table[b'\r' as usize] = WS;
    table[b'\t' as usize] = WS;
    table[0x0C] = WS;
    table[b'/' as usize] = SLASH;
    table[b'>' as usize] = GT;
    table[b'=' as usize] = EQ;
    let mut c = b'A';
    while c <= b'Z' {
        table[c as usize] = UPPER;
        c += 1;
    }
    table
};

fn class(c: u8) -> u8 {
    CLASS[c as usize]
}

fn is_ws(c: u8) -> bool {
    class(c) == WS
}

/// True when `b[at..]` starts with `pat`, ASCII case-insensitively (`pat` in lowercase).
fn starts_with_ci(b: &[u8], at: usize, pat: &[u8]) -> bool {
    b.get(at..at + pat.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(pat))
}

/// True when `b[lt..]` is `</name` followed by whitespace, `/` or `>`: the end tag that ends
/// RCDATA, RAWTEXT or script data opened by `name`.
fn is_appropriate_end(b: &[u8], lt: usize, name: &str) -> bool {
    b.get(lt + 1) == Some(&b'/')
        && starts_with_ci(b, lt + 2, name.as_bytes())
        && b.get(lt + 2 + name.len())
            .is_some_and(|&c| is_ws(c) || c == b'/' || c == b'>')
}

fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "basefont"
            | "bgsound"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "keygen"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}

/// HTML start tags that break out of foreign content (HTML §13.2.6.5), as `lol_html` lists them.
fn breaks_out_of_foreign_content(name: &str) -> bool {
    matches!(
        name,
        "b" | "big"
            | "blockquote"
            | "body"
            | "br"
            | "center"
            | "code"
            | "dd"
            | "div"
            | "dl"
            | "dt"
            | "em"
            | "embed"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "head"
            | "hr"
            | "i"
            | "img"
            | "li"
            | "listing"
            | "menu"
            | "meta"
            | "nobr"
            | "ol"
            | "p"
            | "pre"
            | "ruby"
            | "s"
            | "small"
            | "span"
            | "strong"
            | "strike"
            | "sub"
            | "sup"
            | "table"
            | "tt"
            | "u"
            | "ul"
            | "var"
    )
}

fn is_svg_html_integration_point(name: &str) -> bool {
    matches!(name, "desc" | "title" | "foreignobject")
}

fn is_mathml_text_integration_point(name: &str) -> bool {
    matches!(name, "mi" | "mo" | "mn" | "ms" | "mtext")
}

/// The text state an HTML start tag switches the tokenizer to.
fn mode_after(name: &str) -> Mode {
    match name {
        "title" => Mode::Raw("title"),
        "textarea" => Mode::Raw("textarea"),
        "style" => Mode::Raw("style"),
        "xmp" => Mode::Raw("xmp"),
        "iframe" => Mode::Raw("iframe"),
        "noembed" => Mode::Raw("noembed"),
        "noframes" => Mode::Raw("noframes"),
        "noscript" => Mode::Raw("noscript"),
        "script" => Mode::ScriptData,
        "plaintext" => Mode::PlainText,
        _ => Mode::Data,
    }
}

/// Where script data ends: the offset of the `<` of its `</script` end tag, or `None` when the
/// input ends first. Follows the script data, escaped and double-escaped states.
fn script_end(b: &[u8], from: usize) -> Option<usize> {
    /// Plain script data, or inside a `<!--` (escaped): `double` once a `<script>` opened inside
    /// it (its `</script>` then returns to escaped, and no end tag ends the data), `dashes` right
    /// after `--` (where `>` ends the escape). The two escaped states and their dash-dash states
    /// are the spec's four, read by the same code.
    #[derive(Clone, Copy)]
    enum S {
        Normal,
        Escaped { double: bool, dashes: bool },
    }
    let mut s = S::Normal;
    let mut i = from;
    loop {
        match s {
            S::Normal => {
                let lt = i + memchr(b'<', b.get(i..)?)?;
                match *b.get(lt + 1)? {
                    b'/' if is_appropriate_end(b, lt, "script") => return Some(lt),
                    b'!' if b.get(lt + 2..lt + 4) == Some(b"--") => {
                        // `<!--`: script data escaped (dash dash).
                        s = S::Escaped {
                            double: false,
                            dashes: true,
                        };
                        i = lt + 4;
                    }
                    _ => i = lt + 1,
                }
            }
            S::Escaped {
                double,
                dashes: true,
            } => match *b.get(i)? {
                b'-' => i += 1,
                b'<' => (s, i) = less_than(b, i, double)?,
                b'>' => {
                    s = S::Normal;
                    i += 1;
                }
                _ => {
                    s = S::Escaped {
                        double,
                        dashes: false,
                    };
                    i += 1;
                }
            },
            S::Escaped {
                double,
                dashes: false,
            } => {
                let at = i + memchr2(b'-', b'<', b.get(i..)?)?;
                if b[at] == b'<' {
                    if !double && is_appropriate_end(b, at, "script") {
                        return Some(at);
                    }
                    (s, i) = less_than(b, at, double)?;
                } else if b.get(at + 1) == Some(&b'-') {
                    s = S::Escaped {
                        double,
                        dashes: true,
                    };
                    i = at + 2;
                } else {
                    i = at + 1;
                }
            }
        }
    }

    /// The state after a `<` in escaped script data that is not its end tag, and where to go
    /// on: in escaped data, `<script` followed by whitespace, `/` or `>` starts the
    /// double-escaped state; in double-escaped data, `</script` so followed returns to escaped.
    fn less_than(b: &[u8], lt: usize, double: bool) -> Option<(S, usize)> {
        let escaped = |double| S::Escaped {
            double,
            dashes: false,
        };
        let ends_word = |c: u8| is_ws(c) || c == b'/' || c == b'>';
        if !double {
            if is_appropriate_end(b, lt, "script") {
                // Only reached from the dash-dash state; the caller re-finds it in `Escaped`.
                return Some((escaped(false), lt));
            }
            b.get(lt + 1)?;
            if starts_with_ci(b, lt + 1, b"script") {
                if ends_word(*b.get(lt + 7)?) {
                    return Some((escaped(true), lt + 8));
                }
                return Some((escaped(false), lt + 7));
            }
            return Some((escaped(false), lt + 1));
        }
        if *b.get(lt + 1)? != b'/' {
            return Some((escaped(true), lt + 1));
        }
        if starts_with_ci(b, lt + 2, b"script") {
            if ends_word(*b.get(lt + 8)?) {
                return Some((escaped(false), lt + 9));
            }
            return Some((escaped(true), lt + 8));
        }
        Some((escaped(true), lt + 2))
    }
}

/// The end of a comment whose `<!--` ends just before `from`: after its `-->` or `--!>` (or the
/// abrupt `<!-->` and `<!--->`), or the end of input.
fn comment_end(b: &[u8], from: usize) -> usize {
    match b.get(from..) {
        Some([b'>', ..]) => return from + 1,
        Some([b'-', b'>', ..]) => return from + 2,
        _ => {}
    }
    let mut i = from;
    while let Some(off) = b.get(i..).and_then(|rest| memchr(b'-', rest)) {
        let at = i + off;
        if b.get(at + 1) == Some(&b'-') {
            match b.get(at + 2) {
                Some(b'>') => return at + 3,
                Some(b'!') if b.get(at + 3) == Some(&b'>') => return at + 4,
                _ => {}
            }
        }
        i = at + 1;
    }
    b.len()
}

/// Just after the first `>` at or after `from`, or the end of input.
fn after_gt(b: &[u8], from: usize) -> usize {
    b.get(from..)
        .and_then(|rest| memchr(b'>', rest))
        .map_or(b.len(), |off| from + off + 1)
}

impl Scanner {
    /// A scanner in the data state, in HTML content, that gives up on a single tag, comment or
    /// doctype longer than `max_token` bytes.
    pub(crate) fn new(max_token: usize) -> Self {
        Scanner {
            mode: Mode::Data,
            ns: vec![Ns::Html],
            attrs: Vec::new(),
            name_buf: String::new(),
            max_token,
        }
    }

    fn current_ns(&self) -> Ns {
        self.ns.last().copied().unwrap_or(Ns::Html)
    }

    fn leave_ns(&mut self) {
        if self.ns.len() > 1 {
            self.ns.pop();
        }
    }

    /// Tokenizes `src`, reporting to `sink`. May be called again with more input after
    /// [`Outcome::Stopped`]: the tokenizer state carries over.
    pub(crate) fn scan(&mut self, src: &str, sink: &mut impl Sink) -> Outcome {
        let b = src.as_bytes();
        let n = b.len();
        // Text not yet handed to the sink starts here; scanning goes on from `pos`.
        let mut text_from = 0;
        let mut pos = 0;
        loop {
            // Where the text run ends and the tag at its end (if any) starts.
            let lt = match self.mode {
                Mode::PlainText => {
                    emit_text(sink, src, text_from, n, false);
                    return Outcome::Finished;
                }
                Mode::Raw(name) => {
                    let mut i = pos;
                    loop {
                        match b.get(i..).and_then(|rest| memchr(b'<', rest)) {
                            Some(off) if is_appropriate_end(b, i + off, name) => {
                                break Some(i + off)
                            }
                            Some(off) => i += off + 1,
                            None => break None,
                        }
                    }
                }
                Mode::ScriptData => script_end(b, pos),
                Mode::Data => {
                    let Some(off) = b.get(pos..).and_then(|rest| memchr(b'<', rest)) else {
                        emit_text(sink, src, text_from, n, true);
                        return Outcome::Finished;
                    };
                    let lt = pos + off;
                    // Where the markup starting at `lt` ends, or `None` when `<` is text.
                    let end = match b.get(lt + 1) {
                        Some(c) if c.is_ascii_alphabetic() => {
                            emit_text(sink, src, text_from, lt, true);
                            text_from = lt;
                            match self.start_tag_at(src, lt, sink) {
                                Read::Done(end, Flow::Continue) => Some(end),
                                Read::Done(end, Flow::Stop) => return Outcome::Stopped(end),
                                Read::Eof => return Outcome::Finished,
                                Read::TooLong => return Outcome::TooLong,
                            }
                        }
                        Some(b'/') => match b.get(lt + 2) {
                            Some(c) if c.is_ascii_alphabetic() => {
                                emit_text(sink, src, text_from, lt, true);
                                text_from = lt;
                                match self.end_tag_at(src, lt, sink) {
                                    Read::Done(end, _) => Some(end),
                                    Read::Eof => return Outcome::Finished,
                                    Read::TooLong => return Outcome::TooLong,
                                }
                            }
                            Some(b'>') => Some(lt + 3),
                            Some(_) => Some(after_gt(b, lt + 2)),
                            None => None,
                        },
                        Some(b'!') => Some(self.markup_declaration_end(b, lt)),
                        Some(b'?') => Some(after_gt(b, lt + 2)),
                        _ => None,
                    };
                    let Some(end) = end else {
                        pos = lt + 1;
                        continue;
                    };
                    emit_text(sink, src, text_from, lt, true);
                    if let Some((from, to)) = self.cdata_text(b, lt, end) {
                        // Text, streamed: not bounded as a token is.
                        emit_text(sink, src, from, to, false);
                    } else if end - lt > self.max_token {
                        return Outcome::TooLong;
                    }
                    (text_from, pos) = (end, end);
                    continue;
                }
            };
            // RCDATA, RAWTEXT or script data up to `lt`, the `<` of its end tag.
            let Some(lt) = lt else {
                emit_text(sink, src, text_from, n, false);
                return Outcome::Finished;
            };
            emit_text(sink, src, text_from, lt, false);
            match self.end_tag_at(src, lt, sink) {
                Read::Done(end, _) => (text_from, pos) = (end, end),
                Read::Eof => return Outcome::Finished,
                Read::TooLong => return Outcome::TooLong,
            }
        }
    }

    /// Where the markup declaration (`<!…`) at `lt` ends: a comment, a doctype, a CDATA section
    /// (in foreign content) or a bogus comment.
    fn markup_declaration_end(&self, b: &[u8], lt: usize) -> usize {
        let p = lt + 2;
        if b.get(p..p + 2) == Some(b"--") {
            comment_end(b, p + 2)
        } else if starts_with_ci(b, p, b"doctype") {
            after_gt(b, p + 7)
        } else if self.cdata_allowed() && b.get(p..p + 7) == Some(b"[CDATA[") {
            memchr::memmem::find(b.get(p + 7..).unwrap_or_default(), b"]]>")
                .map_or(b.len(), |off| p + 7 + off + 3)
        } else {
            after_gt(b, p)
        }
    }

    /// CDATA sections are allowed where the current node is foreign.
    fn cdata_allowed(&self) -> bool {
        self.current_ns() != Ns::Html
    }

    /// The text span of the CDATA section `lt..end`, if that markup is one.
    fn cdata_text(&self, b: &[u8], lt: usize, end: usize) -> Option<(usize, usize)> {
        if !(self.cdata_allowed() && b.get(lt + 2..lt + 9) == Some(b"[CDATA[")) {
            return None;
        }
        let close = if b.get(end.saturating_sub(3)..end) == Some(b"]]>") && end >= lt + 12 {
            end - 3
        } else {
            end
        };
        Some((lt + 9, close))
    }

    /// Reads a tag whose name starts at `name_start`: its end and, when `keep_attrs`, its
    /// attributes into `self.attrs`. `None` when the input ends inside it.
    fn read_tag(&mut self, b: &[u8], name_start: usize, keep_attrs: bool) -> Option<TagEnd> {
        self.attrs.clear();
        let n = b.len();
        let mut i = name_start;
        let mut upper = 0;
        while i < n && class(b[i]) & (WS | SLASH | GT) == 0 {
            upper |= class(b[i]);
            i += 1;
        }
        let name_end = i;
        let name_has_capitals = upper != 0;
        loop {
            // Before attribute name.
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            match *b.get(i)? {
                b'>' => {
                    return Some(TagEnd {
                        name_end,
                        name_has_capitals,
                        end: i + 1,
                        self_closing: false,
                    })
                }
                b'/' => {
                    // Self-closing start tag state: anything but `>` is reconsumed as the
                    // start of an attribute name.
                    i += 1;
                    if *b.get(i)? == b'>' {
                        return Some(TagEnd {
                            name_end,
                            name_has_capitals,
                            end: i + 1,
                            self_closing: true,
                        });
                    }
                    continue;
                }
                _ => {}
            }
            // Attribute name: its first character may be `=`.
            let name = i;
            i += 1;
            while i < n && class(b[i]) & (WS | SLASH | GT | EQ) == 0 {
                i += 1;
            }
            let name = (name, i);
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            let mut value = (i, i);
            let mut ends_tag = false;
            if *b.get(i)? == b'=' {
                i += 1;
                while i < n && is_ws(b[i]) {
                    i += 1;
                }
                match *b.get(i)? {
                    quote @ (b'"' | b'\'') => {
                        let close = i + 1 + memchr(quote, b.get(i + 1..)?)?;
                        value = (i + 1, close);
                        i = close + 1;
                    }
                    b'>' => {
                        value = (i, i);
                        ends_tag = true;
                    }
                    _ => {
                        let start = i;
                        while i < n && class(b[i]) & (WS | GT) == 0 {
                            i += 1;
                        }
                        if i >= n {
                            return None;
                        }
                        value = (start, i);
                    }
                }
            }
            if keep_attrs && self.attrs.len() < MAX_ATTRIBUTES {
                self.attrs.push(Attr { name, value });
            }
            if ends_tag {
                return Some(TagEnd {
                    name_end,
                    name_has_capitals,
                    end: i + 1,
                    self_closing: false,
                });
            }
        }
    }

    /// The tag name `src[from..tag.name_end]`, ASCII-lowercased (borrowed when it has no
    /// capitals).
    fn lowercase_name<'a>(
        name_buf: &'a mut String,
        src: &'a str,
        from: usize,
        tag: &TagEnd,
    ) -> &'a str {
        let name = src.get(from..tag.name_end).unwrap_or_default();
        if !tag.name_has_capitals {
            return name;
        }
        name_buf.clear();
        name_buf.push_str(name);
        name_buf.make_ascii_lowercase();
        name_buf
    }

    /// Reads the start tag at `lt` (its name starts with a letter), applies the tree builder's
    /// feedback and reports it.
    fn start_tag_at(&mut self, src: &str, lt: usize, sink: &mut impl Sink) -> Read {
        let tag = match self.read_tag(src.as_bytes(), lt + 1, true) {
            Some(tag) if tag.end - lt <= self.max_token => tag,
            Some(_) => return Read::TooLong,
            None => return self.eof_in_tag(src.len(), lt),
        };
        let mut name_buf = std::mem::take(&mut self.name_buf);
        let name = Self::lowercase_name(&mut name_buf, src, lt + 1, &tag);
        let (element_ns, mode) = self.start_feedback(src, name, tag.self_closing);
        let can_have_content = if element_ns == Ns::Html {
            !is_void(name)
        } else {
            !tag.self_closing
        };
        let flow = sink.start_tag(&StartTag {
            name,
            can_have_content,
            src,
            attrs: &self.attrs,
        });
        self.mode = mode;
        self.name_buf = name_buf;
        Read::Done(tag.end, flow)
    }

    /// The tree builder's reaction to a start tag, as `lol_html` simulates it: the namespace
    /// the element is in, and the text state that follows it.
    fn start_feedback(&mut self, src: &str, name: &str, self_closing: bool) -> (Ns, Mode) {
        let current = self.current_ns();
        match name {
            "svg" | "math" => {
                let ns = if name == "svg" { Ns::Svg } else { Ns::MathMl };
                // A self-closing `<svg/>` is popped at once: the current node stays as it was.
                if !self_closing {
                    self.ns.push(ns);
                }
                (ns, Mode::Data)
            }
            _ if current == Ns::Html => (Ns::Html, mode_after(name)),
            _ => {
                let font_breaks_out = name == "font"
                    && ["color", "size", "face"]
                        .iter()
                        .any(|a| self.attr(src, a).is_some());
                if breaks_out_of_foreign_content(name) || font_breaks_out {
                    self.leave_ns();
                    return (self.current_ns(), Mode::Data);
                }
                let integration = (current == Ns::Svg && is_svg_html_integration_point(name))
                    || (current == Ns::MathMl && is_mathml_text_integration_point(name))
                    || (current == Ns::MathMl
                        && name == "annotation-xml"
                        && self.attr(src, "encoding").is_some_and(|e| {
                            e.eq_ignore_ascii_case("text/html")
                                || e.eq_ignore_ascii_case("application/xhtml+xml")
                        }));
                if integration && !self_closing {
                    self.ns.push(Ns::Html);
                }
                (self.current_ns(), Mode::Data)
            }
        }
    }

    /// The first attribute `name` of the tag just read.
    fn attr<'s>(&self, src: &'s str, name: &str) -> Option<&'s str> {
        self.attrs
            .iter()
            .find(|a| {
                src.get(a.name.0..a.name.1)
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
            .map(|a| src.get(a.value.0..a.value.1).unwrap_or_default())
    }

    /// Reads the end tag at `lt` (`</` and a letter), applies the tree builder's feedback and
    /// reports it.
    fn end_tag_at(&mut self, src: &str, lt: usize, sink: &mut impl Sink) -> Read {
        let tag = match self.read_tag(src.as_bytes(), lt + 2, false) {
            Some(tag) if tag.end - lt <= self.max_token => tag,
            Some(_) => return Read::TooLong,
            None => return self.eof_in_tag(src.len(), lt),
        };
        let mut name_buf = std::mem::take(&mut self.name_buf);
        let name = Self::lowercase_name(&mut name_buf, src, lt + 2, &tag);
        self.end_feedback(name);
        self.mode = Mode::Data;
        sink.end_tag(name);
        self.name_buf = name_buf;
        Read::Done(tag.end, Flow::Continue)
    }

    /// The input (`n` bytes) ended inside a tag starting at `lt`: the tag is dropped, unless it
    /// was already longer than the token limit.
    fn eof_in_tag(&self, n: usize, lt: usize) -> Read {
        if n - lt > self.max_token {
            Read::TooLong
        } else {
            Read::Eof
        }
    }

    /// The tree builder's reaction to an end tag, as `lol_html` simulates it: leaving an
    /// integration point or foreign content.
    fn end_feedback(&mut self, name: &str) {
        if self.ns.len() == 1 {
            // HTML content outside any foreign element: nothing to leave.
            return;
        }
        let current = self.current_ns();
        if current == Ns::Html {
            let Some(&parent) = self.ns.len().checked_sub(2).and_then(|i| self.ns.get(i)) else {
                return;
            };
            if (parent == Ns::MathMl
                && (is_mathml_text_integration_point(name) || name == "annotation-xml"))
                || (parent == Ns::Svg && is_svg_html_integration_point(name))
            {
                self.leave_ns();
            }
        } else if (current == Ns::Svg && name == "svg")
            || (current == Ns::MathMl && name == "math")
            || matches!(name, "p" | "br")
        {
            self.leave_ns();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a scan reported, as readable events: `<name attr=value …>` (with `/` when it cannot
    /// have content), `</name>`, `"data text"`, `'raw text'`.
    #[derive(Default)]
    struct Events {
        events: Vec<String>,
        stop_at: Option<&'static str>,
    }

    impl Sink for Events {
        fn text(&mut self, text: &str, data: bool) {
            // Adjacent runs of one kind are one text node to the consumer.
            let (open, close) = if data { ('"', '"') } else { ('\'', '\'') };
            if let Some(last) = self.events.last_mut() {
                if last.starts_with(open) && last.ends_with(close) && last.len() > 1 {
                    last.pop();
                    last.push_str(text);
                    last.push(close);
                    return;
                }
            }
            self.events.push(format!("{open}{text}{close}"));
        }

        fn start_tag(&mut self, tag: &StartTag<'_>) -> Flow {
            let mut event = format!("<{}", tag.name);
            for name in ["href", "rel", "charset", "x", "y"] {
                if let Some(value) = tag.attr(name) {
                    event.push_str(&format!(" {name}={value}"));
                }
            }
            if !tag.can_have_content {
                event.push('/');
            }
            event.push('>');
            self.events.push(event);
            if self.stop_at == Some(tag.name) {
                Flow::Stop
            } else {
                Flow::Continue
            }
        }

        fn end_tag(&mut self, name: &str) {
            self.events.push(format!("</{name}>"));
        }
    }

    fn scan(html: &str) -> Vec<String> {
        let mut events = Events::default();
        assert_eq!(
            Scanner::new(1 << 20).scan(html, &mut events),
            Outcome::Finished
        );
        events.events
    }

    #[test]
    fn text_and_tags_come_out_in_document_order_with_raw_entities() {
        assert_eq!(
            scan("a &amp; b<p>c</p>"),
            ["\"a &amp; b\"", "<p>", "\"c\"", "</p>"]
        );
    }

    #[test]
    fn tag_and_attribute_names_are_lowercased_and_values_read_in_every_quoting() {
        assert_eq!(
            scan(r#"<A HREF="/a b" REL='x y' X=un"q'uoted Y>"#),
            ["<a href=/a b rel=x y x=un\"q'uoted y=>"]
        );
        assert_eq!(scan("<a href = /x >"), ["<a href=/x>"]);
        assert_eq!(scan("<a href=>t"), ["<a href=>", "\"t\""]);
    }

    #[test]
    fn the_first_of_duplicate_attributes_wins() {
        assert_eq!(scan("<a href=1 HREF=2 href=3>"), ["<a href=1>"]);
    }

    #[test]
    fn attributes_may_follow_a_quoted_value_or_a_slash_without_whitespace() {
        assert_eq!(scan(r#"<a x="1"y=2>"#), ["<a x=1 y=2>"]);
        assert_eq!(scan("<a/x=1/y>"), ["<a x=1/y>"]);
    }

    #[test]
    fn a_greater_than_sign_inside_a_quoted_value_does_not_end_the_tag() {
        assert_eq!(scan(r#"<a href="a>b">t"#), ["<a href=a>b>", "\"t\""]);
    }

    #[test]
    fn self_closing_html_elements_are_open_unless_void() {
        assert_eq!(scan("<div/>x"), ["<div>", "\"x\""]);
        assert_eq!(scan("<br/><img><link>"), ["<br/>", "<img/>", "<link/>"]);
        for void in [
            "param", "keygen", "basefont", "bgsound", "wbr", "source", "track",
        ] {
            assert_eq!(scan(&format!("<{void}>")), [format!("<{void}/>")]);
        }
    }

    #[test]
    fn a_less_than_sign_not_opening_markup_is_text() {
        assert_eq!(scan("a < b <3 <"), ["\"a < b <3 <\""]);
        assert_eq!(scan("a</"), ["\"a</\""]);
    }

    #[test]
    fn an_end_tag_without_a_name_is_dropped_and_a_bogus_one_is_a_comment() {
        assert_eq!(scan("a</>b"), ["\"ab\""]);
        assert_eq!(scan("a</ p>b</3>c"), ["\"abc\""]);
    }

    #[test]
    fn end_tag_attributes_are_ignored_and_their_names_lowercased() {
        assert_eq!(
            scan("<p>x</P class=\"a>b\">y"),
            ["<p>", "\"x\"", "</p>", "\"y\""]
        );
    }

    #[test]
    fn a_tag_cut_by_the_end_of_input_is_dropped() {
        assert_eq!(scan("text<a href=\"x"), ["\"text\""]);
        assert_eq!(scan("text<div"), ["\"text\""]);
        assert_eq!(scan("text</div"), ["\"text\""]);
    }

    #[test]
    fn comments_end_at_their_first_close_including_the_abrupt_ones() {
        assert_eq!(scan("a<!-- <p> -->b"), ["\"ab\""]);
        assert_eq!(scan("a<!-->b"), ["\"ab\""]);
        assert_eq!(scan("a<!--->b"), ["\"ab\""]);
        assert_eq!(scan("a<!---->b"), ["\"ab\""]);
        assert_eq!(scan("a<!-- x --!>b"), ["\"ab\""]);
        assert_eq!(scan("a<!-- --!x -- > --->b"), ["\"ab\""]);
        assert_eq!(scan("a<!--<!-->b"), ["\"ab\""]);
        assert_eq!(scan("a<!-- never closed <p>"), ["\"a\""]);
    }

    #[test]
    fn doctypes_and_bogus_comments_are_skipped() {
        assert_eq!(scan("<!DOCTYPE html>a"), ["\"a\""]);
        // The doctype's first `>` ends it, even inside a quoted identifier (as in the spec).
        assert_eq!(scan("<!doctype html PUBLIC \"a>b\">c"), ["\"b\">c\""]);
        assert_eq!(scan("a<!x <p> >b<?php echo '<p>' ?>c"), ["\"a >b' ?>c\""]);
    }

    #[test]
    fn cdata_is_a_bogus_comment_in_html_and_text_in_foreign_content() {
        assert_eq!(scan("a<![CDATA[<p>]]>b"), ["\"a]]>b\""]);
        assert_eq!(
            scan("<svg><![CDATA[</svg><p>]]></svg>"),
            ["<svg>", "'</svg><p>'", "</svg>"]
        );
    }

    #[test]
    fn rcdata_and_rawtext_end_only_at_their_own_end_tag() {
        assert_eq!(
            scan("<title>a <b> </titlex> </TITLE >c"),
            ["<title>", "'a <b> </titlex> '", "</title>", "\"c\""]
        );
        assert_eq!(
            scan("<style>p > a { }</style/>x"),
            ["<style>", "'p > a { }'", "</style>", "\"x\""]
        );
        for raw in [
            "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
        ] {
            assert_eq!(
                scan(&format!("<{raw}><p></{raw}>")),
                [format!("<{raw}>"), "'<p>'".to_owned(), format!("</{raw}>")]
            );
        }
    }

    #[test]
    fn rawtext_cut_by_the_end_of_input_is_text_up_to_a_dropped_end_tag() {
        assert_eq!(scan("<style>a</style"), ["<style>", "'a</style'"]);
        assert_eq!(scan("<style>a</style x=\"y"), ["<style>", "'a'"]);
    }

    #[test]
    fn script_data_ends_at_the_first_script_end_tag_outside_an_escape() {
        assert_eq!(
            scan("<script>if (a<b) x = '</p>';</script>c"),
            ["<script>", "'if (a<b) x = '</p>';'", "</script>", "\"c\""]
        );
    }

    #[test]
    fn a_script_end_tag_inside_an_escaped_comment_still_closes_the_script() {
        assert_eq!(
            scan("<script><!-- x </script>c"),
            ["<script>", "'<!-- x '", "</script>", "\"c\""]
        );
    }

    #[test]
    fn a_script_end_tag_inside_an_escaped_comment_after_a_script_start_does_not_close_it() {
        assert_eq!(
            scan("<script><!-- document.write('<script>x</script>') --></script>c"),
            [
                "<script>",
                "'<!-- document.write('<script>x</script>') -->'",
                "</script>",
                "\"c\""
            ]
        );
    }

    #[test]
    fn the_end_of_an_escaped_comment_returns_to_plain_script_data() {
        // After `-->` a `<script>` no longer double-escapes.
        assert_eq!(
            scan("<script><!-- a --> '<script>' </script>c"),
            ["<script>", "'<!-- a --> '<script>' '", "</script>", "\"c\""]
        );
    }

    #[test]
    fn plaintext_never_ends() {
        assert_eq!(
            scan("<plaintext>a</plaintext><p>"),
            ["<plaintext>", "'a</plaintext><p>'"]
        );
    }

    #[test]
    fn foreign_content_has_no_rawtext_and_self_closing_elements_are_empty() {
        assert_eq!(
            scan("<svg><style><a x=1></a></style><path/></svg>"),
            ["<svg>", "<style>", "<a x=1>", "</a>", "</style>", "<path/>", "</svg>"]
        );
        assert_eq!(scan("<svg><path/></svg>"), ["<svg>", "<path/>", "</svg>"]);
        assert_eq!(scan("<math><link></math>"), ["<math>", "<link>", "</math>"]);
    }

    #[test]
    fn html_integration_points_in_svg_bring_back_rawtext() {
        assert_eq!(
            scan("<svg><foreignObject><style><p></style></foreignObject><style><p></svg>"),
            [
                "<svg>",
                "<foreignobject>",
                "<style>",
                "'<p>'",
                "</style>",
                "</foreignobject>",
                "<style>",
                "<p>",
                "</svg>"
            ]
        );
    }

    #[test]
    fn a_self_closing_svg_does_not_enter_foreign_content() {
        assert_eq!(
            scan("<svg/><style><p></style>"),
            ["<svg/>", "<style>", "'<p>'", "</style>"]
        );
    }

    #[test]
    fn breakout_elements_leave_foreign_content() {
        assert_eq!(
            scan("<svg><div><style><p></style>"),
            ["<svg>", "<div>", "<style>", "'<p>'", "</style>"]
        );
        assert_eq!(
            scan("<svg><font color=red><style><p></style>"),
            ["<svg>", "<font>", "<style>", "'<p>'", "</style>"]
        );
        assert_eq!(
            scan("<svg><font><style><p></style>"),
            ["<svg>", "<font>", "<style>", "<p>", "</style>"]
        );
    }

    #[test]
    fn a_meta_charset_can_stop_the_scan_right_after_its_tag() {
        let mut events = Events {
            stop_at: Some("meta"),
            ..Events::default()
        };
        let html = "a<meta charset=latin1>b";
        let mut scanner = Scanner::new(1 << 20);
        assert_eq!(scanner.scan(html, &mut events), Outcome::Stopped(22));
        assert_eq!(scanner.scan(&html[22..], &mut events), Outcome::Finished);
        assert_eq!(events.events, ["\"a\"", "<meta charset=latin1/>", "\"b\""]);
    }

    #[test]
    fn a_tag_longer_than_the_limit_stops_the_scan_after_the_text_before_it() {
        let mut events = Events::default();
        let html = format!("a<p title=\"{}\">b", "x".repeat(100));
        assert_eq!(Scanner::new(64).scan(&html, &mut events), Outcome::TooLong);
        assert_eq!(events.events, ["\"a\""]);
        let mut events = Events::default();
        let html = format!("a<!--{}", "x".repeat(100));
        assert_eq!(Scanner::new(64).scan(&html, &mut events), Outcome::TooLong);
    }

    #[test]
    fn non_ascii_text_and_names_are_kept_whole() {
        assert_eq!(
            scan("東京<p-é>\u{0}é</p-é>"),
            ["\"東京\"", "<p-é>", "\"\u{0}é\"", "</p-é>"]
        );
    }
}
