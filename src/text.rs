//! Text from outside (an agent's events, a transcript) made safe to keep
//! and to show: no terminal escapes, no control characters.

use std::borrow::Cow;
use std::iter::Peekable;
use std::str::Chars;

/// `text` as plain text: terminal escape sequences (colours, cursor moves,
/// window titles) removed, other control characters dropped, line breaks
/// written `\n`; tabs kept. Build output coloured for a terminal keeps its
/// words and loses its colours.
pub fn plain_text(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.push('\n'),
            '\u{1b}' => skip_escape(&mut chars),
            // The one-character form of ESC [.
            '\u{9b}' => skip_control_sequence(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` as a terminal would have left it, then as [`plain_text`]: a line
/// a carriage return rewrote (a progress bar: `10%\r20%\r100%`) is what it
/// was rewritten to, and a backspace takes back the character before it
/// (`b\bbold`, the overstrike of bold, is `bold`). For what a program
/// printed: a failure's text, build output.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    if !text.contains(['\r', '\u{8}']) {
        return plain_text(text);
    }
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        // The last rewrite that wrote anything ("50%\r" still shows 50%).
        let line = line.strip_suffix('\r').unwrap_or(line);
        let shown = line.rsplit('\r').find(|s| !s.is_empty()).unwrap_or("");
        let start = out.len();
        for c in shown.chars() {
            if c == '\u{8}' {
                if out.len() > start {
                    out.pop();
                }
            } else {
                out.push(c);
            }
        }
    }
    Cow::Owned(plain_text(&out).into_owned())
}

/// Skips what follows an ESC: a control sequence (`ESC [ … m`), a string
/// (`ESC ] … BEL`, a window title or a link), a character set's choice
/// (`ESC ( B`, which `tput sgr0` writes), or one character.
fn skip_escape(chars: &mut Peekable<Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_control_sequence(chars),
        Some(' '..='/') => {
            // Intermediate bytes, then one final byte.
            while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
            chars.next();
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            // Ends at BEL or at ESC \.
            while let Some(c) = chars.next() {
                if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Parameters and intermediates (0x20–0x3F), then one final byte.
fn skip_control_sequence(chars: &mut Peekable<Chars<'_>>) {
    while chars.next_if(|c| (' '..='?').contains(c)).is_some() {}
    chars.next_if(|c| ('@'..='~').contains(c));
}

/// A character that changes the order in which the text around it is shown
/// (bidirectional overrides, embeddings, isolates and marks): it makes a
/// path or a name read as another one (`docs/` + U+202E + `txt.exe` reads
/// `docs/exe.txt`).
pub fn is_reordering(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// `text` for a terminal: control characters (terminal escapes from a
/// hostile source) shown as U+FFFD, newlines and tabs kept.
pub fn printable(text: &str) -> Cow<'_, str> {
    let shown = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if shown(c) { c } else { '\u{FFFD}' })
            .collect(),
    )
}

/// `text` on one line of a terminal (a path, a title): every control
/// character, line breaks included, shown as U+FFFD; a code line's end as
/// a space.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() || c == CODE_LINE_BREAK) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                CODE_LINE_BREAK => ' ',
                c if c.is_control() => '\u{FFFD}',
                c => c,
            })
            .collect(),
    )
}

/// What separates the lines of a code block in a passage's text (U+2028
/// LINE SEPARATOR): whitespace to search and research, which read a
/// passage's blocks as its lines, and a line break where text is shown.
pub const CODE_LINE_BREAK: char = '\u{2028}';

/// `text` to show: the lines of its code blocks on lines of their own.
pub fn code_lines(text: &str) -> Cow<'_, str> {
    if text.contains(CODE_LINE_BREAK) {
        Cow::Owned(text.replace(CODE_LINE_BREAK, "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_control_characters_are_removed() {
        let cases = [
            ("plain text\twith a tab\n", "plain text\twith a tab\n"),
            (
                "\u{1b}[1m\u{1b}[31merror[E0425]\u{1b}[0m: cannot find value",
                "error[E0425]: cannot find value",
            ),
            ("\u{1b}]0;pwned\u{7}title gone", "title gone"),
            (
                "\u{1b}]8;;http://evil\u{1b}\\link\u{1b}]8;;\u{1b}\\",
                "link",
            ),
            ("erase\u{1b}[2K line", "erase line"),
            ("crlf\r\nline\rover", "crlf\nline\nover"),
            ("nul\u{0}bell\u{7}", "nulbell"),
            ("\u{9b}31mred", "red"),
            ("cut at the end \u{1b}[", "cut at the end "),
            ("두뇌 🚀", "두뇌 🚀"),
            ("\u{1b}(Bcharset \u{1b})0set", "charset set"),
        ];
        for (raw, want) in cases {
            assert_eq!(plain_text(raw), want, "{raw:?}");
        }
        assert!(matches!(plain_text("as is"), Cow::Borrowed(_)));
    }

    #[test]
    fn terminal_text_is_what_the_terminal_was_left_showing() {
        let cases = [
            (
                "Downloading 10%\rDownloading 100%\ndone",
                "Downloading 100%\ndone",
            ),
            ("50%\r", "50%"),
            ("crlf\r\nkept", "crlf\nkept"),
            ("b\u{8}bold and _\u{8}u", "bold and u"),
            ("\u{8}\u{8}start", "start"),
            ("\u{1b}[32m 1/3\r\u{1b}[32m 3/3\u{1b}[0m\nok", " 3/3\nok"),
            ("plain", "plain"),
        ];
        for (raw, want) in cases {
            assert_eq!(terminal_text(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn printable_text_shows_controls_as_replacement_characters() {
        assert_eq!(printable("a\u{1b}[31mb\nc\t"), "a\u{FFFD}[31mb\nc\t");
        assert!(matches!(printable("as is\n"), Cow::Borrowed(_)));
        assert_eq!(
            one_line("a\nFAKE\u{1b}]0;x\u{7}.md"),
            "a\u{FFFD}FAKE\u{FFFD}]0;x\u{FFFD}.md"
        );
    }
}
