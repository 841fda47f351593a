//! File names of knowledge notes: `YYYY-MM-DD <slug>.md`.
//!
//! The slug is the first [`SLUG_CHARS`] characters of the prompt, cleaned so
//! that the name is one plain file name on every common filesystem and a
//! name an Obsidian link can name: path separators, `:*?"<>|`, the `#^[]`
//! that end or break a `[[link]]`, control characters and leading dots are removed,
//! runs of whitespace become one space, and trailing dots and spaces (which
//! Windows drops) are trimmed. Letters of any script are kept. Because the
//! name always starts with the date, a Windows device name such as `CON` can
//! never be the whole file name.

use chrono::NaiveDate;
use unicode_normalization::UnicodeNormalization;

/// Characters of the prompt that make up the slug.
pub const SLUG_CHARS: usize = 30;

/// Slug used when nothing of the prompt survives cleaning.
pub const FALLBACK_SLUG: &str = "note";

/// Characters that are removed from a slug besides control characters:
/// those no file name may hold somewhere, and those a `[[link]]` cannot name.
const FORBIDDEN: &[char] = &[
    '/', '\\', ':', '*', '?', '"', '<', '>', '|', '#', '^', '[', ']',
];

/// The slug of a prompt; never empty, never a path.
pub fn slug(prompt: &str) -> String {
    let head: String = prompt.nfc().take(SLUG_CHARS).collect();
    let mut slug = String::with_capacity(head.len());
    let mut pending_space = false;
    for c in head.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if c.is_control() || crate::text::is_reordering(c) || FORBIDDEN.contains(&c) {
            continue;
        }
        if slug.is_empty() && c == '.' {
            continue;
        }
        if pending_space && !slug.is_empty() {
            slug.push(' ');
        }
        pending_space = false;
        slug.push(c);
    }
    // A cut emoji sequence may end in a joiner; Windows drops trailing dots.
    let trimmed = slug.trim_end_matches(['.', ' ', '\u{200D}']);
    if trimmed.is_empty() {
        FALLBACK_SLUG.to_string()
    } else {
        trimmed.to_string()
    }
}

/// The file name of the note for `prompt` written on `date`; `copy` > 1 adds
/// ` (copy)` for a different prompt whose slug is already taken that day.
pub fn note_file_name(date: NaiveDate, prompt: &str, copy: u32) -> String {
    let slug = slug(prompt);
    if copy > 1 {
        format!("{} {slug} ({copy}).md", date.format("%Y-%m-%d"))
    } else {
        format!("{} {slug}.md", date.format("%Y-%m-%d"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        let long = "x".repeat(300);
        let cases: &[(&str, &str)] = &[
            (
                "Add a cancellation fee to transient bookings",
                "Add a cancellation fee to tran",
            ),
            ("../../etc/passwd", "etcpasswd"),
            ("..\\..\\Windows\\System32", "WindowsSystem32"),
            ("/absolute/path", "absolutepath"),
            ("CON", "CON"),
            ("nul.txt", "nul.txt"),
            ("....", FALLBACK_SLUG),
            ("/////", FALLBACK_SLUG),
            ("./.././", FALLBACK_SLUG),
            ("", FALLBACK_SLUG),
            ("   \t\n  ", FALLBACK_SLUG),
            ("What: *is* \"this\" <thing>? a|b", "What is this thing ab"),
            ("Fix #12: [urgent] SSO | login^?", "Fix 12 urgent SSO login"),
            ("tabs\tand\nnew  lines", "tabs and new lines"),
            ("nul\u{0}bell\u{7}esc\u{1b}", "nulbellesc"),
            ("trailing dots...", "trailing dots"),
            ("trailing spaces   x", "trailing spaces x"),
            ("두뇌를 검색에 쓰는 방법", "두뇌를 검색에 쓰는 방법"),
            ("数据库迁移怎么做", "数据库迁移怎么做"),
            ("🚀 launch the rocket 🚀🚀", "🚀 launch the rocket 🚀🚀"),
            ("\u{202E}gnp.exe", "gnp.exe"),
            (".hidden note", "hidden note"),
            (&long, &long[..30]),
        ];
        for (prompt, expected) in cases {
            assert_eq!(slug(prompt), *expected, "prompt {prompt:?}");
        }
    }

    #[test]
    fn slug_counts_characters_not_bytes() {
        let prompt = "가".repeat(40);
        assert_eq!(slug(&prompt).chars().count(), SLUG_CHARS);
        let emoji = "👩‍👩‍👧‍👦".repeat(10);
        let s = slug(&emoji);
        assert!(s.chars().count() <= SLUG_CHARS);
        assert!(!s.ends_with('\u{200D}'));
    }

    #[test]
    fn decomposed_hangul_is_composed() {
        let decomposed: String = "한국어".nfd().collect();
        assert_eq!(slug(&decomposed), "한국어");
    }

    #[test]
    fn file_names_are_one_plain_component() {
        let date = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        for prompt in [
            "../../etc/passwd",
            "CON",
            "....",
            "a/b\\c",
            &"y".repeat(300),
        ] {
            let name = note_file_name(date, prompt, 1);
            let path = std::path::Path::new(&name);
            assert_eq!(path.components().count(), 1, "{name:?}");
            assert!(name.starts_with("2026-11-22 ") && name.ends_with(".md"));
        }
        assert_eq!(note_file_name(date, "CON", 1), "2026-11-22 CON.md");
        assert_eq!(note_file_name(date, "x", 3), "2026-11-22 x (3).md");
    }
}
