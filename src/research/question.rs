//! Reading a question: what kind of answer it asks for, and which of its
//! words carry its meaning.
//!
//! "When do we deploy?" asks for a time, so a sentence without one cannot
//! answer it, however many words it shares with the question. The question
//! words themselves ("when", "언제", "いつ") and Korean particles and polite
//! endings ("-는", "-인가요") never appear in the answer, so they are left out
//! of the terms a sentence must cover. A noun that names a value's form
//! ("email address", "port") is said by a value of that form
//! ([`Forms`]), and a date is one term however it is written
//! ([`days_named`]).

use std::sync::LazyLock;

use regex::Regex;

/// The kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// A date, a time, a day, a year, a duration in time.
    Time,
    /// A count, an amount, a size, a percentage.
    Number,
    /// A person (or an organisation acting as one).
    Person,
    /// A place.
    Place,
    /// One of several named things ("which database", "what port").
    Choice,
    /// Anything else: a description, a reason.
    Other,
}

static TIME_EN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*when(?-u:\b)|(?-u:\b)(what|which)\s+(year|years|date|day|days|time|month|century|decade|era|period|hour|season|weekday)(?-u:\b)|(?-u:\b)how\s+long\s+ago(?-u:\b)|(?-u:\b)in\s+what\s+year(?-u:\b)|(?-u:\b)how\s+often(?-u:\b)",
    )
    .expect("static regex")
});
/// "which time zone", "what date format": a time noun naming a thing of
/// its own, which is no time.
static NOT_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:what|which)\s+(?:time|date|day|hour|year)\s+(?:zones?|formats?|stamps?|limits?|complexity|signatures?|spans?|pickers?|ranges?)(?-u:\b)")
        .expect("static regex")
});
static NUMBER_EN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)how\s+(many|much|long|far|old|big|large|high|tall|wide|deep|heavy|fast|often)(?-u:\b)|(?-u:\b)what\s+(percentage|percent|proportion|number|amount|size|population|fraction|share|price|cost|rate|speed|temperature|length|height|distance)(?-u:\b)",
    )
    .expect("static regex")
});
/// "the maximum file size", "the minimum interval", "in pixels": a limit or
/// a measure, stated as a number.
static LIMIT_EN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(maximum|minimum|max|min)\s+(?:[\p{L}-]+\s+)?(size|length|number|count|amount|limit|interval|storage|width|height|duration|age|retention|timeout)(?-u:\b)|(?-u:\b)in\s+(pixels|px|bytes|kilobytes|megabytes|gigabytes|kb|mb|gb|seconds|minutes|hours|days|percent)(?-u:\b)",
    )
    .expect("static regex")
});
static PERSON_EN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(?-u:\b)(who|whom|whose)(?-u:\b)").expect("static regex"));
static PLACE_EN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)where(?-u:\b)|(?-u:\b)(what|which)\s+(country|city|town|region|state|place|continent|island|river|location)(?-u:\b)")
        .expect("static regex")
});

/// The shape of a technical answer: "which *flag*", "which environment
/// *variable*", "which *file*", "which *folder*" ask for something written
/// in a way of its own (`--locked`, `OUT_DIR`, `config.json`,
/// `registry/cache`), which a sentence either shows or does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A command-line flag (`-v`, `--offline`).
    Flag,
    /// A flag, or a named setting ("which option"): options are also the
    /// choices of a settings screen.
    Option,
    /// An environment variable (`OUT_DIR`, `$HOME`).
    EnvVar,
    /// A file name or path (`config.json`, `target/debug/app`).
    File,
    /// A folder path (`registry/cache`, `~/.cargo/`).
    Folder,
    /// A key or key combination (`Ctrl+P`, `Shift+1`, `Escape`).
    Shortcut,
    /// A name written as code: "which prop", "which package", "어떤 함수",
    /// "어떤 인자" want `defaultValue`, `@types/react`, `getServerSnapshot`,
    /// `critical_errors`; in a Korean, Japanese or Chinese sentence any word
    /// in Latin letters that starts in lower case. (In English "function",
    /// "method" or "command" ask as often for something that is not code.)
    Code,
}

/// "Which keyboard shortcut", "what is the hotkey", "단축키".
static SHORTCUT_ASKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:keyboard\s+shortcuts?|shortcuts?|hotkeys?|hot\s+keys?|key\s+combinations?|keybindings?)(?-u:\b)|단축키|바로\s?가기\s?키")
        .expect("static regex")
});

/// "Which key", "어떤 키": a key to press, or a key of a configuration.
static KEY_ASKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:which|what)\s+key(?-u:\b)|어떤\s+키|무슨\s+키")
        .expect("static regex")
});

/// What makes "which key" a key of a configuration, written as code: the
/// question is about a configuration, a file or an object, or writing one.
static CONFIG_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)config|manifest|toml|json|yaml|(?-u:\b)(?:file|object|field|settings\s+file)s?(?-u:\b)|설정|파일|객체|적어|써야|작성")
        .expect("static regex")
});

/// "which curl flag", "what environment variable", "is there a flag", "which
/// file at the root": the technical noun within two words of the question
/// word, and the word after it (a "file *format*" is not a file).
static SHAPE_ASKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:what|which|is\s+there\s+an?|are\s+there\s+any)\s+(?:[\p{L}\p{N}._+-]+\s+){0,2}?(flags?|switch(?:es)?|options?|environment\s+variables?|env\s+vars?|variables?|files?|filenames?|folders?|subfolders?|director(?:y|ies)|subdirector(?:y|ies))(?-u:\b)(?:\s+([\p{L}]+))?",
    )
    .expect("static regex")
});

/// The same in Korean: "어떤 *파일*을", "어느 *폴더*에", "*환경 변수*는 무엇":
/// the noun after 어떤/어느/무슨 (one word may come between), or before
/// the topic particle of a "what is" question; then the word after it.
static SHAPE_ASKED_KO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:(?:어떤|어느|무슨)\s+(?:\S+\s+)?(플래그|환경\s?변수|파일|폴더|디렉터리|디렉토리)|(플래그|환경\s?변수|파일|폴더|디렉터리|디렉토리)(?:은|는|이|가)\s+(?:무엇|뭐|어디))(?:을|를|이|가|에|에서|로|은|는|의)?(?:\s+(\S+))?",
    )
    .expect("static regex")
});

/// "which prop", "which package", "is there a callback": a programming noun
/// within two words of the question word, and the word after it. Tried
/// after [`SHAPE_ASKED`], so "which command-line flag" stays a flag.
static CODE_ASKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:what|which|is\s+there\s+an?|are\s+there\s+any)\s+(?:[\p{L}\p{N}._+-]+\s+){0,2}?(props?|callbacks?|packages?|crates?|subcommands?|presets?)(?-u:\b)(?:\s+([\p{L}]+))?",
    )
    .expect("static regex")
});

/// The same in Korean: "어떤 *함수*를", "어떤 *옵션*을", "어떤 *값*으로",
/// "*인자*는 무엇".
static CODE_ASKED_KO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:(?:어떤|어느|무슨)\s+(?:\S+\s+)?(props?|속성|프로퍼티|함수|메서드|메소드|인자|인수|매개변수|파라미터|훅|hook|콜백|패키지|모듈|명령어|명령|프리셋|옵션|값)|(props?|속성|프로퍼티|함수|메서드|메소드|인자|인수|매개변수|파라미터|콜백|패키지|모듈|명령어|프리셋|옵션)(?:은|는|이|가)\s+(?:무엇|뭐))(?:을|를|이|가|에|에서|로|으로|은|는|의|들)?(?:\s+(\S+))?",
    )
    .expect("static regex")
});

/// Words after a programming noun that make it part of another noun: a
/// "package manager" is not written as code.
const NOT_CODE_HEADS: &[&str] = &["manager", "managers", "type", "types", "형식", "타입"];

/// Words after "file" or "folder" that make it part of another noun.
const NOT_SHAPE_HEADS: &[&str] = &[
    "format",
    "formats",
    "type",
    "types",
    "size",
    "sizes",
    "extension",
    "extensions",
    "name",
    "names",
    "system",
    "systems",
    "manager",
    "recovery",
    "explorer",
    "sharing",
    "history",
    "permission",
    "permissions",
    "structure",
    "path",
    "paths",
    "tree",
    "layout",
    "content",
    "contents",
    "menu",
    "view",
    "picker",
    "형식",
    "크기",
    "이름",
    "확장자",
    "시스템",
    "복원",
    "탐색기",
    "목록",
    "내용",
    "권한",
    "경로",
];

/// True when the word after a technical noun makes the two another noun
/// ("file *format*", "package *manager*"); a Korean word may carry its
/// particle ("형식으로").
fn heads_another_noun(next: Option<regex::Match>, heads: &[&str]) -> bool {
    next.is_some_and(|w| {
        let w = w.as_str().to_lowercase();
        heads.iter().any(|h| w.starts_with(h))
    })
}

/// The technical shape a question asks its answer in, if any.
pub fn shape_asked(question: &str) -> Option<Shape> {
    if SHORTCUT_ASKED.is_match(question) {
        return Some(Shape::Shortcut);
    }
    if KEY_ASKED.is_match(question) {
        return Some(if CONFIG_KEY.is_match(question) {
            Shape::Code
        } else {
            Shape::Shortcut
        });
    }
    let (noun, next) = if let Some(caps) = SHAPE_ASKED.captures(question) {
        (caps.get(1)?.as_str(), caps.get(2))
    } else if let Some(caps) = SHAPE_ASKED_KO.captures(question) {
        (caps.get(1).or(caps.get(2))?.as_str(), caps.get(3))
    } else {
        let next = if let Some(caps) = CODE_ASKED.captures(question) {
            caps.get(2)
        } else {
            CODE_ASKED_KO.captures(question)?.get(3)
        };
        return (!heads_another_noun(next, NOT_CODE_HEADS)).then_some(Shape::Code);
    };
    if heads_another_noun(next, NOT_SHAPE_HEADS) {
        return None;
    }
    let noun = noun.to_lowercase();
    Some(match noun.as_str() {
        "flag" | "flags" | "switch" | "switches" => Shape::Flag,
        "option" | "options" => Shape::Option,
        "file" | "files" | "filename" | "filenames" => Shape::File,
        "folder" | "folders" | "subfolder" | "subfolders" => Shape::Folder,
        "directory" | "directories" | "subdirectory" | "subdirectories" => Shape::Folder,
        "플래그" => Shape::Flag,
        "파일" => Shape::File,
        "폴더" | "디렉터리" | "디렉토리" => Shape::Folder,
        n if n.starts_with("환경") => Shape::EnvVar,
        // "environment variable", "env var"; a variable of any other kind
        // (a letter in a formula, a template's) has no shape of its own.
        n if n.starts_with("env") => Shape::EnvVar,
        _ => return None,
    })
}

/// Question words and endings of Korean, Japanese and Chinese with the kind
/// of answer they ask for, longest first within a kind.
const CJK_MARKERS: &[(&str, AnswerKind)] = &[
    ("언제", AnswerKind::Time),
    ("몇 시", AnswerKind::Time),
    ("몇시", AnswerKind::Time),
    ("며칠", AnswerKind::Time),
    ("무슨 요일", AnswerKind::Time),
    ("몇 년", AnswerKind::Time),
    ("いつ", AnswerKind::Time),
    ("何時", AnswerKind::Time),
    ("何曜日", AnswerKind::Time),
    ("何年", AnswerKind::Time),
    ("什么时候", AnswerKind::Time),
    ("何时", AnswerKind::Time),
    ("哪年", AnswerKind::Time),
    ("几点", AnswerKind::Time),
    ("누구", AnswerKind::Person),
    ("누가", AnswerKind::Person),
    ("誰", AnswerKind::Person),
    ("だれ", AnswerKind::Person),
    ("谁", AnswerKind::Person),
    ("어디", AnswerKind::Place),
    ("どこ", AnswerKind::Place),
    ("哪里", AnswerKind::Place),
    ("哪儿", AnswerKind::Place),
    ("몇", AnswerKind::Number),
    ("얼마", AnswerKind::Number),
    ("いくつ", AnswerKind::Number),
    ("いくら", AnswerKind::Number),
    ("何人", AnswerKind::Number),
    ("何分", AnswerKind::Number),
    ("多少", AnswerKind::Number),
    ("几", AnswerKind::Number),
];

/// Korean, Japanese and Chinese question words and polite question endings:
/// removed before the question's terms are taken. Longest first.
const CJK_QUESTION_PARTS: &[&str] = &[
    "무엇인가요",
    "무엇입니까",
    "무엇을",
    "무엇이",
    "무엇",
    "뭔가요",
    "뭐예요",
    "뭐",
    "알려주세요",
    "알려줄래요",
    "알려줄래",
    "알려줘요",
    "알려줘",
    "뭘",
    "누구인가요",
    "누구입니까",
    "누구예요",
    "누구",
    "누가",
    "언제인가요",
    "언제",
    "어디인가요",
    "어디에서",
    "어디에",
    "어디서",
    "어디",
    "어떻게",
    "어떤",
    "어느",
    "얼마나",
    "얼마",
    "왜",
    "몇",
    "인가요",
    "하나요",
    "되나요",
    "있나요",
    "없나요",
    "합니까",
    "됩니까",
    "습니까",
    "입니까",
    "나요",
    "까요",
    "가요",
    "ですか",
    "ますか",
    "でしょうか",
    "何ですか",
    "いつ",
    "どこ",
    "だれ",
    "誰",
    "なに",
    "何",
    "什么时候",
    "什么",
    "哪里",
    "哪儿",
    "哪个",
    "怎么",
    "为什么",
    "多少",
    "谁",
    "吗",
    "呢",
];

/// [`CJK_MARKERS`] as one pattern per kind, in the list's order.
static CJK_MARKER_PATTERNS: LazyLock<Vec<(Regex, AnswerKind)>> = LazyLock::new(|| {
    let mut groups: Vec<(Vec<String>, AnswerKind)> = Vec::new();
    for &(marker, kind) in CJK_MARKERS {
        match groups.last_mut() {
            Some((markers, k)) if *k == kind => markers.push(regex::escape(marker)),
            _ => groups.push((vec![regex::escape(marker)], kind)),
        }
    }
    groups
        .into_iter()
        .map(|(markers, kind)| (Regex::new(&markers.join("|")).expect("static regex"), kind))
        .collect()
});

/// Any of [`CJK_QUESTION_PARTS`]; where several start at one place, the
/// first listed wins, so the list puts longer parts before their prefixes.
static CJK_QUESTION_PART: LazyLock<Regex> = LazyLock::new(|| {
    let parts: Vec<String> = CJK_QUESTION_PARTS
        .iter()
        .map(|p| regex::escape(p))
        .collect();
    Regex::new(&parts.join("|")).expect("static regex")
});

/// Korean particles that may end a word, longest first.
const KOREAN_PARTICLES: &[&str] = &[
    "에서는",
    "께서",
    "에서도",
    "으로는",
    "에게서",
    "에서",
    "으로",
    "에게",
    "부터",
    "까지",
    "처럼",
    "보다",
    "이나",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "에",
    "의",
    "와",
    "과",
    "도",
    "로",
    "만",
    "께",
];

/// The kind of answer a question asks for.
pub fn answer_kind(question: &str) -> AnswerKind {
    if TIME_EN.is_match(&NOT_TIME.replace_all(question, " ")) {
        return AnswerKind::Time;
    }
    if NUMBER_EN.is_match(question) || LIMIT_EN.is_match(question) {
        return AnswerKind::Number;
    }
    if PERSON_EN.is_match(question) {
        return AnswerKind::Person;
    }
    if PLACE_EN.is_match(question) {
        return AnswerKind::Place;
    }
    if let Some((_, kind)) = CJK_MARKER_PATTERNS
        .iter()
        .find(|(pattern, _)| pattern.is_match(question))
    {
        return *kind;
    }
    if type_noun(question).is_some() {
        AnswerKind::Choice
    } else {
        AnswerKind::Other
    }
}

/// The question with Korean/Japanese/Chinese question words, polite endings
/// and trailing Korean particles removed; Latin text is left to the
/// analyzer's stop words.
pub fn informative_text(question: &str) -> String {
    let question = HOW_ADJECTIVE.replace_all(question, " ");
    let mut words = Vec::new();
    for word in question.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        if !word.chars().any(super::super::index::analyzer::is_cjk) {
            words.push(without_clitic(word).to_string());
            continue;
        }
        let word = CJK_QUESTION_PART.replace_all(word, " ");
        for piece in word.split_whitespace() {
            // Particles may follow one another ("환경에서만").
            let piece = strip_particle(strip_particle(strip_ending(piece)));
            let piece = strip_verb_ending(strip_honorific(piece));
            let piece =
                after_latin_particle(piece).trim_end_matches(|c: char| !c.is_alphanumeric());
            // An honorific standing alone ("이서연 님") is left over too.
            let left_over = LEFT_OF_QUESTION.contains(&piece) || KOREAN_HONORIFICS.contains(&piece);
            if !piece.is_empty() && !left_over {
                words.push(piece.to_string());
            }
        }
    }
    words.join(" ")
}

/// A word without its possessive or contracted "'s" ("Ana's" → "Ana",
/// "What's" → "What"): the analyzer would make a term "s" of it, which no
/// answer says ("Ana Ruiz | ana@acme.dev" for "What is Ana's email?") and
/// which weighs as much as a rare word.
fn without_clitic(word: &str) -> &str {
    ["'s", "’s", "'S", "’S"]
        .iter()
        .find_map(|clitic| word.strip_suffix(clitic))
        .filter(|rest| rest.ends_with(char::is_alphanumeric))
        .unwrap_or(word)
}

/// Korean endings of a plain or polite question that end a word ("명이에요",
/// "명이죠", "얼마예요"), longest first: taken off the word's end only,
/// where [`CJK_QUESTION_PARTS`] are taken out anywhere.
const KOREAN_ENDINGS: &[&str] = &[
    "이에요",
    "인지요",
    "일까요",
    "인데요",
    "이지요",
    "이죠",
    "예요",
    "지요",
    "죠",
];

/// "명이에요" → "명"; an ending alone ("예요" left of "얼마예요") → "".
fn strip_ending(word: &str) -> &str {
    KOREAN_ENDINGS
        .iter()
        .find_map(|ending| word.strip_suffix(ending))
        .unwrap_or(word)
}

/// Endings of a verb or adjective in a request ("생략하면", "붙이려면",
/// "쓰려는데", "싶어요", "넣어야"), longest first: what they end says how
/// the question is put, never what it is about.
const KOREAN_VERB_ENDINGS: &[&str] = &[
    "하려는데",
    "하려면",
    "하려고",
    "려는데",
    "하면서",
    "해야",
    "하면",
    "하고",
    "하는",
    "하게",
    "되면",
    "려면",
    "려고",
    "면서",
    "어요",
    "아요",
    "어야",
    "아야",
    "는데",
    "지만",
    "으면",
    "게",
];

/// A Korean word without the ending of [`KOREAN_VERB_ENDINGS`] it ends in:
/// the noun it is made of ("생략하면" → "생략") when two syllables or more
/// are left, else nothing (a verb of one syllable, "쓰면서", "싶어요",
/// "넣어야": as common as the ending). Words of one or two syllables stay
/// as they are ("화면" is no "화" + "면").
fn strip_verb_ending(word: &str) -> &str {
    if !long_hangul_word(word) {
        return word;
    }
    match KOREAN_VERB_ENDINGS
        .iter()
        .find_map(|ending| word.strip_suffix(ending))
    {
        Some(stem) if stem.chars().count() >= 2 => stem,
        Some(_) => "",
        None => word,
    }
}

/// A word of Latin letters or code with a Korean particle after it
/// ("<Activity>를", "panicThreshold에") without the particle.
fn after_latin_particle(word: &str) -> &str {
    let Some(last) = word.chars().last() else {
        return word;
    };
    let before = &word[..word.len() - last.len_utf8()];
    let latin_before = before
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
    if latin_before && KOREAN_PARTICLES.iter().any(|p| p.chars().eq([last])) {
        before
    } else {
        word
    }
}

/// What is left of a Korean word once its question word is out ("언제니",
/// "얼마임", "언제 함", "하는지 알려줘"): endings of a plain or casual
/// question, never a word asked about.
const LEFT_OF_QUESTION: &[&str] = &[
    "니",
    "냐",
    "야",
    "해",
    "해요",
    "할",
    "함",
    "임",
    "하",
    "하는지",
    "되는지",
    "인지",
    "줘",
    "요",
    "지",
    "나",
    "했",
];

/// The honorifics that follow a name (or a role, "선생님").
const KOREAN_HONORIFICS: &[&str] = &["님", "씨"];

/// "이서연님" → "이서연": an honorific is no part of what is asked; a word
/// of two syllables keeps it ("손님", "날씨").
fn strip_honorific(word: &str) -> &str {
    strip_hangul_suffix(word, KOREAN_HONORIFICS)
}

/// "배포는" → "배포"; words of two syllables or fewer are left alone
/// ("회의" ends in "의" but is a noun).
fn strip_particle(word: &str) -> &str {
    strip_hangul_suffix(word, KOREAN_PARTICLES)
}

/// A Hangul word of three syllables or more without the first of
/// `suffixes` it ends in that leaves two syllables or more of it.
fn strip_hangul_suffix<'w>(word: &'w str, suffixes: &[&str]) -> &'w str {
    if !long_hangul_word(word) {
        return word;
    }
    suffixes
        .iter()
        .filter_map(|suffix| word.strip_suffix(suffix))
        .find(|stem| stem.chars().count() >= 2)
        .unwrap_or(word)
}

/// A word of Hangul syllables only, three or more: one whose end may be a
/// particle or an ending with a word still before it.
fn long_hangul_word(word: &str) -> bool {
    word.chars().all(|c| ('\u{AC00}'..='\u{D7AF}').contains(&c)) && word.chars().count() >= 3
}

static TYPE_NOUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:what|which)\s+(?:kind|kinds|type|types|sort|sorts|form|forms)?\s*(?:of\s+)?([\p{L}-]+)")
        .expect("static regex")
});

/// Words that follow "what"/"which" without naming the kind of answer.
const NOT_TYPE_NOUNS: &[&str] = &[
    "is", "was", "are", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will",
    "would", "should", "may", "might", "must", "shall", "a", "an", "the", "of", "to", "in", "on",
    "we", "you", "they", "he", "she", "it", "i", "this", "that", "these", "those", "happened",
    "happens", "caused", "causes", "made", "makes",
];

/// The noun that names the kind of answer ("what *religion* were the
/// Normans", "which *database* do we use"): an answer often states the
/// answer without it, so it counts for less.
pub fn type_noun(question: &str) -> Option<String> {
    let word = TYPE_NOUN
        .captures(question)?
        .get(1)?
        .as_str()
        .to_lowercase();
    (!NOT_TYPE_NOUNS.contains(&word.as_str())).then_some(word)
}

/// "how long", "how many": the adjective belongs to the question word.
static HOW_ADJECTIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)how\s+(many|much|long|far|old|big|large|high|tall|wide|deep|heavy|fast|often|soon)(?-u:\b)")
        .expect("static regex")
});

static YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(1[0-9]{3}|20[0-9]{2})s?(?-u:\b)").expect("static regex")
});

/// A day of the year a text names, in any of the ways notes and questions
/// write one: "2026-10-12", "October 12", "Oct. 12th", "12 October",
/// "10월 12일", "10月12日".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedDay {
    /// Where the text names it, with the year when it says one.
    pub span: (usize, usize),
    pub month: u32,
    pub day: u32,
    /// The year, when the text gives it with the day.
    pub year: Option<String>,
}

/// The months' names in English, in order.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Dates written with their month's name or in digits. "May" only
/// capitalized: "may 2" is as often a verb before a number.
static NAMED_DAY: LazyLock<Regex> = LazyLock::new(|| {
    const MONTH: &str = r"(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|May";
    Regex::new(&format!(
        r"(?-u:\b)(?<iy>\d{{4}})-(?<im>\d{{1,2}})-(?<id>\d{{1,2}})(?-u:\b)|(?-u:\b)(?<mm>{MONTH})\.?\s+(?<md>\d{{1,2}})(?:st|nd|rd|th)?(?-u:\b)(?:,?\s+(?<my>\d{{4}})(?-u:\b))?|(?-u:\b)(?<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?<dm>{MONTH})(?-u:\b)(?:,?\s+(?<dy>\d{{4}})(?-u:\b))?|(?:(?<cy>\d{{4}})\s*[년年]\s*)?(?<cm>\d{{1,2}})\s*[월月]\s*(?<cd>\d{{1,2}})\s*[일日]"
    ))
    .expect("static regex")
});

/// The days of the year `text` names.
pub fn days_named(text: &str) -> Vec<NamedDay> {
    let month_number = |name: &str| {
        let start: String = name.to_lowercase().chars().take(3).collect();
        MONTHS
            .iter()
            .position(|m| m.starts_with(&start))
            .map(|i| i as u32 + 1)
    };
    NAMED_DAY
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let number = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
            let (month, day, year) = if let Some(month) = number("im") {
                (month, number("id")?, c.name("iy"))
            } else if let Some(month) = c.name("mm") {
                (month_number(month.as_str())?, number("md")?, c.name("my"))
            } else if let Some(month) = c.name("dm") {
                (month_number(month.as_str())?, number("dd")?, c.name("dy"))
            } else {
                (number("cm")?, number("cd")?, c.name("cy"))
            };
            ((1..=12).contains(&month) && (1..=31).contains(&day)).then(|| NamedDay {
                span: (whole.start(), whole.end()),
                month,
                day,
                year: year.map(|y| y.as_str().to_string()),
            })
        })
        .collect()
}

/// Words and patterns that pin a time down: a month, a weekday, a clock
/// time, a date.
static TIME_STRONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|wednesdays|thursdays|fridays|noon|midnight)(?-u:\b)|(?-u:\b)\d{1,2}:\d{2}(?-u:\b)|(?-u:\b)\d{1,2}(st|nd|rd|th)(?-u:\b)|(?-u:\b)\d{4}-\d{2}-\d{2}(?-u:\b)|(?-u:\b)\d+\s*(am|pm|h)(?-u:\b)",
    )
    .expect("static regex")
});
/// Words that speak of time without pinning it down.
static TIME_WEAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(weekly|daily|monthly|yearly|annually|century|centuries|decade|decades|today|tomorrow|yesterday|morning|afternoon|evening|night|spring|summer|autumn|fall|winter|week|weeks|day|days|month|months|year|years|hour|hours|minutes|ago)(?-u:\b)",
    )
    .expect("static regex")
});
static CJK_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d+\s*(년|월|일|시|분|주|年|月|日|時|时|点|分|週|周)[钟鐘間间간]?|(월|화|수|목|금|토|일)요일|매주|매일|매달|毎週|毎日|每周|每天|曜日|星期|周[一二三四五六日]|오전|오후|午前|午後|上午|下午")
        .expect("static regex")
});
/// How a span of time ends ("40分钟", "2時間", "3日間", "2시간",
/// "30분간"): no point in time, so no answer to "when", only to "how long"
/// ([`Asked::how_long`]).
const DURATION_END: &[char] = &['钟', '鐘', '間', '间', '간'];
/// Questions asking how long something takes ("몇 시간", "何時間", "多久"),
/// or by when ("언제까지", "いつまでに": "within 48 hours" answers).
static HOW_LONG_CJK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"몇\s?시간|몇\s?분간|몇\s?일간|얼마나\s?걸|언제까지|何時間|何分間|何日間|いつまで|多久|多长时间|几个小时|几小时|几分钟")
        .expect("static regex")
});
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\d|(?-u:\b)(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|hundreds|thousand|thousands|million|millions|billion|billions|dozen|dozens|half|single|double|twice|once)(?-u:\b)|[一二三四五六七八九十百千万億亿两]|[하한두세네다섯여섯일곱여덟아홉열]\s?(개|명|번|시간|분|가지)")
        .expect("static regex")
});
static PERCENT_ASKED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)percent|퍼센트|비율|%").expect("static regex"));
/// "How much", a cost, a price: an amount, written in digits.
static AMOUNT_ASKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)how\s+much(?-u:\b)|(?-u:\b)(cost|costs|price|prices|fee|fees)(?-u:\b)|얼마|いくら|多少钱")
        .expect("static regex")
});
static DIGITS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\p{N}+(?:[.,]\p{N}+)*").expect("static regex"));
static PERCENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\d\s*(%|％|percent|per cent|퍼센트)").expect("static regex"));
/// Tokens that name something specific: with a digit, or code-like
/// (`Ctrl+O`, `AES-256`, `v1.2`, `snake_case`).
static SPECIFIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[\p{L}\p{N}]*\p{N}[\p{L}\p{N}]*|[\p{L}\p{N}]+(?:[+._/-][\p{L}\p{N}]+)+")
        .expect("static regex")
});
/// A command-line flag, at the start of a word: `-v`, `--no-verify`.
static FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(\[\x60'\x22,=/])(--?[A-Za-z][A-Za-z0-9_-]*)").expect("static regex")
});
/// An environment variable: `$HOME`, `${X}`, `OUT_DIR`, `PROFILE`.
static ENV_VAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{?[A-Za-z_][A-Za-z0-9_]*|(?-u:\b)[A-Z][A-Z0-9]*(?:_[A-Z0-9<>]+)+_?(?-u:\b)|(?-u:\b)[A-Z]{3,}[0-9]*(?-u:\b)")
        .expect("static regex")
});
/// A file name with its extension, or a path: `config.json`,
/// `target/cargo-timings/cargo-timing.html`.
static FILE_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[\p{L}\p{N}_~$/<>.-]*[\p{L}\p{N}_>-]\.[A-Za-z][A-Za-z0-9]{0,9}(?-u:\b)")
        .expect("static regex")
});
/// A folder path: `registry/cache`, `target/debug/`, `~/.cargo`, `.git`.
static FOLDER_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[~$.\p{L}\p{N}_<>{}-]*[/\\][\p{L}\p{N}_.<>{}/\\-]*|(?:^|\s)\.[a-z][\w-]+")
        .expect("static regex")
});
/// A key combination or a named key: `Ctrl+P`, `Cmd-Shift-F`, `⌘P`,
/// `Escape`, `F2` (named keys only capitalized: "escape" is also a verb).
static SHORTCUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:(?-u:\b)(?:ctrl|cmd|command|shift|alt|option|opt|mod|meta|win|super|control)\s*[+-]\s*[\p{L}\p{N}])|[⌘⇧⌥⌃]|(?-u:\b)(?:Escape|Esc|Enter|Return|Tab|Space|Backspace|Delete|Home|End|PageUp|PageDown|F[1-9][0-2]?)(?-u:\b)")
        .expect("static regex")
});
/// A name written as code: camelCase (`arePropsEqual`), snake_case
/// (`critical_errors`), joined by dots, slashes, colons or dashes
/// (`react-dom/client`, `@types/react`, `http://localhost:8097`), or quoted
/// (`'visible'`, the capture).
static CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u:\b)[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*(?-u:\b)|(?-u:\b)[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?-u:\b)|@?[A-Za-z0-9]+(?:[._/:@-]+[A-Za-z0-9]+)+|['"‘“]([A-Za-z_][\w.-]{0,40})['"’”]"#)
        .expect("static regex")
});
/// A name as code writes it, joined by dashes or underscores
/// (`ledger-sync`, `billing_portal`) or in camelCase (`arePropsEqual`).
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*(?-u:\b)|(?-u:\b)[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+(?-u:\b)")
        .expect("static regex")
});

/// The things a question names as code names them (`ledger-sync`,
/// `billing_portal`), as [`alphanumeric_lower`] writes them: evidence
/// that says one of them nowhere (title, heading, path, text) is about
/// something else ("the deploy key for ledger-sync" is not the one for
/// billing-portal). Only names with two letters or more in a row: not a
/// date (`2026-10-12`) or a version. An English compound (`per-key`) is
/// one too: the decider only holds evidence to a name some of it says.
pub fn code_names(question: &str) -> Vec<String> {
    static LETTERS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z]{2}").expect("static regex"));
    let mut names: Vec<String> = IDENTIFIER
        .find_iter(question)
        .map(|m| m.as_str())
        .filter(|m| LETTERS.is_match(m))
        .map(alphanumeric_lower)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The names of people or things the question writes in two or more
/// capitalized words ("Maria Lopez", "Tom Becker's"), lower-cased as
/// [`alphanumeric_lower`] writes them: as with [`code_names`], evidence
/// that nowhere says one of them is about someone else ("Tom's phone is …"
/// is no answer to "What's Maria Lopez's phone number?"). Not the question's
/// own first word ("Does Maria …").
pub fn proper_names(question: &str) -> Vec<String> {
    static RUN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?-u:\b)[A-Z][a-z]+(?:-[a-z]+)?(?:\s+[A-Z][a-z]+(?:-[a-z]+)?)+")
            .expect("static regex")
    });
    let start = question.len() - question.trim_start().len();
    let mut names: Vec<String> = RUN
        .find_iter(question)
        .filter_map(|m| {
            let words: Vec<&str> = m.as_str().split_whitespace().collect();
            let words = if m.start() == start {
                &words[1..]
            } else {
                &words[..]
            };
            (words.len() >= 2).then(|| alphanumeric_lower(&words.join(" ")))
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Text with only its letters and digits, lower-cased: a name written
/// with any separators (`ledger-sync`, `ledger_sync`, `LedgerSync`) the
/// same.
pub fn alphanumeric_lower(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A word in Latin letters that starts in lower case: in a Korean,
/// Japanese or Chinese sentence, a name written as code more often than
/// not (`permalink`, `signal`); a capitalized one is as often a concept
/// kept in English ("React", "State", "Effect").
static LATIN_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[a-z][A-Za-z0-9]+").expect("static regex"));
/// Abbreviations and slashes that look like a file name or a path.
const NOT_PATHS: &[&str] = &["e.g", "i.e", "and/or", "w/", "/", "//", "n/a", "etc."];

static CAPITALIZED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\p{Lu}[\p{L}'’-]+").expect("static regex"));

/// Forms a value is written in that a question asks for by a noun ("email
/// address", "Slack handle", "host and port"): a sentence that shows a
/// value of the form says what the noun would ("email:
/// tom.becker@fernway.io" answers "What is Tom Becker's email address?").
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Forms(u8);

impl Forms {
    pub const EMAIL: Forms = Forms(1);
    pub const URL: Forms = Forms(1 << 1);
    /// `@junho`: a chat or code-hosting name.
    pub const HANDLE: Forms = Forms(1 << 2);
    /// `#deploys`.
    pub const CHANNEL: Forms = Forms(1 << 3);
    /// `pg-staging.internal`, `10.0.0.7`, `localhost:5433`.
    pub const HOST: Forms = Forms(1 << 4);
    /// The port of `host:port`.
    pub const PORT: Forms = Forms(1 << 5);
    /// `10%`, `40 percent`.
    pub const PERCENT: Forms = Forms(1 << 6);

    /// True when the two share a form.
    pub fn meets(self, other: Forms) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Forms {
    type Output = Forms;
    fn bitor(self, other: Forms) -> Forms {
        Forms(self.0 | other.0)
    }
}

impl std::ops::BitOrAssign for Forms {
    fn bitor_assign(&mut self, other: Forms) {
        self.0 |= other.0;
    }
}

/// What an "address" is: of mail, of a web page or of a machine.
const ADDRESS: Forms = Forms(Forms::EMAIL.0 | Forms::URL.0 | Forms::HOST.0);

/// The nouns that ask for a value of a form, and the forms that answer
/// them. Korean and Chinese ones are read as the analyzer reads them, in
/// pairs of characters; a Japanese word in katakana would give pairs that
/// many other words share ("ール" of "メール" and "ルール"), so there are none.
const FORM_NOUNS: &[(&str, Forms)] = &[
    ("email", Forms::EMAIL),
    ("mail", Forms::EMAIL),
    ("address", ADDRESS),
    ("url", Forms::URL),
    ("link", Forms::URL),
    ("website", Forms::URL),
    ("handle", Forms::HANDLE),
    ("username", Forms::HANDLE),
    ("channel", Forms::CHANNEL),
    ("host", Forms::HOST),
    ("hostname", Forms::HOST),
    ("port", Forms::PORT),
    ("percentage", Forms::PERCENT),
    ("percent", Forms::PERCENT),
    ("rate", Forms::PERCENT),
    ("share", Forms::PERCENT),
    ("proportion", Forms::PERCENT),
    ("이메일", Forms::EMAIL),
    ("메일", Forms::EMAIL),
    ("주소", ADDRESS),
    ("링크", Forms::URL),
    ("채널", Forms::CHANNEL),
    ("포트", Forms::PORT),
    ("비율", Forms::PERCENT),
    ("퍼센트", Forms::PERCENT),
    ("割合", Forms::PERCENT),
    ("邮箱", Forms::EMAIL),
    ("地址", ADDRESS),
    ("链接", Forms::URL),
    ("频道", Forms::CHANNEL),
    ("主机", Forms::HOST),
    ("端口", Forms::PORT),
    ("比例", Forms::PERCENT),
];

/// The forms of value the question's words ask for, by analyzed term: a
/// word written as the noun ("host", "hosts"; not "hosted" or "hosting",
/// which the analyzer makes the same term: "Where is the website hosted?"
/// asks for no host name). A CJK word is read as the analyzer reads it.
pub fn forms_asked(question: &str) -> std::collections::HashMap<String, Forms> {
    let mut asked = std::collections::HashMap::new();
    let words: Vec<&str> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let lowered: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let lower_at = |i: usize| lowered.get(i).map(String::as_str);
    for (at, &word) in words.iter().enumerate() {
        let lower = &lowered[at];
        let noun = |n: &str| lower == n;
        // "Which region hosts the data?": a noun's "-s" before a
        // determiner makes a verb of it.
        let verb = lower_at(at + 1).is_some_and(|next| DETERMINERS.contains(&next));
        let plural = |n: &str| {
            !verb && [lower.strip_suffix('s'), lower.strip_suffix("es")].contains(&Some(n))
        };
        let cjk = word.chars().any(crate::index::analyzer::is_cjk);
        if !cjk && !FORM_NOUNS.iter().any(|&(n, _)| noun(n) || plural(n)) {
            continue;
        }
        // "Where is the website hosted?", "What font does the website
        // use?": the subject of the question's verb is not what it asks.
        let subject = at >= 2
            && lower_at(at - 1).is_some_and(|w| DETERMINERS.contains(&w))
            && lower_at(at - 2).is_some_and(|w| AUXILIARIES.contains(&w))
            && lower_at(at + 1).is_some_and(|w| !PREPOSITIONS.contains(&w));
        if subject {
            continue;
        }
        for term in
            crate::index::analyzer::with_analyzer(|a| crate::index::analyzer::analyze(a, word))
        {
            let forms = forms_named(&term.text);
            if forms != Forms::default() {
                let known: &mut Forms = asked.entry(term.text).or_default();
                *known |= forms;
            }
        }
    }
    asked
}

/// Words that open a noun phrase: what follows a verb, never a noun.
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "our", "my", "your", "its", "their", "this", "that", "these", "those", "all",
    "each", "every",
];

/// The verbs that open a question before its subject ("Where *is* the
/// website hosted?").
const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "do", "does", "did", "will", "would", "can", "could", "should",
    "has", "have", "had",
];

/// Words that carry a noun on to what it belongs to ("the host *of*
/// staging"): the noun before them is still the thing asked.
const PREPOSITIONS: &[&str] = &[
    "of", "for", "in", "on", "at", "to", "from", "with", "by", "and", "or",
];

/// The forms of value an analyzed question term asks for (none for most).
fn forms_named(term: &str) -> Forms {
    static NAMED: LazyLock<std::collections::HashMap<String, Forms>> = LazyLock::new(|| {
        let mut analyzer = crate::index::analyzer::text_analyzer();
        FORM_NOUNS
            .iter()
            .flat_map(|&(noun, forms)| {
                crate::index::analyzer::analyze(&mut analyzer, noun)
                    .into_iter()
                    .map(move |t| (t.text, forms))
            })
            .collect()
    });
    NAMED.get(term).copied().unwrap_or_default()
}

static EMAIL_ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+").expect("static regex"));
/// `@junho`, not the `@` of an address.
static HANDLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[\s(\[,;:])@[A-Za-z0-9_][\w.-]*").expect("static regex"));
static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)[a-z][a-z0-9+.-]*://[^\s)>\]]+|(?-u:\b)www\.[\w-]+\.[a-z]{2,}")
        .expect("static regex")
});
/// `#deploys`, not an issue's number (`#482`).
static CHANNEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[\s(\[,;:])#\p{L}[\p{L}\p{N}_-]*").expect("static regex"));
/// `localhost:5433`, `pg-staging.internal:6432`: a name before the colon,
/// so no clock time (`14:30`) or ratio.
static HOST_PORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)[A-Za-z][\w-]*(?:\.[\w-]+)*:\d{2,5}(?-u:\b)").expect("static regex")
});
/// A machine's name by its domain (`redis-staging.internal`,
/// `grafana.fernway.io`) or an IPv4 address; not a file's name
/// (`values.yaml`).
static HOST_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:internal|local|lan|com|net|org|io|dev|app|cloud|ai|co)(?-u:\b)|(?-u:\b)\d{1,3}(?:\.\d{1,3}){3}(?-u:\b)")
        .expect("static regex")
});

/// The forms of the values a sentence shows.
fn value_forms(sentence: &str) -> Forms {
    let mut forms = Forms::default();
    if sentence.contains('@') {
        if EMAIL_ADDRESS.is_match(sentence) {
            forms |= Forms::EMAIL;
        }
        if HANDLE.is_match(sentence) {
            forms |= Forms::HANDLE;
        }
    }
    if URL.is_match(sentence) {
        forms |= Forms::URL | Forms::HOST;
    }
    if sentence.contains('#') && CHANNEL.is_match(sentence) {
        forms |= Forms::CHANNEL;
    }
    if HOST_PORT.is_match(sentence) {
        forms |= Forms::HOST | Forms::PORT;
    }
    if PERCENT.is_match(sentence) {
        forms |= Forms::PERCENT;
    }
    // The domain of a mail address is no machine asked for.
    if HOST_NAME
        .find_iter(sentence)
        .any(|m| !sentence[..m.start()].ends_with('@'))
    {
        forms |= Forms::HOST;
    }
    forms
}

/// What a sentence could answer with, found once per sentence: every match
/// of each kind's pattern, lower-cased. Whether one is *new* depends on the
/// question and is checked per question.
#[derive(Debug, Default)]
pub struct Offers {
    cjk: bool,
    year: Vec<String>,
    time_strong: Vec<String>,
    time_weak: Vec<String>,
    cjk_time: Vec<String>,
    percent: Vec<String>,
    digits: Vec<String>,
    number: Vec<String>,
    specific: Vec<String>,
    flags: Vec<String>,
    env_vars: Vec<String>,
    files: Vec<String>,
    folders: Vec<String>,
    shortcuts: Vec<String>,
    /// Names written as code ([`CODE`]).
    code: Vec<String>,
    /// In a CJK sentence, the words in Latin letters: names written as
    /// code more often than not, but not a term a definition stands under
    /// (a heading's `{/id/}`).
    latin: Vec<String>,
    /// Capitalized words that may be names (not a common word opening the
    /// sentence).
    names: Vec<String>,
    /// The forms of the values it shows.
    forms: Forms,
}

/// A line's label ("- Product manager: [[Maria Chen]]"; a Dataview field's,
/// "Timezone:: Europe/Madrid"): a few words before a colon, one of them in
/// lower case, so no name ("Maria Chen: SRE lead" is labelled by one).
static LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[-*+]\s+)?[\p{L}\p{N}][\p{L}\p{N} ]{0,38}::?\s").expect("static regex")
});

/// The label, with its colon, of a sentence that is a "Label: value" field
/// with its value ("Repo: fernway/billing-portal", "Product manager: Maria
/// Chen"): whole by itself, which the sentences around it do not continue.
/// A label is a name of a few words; a longer one is a sentence that goes
/// on after a colon ("The Council does this: …").
pub fn field_label(sentence: &str) -> Option<&str> {
    LABEL
        .find(sentence)
        .filter(|m| {
            m.as_str().split_whitespace().count() <= FIELD_LABEL_WORDS
                && sentence[m.end()..].contains(char::is_alphanumeric)
        })
        .map(|m| m.as_str())
}

/// Most words a field's label has ([`field_label`]).
const FIELD_LABEL_WORDS: usize = 3;

/// Where the label of a "Label: value" line ends (0 when it has none that
/// is no name): its capitalized words say what the value is, and name no
/// one ("Product manager: Maria Chen" names only Maria Chen).
fn label_end(sentence: &str) -> usize {
    LABEL
        .find(sentence)
        .filter(|m| {
            m.as_str()
                .split_whitespace()
                .any(|w| w.chars().next().is_some_and(char::is_lowercase))
        })
        .map_or(0, |m| m.end())
}

/// A date in Korean, Japanese or Chinese ("2024년 12월 31일", "12月31日"); not a
/// span of days ("30일"), which is how much time.
static CJK_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d+\s*(년|年)\s*\d+\s*(월|月)(\s*\d+\s*(일|日))?|\d+\s*(월|月)\s*\d+\s*(일|日)")
        .expect("static regex")
});

/// The digits of a sentence that may be an amount: not those of a date or a
/// clock time ("2024년 12월 31일", "14:00", "2026-11-26"), which say when,
/// not how much.
fn amount_digits(sentence: &str, cjk: bool) -> Vec<String> {
    let untimed = TIME_STRONG.replace_all(sentence, " ");
    let undated = if cjk {
        CJK_DATE.replace_all(&untimed, " ")
    } else {
        std::borrow::Cow::Borrowed(untimed.as_ref())
    };
    DIGITS
        .find_iter(&undated)
        .map(|m| m.as_str().to_lowercase())
        .collect()
}

impl Offers {
    pub fn of(sentence: &str) -> Offers {
        let found = |re: &Regex| -> Vec<String> {
            re.find_iter(sentence)
                .map(|m| m.as_str().to_lowercase())
                .collect()
        };
        let cjk = sentence.chars().any(super::super::index::analyzer::is_cjk);
        let label = label_end(sentence);
        let path_like = |re: &Regex| -> Vec<String> {
            re.find_iter(sentence)
                .map(|m| m.as_str().trim().to_lowercase())
                .filter(|m| !NOT_PATHS.contains(&m.as_str()))
                .collect()
        };
        Offers {
            cjk,
            year: found(&YEAR),
            time_strong: found(&TIME_STRONG),
            time_weak: found(&TIME_WEAK),
            cjk_time: if cjk { found(&CJK_TIME) } else { Vec::new() },
            percent: found(&PERCENT),
            digits: amount_digits(sentence, cjk),
            number: found(&NUMBER),
            specific: found(&SPECIFIC),
            flags: FLAG
                .captures_iter(sentence)
                .filter_map(|c| c.get(1))
                .map(|m| m.as_str().to_lowercase())
                .collect(),
            env_vars: found(&ENV_VAR),
            files: path_like(&FILE_NAME),
            folders: path_like(&FOLDER_PATH),
            shortcuts: found(&SHORTCUT),
            code: CODE
                .captures_iter(sentence)
                .filter_map(|c| c.get(1).or(c.get(0)))
                .map(|m| m.as_str().to_lowercase())
                .filter(|m| !NOT_PATHS.contains(&m.as_str()))
                .collect(),
            latin: if cjk { found(&LATIN_WORD) } else { Vec::new() },
            names: CAPITALIZED
                .find_iter(sentence)
                .filter(|m| m.start() >= label)
                .filter_map(|m| {
                    let word = m.as_str().to_lowercase();
                    // At the start of a sentence every word is capitalized:
                    // only a word that is not a common one counts there
                    // ("Jonas owns …").
                    let opening = sentence[..m.start()].trim().is_empty();
                    (!opening || !COMMON_OPENERS.contains(&word.as_str())).then_some(word)
                })
                .collect(),
            forms: value_forms(sentence),
        }
    }

    /// The forms of the values the sentence shows ([`Forms`]).
    pub fn forms(&self) -> Forms {
        self.forms
    }

    /// True when the sentence contains something of the asked-for kind that
    /// the question does not already contain.
    pub fn offer(&self, asked: &Asked) -> bool {
        match asked.shape {
            // "Which option" is also answered by a named setting.
            Some(shape) => {
                self.shape_terms(asked).next().is_some()
                    || (shape == Shape::Option && asked.lacks_any(&self.names))
                    || (shape == Shape::Code && asked.lacks_any(&self.latin))
            }
            None => self.offer_kind(asked),
        }
    }

    /// [`Offers::offer`] by the question's kind alone, its shape left
    /// aside: what the learned decider's kind features were fitted on.
    pub fn offer_kind(&self, asked: &Asked) -> bool {
        let new = |found: &[String]| asked.lacks_any(found);
        match asked.kind {
            AnswerKind::Other => true,
            AnswerKind::Time => {
                let cjk_time: Vec<String> = self
                    .cjk_time
                    .iter()
                    .filter(|t| asked.how_long || !t.ends_with(DURATION_END))
                    .cloned()
                    .collect();
                new(&self.year) || new(&self.time_strong) || new(&self.time_weak) || new(&cjk_time)
            }
            AnswerKind::Number => match asked.number {
                NumberAsked::Percent => new(&self.percent),
                NumberAsked::Amount => new(&self.digits),
                NumberAsked::Count => new(&self.number),
            },
            // Korean, Japanese and Chinese names carry no capitals to check.
            AnswerKind::Choice => self.cjk || new(&self.names) || new(&self.specific),
            // CJK names carry no capitals: the kind cannot be checked there.
            AnswerKind::Person => self.cjk || new(&self.names),
            // "Where does the build cache live?": in a folder too, written
            // as one (`/var/cache/build`, `~/.cargo`, `a/b/c`), not a
            // ratio of prose ("1973/74", "km/h").
            AnswerKind::Place => {
                let folders: Vec<String> = self
                    .folders
                    .iter()
                    .filter(|f| f.starts_with(['/', '~', '.']) || f.matches('/').count() >= 2)
                    .cloned()
                    .collect();
                self.cjk || new(&self.names) || new(&folders)
            }
        }
    }

    /// What the text shows of the asked-for shape, strictly (a flag for
    /// "which option", not a name), and not already in the question: what
    /// a definition's term names.
    pub fn shape_terms<'a>(&'a self, asked: &'a Asked) -> impl Iterator<Item = &'a str> {
        let found: [&[String]; 2] = match asked.shape {
            Some(Shape::Flag | Shape::Option) => [&self.flags, &[]],
            Some(Shape::EnvVar) => [&self.env_vars, &[]],
            Some(Shape::File) => [&self.files, &self.folders],
            Some(Shape::Folder) => [&self.folders, &[]],
            Some(Shape::Shortcut) => [&self.shortcuts, &[]],
            Some(Shape::Code) => [&self.code, &self.flags],
            None => [&[], &[]],
        };
        found
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|m| !asked.lower.contains(m))
    }

    /// True when the sentence speaks of time only vaguely ("every week")
    /// where a "when" question wants it pinned down ("Tuesday after 14:00").
    pub fn vague_time(&self, asked: &Asked) -> bool {
        let new = |found: &[String]| asked.lacks_any(found);
        !(new(&self.year) || new(&self.time_strong) || new(&self.cjk_time))
    }
}

/// What a question asks for, worked out once.
#[derive(Debug, Clone)]
pub struct Asked {
    pub kind: AnswerKind,
    /// The technical shape the answer is written in, for a question that
    /// asks for one thing ([`AnswerKind::Choice`]) or does not say
    /// ([`AnswerKind::Other`]: "is there a flag …").
    pub shape: Option<Shape>,
    /// The question in lower case, to tell what an answer adds to it.
    pub lower: String,
    number: NumberAsked,
    /// "How long" in Korean, Japanese or Chinese: a span of time answers.
    how_long: bool,
}

/// The kind of number a "how many/much" question wants.
#[derive(Debug, Clone, Copy)]
enum NumberAsked {
    /// A share: "what percentage".
    Percent,
    /// A cost or price: written in digits.
    Amount,
    Count,
}

impl Asked {
    pub fn new(question: &str) -> Asked {
        let lower = question.to_lowercase();
        let number = if PERCENT_ASKED.is_match(&lower) {
            NumberAsked::Percent
        } else if AMOUNT_ASKED.is_match(&lower) {
            NumberAsked::Amount
        } else {
            NumberAsked::Count
        };
        let kind = answer_kind(question);
        // "Which flag raises the maximum size …" asks for a flag: a limit
        // named on the way does not make it a "how many".
        let shape = shape_asked(question).filter(|_| match kind {
            AnswerKind::Choice | AnswerKind::Other => true,
            AnswerKind::Number => !NUMBER_EN.is_match(question),
            _ => false,
        });
        Asked {
            kind,
            shape,
            number,
            how_long: HOW_LONG_CJK.is_match(&lower),
            lower,
        }
    }

    /// True when one of `found` (lower case) is not in the question: the
    /// sentence adds it.
    fn lacks_any(&self, found: &[String]) -> bool {
        found.iter().any(|m| !self.lower.contains(m.as_str()))
    }
}

/// Words that often open a sentence without naming anyone.
const COMMON_OPENERS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "they", "we",
    "you", "i", "his", "her", "their", "our", "my", "your", "in", "on", "at", "for", "from", "to",
    "of", "by", "with", "as", "after", "before", "when", "while", "if", "since", "during", "there",
    "here", "some", "many", "most", "all", "each", "every", "no", "not", "but", "and", "or", "so",
    "however", "also", "then", "today", "role", "note", "see",
    // The verbs a step or an example opens with ("List all stashes:").
    "add", "change", "check", "create", "delete", "display", "download", "edit", "enable",
    "disable", "find", "get", "install", "list", "make", "move", "open", "print", "read", "remove",
    "run", "save", "search", "select", "set", "show", "start", "stop", "update", "use", "view",
    "write",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// True when `sentence` contains something of `kind` that `question`
    /// itself does not already contain.
    fn offers(kind: AnswerKind, sentence: &str, question: &str) -> bool {
        let asked = Asked {
            kind,
            ..Asked::new(question)
        };
        Offers::of(sentence).offer(&asked)
    }

    /// A step opens with a capitalized verb, which names nothing; a name
    /// that opens a sentence still is one.
    #[test]
    fn an_opening_verb_is_no_name() {
        let question = "Which namespace should the service be deployed to?";
        assert!(!offers(
            AnswerKind::Choice,
            "Delete all deployments and services in a specified namespace:",
            question
        ));
        assert!(offers(
            AnswerKind::Choice,
            "Payments deploys to the namespace it owns.",
            question
        ));
    }

    /// Names as code writes them; not dates or versions.
    #[test]
    fn code_names_are_identifiers() {
        assert_eq!(
            code_names("Which vault holds the deploy key for ledger-sync and billing_portal?"),
            ["billingportal", "ledgersync"]
        );
        assert_eq!(
            code_names("Is arePropsEqual called on 2026-10-12?"),
            ["arepropsequal"]
        );
    }

    #[test]
    fn proper_names_are_runs_of_capitalized_words() {
        assert_eq!(
            proper_names("What's Maria Lopez's phone number?"),
            ["marialopez"]
        );
        assert_eq!(proper_names("Who is Jun-ho Park's manager?"), ["junhopark"]);
        // The question's first word is no part of a name; one word is none.
        assert!(proper_names("Which Slack channel do I announce deploys in?").is_empty());
        assert!(proper_names("Does Maria know?").is_empty());
        assert_eq!(proper_names("Does Maria Lopez know?"), ["marialopez"]);
        assert!(proper_names("Who is the SRE lead?").is_empty());
    }

    /// The label of a "Label: value" line names no one: "Who is Maria
    /// Chen's manager?" is not answered by the line that makes her the
    /// product manager. A label that is a name still is one.
    #[test]
    fn a_lines_label_names_no_one() {
        let question = "Who is Maria Chen's manager?";
        assert!(!offers(
            AnswerKind::Person,
            "- Product manager: Maria Chen.",
            question
        ));
        assert!(offers(
            AnswerKind::Person,
            "- Product manager: Maria Chen, reporting to Dana Kim.",
            question
        ));
        assert!(offers(
            AnswerKind::Person,
            "Jonas Weber: SRE lead",
            "Who is the SRE lead?"
        ));
        assert!(offers(
            AnswerKind::Person,
            "Release manager: Jonas",
            "Who is the release manager?"
        ));
    }

    #[test]
    fn the_digits_of_a_date_are_no_amount() {
        let offers =
            |question: &str, sentence: &str| Offers::of(sentence).offer(&Asked::new(question));
        assert!(!offers(
            "헬스장 회원권 가격은 얼마인가요?",
            "헬스장 회원권은 2024년 12월 31일에 끝난다."
        ));
        assert!(offers(
            "헬스장 회원권 가격은 얼마인가요?",
            "헬스장 회원권은 한 달에 55,000원이다."
        ));
        // A span of days is how much time.
        assert!(offers(
            "로그 보관 기간은 얼마나 돼요?",
            "보관 기간은 30일이다."
        ));
        assert!(!offers(
            "How much is the fee?",
            "The fee changed on 2026-11-26 at 14:00."
        ));
        assert!(offers(
            "How much is the fee?",
            "The fee is 15 EUR since 2026-11-26."
        ));
    }

    #[test]
    fn answer_kinds() {
        let cases = [
            ("When do we deploy?", AnswerKind::Time),
            ("In what year did the war end?", AnswerKind::Time),
            ("Which time zone do the servers use?", AnswerKind::Choice),
            ("When is the time zone switched?", AnswerKind::Time),
            ("How many engineers are on call?", AnswerKind::Number),
            ("How much does the fee cost?", AnswerKind::Number),
            ("What is the maximum file size?", AnswerKind::Number),
            (
                "What is the default font size in pixels?",
                AnswerKind::Number,
            ),
            ("Who owns the payments service?", AnswerKind::Person),
            ("Where is the database hosted?", AnswerKind::Place),
            ("In what country is Normandy located?", AnswerKind::Place),
            ("Which database do we use?", AnswerKind::Choice),
            ("Why do we deploy on Tuesdays?", AnswerKind::Other),
            ("What is the branch naming rule?", AnswerKind::Other),
            ("배포는 언제 하나요?", AnswerKind::Time),
            ("결제 서비스 담당자는 누구인가요?", AnswerKind::Person),
            ("홀드는 몇 분인가요?", AnswerKind::Number),
            ("デプロイはいつですか？", AnswerKind::Time),
            ("负责人是谁？", AnswerKind::Person),
        ];
        for (question, kind) in cases {
            assert_eq!(answer_kind(question), kind, "{question}");
        }
    }

    #[test]
    fn days_are_read_however_written() {
        let days = |text: &str| -> Vec<(u32, u32, Option<String>)> {
            days_named(text)
                .into_iter()
                .map(|d| (d.month, d.day, d.year))
                .collect()
        };
        let day = |m, d| vec![(m, d, None)];
        let dated = |m, d, y: &str| vec![(m, d, Some(y.to_string()))];
        assert_eq!(days("| 2026-10-12 | Jun-ho Park |"), dated(10, 12, "2026"));
        assert_eq!(days("the week of October 12?"), day(10, 12));
        assert_eq!(days("on Oct. 12th, 2026"), dated(10, 12, "2026"));
        assert_eq!(days("on 12 October"), day(10, 12));
        assert_eq!(days("the 3rd of May"), day(5, 3));
        assert_eq!(days("2026년 10월 12일에"), dated(10, 12, "2026"));
        assert_eq!(days("10月12日"), day(10, 12));
        // No day: a verb before a number, a version, a month alone, a
        // thirteenth month.
        assert!(days("You may 2 times retry; v1.2.3; in October; 2026-13-01").is_empty());
    }

    proptest::proptest! {
        /// Any text, "ſ" and "K" (which match "s" and "k" ignoring case)
        /// among it, is read for days and forms without a panic, and every
        /// day found is a real one within the text.
        #[test]
        fn days_and_forms_read_any_text(text in "[a-zA-Z0-9 .,:@#/%ſK월일月日년-]{0,40}") {
            for day in days_named(&text) {
                proptest::prop_assert!((1..=12).contains(&day.month) && (1..=31).contains(&day.day));
                proptest::prop_assert!(text.get(day.span.0..day.span.1).is_some());
            }
            let _ = value_forms(&text);
        }
    }

    #[test]
    fn values_are_told_by_their_form() {
        let forms = |sentence: &str| value_forms(sentence);
        assert_eq!(forms("email: tom.becker@fernway.io"), Forms::EMAIL);
        assert_eq!(forms("Slack: @junho"), Forms::HANDLE);
        assert_eq!(forms("Announce it in #deploys."), Forms::CHANNEL);
        assert_eq!(
            forms("Postgres: pg-staging.internal:6432"),
            Forms::HOST | Forms::PORT
        );
        assert_eq!(forms("Redis: redis-staging.internal."), Forms::HOST);
        assert_eq!(forms("Sampling 10% in production."), Forms::PERCENT);
        assert_eq!(
            forms("See https://grafana.fernway.io/d/ls"),
            Forms::URL | Forms::HOST
        );
        // No form: a clock time, an issue number, a file name.
        assert_eq!(
            forms("Standup at 09:30, see #482 and values.yaml."),
            Forms::default()
        );
        assert_eq!(
            forms_named("address"),
            Forms::EMAIL | Forms::URL | Forms::HOST
        );
        assert_eq!(forms_named("port"), Forms::PORT);
        assert_eq!(forms_named("rate"), Forms::PERCENT);
        assert_eq!(forms_named("주소"), forms_named("address"));
        assert_eq!(forms_named("端口"), Forms::PORT);
        // A noun asks for its form; the verb the analyzer makes the same
        // term of does not.
        let term = |word: &str| {
            crate::index::analyzer::with_analyzer(|a| crate::index::analyzer::analyze(a, word))[0]
                .text
                .clone()
        };
        let asked = forms_asked("Which hosts and ports? What is the 포트?");
        assert_eq!(asked.get(&term("hosts")), Some(&Forms::HOST));
        assert_eq!(asked.get(&term("ports")), Some(&Forms::PORT));
        assert_eq!(asked.get("포트"), Some(&Forms::PORT));
        assert!(forms_asked("Where is the app hosted, and who is it shared with?").is_empty());
        // The subject of the question's verb.
        assert!(forms_asked("Where is the website hosted?").is_empty());
        assert!(forms_asked("What font does the website use?").is_empty());
        assert!(!forms_asked("What is the website of the shop?").is_empty());
        assert!(!forms_asked("What is the website?").is_empty());
        // A verb in "-s" before what it acts on.
        assert!(forms_asked("Which cloud region hosts the customer data?").is_empty());
        let asked = forms_asked("Which service handles our emails?");
        assert!(asked.contains_key(&term("emails")));
        assert!(!asked.contains_key(&term("handles")));
    }

    #[test]
    fn type_nouns() {
        let cases = [
            ("What religion were the Normans?", Some("religion")),
            ("Which database do we use?", Some("database")),
            ("What kind of cache do we run?", Some("cache")),
            ("What is the deploy window?", None),
            ("Who owns payments?", None),
        ];
        for (question, want) in cases {
            assert_eq!(type_noun(question).as_deref(), want, "{question}");
        }
    }

    #[test]
    fn informative_text_drops_question_words_and_particles() {
        // A possessive or contracted "'s" is no word of its own.
        assert_eq!(
            informative_text("What is Ana's email?"),
            "What is Ana email"
        );
        assert_eq!(
            informative_text("What’s the brand color?"),
            "What the brand color"
        );
        assert_eq!(
            informative_text("Is it the users' choice?"),
            "Is it the users choice"
        );
        assert_eq!(informative_text("배포는 언제 하나요?"), "배포");
        assert_eq!(
            informative_text("결제 서비스 담당자는 누구인가요?"),
            "결제 서비스 담당자"
        );
        assert_eq!(informative_text("Which database?"), "Which database");
        assert_eq!(informative_text("How long is a hold?"), "is a hold");
        assert_eq!(informative_text("회의는 어디서 하나요?"), "회의");
        // Plain and polite endings end a word the same way.
        for asked in [
            "회식 인원은 몇 명인가요?",
            "회식 인원은 몇 명이에요?",
            "회식 인원은 몇 명이죠?",
        ] {
            assert_eq!(informative_text(asked), "회식 인원 명", "{asked}");
        }
        assert_eq!(informative_text("회식 예산은 얼마예요?"), "회식 예산");
        // Honorifics after a name, and casual endings, are not asked about.
        for asked in [
            "이서연 연락처가 뭐예요?",
            "이서연 님 연락처가 뭐예요?",
            "이서연님 연락처가 뭐예요?",
            "이서연 씨 연락처 알려줘",
            "이서연님의 연락처는 뭐니?",
        ] {
            assert_eq!(informative_text(asked), "이서연 연락처", "{asked}");
        }
        assert_eq!(
            informative_text("운영 배포 언제 하는지 알려줘"),
            "운영 배포"
        );
        assert_eq!(informative_text("배포는 요일에 해?"), "배포 요일");
        assert_eq!(informative_text("알파 예산 얼마임?"), "알파 예산");
        assert_eq!(informative_text("배포 언제 함?"), "배포");
        assert_eq!(
            informative_text("메시지 큐는 뭘 쓰기로 했나요?"),
            "메시지 큐는 쓰기"
        );
        // Two syllables keep theirs: 손님 is a guest, 날씨 the weather.
        assert_eq!(informative_text("손님은 몇 명이에요?"), "손님 명");
        assert_eq!(informative_text("날씨는 어때요?"), "날씨 어때요");
        // Taken off a word's end only.
        assert_eq!(informative_text("죠스 포스터는 어디"), "죠스 포스터");
        // A request's verb endings go, and a verb of one syllable with
        // them; particles after particles, and after a word in Latin
        // letters, too.
        assert_eq!(
            informative_text("<Activity>를 쓰면서 mode prop을 생략하면 어떤 모드로 동작하나요?"),
            "Activity mode prop 생략 모드 동작"
        );
        assert_eq!(
            informative_text(
                "개발 환경에서만 빌드를 멈추게 하고 싶어요. panicThreshold에 넣어야 하나요?"
            ),
            "개발 환경 빌드 멈추 하고 panicThreshold"
        );
        assert_eq!(
            informative_text("스테이징 데이터베이스를 어느 리전에 두어야 할까요?"),
            "스테이징 데이터베이스 리전"
        );
        // A word of two syllables is left whole: 화면 is a screen.
        assert_eq!(informative_text("화면 크기는 얼마예요?"), "화면 크기");
    }

    #[test]
    fn technical_questions_ask_for_a_shape() {
        let cases = [
            ("Which flag turns on verbose output?", Some(Shape::Flag)),
            ("Is there a switch to skip the tests?", Some(Shape::Flag)),
            ("Which rsync options keep permissions?", Some(Shape::Option)),
            (
                "What environment variable sets the log level?",
                Some(Shape::EnvVar),
            ),
            ("Which file holds the API token?", Some(Shape::File)),
            ("Which config file do we edit?", Some(Shape::File)),
            ("Which directory do the logs go to?", Some(Shape::Folder)),
            ("Which file format does the export use?", None),
            ("What variable does the formula solve for?", None),
            ("Which database do we use?", None),
            ("How many files can one upload hold?", None),
            ("빌드 로그는 어느 폴더에 쌓이나요?", Some(Shape::Folder)),
            ("인증 토큰은 어떤 파일에 저장되나요?", Some(Shape::File)),
            (
                "로그 수준을 정하는 환경 변수는 무엇인가요?",
                Some(Shape::EnvVar),
            ),
            ("테스트를 건너뛰는 플래그는 무엇인가요?", Some(Shape::Flag)),
            ("내보내기는 어떤 파일 형식을 쓰나요?", None),
            ("어떤 데이터베이스를 쓰나요?", None),
            (
                "Which keyboard shortcut opens search?",
                Some(Shape::Shortcut),
            ),
            (
                "What is the hotkey for the graph view?",
                Some(Shape::Shortcut),
            ),
            ("검색을 여는 단축키는 무엇인가요?", Some(Shape::Shortcut)),
            ("Which key closes the presentation?", Some(Shape::Shortcut)),
            (
                "발표를 끝내려면 어떤 키를 눌러야 하나요?",
                Some(Shape::Shortcut),
            ),
            // A key of a configuration is a name written as code.
            (
                "Which key in the config file sets the edition?",
                Some(Shape::Code),
            ),
            (
                "함수 이름은 설정의 어떤 키에 적어야 하나요?",
                Some(Shape::Code),
            ),
            (
                "Which prop sets the initial value of an uncontrolled input?",
                Some(Shape::Code),
            ),
            (
                "Which package adds the type definitions?",
                Some(Shape::Code),
            ),
            ("Which package manager does the team use?", None),
            // In English a method or a function is as often not code.
            ("What method did the Normans use to count?", None),
            (
                "memo의 두 번째 인자로 어떤 함수를 넘기나요?",
                Some(Shape::Code),
            ),
            (
                "compilationMode를 어떤 값으로 설정해야 하나요?",
                Some(Shape::Code),
            ),
            ("필수 옵션은 무엇인가요?", Some(Shape::Code)),
            ("어떤 명령어로 앱을 만드나요?", Some(Shape::Code)),
            // A stated flag, file or folder stays what it was.
            ("어떤 파일 형식의 설정을 넘기나요?", None),
        ];
        for (question, shape) in cases {
            assert_eq!(shape_asked(question), shape, "{question}");
        }
        // A count stays a count.
        assert_eq!(
            Asked::new("How many files can one upload hold?").shape,
            None
        );
        // A limit named on the way keeps the shape asked for.
        assert_eq!(
            Asked::new("Which flag raises the maximum size of HTTP headers?").shape,
            Some(Shape::Flag)
        );
    }

    #[test]
    fn sentences_offer_the_asked_shape() {
        let shown =
            |sentence: &str, question: &str| Offers::of(sentence).offer(&Asked::new(question));
        let q = "Which flag turns on verbose output?";
        assert!(shown("Pass -v (or --verbose) to see every step.", q));
        assert!(!shown("Verbose output shows every step of the build.", q));
        // A flag the question already names is not an answer.
        assert!(!shown(
            "The --verbose output is long.",
            "Which flag works like --verbose?"
        ));
        assert!(!shown("A well-known tool with a built-in mode.", q));
        let q = "Which rsync option keeps permissions?";
        assert!(shown("Use --perms to keep them.", q));
        assert!(shown("Turn on Keep permissions in the settings.", q));
        let q = "What environment variable sets the log level?";
        assert!(shown("Set RUST_LOG to debug for more.", q));
        assert!(shown("The level is read from $LEVEL at start.", q));
        assert!(!shown("The log level can be set at start.", q));
        let q = "Which file holds the API token?";
        assert!(shown("The token is saved in credentials.toml.", q));
        assert!(shown("The signing key is kept in release.keystore.", q));
        assert!(shown("It lives in ~/.config/app/token.", q));
        assert!(!shown("The token is saved on disk, e.g. in your home.", q));
        let q = "Which keyboard shortcut opens search?";
        assert!(shown("Press Ctrl+Shift+F to search every note.", q));
        assert!(shown("Or use ⌘⇧F on macOS.", q));
        assert!(shown("Press Escape to close it.", q));
        assert!(!shown(
            "Search opens from the sidebar; escape closes it.",
            q
        ));
        let q = "Which directory do the logs go to?";
        assert!(shown("Logs are written to /var/log/app/.", q));
        assert!(!shown(
            "Logs are written to a folder and/or the console.",
            q
        ));
        let q = "Which prop sets the first value?";
        assert!(shown("Pass defaultValue to set it once.", q));
        assert!(shown("It reads critical_errors from the config.", q));
        assert!(shown("Point react-dom/client at react-dom/profiling.", q));
        assert!(shown("When it is left out, the mode is 'visible'.", q));
        assert!(!shown("Pass it as the second argument.", q));
        let q = "memo의 두 번째 인자로 어떤 함수를 넘기나요?";
        assert!(shown("비교 함수로 arePropsEqual을 넘깁니다.", q));
        assert!(!shown("이 함수는 memo의 두 번째 인수로 전달됩니다.", q));
        // A capitalized English word is as often a concept ("React").
        assert!(!shown("비교는 React가 대신 합니다.", q));
        let q = "mode를 생략하면 어떤 값으로 동작하나요?";
        assert!(shown("생략하면 기본값은 visible입니다.", q));
        assert!(!shown("mode를 생략하면 기본값으로 동작합니다.", q));
        // A Latin word in a Korean heading ("옵션 {/options/}") may offer
        // the answer but is no term to read it with; a name as code is.
        let asked = Asked::new(q);
        let terms = |text: &str| Offers::of(text).shape_terms(&asked).count();
        assert_eq!(terms("옵션 {/options/}"), 0);
        assert_eq!(terms("initialValue(선택사항)"), 1);
    }

    #[test]
    fn sentences_offer_the_asked_kind() {
        let q = "When do we deploy?";
        assert!(offers(
            AnswerKind::Time,
            "We deploy on Tuesday after 14:00.",
            q
        ));
        assert!(!offers(AnswerKind::Time, "We deploy with a script.", q));
        assert!(offers(
            AnswerKind::Number,
            "The hold lasts 15 minutes.",
            "How long is the hold?"
        ));
        assert!(!offers(
            AnswerKind::Number,
            "The hold is short.",
            "How long is the hold?"
        ));
        assert!(offers(
            AnswerKind::Person,
            "The payments service is owned by Jonas Weber.",
            "Who owns the payments service?"
        ));
        assert!(offers(
            AnswerKind::Person,
            "Jonas owns the payments service.",
            "Who owns the payments service?"
        ));
        assert!(!offers(
            AnswerKind::Person,
            "Payments are owned by the platform team.",
            "Who owns the payments service?"
        ));
        assert!(offers(
            AnswerKind::Time,
            "배포는 화요일과 목요일에 합니다.",
            "배포는 언제 하나요?"
        ));
        assert!(offers(
            AnswerKind::Number,
            "홀드는 15분입니다.",
            "홀드는 몇 분인가요?"
        ));
        // A folder is a place; a span of time is no "when".
        assert!(offers(
            AnswerKind::Place,
            "The build cache lives in /var/cache/build.",
            "Where does the build cache live?"
        ));
        assert!(!offers(
            AnswerKind::Place,
            "The build cache is rebuilt nightly.",
            "Where does the build cache live?"
        ));
        for (sentence, question) in [
            (
                "在预发环境跑完回归测试，至少需要40分钟。",
                "预发环境什么时候发布？",
            ),
            ("スモークテストは2時間かかる。", "いつデプロイしますか？"),
            ("점검은 2시간 걸린다.", "점검은 언제 하나요?"),
        ] {
            assert!(!offers(AnswerKind::Time, sentence, question), "{sentence}");
        }
        assert!(offers(
            AnswerKind::Time,
            "每周二下午2点发布，大约需要40分钟。",
            "什么时候发布？"
        ));
        assert!(offers(
            AnswerKind::Time,
            "장애가 끝나면 48시간 안에 포스트모템을 쓴다.",
            "포스트모템은 언제까지 써야 하나요?"
        ));
        // "How many hours" is answered by a span of hours.
        assert!(offers(
            AnswerKind::Time,
            "동영상 재생 시간이 최대 17시간이다.",
            "재생 시간은 최대 몇 시간인가?"
        ));
    }
}
