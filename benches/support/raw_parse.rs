//! The bare `lol_html` pass that content analysis is measured against: the handler shape
//! `content::analyze` had on `lol_html` (every element with an end-tag handler, every text chunk),
//! doing no work in them. `analyze` now runs on its own tokenizer (`content/html_scan.rs`), which
//! this pass bounded: it stays the well-kept parser's ceiling, measured beside `analyze` in the
//! same run. Shared by the content bench and the parse ceiling.

use std::cell::Cell;
use std::rc::Rc;

/// Parses `html` and returns elements seen plus text bytes (so the pass cannot be optimised away).
pub fn raw_parse(html: &[u8]) -> usize {
    use lol_html::{doc_text, element, HtmlRewriter, Settings};
    let n = Rc::new(Cell::new(0usize));
    let (n1, n2) = (n.clone(), n.clone());
    let settings = Settings::new()
        .with_strict(false)
        .append_element_content_handler(element!("*", move |el| {
            n1.set(n1.get() + 1);
            if let Some(h) = el.end_tag_handlers() {
                let n3 = n1.clone();
                let handler: lol_html::EndTagHandler<'static> = Box::new(move |_| {
                    n3.set(n3.get() + 1);
                    Ok(())
                });
                h.push(handler);
            }
            Ok(())
        }))
        .append_document_content_handler(doc_text!(move |t| {
            n2.set(n2.get() + t.as_str().len());
            Ok(())
        }));
    let mut rw = HtmlRewriter::new(settings, |_: &[u8]| {});
    let _ = rw.write(html);
    let _ = rw.end();
    n.get()
}
