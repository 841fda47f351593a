"""A real MCP client (the official Python SDK) driving noggin's MCP server.

Usage:
  client.py stdio NOGGIN_BINARY BRAIN
  client.py http URL [TOKEN]

It lists the tools and calls each one, and checks what a user would: research
answers from the brain; `remember` writes a dated note that a following
`research` answers from; a bad argument is a tool error with the HTTP API's
message; the notes are resources; over HTTP, a request from another site's
page (a foreign Origin) is refused. It prints one JSON line of findings and
exits non-zero, naming the failed check, when anything is wrong.
"""

import asyncio
import json
import pathlib
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
    "search",
    "research",
    "remember",
    "read_note",
    "sessions",
    "status",
    "session_events",
    "working_context",
    "context_pack",
    "context_window",
    "analyze_trajectory",
}
FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "trajectories"
SESSION = "mcp-ctx-1"
GOAL = "Ship the refund button"
LAST_QUERY = "Add a refund button to the checkout page"
QUESTION = "Which colour is the release train's logo?"
ANSWER = "The release train logo is teal with a white anchor on it."


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def exercise(session):
    found = {}
    await session.initialize()

    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    check(TOOLS <= names, f"tools listed: {sorted(names)}")
    for tool in tools:
        if tool.name in TOOLS:
            check(tool.input_schema.get("type") == "object", f"{tool.name} has an input schema")
            check(tool.output_schema is not None, f"{tool.name} has an output schema")
    found["tools"] = sorted(names)
    # Which tools change anything: remember (the user's notes),
    # session_events, and research and context_pack given a session (they
    # record in it); none destroys what is there.
    writers = {t.name for t in tools if t.annotations is None or t.annotations.read_only_hint is not True}
    check(
        writers == {"remember", "session_events", "research", "context_pack"},
        f"the tools that write: {sorted(writers)}",
    )
    for tool in tools:
        if tool.name in writers:
            check(tool.annotations.destructive_hint is False, f"{tool.name} destroys nothing")
    search_tool = next(t for t in tools if t.name == "search")
    limit = search_tool.input_schema["properties"]["limit"]
    check(
        (limit.get("minimum"), limit.get("maximum")) == (1, 100),
        f"the search tool's schema says the limits it enforces: {limit}",
    )
    for name, most in [("working_context", 1_000_000), ("context_pack", 1_000_000), ("context_window", 10_000_000)]:
        budget = next(t for t in tools if t.name == name).input_schema["properties"]["budget"]
        check(budget.get("maximum") == most, f"the {name} tool's schema says its largest budget: {budget}")

    status = await session.call_tool("status", {})
    check(not status.is_error, f"status: {status.content}")
    found["notes"] = status.structured_content["notes"]
    check(found["notes"] > 0, "status counts the brain's notes")
    extra = await session.call_tool("status", {"verbose": True})
    check(extra.is_error, "status refuses an argument it does not take")
    check(extra.content[0].text.startswith("invalid-json:"), f"as invalid-json: {extra.content}")

    search = await session.call_tool("search", {"q": "deploy", "limit": 3})
    check(not search.is_error, f"search: {search.content}")
    hits = search.structured_content["hits"]
    check(0 < len(hits) <= 3, f"search found up to 3 notes: {hits}")
    found["search_top"] = hits[0]["path"]

    before = await session.call_tool("research", {"prompt": "Ship the release train", "questions": [QUESTION]})
    check(not before.is_error, f"research: {before.content}")
    check(
        [u["question"] for u in before.structured_content["unanswered"]] == [QUESTION],
        f"the logo question is open before it is remembered: {before.structured_content}",
    )

    saved = await session.call_tool(
        "remember",
        {"prompt": "Ship the release train", "qa": [{"question": QUESTION, "answer": ANSWER}]},
    )
    check(not saved.is_error, f"remember: {saved.content}")
    saved_paths = [s["path"] for s in saved.structured_content["saved"]]
    check(
        len(saved_paths) == 1 and saved_paths[0].startswith("Alignment Knowledge/"),
        f"remember wrote one dated note: {saved.structured_content}",
    )
    found["saved"] = saved_paths[0]

    after = await session.call_tool("research", {"prompt": "Ship the release train", "questions": [QUESTION]})
    answered = after.structured_content["answered"]
    check(len(answered) == 1, f"research answers from the remembered note: {after.structured_content}")
    check("teal" in answered[0]["answer"], f"the answer is the user's: {answered[0]}")
    check(
        answered[0]["evidence"][0]["path"] == found["saved"],
        f"the evidence is the remembered note: {answered[0]['evidence']}",
    )
    found["answer"] = answered[0]["answer"]
    # Numbers as the HTTP API writes them (0.9, not an f32 widened to
    # 0.8999999761581421), in the text and the structured content alike.
    confidence = answered[0]["confidence"]
    check(
        len(repr(confidence)) <= 8 and repr(confidence) in after.content[0].text,
        f"the confidence is written short: {confidence!r}",
    )

    note = await session.call_tool("read_note", {"path": found["saved"]})
    check(not note.is_error and ANSWER in note.structured_content["source"], "read_note returns the note")

    empty = await session.call_tool("search", {"q": "  "})
    check(empty.is_error, "an empty query is a tool error")
    found["empty_query_error"] = empty.content[0].text
    check("empty-query" in found["empty_query_error"], found["empty_query_error"])
    wrong_type = await session.call_tool("search", {"q": 123})
    check(wrong_type.is_error, "a number for q is a tool error")
    found["wrong_type_error"] = wrong_type.content[0].text

    too_many = await session.call_tool("research", {"questions": ["why?"] * 21})
    check(too_many.is_error, "21 questions are a tool error")
    found["too_many_error"] = too_many.content[0].text
    check("at most 20 questions" in found["too_many_error"], found["too_many_error"])

    missing = await session.call_tool("read_note", {"path": "../outside.md"})
    check(missing.is_error, "a path outside the brain is a tool error")
    # A note named as a link in a note names it: the result says its path.
    for name in ["[[Deploy]]", "[[Deploy#Rollback|how to roll back]]", "harbor/runbooks/deploy", "./Harbor/Runbooks/Deploy.md"]:
        named = await session.call_tool("read_note", {"path": name})
        check(
            not named.is_error and named.structured_content["path"] == "Harbor/Runbooks/Deploy.md",
            f"read_note finds the note {name!r} names: {named.content[0].text[:200]}",
        )
    unnamed = await session.call_tool("read_note", {"path": "[[No such note anywhere]]"})
    check(unnamed.is_error and unnamed.content[0].text.startswith("not-found"), f"a name of no note is not found: {unnamed.content}")

    await exercise_working_context(session, found)

    transcript = (FIXTURES / "claude-code-compaction.jsonl").read_text(encoding="utf-8")
    analysed = await session.call_tool("analyze_trajectory", {"transcript": transcript})
    check(not analysed.is_error, f"analyze_trajectory: {analysed.content}")
    analysis = analysed.structured_content
    check(analysis["format"] == "claude-code" and analysis["calls"] == 48, f"the session is read: {analysis['format']}, {analysis['calls']}")
    patterns = [f["pattern"] for f in analysis["findings"]]
    check("reread-after-compaction" in patterns, f"a re-read after the compaction is found: {patterns}")
    found["trajectory_patterns"] = sorted(set(patterns))
    empty = await session.call_tool("analyze_trajectory", {"transcript": ""})
    check(empty.is_error, "an empty transcript is a tool error")
    found["empty_trajectory_error"] = empty.content[0].text
    # Over the server's 1 MiB body limit, under the 10 MiB of a trajectory.
    large = transcript * (2 * 1024 * 1024 // len(transcript) + 1)
    analysed = await session.call_tool("analyze_trajectory", {"transcript": large})
    check(not analysed.is_error, f"a large trajectory: {analysed.content}")
    found["large_trajectory_calls"] = analysed.structured_content["calls"]
    huge = transcript * (11 * 1024 * 1024 // len(transcript) + 1)
    refused = await session.call_tool("analyze_trajectory", {"transcript": huge})
    check(refused.is_error, "a trajectory over 10 MiB is a tool error")
    found["huge_trajectory_error"] = refused.content[0].text
    # The file itself, by its path: read over stdio (a process of the
    # user's own), never over HTTP.
    fixture = str((FIXTURES / "claude-code-compaction.jsonl").resolve())
    by_path = await session.call_tool("analyze_trajectory", {"path": fixture})
    if sys.argv[1] == "stdio":
        check(not by_path.is_error and by_path.structured_content["calls"] == 48, f"a trajectory by its path: {by_path.content}")
        for path, code in [("claude-code-compaction.jsonl", "invalid-path"), ("-", "invalid-path"), ("/etc/passwd", "invalid-path"), ("/no/such/session.jsonl", "unreadable-path")]:
            refused = await session.call_tool("analyze_trajectory", {"path": path})
            check(refused.is_error and refused.content[0].text.startswith(code + ": "), f"{path!r} is {code}: {refused.content}")
    else:
        check(by_path.is_error and by_path.content[0].text.startswith("path-not-served: "), f"/mcp reads no file: {by_path.content}")
    for arguments in [{}, {"transcript": transcript, "path": fixture}]:
        refused = await session.call_tool("analyze_trajectory", arguments)
        check(refused.is_error and refused.content[0].text.startswith("transcript-or-path: "), f"one of transcript and path: {refused.content}")

    resources = (await session.list_resources()).resources
    uris = [str(r.uri) for r in resources]
    check(any(u.endswith("Alignment%20Knowledge") or "Alignment" in u for u in uris), f"notes are resources: {uris[:5]}")
    # URIs, not raw paths: a note's name with a space, '%' or Hangul in it
    # is percent-encoded, and reads back as the note.
    check(all(" " not in u and u.isascii() for u in uris), f"resource URIs are encoded: {uris[:5]}")
    first = next(u for u in uris if u.endswith(".md"))
    read = await session.read_resource(first)
    check(len(read.contents) == 1 and read.contents[0].text, f"a note resource reads: {first}")
    korean = next(u for u in uris if "%ED%95%9C%EA%B5%AD%EC%96%B4" in u)
    read = await session.read_resource(korean)
    check(len(read.contents) == 1 and read.contents[0].text, f"a Korean note reads: {korean}")
    found["resources"] = len(uris)
    return found


async def exercise_working_context(session, found):
    """The working-context tools over the same core as /v1/sessions and /v1/context."""
    events = [
        {"type": "user_message", "text": LAST_QUERY},
        {"type": "goal", "text": GOAL},
        {"type": "tool_call", "tool": "Edit", "arguments": {"file_path": "web/checkout.tsx"}},
    ]
    appended = await session.call_tool("session_events", {"session": SESSION, "events": events})
    check(not appended.is_error, f"session_events: {appended.content}")
    check(appended.structured_content["accepted"] == 3, f"3 events stored: {appended.structured_content}")
    check(appended.structured_content["session"] == SESSION, f"in the session: {appended.structured_content}")

    listed = await session.call_tool("sessions", {})
    check(not listed.is_error, f"sessions: {listed.content}")
    ids = [s["id"] for s in listed.structured_content["sessions"]]
    check(ids and ids[0] == SESSION, f"the session just written leads the list: {ids}")
    bad_page = await session.call_tool("sessions", {"limit": 0})
    check(bad_page.is_error and bad_page.content[0].text.startswith("invalid-limit"), f"a limit of 0 is refused: {bad_page.content}")

    context = await session.call_tool("working_context", {"session": SESSION, "budget": 2000})
    check(not context.is_error, f"working_context: {context.content}")
    view = context.structured_content
    block = view["block"] or ""
    check(block.startswith("[working-context]"), f"a working-context block: {block!r}")
    check(GOAL in block, f"the block shows the goal: {block!r}")
    check("web/checkout.tsx" in block, f"the block shows the recent file: {block!r}")
    check(
        [f["path"] for f in view["working_context"]["recent_files"]] == ["web/checkout.tsx"],
        f"the structured context has the file: {view['working_context']}",
    )
    check(view["version"] >= 1 and view["etag"], f"a version and an ETag: {view}")
    found["working_context_goal"] = view["working_context"]["goals"][0]["text"]
    # What the model reads is the block, within the budget: not the whole
    # structured context beside it, which no budget bounds.
    text = context.content[0].text
    check(text == block, f"the text is the block: {text!r}")
    small = await session.call_tool("working_context", {"session": SESSION, "budget": 120})
    small_text = small.content[0].text
    small_block = small.structured_content["block"] or ""
    check(
        small_text.startswith(small_block) and "Left out for the budget of 120 characters" in small_text,
        f"a short budget's text is its block and what was left out: {small_text!r}",
    )
    check(len(small_text) < 400, f"the text stays near the budget: {len(small_text)} characters")

    pack = await session.call_tool("context_pack", {"session": SESSION, "budget": 3000})
    check(not pack.is_error, f"context_pack: {pack.content}")
    packed = pack.structured_content
    check(packed["session_found"] is True, f"the pack found the session: {packed}")
    check(LAST_QUERY in (packed["pack"] or ""), f"the pack holds the last user query: {packed['pack']!r}")
    check(packed["last_user_query"]["source"] == "session", f"taken from the session: {packed}")
    found["pack_chars"] = packed["chars"]

    messages = [{"role": "system", "content": "You are terse."}]
    for i in range(30):
        messages.append({"role": "user", "content": f"question {i} " + "words " * 40})
        messages.append({"role": "assistant", "content": f"answer {i} " + "words " * 40})
    messages.append({"role": "user", "content": "the latest question"})
    window = await session.call_tool(
        "context_window",
        {"messages": messages, "budget": 300, "session": SESSION, "protect": {"working_context": True}},
    )
    check(not window.is_error, f"context_window: {window.content}")
    cut = window.structured_content
    latest = len(messages) - 1
    check(cut["latest_user_index"] == latest and latest in cut["kept"], f"the latest user message is kept: {cut['kept']}")
    check(cut["messages"][-1]["content"] == "the latest question", f"and last: {cut['messages'][-1]}")
    check(len(cut["dropped"]) > 0, f"the budget dropped older messages: {cut['tokens']}")
    check(cut["pinned"] is not None and GOAL in cut["pinned"]["block"], f"the session's block is pinned: {cut['pinned']}")
    found["window_kept"] = len(cut["kept"])

    bad = await session.call_tool("session_events", {"session": SESSION, "events": [{"type": "nope"}]})
    check(bad.is_error, "an unknown event type is a tool error")
    found["bad_event_error"] = bad.content[0].text
    unknown = await session.call_tool("working_context", {"session": "never-seen"})
    check(unknown.is_error, "an unknown session is a tool error")
    found["unknown_session_error"] = unknown.content[0].text
    negative = await session.call_tool("working_context", {"session": SESSION, "budget": -1})
    check(negative.is_error, "a negative budget is a tool error")
    found["negative_budget_error"] = negative.content[0].text
    for tool, arguments in [
        ("working_context", {"session": SESSION, "budgett": 100}),
        ("session_events", {"session": "typo-check", "events": [{"type": "goal", "text": "x"}], "sesion": "typo"}),
        ("read_note", {"path": "Harbor/Runbooks/Deploy.md", "paht": "typo"}),
    ]:
        typo = await session.call_tool(tool, arguments)
        check(typo.is_error, f"{tool}: a misspelt argument is a tool error, not ignored")
    after = await session.call_tool("working_context", {"session": SESSION})
    check(
        after.structured_content["version"] == view["version"],
        "the refused events stored nothing",
    )


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(
            command=sys.argv[2],
            args=["mcp", "--brain", sys.argv[3], "--today", "2026-11-22"],
            env={"RUST_LOG": "noggin=info", "NOGGIN_NO_MODEL": "1"},
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                found = await exercise(session)
    else:
        url = sys.argv[2]
        headers = {"Authorization": f"Bearer {sys.argv[3]}"} if len(sys.argv) > 3 else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    found = await exercise(session)
        # A page of another site, reaching noggin through the user's browser.
        foreign = {**headers, "Origin": "http://evil.example"}
        refused = False
        try:
            async with httpx2.AsyncClient(headers=foreign, timeout=30) as client:
                async with streamable_http_client(url, http_client=client) as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=10) as session:
                        await session.initialize()
        except BaseException as error:  # the SDK raises an exception group
            refused = True
            found["foreign_origin"] = type(error).__name__
        check(refused, "a foreign Origin is refused")
    print(json.dumps(found))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failed:
        print(f"MCP check failed: {failed}", file=sys.stderr)
        sys.exit(1)
