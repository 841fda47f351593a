// The noggin card: shows the latest self-research, the questions left for
// the user, a search over the brain and the brain's status.
//
// Everything that comes from a note is put into the page as text
// (textContent, createElement), never as HTML. It polls the API once a
// second; each response carries a sequence number, so nothing is redrawn
// when nothing changed.
"use strict";

(function () {
  const POLL_MS = 1000;
  const STATUS_EVERY = 5;

  // A token given as `/#token=...` (a fragment never reaches the server or
  // its logs) is kept for this tab and set as a same-site cookie, so links
  // to rendered notes work too.
  const TOKEN_KEY = "noggin-token";
  const hashToken = new URLSearchParams(location.hash.slice(1)).get("token");
  if (hashToken) {
    sessionStorage.setItem(TOKEN_KEY, hashToken);
    history.replaceState(null, "", location.pathname + location.search);
  }
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) {
    document.cookie = "noggin_token=" + encodeURIComponent(token) + "; path=/; SameSite=Strict";
  }

  const $ = (id) => document.getElementById(id);
  let session = new URLSearchParams(location.search).get("session") || "";
  let lastSeq = null;
  let lastSessions = "";
  let ticks = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  async function api(path) {
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(path, { headers });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const message = body.error && body.error.message ? body.error.message : response.statusText;
      throw new Error(message);
    }
    return body;
  }

  function ago(iso) {
    if (!iso) return "never";
    const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (seconds < 60) return seconds + " s ago";
    if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
    if (seconds < 86400) return Math.round(seconds / 3600) + " h ago";
    return new Date(iso).toLocaleString();
  }

  // A search snippet is HTML escaped by the server with only <mark> kept.
  // It is rebuilt here from text nodes and <mark> elements.
  function snippetNodes(snippet) {
    const holder = el("p", "snippet");
    const decode = (s) =>
      s
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, "&");
    let marked = false;
    for (const part of snippet.split(/(<mark>|<\/mark>)/)) {
      if (part === "<mark>") { marked = true; continue; }
      if (part === "</mark>") { marked = false; continue; }
      if (!part) continue;
      holder.appendChild(marked ? el("mark", "", decode(part)) : document.createTextNode(decode(part)));
    }
    return holder;
  }

  function renderSessions(card) {
    const joined = card.sessions.join("\u0000");
    if (joined === lastSessions) return;
    lastSessions = joined;
    const bar = $("session-bar");
    const select = $("session");
    bar.hidden = card.sessions.length < 2 && !session;
    select.replaceChildren();
    const all = el("option", "", "Latest of all sessions");
    all.value = "";
    select.appendChild(all);
    for (const name of card.sessions) {
      const option = el("option", "", name);
      option.value = name;
      select.appendChild(option);
    }
    select.value = session;
  }

  function renderCard(card) {
    renderSessions(card);
    const research = card.research;
    const seq = research ? research.seq + ":" + (card.session || "") : "none";
    if (seq === lastSeq) return;
    lastSeq = seq;

    const facts = $("facts");
    const open = $("open");
    facts.replaceChildren();
    open.replaceChildren();
    $("empty").hidden = !!research;
    $("open-panel").hidden = !research || research.open.length === 0;
    const prompt = $("prompt");
    prompt.hidden = !research || !research.prompt;
    prompt.textContent = research && research.prompt ? "For: " + research.prompt : "";
    if (!research) {
      $("research-meta").textContent = "";
      return;
    }
    const answered = research.facts.length + research.more_facts;
    $("research-meta").textContent =
      answered + " of " + (answered + research.open.length) + " answered · " + ago(research.at);

    if (research.facts.length === 0) {
      facts.appendChild(el("li", "fact", "Your notes did not answer any of the questions this time."));
    }
    for (const fact of research.facts) {
      const item = el("li", "fact");
      item.appendChild(el("p", "question", fact.question));
      const answer = el("p", "answer");
      answer.appendChild(el("span", "marker", card.marker.trim()));
      answer.appendChild(el("span", "answer-text", fact.answer));
      item.appendChild(answer);
      const sources = el("ul", "sources");
      sources.setAttribute("aria-label", "Sources");
      for (const source of fact.sources) {
        const li = el("li");
        const link = el("a", "", source.heading ? source.title + " › " + source.heading : source.title);
        link.href = source.url;
        link.title = source.path;
        li.appendChild(link);
        sources.appendChild(li);
      }
      const confidence = el("li", "confidence", "confidence " + Math.round(fact.confidence * 100) + "%");
      sources.appendChild(confidence);
      item.appendChild(sources);
      facts.appendChild(item);
    }
    if (research.more_facts > 0) {
      facts.appendChild(el("li", "more", "+ " + research.more_facts + " more answered"));
    }
    for (const question of research.open) {
      open.appendChild(el("li", "", question.question));
    }
  }

  function renderStatus(status) {
    const line = $("status");
    line.replaceChildren();
    const watching = status.watcher && status.watcher.state === "watching";
    line.appendChild(el("span", watching ? "dot" : "dot warn"));
    const indexed = status.indexing ? "indexing…" : "indexed " + ago(status.last_commit || (status.last_reconcile && status.last_reconcile.at));
    const watcher = status.watcher ? status.watcher.state : "unknown";
    line.appendChild(document.createTextNode(status.notes + " notes · " + indexed + " · " + watcher));
  }

  async function refresh() {
    try {
      const query = session ? "?session=" + encodeURIComponent(session) : "";
      renderCard(await api("/v1/card" + query));
      if (ticks % STATUS_EVERY === 0) renderStatus(await api("/v1/status"));
    } catch (error) {
      $("status").textContent = "Cannot reach noggin: " + error.message;
    }
    ticks += 1;
  }

  async function search(event) {
    event.preventDefault();
    const q = $("q").value.trim();
    const hits = $("hits");
    const meta = $("search-meta");
    if (!q) return;
    meta.textContent = "Searching…";
    try {
      const body = await api("/v1/search?limit=8&q=" + encodeURIComponent(q));
      hits.replaceChildren();
      meta.textContent = body.hits.length === 0 ? "No notes match." : body.hits.length + " notes";
      for (const hit of body.hits) {
        const item = el("li", "hit");
        const link = el("a", "", hit.title);
        link.href = "/notes/" + hit.path.split("/").map(encodeURIComponent).join("/");
        item.appendChild(link);
        item.appendChild(el("p", "where", hit.heading ? hit.path + " › " + hit.heading : hit.path));
        item.appendChild(snippetNodes(hit.snippet));
        hits.appendChild(item);
      }
    } catch (error) {
      meta.textContent = "Search failed: " + error.message;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("search-form").addEventListener("submit", search);
    $("session").addEventListener("change", (event) => {
      session = event.target.value;
      const url = new URL(location.href);
      if (session) url.searchParams.set("session", session);
      else url.searchParams.delete("session");
      history.replaceState(null, "", url);
      lastSeq = null;
      refresh();
    });
    refresh();
    setInterval(refresh, POLL_MS);
  });
})();
