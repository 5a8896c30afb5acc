//! A study's `summary.md` as HTML: CommonMark with GitHub tables; any raw HTML in the
//! text is shown as text, never interpreted (the findings quote error messages and
//! parameters from the results).

use maud::{Markup, PreEscaped};
use pulldown_cmark::{Event, Options, Parser, html::push_html};

/// Renders Markdown to HTML, with raw HTML escaped.
pub fn markdown(text: &str) -> Markup {
    let events = Parser::new_ext(text, Options::ENABLE_TABLES).map(|e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        other => other,
    });
    let mut out = String::new();
    push_html(&mut out, events);
    PreEscaped(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_its_formatting_and_loses_its_html() {
        let h = markdown(
            "# Title\n\n**Speed-up.** `x` <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n\
             <div>block</div>\n\n| a | b |\n|--|--|\n| 1 | 2 |\n",
        )
        .into_string();
        assert!(h.contains("<h1>Title</h1>"), "{h}");
        assert!(h.contains("<strong>Speed-up.</strong>") && h.contains("<code>x</code>"));
        assert!(h.contains("<table>"), "{h}");
        assert!(
            !h.contains("<script") && !h.contains("<img") && !h.contains("<div"),
            "{h}"
        );
        assert!(h.contains("&lt;script&gt;"), "{h}");
    }
}
