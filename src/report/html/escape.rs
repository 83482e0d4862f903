//! Text from the data made safe in the page, and the command lines the page shows.

/// `text` made safe in HTML text and in quoted attribute values: `& < > " '` as character
/// references, and control characters (which HTML does not allow) as `�`.
pub(crate) fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    let special = |c: char| {
        matches!(c, '&' | '<' | '>' | '"' | '\'') || (c.is_control() && c != '\n' && c != '\t')
    };
    if !text.contains(special) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if special(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape("billing.invoices"), "billing.invoices");
        assert_eq!(
            escape(r#"<script>alert("x's & y")</script>"#),
            "&lt;script&gt;alert(&quot;x&#39;s &amp; y&quot;)&lt;/script&gt;"
        );
        assert_eq!(
            escape("Zoë 東京 \u{0}\u{7f}\tx\n"),
            "Zoë 東京 \u{FFFD}\u{FFFD}\tx\n"
        );
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }
}
