//! The page every HTML report shares: head, styles, the sorting script.

use maud::{DOCTYPE, Markup, PreEscaped, html};

const CSS: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("sort.js");

/// The whole page around `body`.
pub(super) fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={"xferbench"};
                title { (title) }
                style {
                    (PreEscaped(crate::chart::theme_css()))
                    (PreEscaped(CSS))
                    (PreEscaped(crate::chart::CSS))
                }
            }
            body {
                (body)
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
    .into_string()
}
