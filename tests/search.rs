//! Search over HTTP as an assistant uses it: ranking, snippets, filters,
//! Korean, following edits on disk, rebuilding a broken index, refusing bad
//! requests and tokens.

use std::time::Duration;

use noggin::brain::watch::WatchMode;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::{
    assert_error_shape, obsidian_help_en, obsidian_help_ko, paths, wait_until, ServerOptions,
    TestBrain, TestServer, CHANGE_DEADLINE,
};

/// The path of the best hit for `q`, if any.
async fn first_hit(server: &TestServer, q: &str) -> Option<String> {
    server.search_paths(q).await.into_iter().next()
}

/// The text of a snippet with the `<mark>` tags taken out.
fn unmarked(snippet: &str) -> String {
    snippet.replace("<mark>", "").replace("</mark>", "")
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_find_the_note_that_answers_them() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let cases = [
        ("deploy Tuesday", "Harbor/Runbooks/Deploy.md"),
        ("When do we deploy?", "Harbor/Runbooks/Deploy.md"),
        ("Who owns the payments service?", "People/Jonas Weber.md"),
        (
            "database migrations",
            "Harbor/Runbooks/Database Migrations.md",
        ),
        ("배포는 언제 하나요?", "한국어/배포 절차.md"),
    ];
    for (q, expected) in cases {
        let hits = server.search(q, &[]).await;
        let found = paths(&hits);
        assert_eq!(found.first().map(String::as_str), Some(expected), "{q:?}");

        let mut unique = found.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            unique.len(),
            found.len(),
            "{q:?}: a note listed twice: {found:?}"
        );

        let best = &hits[0];
        assert!(
            !best["title"].as_str().unwrap_or_default().is_empty(),
            "{best}"
        );
        // Without the model every note is found by its words.
        assert!(
            hits.iter().all(|h| h["matched"] == "words"),
            "{q:?}: {hits:?}"
        );
        let snippet = best["snippet"].as_str().unwrap_or_default();
        assert!(
            snippet.contains("<mark>"),
            "{q:?}: nothing marked in {snippet:?}"
        );
        let scores: Vec<f64> = hits.iter().filter_map(|h| h["score"].as_f64()).collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "{q:?}: not best first: {scores:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hits_name_the_section_and_mark_the_words() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let hits = server.search("roll back a deploy", &[("limit", "3")]).await;
    assert!(hits.len() <= 3, "limit ignored: {}", hits.len());
    let best = &hits[0];
    assert_eq!(best["path"], "Harbor/Runbooks/Deploy.md", "{hits:?}");
    assert_eq!(best["title"], "Deploy");
    assert_eq!(best["heading"], "Roll back");
    let snippet = best["snippet"].as_str().unwrap_or_default();
    assert!(snippet.contains("<mark>back</mark>"), "{snippet}");
    let modified = best["modified"].as_str().unwrap_or_default();
    assert!(
        chrono::DateTime::parse_from_rfc3339(modified).is_ok(),
        "modified is not RFC 3339: {modified:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn html_in_notes_is_escaped_in_snippets() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let hits = server.search("stored XSS boat name", &[]).await;
    let security = hits
        .iter()
        .find(|h| h["path"] == "Harbor/Security Notes.md")
        .unwrap_or_else(|| panic!("the security note is not found: {hits:?}"));
    let snippet = security["snippet"].as_str().unwrap_or_default();
    assert!(
        unmarked(snippet).contains("&lt;script&gt;alert(&quot;"),
        "{snippet}"
    );
    for hit in &hits {
        let snippet = hit["snippet"].as_str().unwrap_or_default();
        let text = unmarked(snippet);
        assert!(
            !text.contains('<') && !text.contains('>'),
            "raw HTML in a snippet: {snippet}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn folder_and_tag_filters_narrow_the_hits() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;

    let unfiltered = server.search_paths("deploy").await;
    assert!(unfiltered
        .iter()
        .any(|p| !p.starts_with("Harbor/Decisions/")));

    for folder in ["Harbor/Decisions", "/Harbor/Decisions/"] {
        let hits = paths(&server.search("deploy", &[("folder", folder)]).await);
        assert_eq!(
            hits.first().map(String::as_str),
            Some("Harbor/Decisions/ADR-003 Deploy on Fly.io.md"),
            "folder {folder:?}: {hits:?}"
        );
        assert!(
            hits.iter().all(|p| p.starts_with("Harbor/Decisions/")),
            "folder {folder:?} let others through: {hits:?}"
        );
    }
    // A folder is a whole path component: "Harbor/Dec" is no folder.
    let partial = server.search("deploy", &[("folder", "Harbor/Dec")]).await;
    assert!(partial.is_empty(), "{partial:?}");

    for tag in ["korean", "#Korean"] {
        let hits = paths(&server.search("deploy", &[("tag", tag)]).await);
        assert_eq!(
            hits.first().map(String::as_str),
            Some("한국어/배포 절차.md"),
            "tag {tag:?}: {hits:?}"
        );
        assert!(
            hits.iter().all(|p| p.starts_with("한국어/")),
            "tag {tag:?} let others through: {hits:?}"
        );
    }
    let hits = paths(&server.search("deploy", &[("tag", "runbook")]).await);
    assert!(hits.contains(&"Harbor/Runbooks/Deploy.md".to_string()));
    assert!(
        !hits.iter().any(|p| p.contains("ADR-003")),
        "an untagged note passed the tag filter: {hits:?}"
    );
    let both = paths(
        &server
            .search("deploy", &[("tag", "runbook"), ("folder", "한국어")])
            .await,
    );
    assert_eq!(
        both.first().map(String::as_str),
        Some("한국어/배포 절차.md")
    );
    assert!(both.iter().all(|p| p.starts_with("한국어/")), "{both:?}");
}

/// A note is found by its file name (its name in Obsidian, what links use)
/// when its title is another.
#[tokio::test(flavor = "multi_thread")]
async fn a_note_is_found_by_its_file_name() {
    let brain = TestBrain::empty();
    brain.write(
        "Ledger Sharding.md",
        "---\ntitle: Design doc v2\n---\nWe split by customer id.\n",
    );
    brain.write("Index.md", "# Index\n\nAll the design docs.\n");
    let server = TestServer::start(&brain).await;
    let hits = server.search("ledger", &[]).await;
    assert_eq!(paths(&hits), ["Ledger Sharding.md"]);
    // The title shown is still the note's title.
    assert_eq!(hits[0]["title"], "Design doc v2");
}

/// Two words of the query find the note that writes them as one word:
/// "time zone" the "timezone", "rolls back" the "rollback", which is marked.
#[tokio::test(flavor = "multi_thread")]
async fn two_words_find_the_note_that_writes_them_as_one() {
    let brain = TestBrain::empty();
    brain.write(
        "Servers.md",
        "# Servers\n\nThe build servers run in the UTC timezone.\n",
    );
    brain.write(
        "Deploys.md",
        "# Deploys\n\nA rollback takes five minutes.\n",
    );
    brain.write("Other.md", "# Other\n\nThe zone of the time we keep.\n");
    let server = TestServer::start(&brain).await;
    let hits = server.search("server time zone", &[]).await;
    assert_eq!(
        paths(&hits).first().map(String::as_str),
        Some("Servers.md"),
        "{hits:?}"
    );
    assert!(
        hits[0]["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("<mark>timezone</mark>")),
        "{hits:?}"
    );
    let hits = server.search("rolls back", &[]).await;
    assert_eq!(paths(&hits), ["Deploys.md"], "{hits:?}");
    server.stop().await;
}

/// A tag matches the tags nested under it, as in Obsidian: `project` finds
/// `project/alpha`, but not `projects` nor a tag that only ends in it.
#[tokio::test(flavor = "multi_thread")]
async fn a_tag_filter_finds_the_tags_nested_under_it() {
    let brain = TestBrain::empty();
    brain.write(
        "alpha.md",
        "---\ntags: [project/alpha]\n---\nKestrel rollout plan.\n",
    );
    brain.write("beta.md", "Kestrel notes #project/beta/infra\n");
    brain.write("top.md", "---\ntags: project\n---\nKestrel overview.\n");
    brain.write(
        "other.md",
        "---\ntags: [projects, old/project]\n---\nKestrel archive.\n",
    );
    let server = TestServer::start(&brain).await;
    let mut hits = paths(&server.search("kestrel", &[("tag", "#Project")]).await);
    hits.sort();
    assert_eq!(hits, ["alpha.md", "beta.md", "top.md"]);
    let nested = paths(&server.search("kestrel", &[("tag", "project/beta")]).await);
    assert_eq!(nested, ["beta.md"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_the_question_names_ranks_in_the_top_three() {
    // `Plugins/Search.md` says little about shortcuts, while two notes list
    // them at length; the question names the note, and its title is all
    // "Search".
    let brain = TestBrain::from_dir(obsidian_help_en());
    let server = TestServer::start(&brain).await;
    let found = server
        .search_paths("Which keyboard shortcut opens Search?")
        .await;
    assert!(
        found.iter().take(3).any(|p| p == "Plugins/Search.md"),
        "{found:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_korean_question_finds_the_korean_note() {
    let brain = TestBrain::from_dir(obsidian_help_ko());
    let server = TestServer::start(&brain).await;

    let found = server
        .search_paths("빠른 전환기를 여는 단축키는 무엇인가요?")
        .await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("플러그인/빠른 전환기.md"),
        "{found:?}"
    );

    // Two notes answer this one equally well; both must lead.
    let found = server
        .search_paths("명령 팔레트를 여는 단축키는 무엇인가요?")
        .await;
    let mut top2: Vec<&str> = found.iter().take(2).map(String::as_str).collect();
    top2.sort();
    assert_eq!(
        top2,
        ["사용자 인터페이스/단축키.md", "플러그인/명령어 팔레트.md"],
        "{found:?}"
    );

    // The note never says "전환기에서", only 전환기는/를/로/가.
    assert!(!brain.read("플러그인/빠른 전환기.md").contains("전환기에서"));
    for q in ["빠른 전환기에서", "빠른 전환기는"] {
        let found = server.search_paths(q).await;
        assert_eq!(
            found.first().map(String::as_str),
            Some("플러그인/빠른 전환기.md"),
            "{q:?}: {found:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_on_disk_show_up_in_search() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let s = &server;
    let note = "Inbox/Kayak rental.md";

    // Create.
    brain.write(
        note,
        "# Kayak rental\n\nBoaters can rent a zebrafinch kayak.\n",
    );
    wait_until(CHANGE_DEADLINE, "a new note is searchable", || async move {
        s.search_paths("zebrafinch").await == [note]
    })
    .await;

    // Edit in place: new words found, old ones gone.
    brain.write(note, "# Kayak rental\n\nBoaters can rent a quokka kayak.\n");
    wait_until(CHANGE_DEADLINE, "an edit is searchable", || async move {
        s.search_paths("quokka").await == [note] && s.search_paths("zebrafinch").await.is_empty()
    })
    .await;

    // Save the way editors do: write a temp file, rename it over the note.
    brain.write(
        "Inbox/.Kayak rental.md.swp",
        "# Kayak rental\n\nBoaters can rent a wombat kayak.\n",
    );
    brain.rename("Inbox/.Kayak rental.md.swp", note);
    wait_until(
        CHANGE_DEADLINE,
        "an atomic save is searchable",
        || async move {
            s.search_paths("wombat").await == [note] && s.search_paths("quokka").await.is_empty()
        },
    )
    .await;

    // Delete.
    brain.remove(note);
    wait_until(CHANGE_DEADLINE, "a deleted note is gone", || async move {
        s.search_paths("wombat").await.is_empty()
    })
    .await;

    // Move a folder: its notes keep being found, under the new path.
    brain.rename("Harbor/Runbooks", "Harbor/Playbooks");
    wait_until(
        CHANGE_DEADLINE,
        "a moved folder's notes move",
        || async move {
            let found = s.search_paths("deploy Tuesday").await;
            found.first().map(String::as_str) == Some("Harbor/Playbooks/Deploy.md")
                && !found.iter().any(|p| p.starts_with("Harbor/Runbooks/"))
        },
    )
    .await;
    let status = server.status().await;
    assert_eq!(status["notes"], 42, "{status}");
    assert_eq!(status["watcher"]["state"], "watching", "{status}");
    server.stop().await;
}

/// A note is found once, at its own path: a symlink to it, or to its
/// folder, inside the brain is no second note, and edits show up under the
/// note's path.
#[tokio::test(flavor = "multi_thread")]
async fn a_note_is_found_at_its_own_path_not_through_symlinks() {
    let brain = TestBrain::empty();
    brain.write(
        "real/target.md",
        "# Target

The old word is capybara.
",
    );
    std::os::unix::fs::symlink("real/target.md", brain.note("alias.md")).expect("symlink");
    std::os::unix::fs::symlink("real", brain.note("linkdir")).expect("symlink");
    let server = TestServer::start(&brain).await;
    let s = &server;
    assert_eq!(s.search_paths("capybara").await, ["real/target.md"]);
    brain.write(
        "real/target.md",
        "# Target

The new word is axolotl.
",
    );
    wait_until(
        CHANGE_DEADLINE,
        "the edit is found at the note's path",
        || async move {
            s.search_paths("axolotl").await == ["real/target.md"]
                && s.search_paths("capybara").await.is_empty()
        },
    )
    .await;
    brain.remove("real/target.md");
    wait_until(CHANGE_DEADLINE, "the deleted note is gone", || async move {
        s.search_paths("axolotl").await.is_empty()
    })
    .await;
    server.stop().await;
}

/// Reading notes (noggin's own scans, the user's grep or editor) is no
/// change: it must not send noggin rescanning the brain over and over.
#[tokio::test(flavor = "multi_thread")]
async fn reading_notes_does_not_trigger_a_rescan() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let first = server.status().await["last_reconcile"].clone();
    assert_eq!(first["reparsed"], 42, "{first}");

    for entry in walkdir::WalkDir::new(brain.path()) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            std::fs::read(entry.path()).unwrap();
        }
    }
    // The writer handles changes in order: once the second edit is
    // searchable, anything the reads (and the first edit) queued is done.
    let s = &server;
    for word in ["aardvark", "pangolin"] {
        let text = brain.read("Harbor/Glossary.md") + &format!("\nA {word} is no boat.\n");
        brain.write("Harbor/Glossary.md", &text);
        wait_until(CHANGE_DEADLINE, "an edit is searchable", || async move {
            s.search_paths(word).await == ["Harbor/Glossary.md"]
        })
        .await;
    }
    let status = server.status().await;
    assert_eq!(status["last_reconcile"], first, "rescanned: {status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn polling_still_picks_up_edits() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        watch: WatchMode::Poll,
        poll_interval: Duration::from_millis(200),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let watcher = &server.status().await["watcher"];
    assert_eq!(watcher["state"], "polling", "{watcher}");
    assert_eq!(watcher["poll_interval_ms"], 200, "{watcher}");
    assert!(watcher["reason"].is_string(), "{watcher}");

    let s = &server;
    brain.write("Polled.md", "# Polled\n\nThe capybara dock is new.\n");
    wait_until(
        CHANGE_DEADLINE,
        "a polled note is searchable",
        || async move { s.search_paths("capybara").await == ["Polled.md"] },
    )
    .await;
    brain.remove("Polled.md");
    wait_until(CHANGE_DEADLINE, "a polled delete is seen", || async move {
        s.search_paths("capybara").await.is_empty()
    })
    .await;
}

/// Files of the on-disk index, for breaking them.
fn index_files(brain: &TestBrain) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(brain.data_dir().join("index"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_index_is_rebuilt_from_the_notes() {
    type Breakage = fn(&TestBrain);
    let breakages: [(&str, Breakage); 3] = [
        ("the index folder deleted", |brain| {
            std::fs::remove_dir_all(brain.data_dir().join("index")).unwrap();
        }),
        ("garbage meta.json", |brain| {
            std::fs::write(brain.data_dir().join("index/meta.json"), b"{not json").unwrap();
        }),
        ("truncated segment files", |brain| {
            for file in index_files(brain) {
                let name = file.file_name().unwrap().to_string_lossy().into_owned();
                if !name.ends_with(".json") && !name.starts_with('.') {
                    let len = std::fs::metadata(&file).unwrap().len();
                    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
                    f.set_len(len / 2).unwrap();
                }
            }
        }),
    ];
    for (what, break_index) in breakages {
        let brain = TestBrain::sample();
        let server = TestServer::start(&brain).await;
        assert_eq!(server.status().await["notes"], 42);
        server.stop().await;

        break_index(&brain);

        let server = TestServer::start(&brain).await;
        let status = server.status().await;
        assert!(
            status["rebuilt_because"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{what}: no reason to rebuild reported: {status}"
        );
        assert_eq!(status["notes"], 42, "{what}: {status}");
        assert_eq!(
            first_hit(&server, "deploy Tuesday").await.as_deref(),
            Some("Harbor/Runbooks/Deploy.md"),
            "{what}"
        );
        server.stop().await;
    }
}

/// Notes written decomposed (NFD: macOS file names, some editors) are found
/// by questions written composed, and the other way round.
#[tokio::test(flavor = "multi_thread")]
async fn one_cjk_character_finds_the_notes_that_have_it() {
    let brain = TestBrain::empty();
    brain.write("설정.md", "타임아웃 값은 30초이다. 이 책을 읽었다.\n");
    brain.write("书.md", "我的书在桌子上。\n");
    brain.write("ねこ.md", "猫が好きです。\n");
    brain.write("결론.md", "결론 먼저, 제목은 나중에.\n");
    let server = TestServer::start(&brain).await;
    // A Korean noun under its particle, a Chinese word of one character,
    // a Han character inside a Japanese run: each one character alone.
    assert_eq!(server.search_paths("값").await, ["설정.md"]);
    assert_eq!(server.search_paths("책").await, ["설정.md"]);
    assert_eq!(server.search_paths("猫").await, ["ねこ.md"]);
    let hits = server.search("桌", &[]).await;
    assert_eq!(paths(&hits), ["书.md"]);
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<mark>桌</mark>"),
        "{hits:?}"
    );
    // A word of two or more characters is still read by its bigrams: the
    // characters of "결제" apart in 결론.md do not make it match.
    assert!(server.search_paths("결제").await.is_empty());
    assert_eq!(server.search_paths("결론").await, ["결론.md"]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn decomposed_korean_is_found_by_composed_words() {
    use unicode_normalization::UnicodeNormalization;
    let nfd = |s: &str| s.nfd().collect::<String>();
    let brain = TestBrain::empty();
    brain.write(
        &format!("{}.md", nfd("정리")),
        &nfd("배포는 매주 화요일 오후 2시에 합니다.\n"),
    );
    brain.write("회의록.md", "# 회의록\n\n점검은 목요일에 합니다.\n");
    let server = TestServer::start(&brain).await;
    let decomposed = nfd("정리") + ".md";
    for query in ["배포", "정리", &nfd("배포"), &nfd("정리")] {
        assert_eq!(
            server.search_paths(query).await,
            [decomposed.as_str()],
            "{query}"
        );
    }
    assert_eq!(server.search_paths(&nfd("점검")).await, ["회의록.md"]);
    let ask = serde_json::json!({"questions": ["배포는 언제 하나요?"]});
    let (_, research) = server.post_json("/v1/research", &ask).await;
    assert!(
        research["answered"][0]["answer"]
            .as_str()
            .is_some_and(|a| a.nfc().collect::<String>() == a && a.contains("화요일")),
        "{research}"
    );
    server.stop().await;
}

/// The index is derived data: deleted while noggin serves (its folder, or
/// the whole `.noggin`), it is made again from the notes at the next
/// change, without a restart, and the lock that keeps a second process out
/// is taken again with it.
#[tokio::test(flavor = "multi_thread")]
async fn an_index_deleted_while_serving_is_made_again() {
    let deletions: [(&str, &str); 2] = [("index", "kestrel"), ("", "osprey")];
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let s = &server;
    for (folder, word) in deletions {
        std::fs::remove_dir_all(brain.data_dir().join(folder)).unwrap();
        brain.write(
            "Inbox/Birds.md",
            &format!("# Birds\n\nA {word} nests here.\n"),
        );
        wait_until(
            CHANGE_DEADLINE,
            "the index is made again with every note",
            || async move {
                let status = s.status().await;
                s.search_paths(word).await == ["Inbox/Birds.md"]
                    && status["healthy"] == true
                    && status["notes"] == 43
            },
        )
        .await;
        assert_eq!(
            first_hit(&server, "deploy Tuesday").await.as_deref(),
            Some("Harbor/Runbooks/Deploy.md"),
            "after deleting {folder:?}"
        );
        let holder = noggin::index::holder(&brain.data_dir());
        assert_eq!(
            holder.map(|h| (h.pid, h.follows.is_live())),
            Some((std::process::id(), true)),
            "after deleting {folder:?}"
        );
    }
    server.stop().await;
}

/// File events follow a folder, not its path: a brain replaced by another
/// folder at the same path (restored from a backup, cloned again) is
/// followed, and indexed, without a restart.
#[tokio::test(flavor = "multi_thread")]
async fn a_brain_replaced_at_its_path_is_followed() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        poll_interval: Duration::from_millis(200),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    let s = &server;
    std::fs::rename(brain.path(), brain.path().with_file_name("old-brain")).unwrap();
    std::fs::create_dir(brain.path()).unwrap();
    brain.write(
        "Restored.md",
        "# Restored\n\nThe wombat backup came back.\n",
    );
    wait_until(
        CHANGE_DEADLINE,
        "the new folder's note is found, the old ones are not",
        || async move {
            let status = s.status().await;
            s.search_paths("wombat").await == ["Restored.md"]
                && s.search_paths("deploy Tuesday").await.is_empty()
                && status["healthy"] == true
                && status["notes"] == 1
        },
    )
    .await;
    brain.write(
        "Restored.md",
        "# Restored\n\nThe quokka backup came back.\n",
    );
    wait_until(CHANGE_DEADLINE, "edits in it are followed", || async move {
        s.search_paths("quokka").await == ["Restored.md"]
    })
    .await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_reads_no_unchanged_note_again() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let first = server.status().await;
    assert_eq!(first["last_reconcile"]["reparsed"], 42, "{first}");
    server.stop().await;

    let server = TestServer::start(&brain).await;
    let status = server.status().await;
    let reconcile = &status["last_reconcile"];
    assert_eq!(reconcile["reparsed"], 0, "{status}");
    assert_eq!(reconcile["unchanged"], 42, "{status}");
    assert!(status.get("rebuilt_because").is_none(), "{status}");
    assert_eq!(
        first_hit(&server, "deploy Tuesday").await.as_deref(),
        Some("Harbor/Runbooks/Deploy.md")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_brain_answers_with_no_hits() {
    let brain = TestBrain::empty();
    let server = TestServer::start(&brain).await;
    assert!(server.search_paths("deploy").await.is_empty());
    let status = server.status().await;
    assert_eq!(status["notes"], 0, "{status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_of_a_title_alone_is_found_by_it() {
    let brain = TestBrain::empty();
    brain.write("Projects/Phoenix rewrite.md", "# Project Phoenix\n");
    brain.write(
        "People/Contact card.md",
        "---\ntitle: Ingrid Halvorsen\naliases: [Harbour pilot]\ntags: [contact]\n---\n",
    );
    brain.write("Empty idea about kelp.md", "");
    brain.write(
        "Other.md",
        "# Other\n\nA note about something else entirely.\n",
    );
    let server = TestServer::start(&brain).await;
    for (query, path) in [
        ("phoenix", "Projects/Phoenix rewrite.md"),
        ("Halvorsen", "People/Contact card.md"),
        ("harbour pilot", "People/Contact card.md"),
        ("kelp", "Empty idea about kelp.md"),
    ] {
        assert_eq!(server.search_paths(query).await, [path], "{query}");
    }
    let status = server.status().await;
    assert_eq!(status["notes"], 4, "{status}");
    // Nothing to answer from in them: a question stays open.
    let (_, body) = server
        .post_json(
            "/v1/research",
            &serde_json::json!({"questions": ["Who is the harbour pilot?"]}),
        )
        .await;
    assert_eq!(body["answered"], serde_json::json!([]), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_a_clear_4xx() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let cases = [
        ("/v1/search", StatusCode::BAD_REQUEST),
        ("/v1/search?q=", StatusCode::BAD_REQUEST),
        ("/v1/search?q=%20%20%20", StatusCode::BAD_REQUEST),
        ("/v1/search?q=deploy&limit=0", StatusCode::BAD_REQUEST),
        ("/v1/search?q=deploy&limit=10000", StatusCode::BAD_REQUEST),
        ("/v1/search?q=deploy&limit=-1", StatusCode::BAD_REQUEST),
        ("/v1/search?q=deploy&limit=abc", StatusCode::BAD_REQUEST),
        ("/v1/search?q=%FF", StatusCode::BAD_REQUEST),
        ("/v1/search?q=deploy&tag=%C3%28", StatusCode::BAD_REQUEST),
        ("/nope", StatusCode::NOT_FOUND),
        ("/v1/nope", StatusCode::NOT_FOUND),
    ];
    for (path, expected) in cases {
        let (status, body) = server.get(path).await;
        assert_eq!(status, expected, "GET {path}: {body}");
        assert_error_shape(&body, path);
        if path.contains("limit=") {
            assert_eq!(body["error"]["code"], "invalid-limit", "GET {path}: {body}");
        }
    }
    let long = "a ".repeat(1000);
    let (status, body) = server
        .get(&format!("/v1/search?q={}", long.replace(' ', "%20")))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_error_shape(&body, "long query");

    let (status, body) = server
        .request(Method::POST, "/v1/search?q=deploy", None)
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
    assert_error_shape(&body, "POST /v1/search");

    // Nothing of that changed what search finds.
    assert_eq!(
        first_hit(&server, "deploy Tuesday").await.as_deref(),
        Some("Harbor/Runbooks/Deploy.md")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_bodies_get_413() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (status, body) = server.announce_body("/v1/research", 1024 * 1024 + 1).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_error_shape(&body, "oversized body");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_configured_token_guards_the_api() {
    let brain = TestBrain::sample();
    let options = ServerOptions {
        token: Some("s3cret".to_string()),
        ..ServerOptions::default()
    };
    let server = TestServer::start_with(&brain, options).await;
    for path in ["/v1/status", "/v1/search?q=deploy"] {
        for token in [None, Some("wrong"), Some("s3cre")] {
            let (status, body) = server.request_as(Method::GET, path, token, None).await;
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{path} with {token:?}: {body}"
            );
            assert_error_shape(&body, path);
        }
        let (status, body) = server
            .request_as(Method::GET, path, Some("s3cret"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        // The scheme's name is case-insensitive (RFC 9110); the token is not.
        for (header, expected) in [
            ("bearer s3cret", StatusCode::OK),
            ("BEARER s3cret", StatusCode::OK),
            ("Bearer S3CRET", StatusCode::UNAUTHORIZED),
            ("Basic s3cret", StatusCode::UNAUTHORIZED),
            ("Bearers3cret", StatusCode::UNAUTHORIZED),
        ] {
            let response = reqwest::Client::new()
                .get(format!("{}{path}", server.base_url))
                .header(reqwest::header::AUTHORIZATION, header)
                .send()
                .await
                .expect("send a request");
            assert_eq!(response.status(), expected, "{path} with {header:?}");
        }
    }
    let (status, _) = server.request_as(Method::GET, "/healthz", None, None).await;
    assert_eq!(status, StatusCode::OK, "/healthz is for liveness probes");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_describes_search() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (status, doc) = server.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")),
        "{doc}"
    );
    let search = &doc["paths"]["/v1/search"]["get"];
    assert!(search.is_object(), "no GET /v1/search in {doc}");
    let params: Vec<&str> = search["parameters"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(params, ["q", "limit", "folder", "tag"]);
    assert!(doc["paths"]["/v1/status"].is_object());
    assert!(doc["paths"]["/healthz"].is_object());
}

/// Every route the OpenAPI document lists answers (no document of routes
/// that do not exist).
#[tokio::test(flavor = "multi_thread")]
async fn every_documented_get_route_exists() {
    let brain = TestBrain::sample();
    let server = TestServer::start(&brain).await;
    let (_, doc) = server.get("/openapi.json").await;
    let paths = doc["paths"].as_object().expect("paths is an object");
    for (path, ops) in paths {
        // An event stream never ends: reading its body would wait forever.
        let streams = !ops["get"]["responses"]["200"]["content"]["text/event-stream"].is_null();
        if ops.get("get").is_none() || path.contains('{') || streams {
            continue;
        }
        let url = if path == "/v1/search" {
            format!("{path}?q=deploy")
        } else {
            path.clone()
        };
        let (status, body): (StatusCode, Value) = server.get(&url).await;
        assert_eq!(status, StatusCode::OK, "GET {url}: {body}");
    }
}
