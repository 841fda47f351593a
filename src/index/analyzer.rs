//! The multilingual text analyzer shared by indexing, querying and snippets.
//!
//! Latin-script (and any other alphabetic) words are split on non-word
//! characters, lower-cased, ASCII-folded and stemmed (English). Hangul, Han
//! and Kana runs carry no reliable word boundaries (Korean particles glue onto
//! nouns, Chinese and Japanese are written without spaces), so they are indexed
//! as overlapping character bigrams: "두뇌를" and "두뇌에서" then share the
//! bigram "두뇌", and a lone character is a unigram. The characters inside
//! longer runs are indexed one by one in a field of their own
//! ([`chars_analyzer`]), so that a query of one character — a word in
//! Chinese (书), a Korean noun under its particle (값 of "값은") — finds the
//! notes that have it, while the text's BM25 lengths stay those of its
//! words and bigrams.

use rustc_hash::FxHashMap;
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenFilter,
    TokenStream, Tokenizer,
};

/// Name under which the analyzer is registered on every opened index.
pub const ANALYZER_NAME: &str = "noggin";

/// Tokens longer than this (bytes) are dropped: they are binary noise or huge
/// identifiers that nobody searches for.
const MAX_TOKEN_BYTES: usize = 40;

/// Name of the analyzer of the field of CJK characters.
pub const CHARS_ANALYZER_NAME: &str = "noggin-chars";

/// Builds the analyzer used for every text field and every query.
pub fn text_analyzer() -> TextAnalyzer {
    analyzer_of(MixedScriptTokenizer::default())
}

/// Builds the analyzer of the field of CJK characters: each character of a
/// run of two or more, alone (a lone one is a unigram of the text already).
pub fn chars_analyzer() -> TextAnalyzer {
    TextAnalyzer::from(CjkCharsTokenizer)
}

/// Registers the analyzers the fields of `index` name; needed after every
/// open.
pub fn register(index: &tantivy::Index) {
    index.tokenizers().register(ANALYZER_NAME, text_analyzer());
    index
        .tokenizers()
        .register(CHARS_ANALYZER_NAME, chars_analyzer());
}

/// Builds an analyzer that gives every term a passage is found under, in
/// the text and in the field of characters: what a snippet marks.
fn marking_analyzer() -> TextAnalyzer {
    analyzer_of(MixedScriptTokenizer::new(true))
}

fn analyzer_of(tokenizer: MixedScriptTokenizer) -> TextAnalyzer {
    TextAnalyzer::builder(tokenizer)
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(CachedStemmer)
        .build()
}

/// Distinct words whose stems a thread remembers; beyond it it starts over.
/// Words of a brain follow Zipf's law: a few thousand make up most of the
/// text, so most tokens are stemmed by a lookup. A word of up to 16 bytes
/// takes 33 bytes of the table: 28,672 fit in 32,768 buckets, 1 MB a
/// thread. Twice that indexed the tldr pages and the software-docs corpus
/// no faster (within 2%), for 2 MB more peak RSS.
const CACHED_STEMS: usize = 28_672;

/// ASCII words of up to this many bytes are remembered as one number.
const PACKED_WORD: usize = 16;

/// The stems a thread remembers, shared by all the analyzers it runs (each
/// field of each segment it indexes, and its queries).
#[derive(Default)]
struct StemCache {
    /// The stems of the words looked up most, in front of `short`: a slot
    /// for each hash, the last word of that hash in it. The table of all
    /// short words is larger than a core's cache; this one is not. Empty
    /// until the thread has stemmed [`HOT_STEMS`] words (a thread that only
    /// runs queries never does).
    hot: Vec<(u128, u128)>,
    /// Short words → their stems, both packed ([`pack`]): a look-up hashes
    /// and compares two numbers, where a string key is a pointer away.
    short: FxHashMap<u128, u128>,
    /// Longer words → their stems (`None`: the word itself).
    long: FxHashMap<Box<str>, Option<Box<str>>>,
}

/// Slots of [`StemCache::hot`]: 128 KB.
const HOT_STEMS: usize = 4096;

impl StemCache {
    fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Replaces the ASCII word in `text` by its stem.
    fn stem_ascii(&mut self, text: &mut String) {
        if text.len() <= PACKED_WORD {
            let word = pack(text.as_bytes());
            let slot = hot_slot(word);
            let stemmed = match self.hot.get(slot) {
                Some(&(hot, stemmed)) if hot == word => stemmed,
                _ => match self.short.get(&word) {
                    Some(&stemmed) => {
                        self.keep_hot(slot, word, stemmed);
                        stemmed
                    }
                    None => {
                        let stemmed = stem(text);
                        if stemmed.len() > PACKED_WORD {
                            // A stem longer than its word (English rules
                            // make none) is not kept.
                            let stemmed = stemmed.into_owned();
                            *text = stemmed;
                            return;
                        }
                        let stemmed = pack(stemmed.as_bytes());
                        self.make_room();
                        self.short.insert(word, stemmed);
                        self.keep_hot(slot, word, stemmed);
                        stemmed
                    }
                },
            };
            if stemmed != word {
                unpack(stemmed, text);
            }
            return;
        }
        if let Some(stemmed) = self.long.get(text.as_str()) {
            if let Some(stemmed) = stemmed {
                text.clear();
                text.push_str(stemmed);
            }
            return;
        }
        let stemmed = match stem(text) {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(stemmed) if stemmed == *text => None,
            std::borrow::Cow::Owned(stemmed) => Some(Box::<str>::from(stemmed)),
        };
        self.make_room();
        self.long.insert(text.as_str().into(), stemmed.clone());
        if let Some(stemmed) = stemmed {
            text.clear();
            text.push_str(&stemmed);
        }
    }

    fn keep_hot(&mut self, slot: usize, word: u128, stemmed: u128) {
        if self.hot.is_empty() && self.short.len() >= HOT_STEMS {
            // No word packs to 0: an empty slot never matches.
            self.hot = vec![(0, 0); HOT_STEMS];
        }
        if let Some(kept) = self.hot.get_mut(slot) {
            *kept = (word, stemmed);
        }
    }

    fn make_room(&mut self) {
        if self.len() >= CACHED_STEMS {
            // The hot slots hold stems that stay right: they stay.
            self.short.clear();
            self.long.clear();
        }
    }
}

/// The slot of a packed word in [`StemCache::hot`].
#[inline]
fn hot_slot(word: u128) -> usize {
    let mixed = ((word as u64) ^ ((word >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - HOT_STEMS.trailing_zeros())) as usize
}

/// A word of at most [`PACKED_WORD`] bytes as one number: its bytes,
/// zero-padded (no token holds a NUL byte, so the padding is not a part
/// of any word).
#[inline]
fn pack(word: &[u8]) -> u128 {
    // Byte by byte: a copy into an array read back as a number stalls the
    // read until the copy is done.
    word.iter()
        .rev()
        .fold(0u128, |packed, &b| (packed << 8) | b as u128)
}

/// Writes the word [`pack`] made into `text`.
#[inline]
fn unpack(packed: u128, text: &mut String) {
    let len = PACKED_WORD - (packed.leading_zeros() / 8) as usize;
    let bytes = packed.to_le_bytes();
    text.clear();
    text.push_str(std::str::from_utf8(&bytes[..len]).expect("a packed word is ASCII"));
}

thread_local! {
    static STEMS: std::cell::RefCell<StemCache> = std::cell::RefCell::new(StemCache::default());
}

/// English Snowball stemming (the same stems as tantivy's `Stemmer`) that
/// remembers the stems of ASCII words: stemming was a fifth of the time it
/// takes to index a brain.
#[derive(Clone, Copy, Default)]
pub struct CachedStemmer;

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter { inner }
    }
}

#[derive(Clone)]
pub struct CachedStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
        }
    }
}

pub struct CachedStemmerStream<T> {
    tail: T,
}

fn stem(word: &str) -> std::borrow::Cow<'_, str> {
    frostem::Stemmer::new(frostem::Algorithm::English).stem(word)
}

impl<T: TokenStream> TokenStream for CachedStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        let text = &mut token.text;
        // English rules only touch Latin letters: a Hangul, Han or Kana
        // bigram (or a number) stays as it is, and so does a word of one or
        // two letters.
        if text.is_ascii() {
            if text.len() > 2 && text.bytes().any(|b| b.is_ascii_alphabetic()) {
                STEMS.with(|stems| match stems.try_borrow_mut() {
                    Ok(mut stems) => stems.stem_ascii(text),
                    // The cache is held for one word's look-up only; were it
                    // held, the word is stemmed without it.
                    Err(_) => *text = stem(text).into_owned(),
                });
            }
        } else if text.bytes().any(|b| b.is_ascii_alphabetic()) {
            *text = stem(text).into_owned();
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

thread_local! {
    /// Building an analyzer allocates its stemmer; each thread keeps one.
    static ANALYZER: std::cell::RefCell<TextAnalyzer> = std::cell::RefCell::new(text_analyzer());
    static MARKING_ANALYZER: std::cell::RefCell<TextAnalyzer> =
        std::cell::RefCell::new(marking_analyzer());
}

/// Runs `f` with this thread's [`text_analyzer`].
pub fn with_analyzer<R>(f: impl FnOnce(&mut TextAnalyzer) -> R) -> R {
    with_kept(&ANALYZER, text_analyzer, f)
}

/// Runs `f` with this thread's [`marking_analyzer`]: the terms a passage is
/// found under, which a snippet marks.
pub fn with_marking_analyzer<R>(f: impl FnOnce(&mut TextAnalyzer) -> R) -> R {
    with_kept(&MARKING_ANALYZER, marking_analyzer, f)
}

/// Runs `f` with the analyzer this thread keeps in `kept`; only when `f`
/// itself asks again is it given a fresh one, built by `build`.
fn with_kept<R>(
    kept: &'static std::thread::LocalKey<std::cell::RefCell<TextAnalyzer>>,
    build: fn() -> TextAnalyzer,
    f: impl FnOnce(&mut TextAnalyzer) -> R,
) -> R {
    kept.with(|a| match a.try_borrow_mut() {
        Ok(mut analyzer) => f(&mut analyzer),
        Err(_) => f(&mut build()),
    })
}

/// Runs the analyzer over `text` and returns the tokens (text and byte offsets).
pub fn analyze(analyzer: &mut TextAnalyzer, text: &str) -> Vec<Token> {
    let mut stream = analyzer.token_stream(text);
    let mut tokens = Vec::new();
    while stream.advance() {
        tokens.push(stream.token().clone());
    }
    tokens
}

/// True when two consecutive tokens of `text` make a word pair: nothing
/// lies between them but spaces, hyphens, slashes, quotes or emphasis; no
/// word the analyzer dropped (a hash too long to index), and nothing that
/// ends a sentence, clause, line, heading level or table cell ("… the
/// Tuesday deploy.\n- Tuesday"). Not two bigrams of one Hangul, Han or Kana
/// run either ("암호" and "호화" of "암호화"): their pair says no more than
/// the word they come from.
pub fn adjacent(text: &str, a: &Token, b: &Token) -> bool {
    b.offset_from >= a.offset_to
        && text.get(a.offset_to..b.offset_from).is_some_and(|gap| {
            !gap.chars()
                .any(|c| c.is_alphanumeric() || PAIR_BREAKS.contains(&c))
        })
}

/// Characters that end a word pair: sentence and clause punctuation, dashes
/// and ellipses, line breaks, brackets, table bars, arrows and bullets, and
/// the separator of heading levels.
const PAIR_BREAKS: &[char] = &[
    '.', ',', ';', ':', '!', '?', '\n', '|', '(', ')', '[', ']', '{', '}', '<', '>', '=', '—', '–',
    '…', '•', '→', '›', '。', '、', '，', '：', '；', '！', '？', '｡',
];

/// The word pairs among the analyzed `tokens` of `text`: each two
/// consecutive tokens that are [`adjacent`], in order, repeats included.
pub fn pairs_of<'t>(
    text: &'t str,
    tokens: &'t [Token],
) -> impl Iterator<Item = (&'t str, &'t str)> {
    tokens
        .windows(2)
        .filter(move |w| adjacent(text, &w[0], &w[1]))
        .map(|w| (w[0].text.as_str(), w[1].text.as_str()))
}

/// The word pairs of `text` ([`pairs_of`]), in order, each once.
pub fn word_pairs(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, String)> {
    let tokens = analyze(analyzer, text);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (a, b) in pairs_of(text, &tokens) {
        let pair = (a.to_string(), b.to_string());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    pairs
}

/// True for characters of scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x3040..=0x309F    // Hiragana
        | 0x30A0..=0x30FF    // Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x3400..=0x4DBF    // Han extension A
        | 0x4E00..=0x9FFF    // Han
        | 0xF900..=0xFAFF    // Han compatibility
        | 0x20000..=0x2FA1F  // Han supplementary planes
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CharClass {
    Word,
    Cjk,
    Other,
}

/// Bytes that are an ASCII letter or digit: a look-up is cheaper than the
/// comparisons on the hottest loop of indexing.
static ASCII_WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// Bytes that are ASCII but neither a letter nor a digit.
static ASCII_OTHER: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = !ASCII_WORD[b];
        b += 1;
    }
    table
};

#[inline]
fn classify(c: char) -> CharClass {
    if c.is_ascii() {
        if c.is_ascii_alphanumeric() {
            CharClass::Word
        } else {
            CharClass::Other
        }
    } else if is_cjk(c) {
        CharClass::Cjk
    } else if c.is_alphanumeric() {
        CharClass::Word
    } else {
        CharClass::Other
    }
}

/// Splits words on non-alphanumeric characters and CJK runs into bigrams.
#[derive(Clone, Default)]
pub struct MixedScriptTokenizer {
    /// Every CJK character is a token too, not only a run of one.
    cjk_unigrams: bool,
    /// The token each of its streams makes its tokens in, one after the
    /// other: a stream per field value then needs no token of its own.
    token: Token,
}

impl MixedScriptTokenizer {
    fn new(cjk_unigrams: bool) -> MixedScriptTokenizer {
        MixedScriptTokenizer {
            cjk_unigrams,
            token: Token::default(),
        }
    }
}

/// Token stream of [`MixedScriptTokenizer`]: tokens are made one at a
/// time in one reused token, as tantivy's own tokenizers do, because
/// indexing runs every word of the brain through here.
pub struct MixedScriptStream<'a> {
    text: &'a str,
    /// Byte offset of the next character to look at.
    at: usize,
    /// Inside a CJK run: the start of its last character, and whether that
    /// character already began a bigram (then a run's end adds nothing).
    cjk: Option<(usize, bool)>,
    token: &'a mut Token,
    /// Tokens made so far; the next one's position.
    made: usize,
    /// Whether every CJK character is a token too.
    cjk_unigrams: bool,
    /// The character (byte range) to give alone after the bigram it ends.
    unigram: Option<(usize, usize)>,
}

impl Tokenizer for MixedScriptTokenizer {
    type TokenStream<'a> = MixedScriptStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> MixedScriptStream<'a> {
        self.token.reset();
        MixedScriptStream {
            text,
            at: 0,
            cjk: None,
            token: &mut self.token,
            made: 0,
            cjk_unigrams: self.cjk_unigrams,
            unigram: None,
        }
    }
}

/// Where a letter marked inside a word ends: `[l]ist`, `g[z]ipped`,
/// `E[x]tract` (a command's mnemonic, as tldr pages write them) are the
/// words "list", "gzipped" and "extract". `at` is a `[`; the mark is one to
/// three ASCII letters (not a citation's number, `[12]These`), and a letter
/// or digit follows it (so not `array[i]`, a task's `[x]` or a link's
/// `[text](…)`).
fn marked_letters_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let inner = &bytes[at + 1..];
    let len = inner
        .iter()
        .take(4)
        .position(|b| !b.is_ascii_alphabetic())?;
    let close = at + 1 + len;
    ((1..=3).contains(&len)
        && bytes[close] == b']'
        && bytes
            .get(close + 1)
            .is_some_and(|&b| ASCII_WORD[b as usize]))
    .then_some(close + 1)
}

impl MixedScriptStream<'_> {
    /// Length of the run of ASCII letters and digits at `at`.
    fn ascii_run(&self, at: usize) -> usize {
        let rest = &self.text.as_bytes()[at..];
        rest.iter()
            .position(|&b| !ASCII_WORD[b as usize])
            .unwrap_or(rest.len())
    }

    /// A word with letters marked inside it, from `from` (a letter or the
    /// `[` of a mark) to `to`, where the word so far ends: the word goes on
    /// through every mark and the letters after it, and is given without
    /// the brackets.
    fn emit_marked(&mut self, from: usize, mut to: usize) -> bool {
        let bytes = self.text.as_bytes();
        self.token.text.clear();
        self.token.text.push_str(&self.text[from..to]);
        while let Some(after) = marked_letters_end(bytes, to) {
            self.token.text.push_str(&self.text[to + 1..after - 1]);
            let run = self.ascii_run(after);
            self.token.text.push_str(&self.text[after..after + run]);
            to = after + run;
        }
        self.at = to;
        self.place(from, to)
    }

    fn emit(&mut self, from: usize, to: usize) -> bool {
        self.token.text.clear();
        self.token.text.push_str(&self.text[from..to]);
        self.place(from, to)
    }

    /// Gives the token whose text is made as spanning `from..to`, at the
    /// next position.
    fn place(&mut self, from: usize, to: usize) -> bool {
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.made;
        self.token.position_length = 1;
        self.made += 1;
        true
    }
}

impl TokenStream for MixedScriptStream<'_> {
    fn advance(&mut self) -> bool {
        if let Some((from, to)) = self.unigram.take() {
            return self.emit(from, to);
        }
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.at) {
            let start = self.at;
            // ASCII (most of any note) is judged by its byte, the rest by
            // its character.
            let (class, end) = if byte.is_ascii() {
                let class = if ASCII_WORD[byte as usize] {
                    CharClass::Word
                } else {
                    CharClass::Other
                };
                (class, start + 1)
            } else {
                let c = self.text[start..]
                    .chars()
                    .next()
                    .expect("at is at a character");
                (classify(c), start + c.len_utf8())
            };
            match (class, self.cjk) {
                (CharClass::Cjk, Some((previous, _))) => {
                    // The bigram of the previous character and this one
                    // (then this one alone, when the index asks for it).
                    self.cjk = Some((start, true));
                    self.at = end;
                    if self.cjk_unigrams {
                        self.unigram = Some((start, end));
                    }
                    return self.emit(previous, end);
                }
                (CharClass::Cjk, None) => {
                    self.cjk = Some((start, self.cjk_unigrams));
                    self.at = end;
                    if self.cjk_unigrams {
                        return self.emit(start, end);
                    }
                }
                (_, Some((previous, paired))) => {
                    // A run ends; a run of one character is a unigram.
                    self.cjk = None;
                    if !paired {
                        return self.emit(previous, start);
                    }
                }
                (CharClass::Word, None) => {
                    // ASCII letters and digits by their bytes; a word that
                    // goes on past them (into other letters) goes on by
                    // characters.
                    let ascii = self.ascii_run(start);
                    let len = match bytes.get(start + ascii) {
                        Some(b) if !b.is_ascii() => {
                            let tail = &self.text[start + ascii..];
                            ascii
                                + tail
                                    .find(|c| classify(c) != CharClass::Word)
                                    .unwrap_or(tail.len())
                        }
                        Some(b'[') if marked_letters_end(bytes, start + ascii).is_some() => {
                            return self.emit_marked(start, start + ascii);
                        }
                        _ => ascii,
                    };
                    self.at = start + len;
                    return self.emit(start, start + len);
                }
                (CharClass::Other, None) => {
                    // Skips the run of ASCII punctuation and spaces at once
                    // (up to a word that starts with a marked letter).
                    self.at = end
                        + bytes[end..]
                            .iter()
                            .position(|&b| !ASCII_OTHER[b as usize])
                            .unwrap_or(bytes.len() - end);
                    let last = self.at - 1;
                    if marked_letters_end(bytes, last).is_some() {
                        return self.emit_marked(last, last);
                    }
                }
            }
        }
        match self.cjk.take() {
            Some((previous, false)) => self.emit(previous, self.text.len()),
            _ => false,
        }
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// Gives each CJK character of a run of two or more as a token of its own.
#[derive(Clone, Copy, Default)]
pub struct CjkCharsTokenizer;

/// Token stream of [`CjkCharsTokenizer`].
pub struct CjkCharsStream<'a> {
    text: &'a str,
    /// Byte offset of the next character to look at.
    at: usize,
    /// Whether the character before `at` is CJK.
    after_cjk: bool,
    token: Token,
}

impl Tokenizer for CjkCharsTokenizer {
    type TokenStream<'a> = CjkCharsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CjkCharsStream<'a> {
        CjkCharsStream {
            text,
            // ASCII text (most notes) has none.
            at: if text.is_ascii() { text.len() } else { 0 },
            after_cjk: false,
            token: Token::default(),
        }
    }
}

impl TokenStream for CjkCharsStream<'_> {
    fn advance(&mut self) -> bool {
        let mut chars = self.text[self.at..].chars().peekable();
        while let Some(c) = chars.next() {
            let start = self.at;
            self.at += c.len_utf8();
            let cjk = is_cjk(c);
            let in_run = cjk && (self.after_cjk || chars.peek().is_some_and(|&n| is_cjk(n)));
            self.after_cjk = cjk;
            if in_run {
                self.token.offset_from = start;
                self.token.offset_to = self.at;
                self.token.position = self.token.position.wrapping_add(1);
                self.token.position_length = 1;
                self.token.text.clear();
                self.token.text.push(c);
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        analyze(&mut text_analyzer(), text)
            .into_iter()
            .map(|t| t.text)
            .collect()
    }

    #[test]
    fn the_cached_stemmer_stems_as_tantivys_stemmer_does() {
        let mut plain = plain_analyzer();
        let mut cached = text_analyzer();
        let text = "Running runners ran; the generously generous generalisations \
                    were running again. Café façades, naïve Straße, 두뇌를 두뇌에서 бегущие Ελληνικά 2026 x86s \
                    知識 running RUNNING Runs";
        // Twice through the same analyzer: the second pass reads the cache.
        for _ in 0..2 {
            let want: Vec<_> = analyze(&mut plain, text)
                .into_iter()
                .map(|t| t.text)
                .collect();
            let got: Vec<_> = analyze(&mut cached, text)
                .into_iter()
                .map(|t| t.text)
                .collect();
            assert_eq!(got, want);
        }
    }

    /// Tantivy's own chain with its stemmer: what the cached stems must be.
    fn plain_analyzer() -> TextAnalyzer {
        use tantivy::tokenizer::{Language, Stemmer};
        TextAnalyzer::builder(MixedScriptTokenizer::default())
            .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
            .filter(LowerCaser)
            .filter(AsciiFoldingFilter)
            .filter(Stemmer::new(Language::English))
            .build()
    }

    #[test]
    fn words_of_one_or_two_letters_are_their_own_stems() {
        // The stemmer passes them by without a look-up.
        let chars: Vec<char> = ('a'..='z').chain('0'..='9').collect();
        for &a in &chars {
            assert_eq!(stem(&a.to_string()), a.to_string());
            for &b in &chars {
                let word = format!("{a}{b}");
                assert_eq!(stem(&word), word);
            }
        }
    }

    #[test]
    fn stems_stay_right_after_the_cache_starts_over() {
        // More distinct words than a thread keeps: the cache starts over
        // at least once, and every word is stemmed as by tantivy, on the
        // second pass too (read from the cache and its hot slots).
        let words: Vec<String> = (0..CACHED_STEMS + 5_000)
            .map(|i| {
                let mut n = i;
                let mut word = String::from("run");
                while n > 0 {
                    word.push((b'a' + (n % 26) as u8) as char);
                    n /= 26;
                }
                word.push_str(["ing", "s", "ed", "ness", "ational"][i % 5]);
                word
            })
            .collect();
        let text = words.join(" ");
        let want: Vec<_> = analyze(&mut plain_analyzer(), &text)
            .into_iter()
            .map(|t| t.text)
            .collect();
        for _ in 0..2 {
            let got: Vec<_> = analyze(&mut text_analyzer(), &text)
                .into_iter()
                .map(|t| t.text)
                .collect();
            assert!(got == want, "a cached stem differs from tantivy's");
        }
    }

    proptest::proptest! {
        /// Short, packed and long words, and words that share a hot slot,
        /// are stemmed as tantivy's stemmer does, read fresh or cached.
        #[test]
        fn cached_stems_are_tantivys(words in proptest::collection::vec("[a-zA-Z0-9]{1,24}", 1..40)) {
            let text = words.join(" ");
            let want: Vec<_> = analyze(&mut plain_analyzer(), &text).into_iter().map(|t| t.text).collect();
            for _ in 0..2 {
                let got: Vec<_> = analyze(&mut text_analyzer(), &text).into_iter().map(|t| t.text).collect();
                proptest::prop_assert_eq!(&got, &want);
            }
        }

        #[test]
        fn a_packed_word_unpacks_to_itself(word in "[!-~]{0,16}") {
            let mut text = String::from("something else");
            unpack(pack(word.as_bytes()), &mut text);
            proptest::prop_assert_eq!(text, word);
        }
    }

    #[test]
    fn english_words_are_folded_and_stemmed() {
        let cases: &[(&str, &[&str])] = &[
            ("Running deploys", &["run", "deploy"]),
            ("Café résumé", &["cafe", "resum"]),
            (
                "user's DATABASES, 2026-11-02",
                &["user", "s", "databas", "2026", "11", "02"],
            ),
            ("", &[]),
            ("--- !!! ---", &[]),
        ];
        for (input, expected) in cases {
            assert_eq!(terms(input), *expected, "input {input:?}");
        }
    }

    #[test]
    fn korean_particles_share_the_noun_bigram() {
        let a = terms("두뇌를");
        let b = terms("두뇌에서");
        assert_eq!(a, ["두뇌", "뇌를"]);
        assert_eq!(b, ["두뇌", "뇌에", "에서"]);
        assert!(a.iter().any(|t| b.contains(t)));
    }

    #[test]
    fn unspaced_japanese_and_chinese_become_bigrams() {
        assert_eq!(terms("東京都"), ["東京", "京都"]);
        assert_eq!(
            terms("ノートを検索"),
            ["ノー", "ート", "トを", "を検", "検索"]
        );
        assert_eq!(terms("我的笔记"), ["我的", "的笔", "笔记"]);
    }

    #[test]
    fn the_characters_of_cjk_runs_are_indexed_alone_too() {
        let chars = |text: &str| -> Vec<String> {
            analyze(&mut chars_analyzer(), text)
                .into_iter()
                .map(|t| t.text)
                .collect()
        };
        assert_eq!(chars("값은 10"), ["값", "은"]);
        assert_eq!(
            chars("我的书在桌上。"),
            ["我", "的", "书", "在", "桌", "上"]
        );
        // A lone character is a unigram of the text already.
        assert_eq!(chars("Rust로 本 서버"), ["서", "버"]);
        assert!(chars("plain ASCII text").is_empty());
        let marks = |text: &str| -> Vec<String> {
            analyze(&mut marking_analyzer(), text)
                .into_iter()
                .map(|t| t.text)
                .collect()
        };
        assert_eq!(marks("값은 10"), ["값", "값은", "은", "10"]);
        // A query reads a run by its bigrams, a lone character alone.
        assert_eq!(terms("값은"), ["값은"]);
        assert_eq!(terms("값"), ["값"]);
    }

    #[test]
    fn single_cjk_characters_and_mixed_scripts() {
        assert_eq!(terms("Rust로 서버"), ["rust", "로", "서버"]);
        assert_eq!(terms("a 本 b"), ["a", "本", "b"]);
    }

    #[test]
    fn offsets_point_into_the_original_text() {
        let text = "Setup: 데이터베이스를 PostgreSQL";
        for token in analyze(&mut text_analyzer(), text) {
            assert!(text.is_char_boundary(token.offset_from));
            assert!(text.is_char_boundary(token.offset_to));
        }
    }

    /// The tokenizer as it was written first, eagerly over a character
    /// list: the reference the streaming one is held to.
    fn reference_tokens(text: &str, cjk_unigrams: bool) -> Vec<Token> {
        let mut tokens = Vec::new();
        let mut push = |from: usize, to: usize| {
            let position = tokens.len();
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: text[from..to].to_string(),
                position_length: 1,
            });
        };
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let end_of = |i: usize| chars.get(i + 1).map_or(text.len(), |&(o, _)| o);
        let mut i = 0;
        while i < chars.len() {
            let class = classify(chars[i].1);
            let start = i;
            while i < chars.len() && classify(chars[i].1) == class {
                i += 1;
            }
            match class {
                CharClass::Other => {}
                CharClass::Word => push(chars[start].0, end_of(i - 1)),
                CharClass::Cjk if i - start == 1 => push(chars[start].0, end_of(start)),
                CharClass::Cjk => {
                    if cjk_unigrams {
                        push(chars[start].0, end_of(start));
                    }
                    for (k, &(at, _)) in chars.iter().enumerate().take(i - 1).skip(start) {
                        push(at, end_of(k + 1));
                        if cjk_unigrams {
                            push(chars[k + 1].0, end_of(k + 1));
                        }
                    }
                }
            }
        }
        tokens
    }

    proptest::proptest! {
        #[test]
        fn streaming_tokens_match_the_reference(text in "[a-zA-Z0-9 .,'éß—\u{a0}\u{3000}東京都두뇌를에서ノート-]{0,40}") {
            for cjk_unigrams in [false, true] {
                let mut tokenizer = MixedScriptTokenizer::new(cjk_unigrams);
                let mut stream = tokenizer.token_stream(&text);
                let mut got = Vec::new();
                while stream.advance() {
                    got.push(stream.token().clone());
                }
                proptest::prop_assert_eq!(got, reference_tokens(&text, cjk_unigrams));
            }
        }
    }

    #[test]
    fn letters_marked_inside_a_word_belong_to_it() {
        assert_eq!(
            terms("- [l]ist, E[x]tract a g[z]ipped [f]ile [v]erbosely: [sys]tem"),
            ["list", "extract", "a", "gzip", "file", "verbos", "system"]
        );
        // Not an index, a task's box, a link, a wiki link, a long mark or
        // a citation.
        assert_eq!(
            terms("array[i] - [x] done [docs](url) [[Note]] [abcd]ef [12]These"),
            ["array", "i", "x", "done", "doc", "url", "note", "abcd", "ef", "12", "these"]
        );
        // The token spans the marks; a pair goes on from it.
        let text = "[c]reate a g[z]ipped archive";
        let tokens = analyze(&mut text_analyzer(), text);
        let spans: Vec<&str> = tokens
            .iter()
            .map(|t| &text[t.offset_from..t.offset_to])
            .collect();
        assert_eq!(spans, ["[c]reate", "a", "g[z]ipped", "archive"]);
        assert!(adjacent(text, &tokens[2], &tokens[3]));
    }

    proptest::proptest! {
        /// With brackets about, the words are those of the text with each
        /// mark's brackets taken out.
        #[test]
        fn marks_join_the_words_they_are_in(text in "[ab1 .\\[\\]]{0,40}") {
            let bytes = text.as_bytes();
            let mut unmarked = String::new();
            let mut at = 0;
            while at < bytes.len() {
                match marked_letters_end(bytes, at) {
                    Some(after) => {
                        unmarked.push_str(&text[at + 1..after - 1]);
                        at = after;
                    }
                    None => {
                        unmarked.push(bytes[at] as char);
                        at += 1;
                    }
                }
            }
            let mut tokenizer = MixedScriptTokenizer::default();
            let mut stream = tokenizer.token_stream(&text);
            let mut got = Vec::new();
            while stream.advance() {
                got.push(stream.token().text.clone());
            }
            let want: Vec<String> = reference_tokens(&unmarked, false)
                .into_iter()
                .map(|t| t.text)
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn positions_and_offsets_follow_the_text() {
        let text = "a 東京都 x 本";
        let tokens = analyze(&mut text_analyzer(), text);
        let got: Vec<(&str, usize, &str)> = tokens
            .iter()
            .map(|t| {
                (
                    t.text.as_str(),
                    t.position,
                    &text[t.offset_from..t.offset_to],
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", 0, "a"),
                ("東京", 1, "東京"),
                ("京都", 2, "京都"),
                ("x", 3, "x"),
                ("本", 4, "本")
            ]
        );
    }

    #[test]
    fn huge_tokens_are_dropped() {
        let long = "x".repeat(500);
        assert_eq!(terms(&format!("keep {long} this")), ["keep", "this"]);
    }
}
