//! The local semantic model: loading it from its folder, its vectors against
//! the reference implementation's, paraphrases in English and Korean, dense
//! retrieval fused into search, and the lexical fallback (with a status that
//! says why) when the model is missing, damaged or turned off.
//!
//! The model is the real one, installed by `scripts/fetch-model.sh` (CI runs
//! it); these tests find it as `noggin serve` does and fail, saying so, when
//! it is not installed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use noggin::semantic::{dot, Embedder, MODEL_FILE};
use serde_json::{json, Value};

use crate::helpers::{wait_until, ServerOptions, TestBrain, TestServer};

/// How long a small brain may take to be embedded in a debug build.
const EMBED_DEADLINE: Duration = Duration::from_secs(60);

/// The installed model's folder, found as noggin finds it.
fn model_dir() -> PathBuf {
    let given = std::env::var_os("NOGGIN_MODEL_DIR").map(PathBuf::from);
    let dir = noggin::semantic::resolve_model_dir(given.as_deref())
        .expect("neither NOGGIN_MODEL_DIR, XDG_CACHE_HOME nor HOME is set");
    assert!(
        dir.join(MODEL_FILE).is_file(),
        "the semantic model is not installed in {dir:?}: run scripts/fetch-model.sh"
    );
    dir
}

fn embedder() -> Embedder {
    Embedder::load(&model_dir()).expect("the installed model loads")
}

#[test]
fn semantic_vectors_match_the_reference_implementation() {
    let e = embedder();
    assert_eq!(e.dims(), 384);
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/e5-reference.jsonl"),
    )
    .unwrap();
    let mut checked = 0;
    for line in fixture.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let text = case["text"].as_str().unwrap();
        let query = case["role"] == "query";
        let want: Vec<f32> = case["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let got = if query {
            e.embed_queries(&[text])
        } else {
            e.embed_passages(&[text])
        }
        .remove(0);
        assert_eq!(
            e.count_tokens(text, query),
            case["tokens"].as_u64().unwrap() as usize,
            "token count of {text:?}"
        );
        let norm = dot(&got, &got).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalized: {norm}");
        let cosine = dot(&got, &want);
        assert!(
            cosine >= 0.99,
            "{text:?} as {}: cosine {cosine}",
            case["role"]
        );
        checked += 1;
    }
    assert_eq!(checked, 14);
}

#[test]
fn semantic_paraphrases_beat_unrelated_text_in_english_and_korean() {
    let e = embedder();
    let cases = [
        (
            "Which day of the week do we deploy to production?",
            "Production releases go out every Thursday afternoon after the quality review.",
            "The office plants are watered by whoever arrives first.",
        ),
        (
            "How are money amounts stored?",
            "Prices are kept as whole cents in integer columns, never as floating point.",
            "Our team retrospective happens on the last Friday of the month.",
        ),
        (
            "프로덕션 배포는 무슨 요일에 하나요?",
            "운영 환경 릴리스는 매주 목요일 오후 품질 검토 후에 진행합니다.",
            "사무실 화분은 가장 먼저 출근한 사람이 물을 줍니다.",
        ),
        (
            "결제 서비스 담당자는 누구인가요?",
            "결제 시스템은 박민아 님이 책임지고 운영합니다.",
            "점심 메뉴는 매주 금요일에 투표로 정합니다.",
        ),
    ];
    for (question, paraphrase, unrelated) in cases {
        let s = e.score(question, &[paraphrase, unrelated]);
        assert!(
            s[0] > s[1] + 0.03,
            "{question:?}: paraphrase {} vs unrelated {}",
            s[0],
            s[1]
        );
    }
}

/// A brain where one note can only be found by meaning.
fn pets_brain() -> TestBrain {
    let brain = TestBrain::empty();
    brain.write(
        "Office/Biscuit.md",
        "# Biscuit\n\nOur office cat is called Biscuit. She sleeps on the printer all afternoon.\n",
    );
    brain.write(
        "Runbooks/Deploy.md",
        "# Deploy\n\nProduction deploys happen every Thursday afternoon after the quality review.\n",
    );
    brain.write(
        "Decisions/Money.md",
        "# Money\n\nAmounts are stored as integer cents, never as floating point numbers.\n",
    );
    brain
}

fn options_with_model(dir: &Path) -> ServerOptions {
    ServerOptions {
        args: vec!["--model-dir".into(), dir.display().to_string()],
        ..ServerOptions::default()
    }
}

/// Waits until the status's model reaches `state`; returns that status.
async fn model_state(server: &TestServer, state: &str) -> Value {
    wait_until(EMBED_DEADLINE, &format!("the model is {state}"), || async {
        server.status().await["model"]["state"] == state
    })
    .await;
    server.status().await
}

/// Waits until every passage has its vector.
async fn all_embedded(server: &TestServer) -> Value {
    wait_until(EMBED_DEADLINE, "every passage has a vector", || async {
        let status = server.status().await;
        status["model"]["state"] == "loaded"
            && status["model"]["pending"] == 0
            && status["model"]["embedded"].as_u64() >= status["sections"].as_u64()
    })
    .await;
    server.status().await
}

/// A query that shares no word with any note: only meaning can find one.
const PET_QUERY: &str = "kitten";

#[tokio::test(flavor = "multi_thread")]
async fn semantic_search_finds_a_note_by_meaning_and_keeps_its_vectors() {
    let brain = pets_brain();
    let dir = model_dir();
    let server = TestServer::start_with(&brain, options_with_model(&dir)).await;
    let status = all_embedded(&server).await;
    assert_eq!(status["model"]["dims"], 384);
    assert_eq!(status["model"]["retrieval"], "bm25+dense");
    assert!(status["model"]["why"].is_null(), "{status}");

    let hits = server.search_paths(PET_QUERY).await;
    assert_eq!(hits.first().map(String::as_str), Some("Office/Biscuit.md"));
    // Each hit says how it was found: no note holds "kitten".
    let hits = server.search(PET_QUERY, &[]).await;
    assert!(hits.iter().all(|h| h["matched"] == "meaning"), "{hits:?}");
    // Lexical matches still lead where they exist.
    let hits = server.search_paths("deploy Thursday").await;
    assert_eq!(hits.first().map(String::as_str), Some("Runbooks/Deploy.md"));
    let hits = server.search("deploy Thursday", &[]).await;
    assert_eq!(hits[0]["matched"], "words", "{hits:?}");
    assert!(
        hits[1..].iter().all(|h| h["matched"] == "meaning"),
        "{hits:?}"
    );

    // A new note gets its vector in the background and becomes findable by
    // meaning.
    brain.write(
        "Garden/Roses.md",
        "# Roses\n\nThe rose bushes by the entrance are pruned in early March.\n",
    );
    wait_until(EMBED_DEADLINE, "the new note is found by meaning", || {
        let server = &server;
        async move {
            server
                .search_paths("flowers gardening")
                .await
                .first()
                .map(String::as_str)
                == Some("Garden/Roses.md")
        }
    })
    .await;
    server.stop().await;

    // A restart reuses the stored vectors instead of computing them again.
    let vector_file = brain.data_dir().join("semantic/e5-small-q4.vectors");
    let stored = std::fs::metadata(&vector_file).unwrap().len();
    let server = TestServer::start_with(&brain, options_with_model(&dir)).await;
    all_embedded(&server).await;
    assert_eq!(std::fs::metadata(&vector_file).unwrap().len(), stored);
    assert_eq!(
        server
            .search_paths(PET_QUERY)
            .await
            .first()
            .map(String::as_str),
        Some("Office/Biscuit.md")
    );
    server.stop().await;
}

/// The notes research reads for `question`, best first.
async fn research_evidence(server: &TestServer, question: &str) -> Vec<String> {
    let (code, body) = server
        .post_json("/v1/research", &json!({"questions": [question]}))
        .await;
    assert_eq!(code, reqwest::StatusCode::OK, "{body}");
    let entry = body["answered"]
        .as_array()
        .into_iter()
        .chain(body["unanswered"].as_array())
        .flatten()
        .next()
        .cloned()
        .unwrap_or_default();
    entry["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["path"].as_str().map(str::to_string))
        .collect()
}

/// A question that shares no informative word with the note that answers it.
const PET_QUESTION: &str = "Do we have a kitten around?";

#[tokio::test(flavor = "multi_thread")]
async fn research_reads_the_notes_nearest_in_meaning_too() {
    let brain = pets_brain();
    let server = TestServer::start_with(&brain, options_with_model(&model_dir())).await;
    all_embedded(&server).await;
    let evidence = research_evidence(&server, PET_QUESTION).await;
    assert_eq!(
        evidence.first().map(String::as_str),
        Some("Office/Biscuit.md"),
        "{evidence:?}"
    );
    // The words still find what they say.
    let evidence = research_evidence(&server, "Which day do we deploy?").await;
    assert_eq!(
        evidence.first().map(String::as_str),
        Some("Runbooks/Deploy.md"),
        "{evidence:?}"
    );
    server.stop().await;
}

/// Search still works, lexically, and the status says why.
async fn assert_lexical_fallback(server: &TestServer, state: &str, why: &str) {
    let status = model_state(server, state).await;
    assert_eq!(status["model"]["retrieval"], "bm25", "{status}");
    let reason = status["model"]["why"].as_str().unwrap_or_default();
    assert!(reason.contains(why), "{state}: {reason:?} lacks {why:?}");
    let hits = server.search_paths("deploy Thursday").await;
    assert_eq!(hits.first().map(String::as_str), Some("Runbooks/Deploy.md"));
    assert!(server.search_paths(PET_QUERY).await.is_empty());
    assert!(research_evidence(server, PET_QUESTION).await.is_empty());
    let (code, _) = server.get("/v1/search?q=kitten").await;
    assert_eq!(code, reqwest::StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn semantic_fallback_without_a_model_folder() {
    let brain = pets_brain();
    let nowhere = tempfile::tempdir().unwrap();
    let server =
        TestServer::start_with(&brain, options_with_model(&nowhere.path().join("missing"))).await;
    assert_lexical_fallback(&server, "absent", "fetch-model.sh").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn semantic_fallback_with_a_truncated_model_file() {
    let brain = pets_brain();
    let broken = tempfile::tempdir().unwrap();
    let model = std::fs::read(model_dir().join(MODEL_FILE)).unwrap();
    std::fs::write(broken.path().join(MODEL_FILE), &model[..model.len() / 3]).unwrap();
    let server = TestServer::start_with(&brain, options_with_model(broken.path())).await;
    assert_lexical_fallback(&server, "failed", "truncated").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn semantic_model_can_be_turned_off() {
    let brain = pets_brain();
    let options = ServerOptions {
        args: vec![
            "--model-dir".into(),
            model_dir().display().to_string(),
            "--no-model".into(),
        ],
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    assert_lexical_fallback(&server, "off", "off").await;
    server.stop().await;
}
