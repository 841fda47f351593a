//! Rendering within a character budget: the `[working-context]` block, and
//! the fitting of prioritized sections that the context pack shares.
//!
//! Sections are offered in priority order; each takes what it needs from
//! what is left, item by item (the newest items first where newness matters),
//! and the first item that does not fit whole is cut on a character boundary
//! with a visible "…" when enough of it fits (a file's path never is). A section that could not show
//! all its items leaves nothing to the sections after it. What was cut or
//! left out is reported per section, so a caller can tell a short context
//! from a squeezed one.

use serde::Serialize;

use super::cut_chars;
use super::state::WorkingContext;

/// Opens the block.
pub const BLOCK_HEADER: &str = "[working-context]";
/// Closes the block.
pub const BLOCK_FOOTER: &str = "[/working-context]";
/// An item is cut only if at least this many characters of its text (not
/// counting its marker, such as "- [ ] ") fit; otherwise it is left out
/// rather than shown as a stub.
const MIN_CUT_ITEM_CHARS: usize = 12;

/// A section offered for fitting.
#[derive(Debug, Clone)]
pub struct Section {
    /// Stable name, reported to the caller (`last_user_query`, `goals`, …).
    pub name: &'static str,
    /// The line above its items.
    pub heading: String,
    /// Rendered items, in display order.
    pub items: Vec<String>,
    /// When not all items fit, keep the last ones (the newest) rather than
    /// the first.
    pub keep_newest: bool,
    /// Items that mean nothing cut (a file's path): shown whole or not at
    /// all.
    pub whole_items: bool,
}

/// What became of one section.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SectionReport {
    pub name: &'static str,
    /// Characters it takes in the output, heading and newline included.
    pub chars: usize,
    /// Items shown.
    pub items: usize,
    /// Items it had.
    pub total_items: usize,
    /// Items not shown.
    pub omitted: usize,
    /// True when an item was shortened (it ends in "…").
    pub cut: bool,
    /// True when nothing of the section is shown.
    pub left_out: bool,
}

/// A section after fitting: its text (if any of it fit) and its report.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub text: Option<String>,
    pub report: SectionReport,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Fits `sections` (in priority order) into `budget` characters, counting
/// one newline after each section. Returns them in the same order. Once a
/// section cannot show all its items (some left out, or one cut), every
/// section after it is left out: the room it could not use never goes to
/// one of lower priority.
pub fn fit_sections(sections: &[Section], budget: usize) -> Vec<Fitted> {
    let mut left = budget;
    sections
        .iter()
        .map(|section| {
            let fitted = fit_one(section, left);
            let report = &fitted.report;
            left = if report.omitted > 0 || report.cut {
                0
            } else {
                left.saturating_sub(report.chars)
            };
            fitted
        })
        .collect()
}

/// Characters of an item's marker ("- ", "- [ ] ", or the indent of a
/// query), which a cut item must show more than.
fn marker_chars(item: &str) -> usize {
    ["- [ ] ", "- [x] ", "- ", "  "]
        .iter()
        .find(|marker| item.starts_with(**marker))
        .map_or(0, |marker| chars(marker))
}

fn fit_one(section: &Section, budget: usize) -> Fitted {
    let total = section.items.len();
    // An empty section has nothing to leave out.
    let left_out = |omitted| Fitted {
        text: None,
        report: SectionReport {
            name: section.name,
            chars: 0,
            items: 0,
            total_items: total,
            omitted,
            cut: false,
            left_out: total > 0,
        },
    };
    // Heading plus its trailing newline.
    let base = chars(&section.heading) + 1;
    if total == 0 || budget <= base {
        return left_out(total);
    }
    let mut left = budget - base;
    let mut order: Vec<usize> = if section.keep_newest {
        (0..total).rev().collect()
    } else {
        (0..total).collect()
    };
    // Open work is kept before finished work, however new that is.
    order.sort_by_key(|&i| !section.items[i].starts_with(OPEN_ITEM));

    let mut kept: Vec<(usize, String)> = Vec::new();
    let mut cut = false;
    for &i in &order {
        let item = &section.items[i];
        // A newline before each item.
        let cost = chars(item) + 1;
        if cost <= left {
            kept.push((i, item.clone()));
            left -= cost;
            continue;
        }
        // The first item that does not fit whole, cut to the room left
        // (its newline, then its text and "…") if enough of its text shows;
        // nothing after it.
        if !section.whole_items && left > marker_chars(item) + MIN_CUT_ITEM_CHARS + 1 {
            let (shortened, _) = cut_chars(item, left - 1);
            kept.push((i, shortened));
            cut = true;
        }
        break;
    }
    if kept.is_empty() {
        return left_out(total);
    }
    kept.sort_by_key(|(i, _)| *i);
    let mut text = section.heading.clone();
    for (_, item) in &kept {
        text.push('\n');
        text.push_str(item);
    }
    let used = chars(&text) + 1;
    Fitted {
        report: SectionReport {
            name: section.name,
            chars: used,
            items: kept.len(),
            total_items: total,
            omitted: total - kept.len(),
            cut,
            left_out: false,
        },
        text: Some(text),
    }
}

/// Indents the lines after the first, so multi-line items stay one item.
pub fn item(prefix: &str, text: &str) -> String {
    let mut out = String::from(prefix);
    for (i, line) in text.trim_end().lines().enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line);
    }
    out
}

/// The marker of a goal or progress item not done yet.
const OPEN_ITEM: &str = "- [ ] ";

fn checkbox(done: bool) -> &'static str {
    if done {
        "- [x] "
    } else {
        OPEN_ITEM
    }
}

/// The sections of a working context, in priority order. With
/// `include_query` false the last user query is left to the caller (the
/// pack shows it on its own).
pub fn working_sections(context: &WorkingContext, include_query: bool) -> Vec<Section> {
    let mut sections = Vec::new();
    if include_query {
        sections.push(Section {
            name: "last_user_query",
            heading: "Last user query:".into(),
            items: context
                .last_user_query
                .iter()
                .map(|q| item("  ", q))
                .collect(),
            keep_newest: false,
            whole_items: false,
        });
    }
    sections.push(Section {
        name: "goals",
        heading: "Goals:".into(),
        items: context
            .goals
            .iter()
            .map(|g| item(checkbox(g.done), &g.text))
            .collect(),
        keep_newest: false,
        whole_items: false,
    });
    sections.push(Section {
        name: "failures",
        heading: "Latest failures:".into(),
        items: context
            .failures
            .iter()
            .map(|f| item(&format!("- {}: ", f.kind.as_str()), &f.text))
            .collect(),
        keep_newest: false,
        whole_items: false,
    });
    sections.push(Section {
        name: "recent_files",
        heading: "Recent files (most recent first):".into(),
        items: context
            .recent_files
            .iter()
            .map(|f| {
                let changed = if f.changed { " (changed)" } else { "" };
                item("- ", &format!("{}{changed}", f.path))
            })
            .collect(),
        keep_newest: false,
        whole_items: true,
    });
    sections.push(Section {
        name: "progress",
        heading: "Progress:".into(),
        items: context
            .progress
            .iter()
            .map(|p| item(checkbox(p.done), &p.text))
            .collect(),
        keep_newest: true,
        whole_items: false,
    });
    sections.push(Section {
        name: "decisions",
        heading: "Decisions:".into(),
        items: context.decisions.iter().map(|d| item("- ", d)).collect(),
        keep_newest: true,
        whole_items: false,
    });
    sections.push(Section {
        name: "open_questions",
        heading: "Open questions for the user:".into(),
        items: context
            .open_questions
            .iter()
            .map(|q| item("- ", q))
            .collect(),
        keep_newest: true,
        whole_items: false,
    });
    sections.push(Section {
        name: "confirmed",
        heading: "Confirmed by the user:".into(),
        items: context
            .confirmed
            .iter()
            .map(|c| item("- ", &format!("{} → {}", c.question, c.answer)))
            .collect(),
        keep_newest: true,
        whole_items: false,
    });
    sections
}

/// A rendered block and what went into it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RenderedBlock {
    /// The block; null when the context is empty or the budget holds
    /// nothing of it.
    pub block: Option<String>,
    /// Characters of `block`.
    pub chars: usize,
    pub budget: usize,
    /// Every section in priority order; empty for an empty context.
    pub sections: Vec<SectionReport>,
}

/// Renders the `[working-context]` block within `budget` characters.
pub fn render_block(context: &WorkingContext, budget: usize) -> RenderedBlock {
    let sections = working_sections(context, true);
    if context.is_empty() {
        return RenderedBlock {
            block: None,
            chars: 0,
            budget,
            sections: Vec::new(),
        };
    }
    // Header and its newline, then the footer.
    let frame = chars(BLOCK_HEADER) + 1 + chars(BLOCK_FOOTER);
    let fitted = fit_sections(&sections, budget.saturating_sub(frame));
    let reports: Vec<SectionReport> = fitted.iter().map(|f| f.report.clone()).collect();
    let bodies: Vec<&String> = fitted.iter().filter_map(|f| f.text.as_ref()).collect();
    if budget < frame || bodies.is_empty() {
        return RenderedBlock {
            block: None,
            chars: 0,
            budget,
            sections: reports,
        };
    }
    let mut block = format!("{BLOCK_HEADER}\n");
    for body in bodies {
        block.push_str(body);
        block.push('\n');
    }
    block.push_str(BLOCK_FOOTER);
    RenderedBlock {
        chars: chars(&block),
        block: Some(block),
        budget,
        sections: reports,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::state::Item;

    fn context() -> WorkingContext {
        WorkingContext {
            last_user_query: Some("두뇌에서 배포 요일을 찾아 주세요 — and fix the build".into()),
            goals: vec![Item {
                text: "Ship the refund button".into(),
                done: false,
            }],
            progress: vec![
                Item {
                    text: "wrote the handler".into(),
                    done: true,
                },
                Item {
                    text: "tests".into(),
                    done: false,
                },
            ],
            ..WorkingContext::default()
        }
    }

    #[test]
    fn every_budget_is_respected() {
        let c = context();
        let full = render_block(&c, 10_000);
        let full_chars = full.chars;
        for budget in 0..=full_chars + 5 {
            let r = render_block(&c, budget);
            assert!(r.chars <= budget, "budget {budget}: {}", r.chars);
            if let Some(block) = &r.block {
                assert_eq!(block.chars().count(), r.chars);
                assert!(block.starts_with(BLOCK_HEADER) && block.ends_with(BLOCK_FOOTER));
                if r.sections.iter().any(|s| s.cut) {
                    assert!(block.contains('…'), "{block}");
                }
            }
        }
        assert!(full.sections.iter().all(|s| s.omitted == 0 && !s.cut));
        assert!(full.block.unwrap().contains("- [x] wrote the handler"));
    }

    #[test]
    fn an_empty_context_renders_nothing() {
        let r = render_block(&WorkingContext::default(), 1000);
        assert!(r.block.is_none());
        assert!(r.sections.is_empty());
    }

    fn text() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex("[a-zé두뇌🚀 \n]{1,80}").expect("a valid regex")
    }

    proptest::proptest! {
        #[test]
        fn any_context_fits_any_budget(
            query in proptest::option::of(text()),
            goals in proptest::collection::vec((text(), proptest::bool::ANY), 0..4),
            progress in proptest::collection::vec((text(), proptest::bool::ANY), 0..12),
            decisions in proptest::collection::vec(text(), 0..5),
            budget in 0usize..1500,
            more in 1usize..200,
        ) {
            let item = |(text, done): (String, bool)| Item { text, done };
            let context = WorkingContext {
                last_user_query: query,
                goals: goals.into_iter().map(item).collect(),
                progress: progress.into_iter().map(item).collect(),
                decisions,
                ..WorkingContext::default()
            };
            let r = render_block(&context, budget);
            proptest::prop_assert!(r.chars <= budget);
            // Priority holds: nothing shows after a section left out, and
            // nothing after one that could not show all its items whole.
            if let Some(first) = r.sections.iter().position(|s| s.left_out) {
                proptest::prop_assert!(r.sections[first..].iter().all(|s| s.items == 0));
            }
            if let Some(short) = r.sections.iter().position(|s| s.omitted > 0 || s.cut) {
                proptest::prop_assert!(r.sections[short + 1..].iter().all(|s| s.items == 0));
            }
            // More room never shows less of a section of higher priority:
            // the first section that changes shows more.
            let wider = render_block(&context, budget + more);
            let shown = |r: &RenderedBlock| r.sections.iter().map(|s| (s.items, !s.cut)).collect::<Vec<_>>();
            if let Some((a, b)) = shown(&r).into_iter().zip(shown(&wider)).find(|(a, b)| a != b) {
                proptest::prop_assert!(b > a, "budget {}: {:?}, budget {}: {:?}", budget, r.sections, budget + more, wider.sections);
            }
            match &r.block {
                Some(block) => {
                    proptest::prop_assert_eq!(block.chars().count(), r.chars);
                    let frame = BLOCK_HEADER.chars().count() + 1 + BLOCK_FOOTER.chars().count();
                    let sections: usize = r.sections.iter().map(|s| s.chars).sum();
                    proptest::prop_assert_eq!(sections + frame, r.chars);
                    if r.sections.iter().any(|s| s.cut) {
                        proptest::prop_assert!(block.contains('…'));
                    }
                }
                None => proptest::prop_assert!(r.sections.iter().all(|s| s.items == 0)),
            }
            let full = render_block(&context, usize::MAX / 2);
            proptest::prop_assert!(full.sections.iter().all(|s| s.omitted == 0 && !s.cut));
        }
    }

    #[test]
    fn a_path_is_shown_whole_or_not_at_all() {
        let files = Section {
            name: "recent_files",
            heading: "F:".into(),
            items: vec!["- web/src/components/RefundButton.tsx (changed)".into()],
            keep_newest: false,
            whole_items: true,
        };
        let fitted = fit_sections(std::slice::from_ref(&files), 30);
        assert_eq!(fitted[0].text, None);
        assert!(fitted[0].report.left_out);
        let fitted = fit_sections(&[files], 60);
        assert_eq!(
            fitted[0].text.as_deref(),
            Some("F:\n- web/src/components/RefundButton.tsx (changed)")
        );
    }

    #[test]
    fn newest_progress_is_kept_when_squeezed() {
        let section = Section {
            name: "progress",
            heading: "P:".into(),
            items: vec!["- old item".into(), "- new item".into()],
            keep_newest: true,
            whole_items: false,
        };
        let fitted = fit_sections(&[section], 3 + 11);
        assert_eq!(fitted[0].text.as_deref(), Some("P:\n- new item"));
        assert_eq!(fitted[0].report.omitted, 1);
    }

    #[test]
    fn open_work_is_kept_before_newer_finished_work() {
        let mut items = vec![item(checkbox(false), "open-0")];
        items.extend((1..100).map(|i| item(checkbox(true), &format!("done-{i}"))));
        let section = Section {
            name: "progress",
            heading: "P:".into(),
            items,
            keep_newest: true,
            whole_items: false,
        };
        let fitted = fit_sections(&[section], 46);
        let text = fitted[0].text.as_deref().unwrap();
        assert_eq!(text, "P:\n- [ ] open-0\n- [x] done-98\n- [x] done-99");
    }

    #[test]
    fn room_a_section_cannot_use_goes_to_none_below_it() {
        let query = Section {
            name: "last_user_query",
            heading: "Last user query:".into(),
            items: vec!["ship the refund button by Friday".into()],
            keep_newest: false,
            whole_items: false,
        };
        let goals = Section {
            name: "goals",
            heading: "G:".into(),
            items: vec!["- ship refunds".into()],
            keep_newest: false,
            whole_items: false,
        };
        // After the query's heading too little is left to cut its item, but
        // enough for the goal's short heading and a cut goal.
        let fitted = fit_sections(&[query, goals], 17 + 1 + 10);
        assert!(fitted[0].report.left_out);
        assert!(fitted[1].report.left_out);
        assert!(fitted.iter().all(|f| f.text.is_none()));
    }

    #[test]
    fn a_later_item_that_does_not_fit_is_cut_and_leaves_nothing_below() {
        // The newest failure whole (17 + 31 characters), then room for 30:
        // the older failure is cut, and the files below get none of the room.
        let fitted = fit_sections(&fitted_sections(), 17 + 31 + 30);
        let text = fitted[0].text.as_deref().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "- build: error[E0425]: canno…", "{text}");
        assert_eq!(lines[2], "- test: refund::partial FAILED", "{text}");
        assert!(fitted[0].report.cut);
        assert!(fitted[1].report.left_out);
        // With too little room to show 12 characters of its text, the older
        // failure is left out, and still nothing goes below.
        let fitted = fit_sections(&fitted_sections(), 17 + 31 + 14);
        assert_eq!(fitted[0].report.omitted, 1);
        assert!(!fitted[0].report.cut);
        assert!(fitted[1].report.left_out);
    }

    fn fitted_sections() -> Vec<Section> {
        vec![
            Section {
                name: "failures",
                heading: "Latest failures:".into(),
                items: vec![
                    "- build: error[E0425]: cannot find value `fee` in this scope".into(),
                    "- test: refund::partial FAILED".into(),
                ],
                keep_newest: true,
                whole_items: false,
            },
            Section {
                name: "recent_files",
                heading: "Recent files:".into(),
                items: vec!["- src/lib.rs".into()],
                keep_newest: false,
                whole_items: false,
            },
        ]
    }
}
