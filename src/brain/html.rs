//! The text of the HTML inside a note.
//!
//! Markdown lets a note carry raw HTML (`<dl><dt>--vcs</dt><dd><p>…`,
//! `<span style=…>`, `<br>`, comments). What the note *says* is the text
//! between the tags: that is what is indexed, split into sentences and
//! quoted as an answer. The markup's words (`class`, `href`,
//! `option-anchor`) would otherwise be searched and end up in answers.
//!
//! pulldown-cmark hands an HTML block over line by line, so [`HtmlText`]
//! keeps its state (inside a tag, a comment, a `<script>`) from one piece to
//! the next. Only the names of HTML elements count as tags: `<name>` or
//! `<local>` in a note's prose is a placeholder the note says, and stays.

/// What a piece of HTML turns into, in order.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text of the note (entities decoded).
    Text(String),
    /// A block element opens or closes here (`<p>`, `<dd>`, `<li>`, `<tr>`):
    /// what follows is a new block of the note.
    Break,
    /// A line break (`<br>`).
    LineBreak,
}

/// Strips tags from consecutive pieces of one note's HTML.
#[derive(Debug, Default)]
pub struct HtmlText {
    state: State,
    /// Inline HTML of a paragraph: only formatting tags are dropped.
    inline: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Text,
    /// Inside a tag; `quote` is the quote character of an open attribute
    /// value, `kind` what the tag does once it closes.
    Tag { quote: Option<u8>, kind: TagKind },
    /// Inside `<!-- … -->`.
    Comment,
    /// Inside an element whose content is not text (`<script>`, `<style>`,
    /// `<svg>`), until its closing tag.
    Skip(Skipped),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagKind {
    Inline,
    Block,
    LineBreak,
    /// Opens an element whose content is skipped.
    StartSkip(Skipped),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skipped {
    Script,
    Style,
    Svg,
}

impl Skipped {
    fn name(self) -> &'static str {
        match self {
            Skipped::Script => "script",
            Skipped::Style => "style",
            Skipped::Svg => "svg",
        }
    }
}

/// HTML elements that start a new block of text.
const BLOCK_ELEMENTS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "iframe",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
];

/// HTML elements that format the text around them; the only ones dropped
/// from a paragraph's inline HTML (with `<br>`).
const FORMATTING_ELEMENTS: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i",
    "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup",
    "time", "tt", "u", "var",
];

/// Other HTML elements that stay within a block of text.
const INLINE_ELEMENTS: &[&str] = &[
    "audio", "img", "input", "label", "picture", "source", "video", "wbr",
];

impl HtmlText {
    /// The pieces of one tag of inline HTML in a paragraph. Formatting
    /// (`<b>`, `<kbd>`, `<span …>`, `<br>`) and comments are dropped; any
    /// other tag (a `<script>` or `<img …>` the note talks about) stays as
    /// written, as the text between the tags does.
    pub fn inline(html: &str) -> Vec<Piece> {
        HtmlText {
            state: State::Text,
            inline: true,
        }
        .feed(html)
    }

    /// The pieces of `html`, the next line of an HTML block.
    pub fn feed(&mut self, html: &str) -> Vec<Piece> {
        let bytes = html.as_bytes();
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Comment => match html[i..].find("-->") {
                    Some(end) => {
                        i += end + 3;
                        self.state = State::Text;
                    }
                    None => i = bytes.len(),
                },
                State::Skip(skipped) => {
                    let close = format!("</{}", skipped.name());
                    match find_ignore_case(&html[i..], &close) {
                        Some(at) => {
                            i += at + close.len();
                            self.state = State::Tag {
                                quote: None,
                                kind: TagKind::Inline,
                            };
                        }
                        None => i = bytes.len(),
                    }
                }
                State::Tag { quote, kind } => {
                    let byte = bytes[i];
                    i += 1;
                    match quote {
                        Some(q) if byte == q => {
                            self.state = State::Tag { quote: None, kind };
                        }
                        Some(_) => {}
                        None if byte == b'"' || byte == b'\'' => {
                            self.state = State::Tag {
                                quote: Some(byte),
                                kind,
                            };
                        }
                        None if byte == b'>' => {
                            self.state = State::Text;
                            match kind {
                                TagKind::Inline => {}
                                TagKind::Block => push(&mut pieces, &mut text, Piece::Break),
                                TagKind::LineBreak => {
                                    push(&mut pieces, &mut text, Piece::LineBreak)
                                }
                                TagKind::StartSkip(skipped) => self.state = State::Skip(skipped),
                            }
                        }
                        None => {}
                    }
                }
                State::Text => {
                    let run = html[i..].find(['<', '&']).unwrap_or(bytes.len() - i);
                    text.push_str(&html[i..i + run]);
                    i += run;
                    if i == bytes.len() {
                        break;
                    }
                    let rest = &html[i..];
                    if rest.starts_with("<!--") {
                        self.state = State::Comment;
                        i += 4;
                    } else if let Some((kind, len)) = rest
                        .strip_prefix('<')
                        .and_then(|rest| tag_start(rest, self.inline))
                    {
                        self.state = State::Tag { quote: None, kind };
                        i += 1 + len;
                    } else if let Some((decoded, len)) = entity(rest) {
                        text.push(decoded);
                        i += len;
                    } else {
                        text.push(bytes[i] as char);
                        i += 1;
                    }
                }
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        pieces
    }
}

fn push(pieces: &mut Vec<Piece>, text: &mut String, piece: Piece) {
    if !text.is_empty() {
        pieces.push(Piece::Text(std::mem::take(text)));
    }
    pieces.push(piece);
}

/// After a `<`: the kind of tag an HTML element's name opens, and the
/// length of `/name`; `None` when what follows is not an element's tag (or,
/// `inline`, not one that formats text).
fn tag_start(rest: &str, inline: bool) -> Option<(TagKind, usize)> {
    let closing = rest.starts_with('/');
    let name_at = usize::from(closing);
    let name_len = rest[name_at..]
        .bytes()
        .position(|b| !b.is_ascii_alphanumeric())
        .unwrap_or(rest.len() - name_at);
    let after = rest.as_bytes().get(name_at + name_len).copied();
    if name_len == 0
        || !matches!(
            after,
            None | Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
        )
    {
        return None;
    }
    let name = rest[name_at..name_at + name_len].to_ascii_lowercase();
    if inline && name != "br" && !FORMATTING_ELEMENTS.contains(&name.as_str()) {
        return None;
    }
    let kind = match name.as_str() {
        "br" => TagKind::LineBreak,
        "script" if !closing => TagKind::StartSkip(Skipped::Script),
        "style" if !closing => TagKind::StartSkip(Skipped::Style),
        "svg" if !closing => TagKind::StartSkip(Skipped::Svg),
        "script" | "style" | "svg" => TagKind::Inline,
        name if BLOCK_ELEMENTS.contains(&name) => TagKind::Block,
        name if FORMATTING_ELEMENTS.contains(&name) || INLINE_ELEMENTS.contains(&name) => {
            TagKind::Inline
        }
        _ => return None,
    };
    Some((kind, name_at + name_len))
}

/// A character reference at the start of `rest` (`&amp;`, `&#39;`,
/// `&#x2014;`): the character and the reference's length.
fn entity(rest: &str) -> Option<(char, usize)> {
    let end = rest.bytes().take(12).position(|b| b == b';')?;
    let name = &rest[1..end];
    let decoded = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "copy" => '©',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code).filter(|c| *c != '\0')?
        }
    };
    Some((decoded, end + 1))
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(pieces: &[&str]) -> String {
        let mut html = HtmlText::default();
        let mut out = String::new();
        for piece in pieces {
            for p in html.feed(piece) {
                match p {
                    Piece::Text(t) => out.push_str(&t),
                    Piece::Break => out.push('|'),
                    Piece::LineBreak => out.push('/'),
                }
            }
        }
        out
    }

    #[test]
    fn tags_go_and_their_text_stays() {
        assert_eq!(
            text_of(&[
                r##"<dt class="option-term" id="x"><a class="option-anchor" href="#x"><code>--vcs</code> <em>vcs</em></a></dt>"##,
                "\n",
                r#"<dd class="option-desc"><p>Defaults to <code>git</code> &amp; more.</p>"#,
            ]),
            "|--vcs vcs|\n||Defaults to git & more.|"
        );
    }

    #[test]
    fn a_tag_or_comment_may_span_pieces() {
        assert_eq!(
            text_of(&["<a href=\"x\n", "y>\">link</a> <!-- a\n", "note -->after"]),
            "link after"
        );
    }

    #[test]
    fn placeholders_and_stray_brackets_are_text() {
        assert_eq!(
            text_of(&["run <name> with a < b and &unknown; or & alone"]),
            "run <name> with a < b and &unknown; or & alone"
        );
        assert_eq!(text_of(&["&#39;x&#x2014;y&lt;z&gt;"]), "'x—y<z>");
        assert_eq!(text_of(&["&#0;"]), "&#0;");
        assert_eq!(text_of(&["&amp;한국어"]), "&한국어");
    }

    #[test]
    fn scripts_styles_and_drawings_are_not_text() {
        assert_eq!(
            text_of(&[
                "a<script>if (x < y) {}",
                "</script>b<style>p { color: red }</STYLE>c",
                "<svg><text>label</text></svg>d",
            ]),
            "abcd"
        );
    }

    #[test]
    fn a_paragraph_loses_only_its_formatting_tags() {
        let inline = |pieces: &[&str]| {
            let mut out = String::new();
            for piece in pieces {
                for p in HtmlText::inline(piece) {
                    match p {
                        Piece::Text(t) => out.push_str(&t),
                        _ => out.push('/'),
                    }
                }
            }
            out
        };
        assert_eq!(
            inline(&[
                "<kbd>",
                "<span style=\"x\">",
                "</span>",
                "<br>",
                "<!-- c -->"
            ]),
            "/"
        );
        assert_eq!(
            inline(&["<script>", "<img src=x onerror=alert(1)>", "<p>", "<name>"]),
            "<script><img src=x onerror=alert(1)><p><name>"
        );
    }

    #[test]
    fn line_breaks_are_kept_apart() {
        assert_eq!(text_of(&["one<br>two<br/>three"]), "one/two/three");
    }
}
