//! `noggin context`: a session's working-context block, read from the
//! session store read-only, so it works beside a running server.

use std::io::Write;

use crate::config::ContextArgs;
use crate::context::block::render_block;
use crate::context::sessions::SessionStore;

pub fn context(args: ContextArgs) -> anyhow::Result<()> {
    crate::context::validate_session_id(&args.session)?;
    let data_dir = args.brain.data_dir()?;
    let session = match SessionStore::open_read_only(&data_dir)? {
        Some(store) => store.get_blocking(&args.session)?,
        None => None,
    };
    let Some(session) = session else {
        anyhow::bail!("no session {:?} in {}", args.session, data_dir.display());
    };
    let rendered = render_block(&session.context, args.budget);
    if args.json {
        let mut value = serde_json::to_value(&rendered)?;
        value["session"] = serde_json::json!(session.id);
        value["version"] = serde_json::json!(session.version);
        value["events"] = serde_json::json!(session.events);
        value["updated"] = serde_json::json!(session.updated);
        return super::print_json(&value);
    }
    // Only the block goes to stdout (`ctx=$(noggin context …)` gets the
    // block or nothing); what became of it goes to stderr.
    match &rendered.block {
        Some(block) => writeln!(
            std::io::stdout().lock(),
            "{}",
            crate::text::printable(block)
        )?,
        None if session.context.is_empty() => eprintln!("the working context is empty"),
        None => eprintln!("nothing fits in {} characters", args.budget),
    }
    for section in rendered
        .sections
        .iter()
        .filter(|s| s.left_out || s.cut || s.omitted > 0)
    {
        let what = if section.left_out {
            "left out".to_string()
        } else if section.cut {
            format!("cut, {} of {} items", section.items, section.total_items)
        } else {
            format!("{} of {} items", section.items, section.total_items)
        };
        eprintln!("{}: {what}", section.name);
    }
    Ok(())
}
