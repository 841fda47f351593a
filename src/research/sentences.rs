//! Splitting passages into sentences, for English, Korean and CJK text.
//!
//! An answer is a sentence or two, so the decider scores sentences. A
//! sentence ends at `.`, `!` or `?` followed by a space and something that
//! can start a sentence (not after an abbreviation or an initial, not inside
//! "3.5"), at the CJK full stops `。！？` (no space needed), and at a line
//! break (list items and table rows are sentences of their own).

/// Words after which a period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "cf", "no",
    "fig", "approx", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "mt", "ft", "gen", "col", "lt", "sgt", "rev", "u.s",
];

/// Byte ranges of the sentences of `text`, trimmed, empty ones left out.
pub fn sentence_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let end_here = match c {
            '\n' => Some(at),
            '。' | '！' | '？' | '｡' => Some(at + c.len_utf8()),
            '.' | '!' | '?' => {
                // Swallow closing quotes and brackets after the mark.
                let mut j = i + 1;
                while j < chars.len() && matches!(chars[j].1, '"' | '\'' | ')' | '”' | '’' | ']')
                {
                    j += 1;
                }
                let end = chars.get(j).map_or(text.len(), |&(b, _)| b);
                let next = chars.get(j).map(|&(_, c)| c);
                let after = chars.get(j + 1).map(|&(_, c)| c);
                let boundary = match next {
                    None => true,
                    Some(n) if n.is_whitespace() => {
                        after.is_none_or(can_start_sentence)
                            && !(c == '.' && is_abbreviation(&text[start..at]))
                    }
                    _ => false,
                };
                if boundary {
                    i = j.saturating_sub(1);
                    Some(end)
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(end) = end_here {
            push_trimmed(text, start, end, &mut spans);
            start = end;
        }
        i += 1;
    }
    push_trimmed(text, start, text.len(), &mut spans);
    spans
}

/// The sentences of `text`.
pub fn split_sentences(text: &str) -> Vec<&str> {
    sentence_spans(text)
        .into_iter()
        .map(|(s, e)| &text[s..e])
        .collect()
}

fn push_trimmed(text: &str, start: usize, end: usize, spans: &mut Vec<(usize, usize)>) {
    let piece = &text[start..end];
    let lead = piece.len() - piece.trim_start().len();
    let trimmed = piece.trim();
    if trimmed.chars().any(char::is_alphanumeric) {
        spans.push((start + lead, start + lead + trimmed.len()));
    }
}

fn can_start_sentence(c: char) -> bool {
    !c.is_lowercase() && !matches!(c, ',' | ';' | ':' | ')' | '.')
}

/// True when the text before a period ends with an abbreviation or an
/// initial ("J. R. R. Tolkien").
fn is_abbreviation(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("");
    let lower = word.to_lowercase();
    let single_letter = word.chars().count() == 1 && word.chars().all(char::is_uppercase);
    single_letter || ABBREVIATIONS.contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_sentences() {
        let cases: &[(&str, &[&str])] = &[
            (
                "We deploy on Tuesday. Rollbacks take 5 min.",
                &["We deploy on Tuesday.", "Rollbacks take 5 min."],
            ),
            (
                "Prices are 3.5 euros. Dr. Park decided, e.g. for tests. Done!",
                &[
                    "Prices are 3.5 euros.",
                    "Dr. Park decided, e.g. for tests.",
                    "Done!",
                ],
            ),
            (
                "J. R. R. Tolkien wrote it. \"Really?\" she asked. Yes.",
                &[
                    "J. R. R. Tolkien wrote it.",
                    "\"Really?\" she asked.",
                    "Yes.",
                ],
            ),
            (
                "- first item\n- second item",
                &["- first item", "- second item"],
            ),
            (
                "see v1.2.3 and example.com now",
                &["see v1.2.3 and example.com now"],
            ),
        ];
        for (text, want) in cases {
            assert_eq!(&split_sentences(text), want, "{text}");
        }
    }

    #[test]
    fn korean_sentences() {
        assert_eq!(
            split_sentences("배포는 화요일에 합니다. 롤백은 5분 걸립니다! 질문 있나요? 네"),
            [
                "배포는 화요일에 합니다.",
                "롤백은 5분 걸립니다!",
                "질문 있나요?",
                "네"
            ]
        );
    }

    #[test]
    fn japanese_and_chinese_sentences() {
        assert_eq!(
            split_sentences("デプロイは火曜日です。ロールバックは5分！本当？"),
            ["デプロイは火曜日です。", "ロールバックは5分！", "本当？"]
        );
        assert_eq!(
            split_sentences("我们周二部署。回滚需要五分钟。"),
            ["我们周二部署。", "回滚需要五分钟。"]
        );
    }

    #[test]
    fn spans_point_into_the_text() {
        let text = "  One. Two.\n\nThree";
        let spans = sentence_spans(text);
        assert_eq!(spans.len(), 3);
        assert_eq!(&text[spans[2].0..spans[2].1], "Three");
    }
}
