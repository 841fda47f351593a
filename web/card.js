// The noggin card: shows the latest self-research, follows new research as it
// arrives, and searches the brain.
//
// Everything from the server is put into the page as text (textContent,
// createElement); nothing from a note is ever parsed as HTML. Search snippets
// come escaped with <mark> around matches: they are split on the marks and
// their entities decoded into text nodes. Text from notes and requests goes
// into a <bdi>, so that its direction (a right-to-left override, say) cannot
// reorder the card's own text around it.
'use strict';

(() => {
  const TOKEN_KEY = 'noggin.token';
  const $ = (id) => document.getElementById(id);

  // --- the token -----------------------------------------------------------
  // A noggin started with --token needs it on every /v1 request. The card
  // takes it from the address fragment (#token=…, which browsers never send
  // to a server), keeps it for this tab only and removes it from the address.
  let memoryToken = null;

  function storeToken(token) {
    memoryToken = token;
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch (_) { /* memory only */ }
  }

  function loadToken() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    const given = fragment.get('token');
    if (given) {
      storeToken(given);
      // A refusal of it says the token was wrong.
      tokenTried = true;
      history.replaceState(null, '', location.pathname + location.search);
    }
    if (memoryToken) return memoryToken;
    try { memoryToken = sessionStorage.getItem(TOKEN_KEY); } catch (_) { /* none */ }
    return memoryToken;
  }

  function headers(extra) {
    const h = Object.assign({}, extra);
    const token = loadToken();
    if (token) h.Authorization = 'Bearer ' + token;
    return h;
  }

  class Unauthorized extends Error {}
  // A request noggin refuses as the caller's fault (4xx): asking again
  // gets the same answer.
  class Refused extends Error {}

  async function errorOf(response) {
    const body = await response.json().catch(() => null);
    const message = body && body.error ? body.error.message : 'HTTP ' + response.status;
    return response.status >= 400 && response.status < 500 ? new Refused(message) : new Error(message);
  }

  async function getJson(path, signal) {
    const response = await fetch(path, { headers: headers({ Accept: 'application/json' }), cache: 'no-store', signal });
    if (response.status === 401) throw new Unauthorized();
    if (!response.ok) throw await errorOf(response);
    return response.json();
  }

  // --- building the page ---------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  // Text from a note or a request, isolated from the text around it.
  // Text from notes, sessions and agents, isolated from the card's own; a
  // character that would reorder what follows it (a right-to-left override
  // makes "docs/\u202etxt.exe" read "docs/exe.txt") is shown as one.
  const REORDERING = /[\u202a-\u202e\u2066-\u2069]/g;
  function plainOrder(text) {
    return String(text).replace(REORDERING, '\ufffd');
  }

  // Korean is written with spaces between words, and a line breaks between
  // them, not inside one ("얼마인|가요"); Chinese and Japanese break anywhere.
  const HANGUL = /[\uac00-\ud7af]/;
  function langOf(text) {
    return HANGUL.test(text) ? 'ko' : null;
  }

  function userText(text) {
    return el('bdi', { text: plainOrder(text), lang: langOf(String(text)) });
  }

  // " › " and the heading path below the note's title, which it often
  // starts with (a note's first heading is its title: "ADR-003 › ADR-003 ›
  // 결정"); nothing when there is no heading below it.
  const HEADING_SEPARATOR = ' › ';
  function headingBelow(title, heading) {
    if (!heading || heading === title) return null;
    const below = title && heading.startsWith(title + HEADING_SEPARATOR)
      ? heading.slice(title.length + HEADING_SEPARATOR.length)
      : heading;
    return below ? el('span', { class: 'heading' }, HEADING_SEPARATOR, userText(below)) : null;
  }

  // Only links to noggin's own rendered notes are made from server data.
  // A note opened from a session's card leads back to that session.
  function noteHref(link) {
    if (typeof link !== 'string' || !link.startsWith('/notes/')) return null;
    return session ? link + '?session=' + encodeURIComponent(session) : link;
  }

  function noteLinkFor(path) {
    return noteHref('/notes/' + path.split('/').map(encodeURIComponent).join('/'));
  }

  const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

  function decodeEntities(text) {
    return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name) => ENTITIES[name]);
  }

  // A search snippet (escaped HTML whose only tags are <mark>) as nodes.
  function snippetNodes(snippet) {
    const nodes = [];
    let marked = false;
    for (const part of String(snippet).split(/(<mark>|<\/mark>)/)) {
      if (part === '<mark>') { marked = true; continue; }
      if (part === '</mark>') { marked = false; continue; }
      if (!part) continue;
      const text = decodeEntities(part);
      nodes.push(marked ? el('mark', { text }) : document.createTextNode(text));
    }
    return nodes;
  }

  function relativeTime(iso) {
    const then = Date.parse(iso);
    if (Number.isNaN(then)) return '';
    const seconds = Math.round((Date.now() - then) / 1000);
    if (seconds < 45) return 'just now';
    const minutes = Math.round(seconds / 60);
    if (minutes < 60) return minutes + ' min ago';
    const hours = Math.round(minutes / 60);
    if (hours < 24) return hours + ' h ago';
    return new Date(then).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
  }

  function timeEl(iso) {
    const node = el('time', { datetime: iso, 'data-relative': '', text: relativeTime(iso) });
    node.title = new Date(Date.parse(iso)).toLocaleString();
    return node;
  }

  function refreshTimes() {
    for (const node of document.querySelectorAll('time[data-relative]')) {
      node.textContent = relativeTime(node.getAttribute('datetime'));
    }
  }

  // The last part of a heading path ("Setup › Database" → "Database").
  function lastHeading(heading) {
    const parts = String(heading || '').split(HEADING_SEPARATOR);
    return parts[parts.length - 1];
  }

  function sourceList(sources, label) {
    const items = (sources || []).map((source) => {
      const href = noteHref(source.link);
      const name = source.title || source.path;
      const link = href ? el('a', { href, title: source.path }, userText(name)) : el('span', null, userText(name));
      const heading = lastHeading(source.heading);
      return el('li', null, link, headingBelow(name, heading));
    });
    if (!items.length) return null;
    return el('div', { class: 'sources' }, el('span', { class: 'sources-label', text: label }), el('ul', null, items));
  }

  function renderFact(fact, marker) {
    const confidence = Math.round((Number(fact.confidence) || 0) * 100);
    return el('li', { class: 'fact' },
      el('div', { class: 'fact-head' },
        el('p', { class: 'question' }, userText(fact.question)),
        el('span', { class: 'confidence', title: 'How sure noggin is that the note states this', text: 'confidence ' + confidence + '%' })),
      el('p', { class: 'answer' },
        el('span', { class: 'marker', text: marker.trim() }), ' ',
        el('span', { class: 'answer-text' }, userText(fact.answer))),
      sourceList(fact.sources, 'From'));
  }

  function renderResearch(card) {
    const research = card.research;
    const facts = el('section', { class: 'panel facts', 'aria-labelledby': 'facts-heading' },
      el('div', { class: 'panel-head' },
        el('h2', { id: 'facts-heading', text: 'Found in your notes' }),
        el('span', { class: 'count', text: String(research.facts.length + research.more_facts) })),
      el('p', { class: 'context' },
        research.prompt ? el('span', { class: 'prompt' }, '“', userText(research.prompt), '”') : null,
        el('span', { class: 'when' }, 'Researched ', timeEl(research.at), ' in ' + research.took_ms + ' ms')));
    if (research.facts.length) {
      facts.append(el('ol', { class: 'fact-list' }, research.facts.map((f) => renderFact(f, card.marker))));
      const more = research.more || [];
      if (more.length > 0) {
        // The rest, a click away.
        facts.append(el('details', { class: 'more' },
          el('summary', { class: 'muted', text: '+' + more.length + ' more answered by noggin' }),
          el('ol', { class: 'fact-list', start: String(research.facts.length + 1) },
            more.map((f) => renderFact(f, card.marker)))));
      }
    } else {
      facts.append(el('p', { class: 'none', text: 'None of these questions is answered in your notes yet.' }));
    }

    const open = el('section', { class: 'panel open', 'aria-labelledby': 'open-heading' },
      el('div', { class: 'panel-head' },
        el('h2', { id: 'open-heading', text: 'Still open for you' }),
        el('span', { class: 'count', text: String(research.open.length) })));
    if (research.indexing && research.open.length) {
      open.append(el('p', { class: 'indexing muted',
        text: 'noggin was still indexing your notes when these were asked: some may be answered once it is done.' }));
    }
    if (research.open.length) {
      open.append(el('ul', { class: 'open-list' }, research.open.map((q) =>
        el('li', null,
          el('p', { class: 'question' }, userText(q.question)),
          sourceList(q.sources.slice(0, 1), 'Closest note')))));
    } else if (research.answered_by_user.length) {
      open.append(el('p', { class: 'none', text: 'Nothing left to ask: you answered the rest.' }));
    } else {
      open.append(el('p', { class: 'none', text: 'Nothing left to ask: your notes answered every question.' }));
    }
    return [facts, open];
  }

  function renderEmpty() {
    const auth = loadToken() ? "  -H 'Authorization: Bearer YOUR_TOKEN' \\\n" : '';
    const command = 'curl -s ' + location.origin + '/v1/research \\\n' +
      "  -H 'Content-Type: application/json' \\\n" + auth +
      '  -d \'{"prompt": "Ship the new booking page",\n' +
      '       "questions": ["When do we deploy?", "Which database do we use?"]}\'';
    return [el('section', { class: 'panel empty', 'aria-labelledby': 'empty-heading' },
      el('h2', { id: 'empty-heading', text: 'Nothing researched yet' }),
      el('p', { text: 'When your assistant is unsure about a request, it asks noggin before it asks you.' }),
      el('ol', { class: 'steps' },
        el('li', null, el('strong', { text: 'Your assistant' }), ' sends its open questions.'),
        el('li', null, el('strong', { text: 'noggin' }), ' answers what your notes already say, and shows the note.'),
        el('li', null, el('strong', { text: 'You' }), ' only get the questions that are left.')),
      el('p', { text: 'Try it from a terminal:' }),
      el('pre', { class: 'command', tabindex: '0', 'aria-label': 'Example request' }, el('code', { text: command })),
      el('p', { class: 'waiting' }, el('span', { class: 'pulse', 'aria-hidden': 'true' }),
        'Waiting for the first research. This card updates by itself.'))];
  }

  // A session at work that has asked noggin nothing yet: the tutorial is
  // for a card that has seen no session at all.
  function renderNoResearchYet(name) {
    return [el('section', { class: 'panel empty', 'aria-labelledby': 'empty-heading' },
      el('h2', { id: 'empty-heading' }, 'No research in ', el('bdi', { text: name }), ' yet'),
      el('p', { class: 'waiting' }, el('span', { class: 'pulse', 'aria-hidden': 'true' }),
        'When the assistant asks noggin, what your notes answer shows here. This card updates by itself.'))];
  }

  // A session by name that has no research and no events: deleted,
  // mistyped, or not started yet (then it shows as soon as it starts).
  function renderNoSession(name) {
    return [el('section', { class: 'panel empty', 'aria-labelledby': 'no-session-heading' },
      el('h2', { id: 'no-session-heading' }, 'No session ', el('bdi', { text: name })),
      el('p', { text: 'It has no research and no events: it was deleted, its name is mistyped, or it has not started. This card shows it as soon as it does.' }),
      el('p', null, el('a', { href: '/', text: 'Show the latest of all sessions' })))];
  }

  // --- the card and its session --------------------------------------------
  let session = new URLSearchParams(location.search).get('session') || '';
  let shownKey = null;

  function cardUrl(path) {
    return session ? path + '?session=' + encodeURIComponent(session) : path;
  }

  function renderSessions(card) {
    const select = $('session');
    const sessions = card.sessions || [];
    const wanted = ['', ...sessions];
    // The session opened by name is in the list, as what the card shows,
    // even when it does not exist (yet, or any more: the card says so).
    if (session && !sessions.includes(session)) wanted.push(session);
    const current = [...select.options].map((o) => o.value);
    if (current.join('\n') !== wanted.join('\n')) {
      select.replaceChildren(...wanted.map((value) =>
        el('option', { value, dir: value ? 'auto' : null, text: value ? plainOrder(value) : 'Latest of all sessions' })));
    }
    select.value = session;
    // The card lists the most recent sessions only; any other opens by
    // name (?session=).
    const total = card.sessions_total || sessions.length;
    const count = $('session-count');
    count.hidden = total <= sessions.length;
    count.textContent = count.hidden ? '' : sessions.length + ' of ' + total + ' sessions listed';
    // One session is one to open: its working context shows only in it.
    $('session-bar').hidden = !(sessions.length > 0 || session);
  }

  // --- the session's working context ----------------------------------------
  // Goals, the latest failure, recent files and progress, beside the research.
  function checklist(items, cls) {
    return el('ul', { class: 'checklist ' + cls }, items.map((item) =>
      el('li', { class: item.done ? 'done' : 'todo' },
        el('span', { class: 'check', 'aria-hidden': 'true', text: item.done ? '✓' : '' }),
        el('span', { class: 'visually-hidden', text: item.done ? 'done: ' : 'to do: ' }),
        el('span', { class: 'item-text' }, userText(item.text)))));
  }

  function renderWorking(wc) {
    const panel = el('section', { class: 'panel working', 'aria-labelledby': 'working-heading' },
      el('div', { class: 'panel-head' },
        el('h2', { id: 'working-heading', text: 'What the assistant is doing' })),
      el('p', { class: 'context' }, el('span', { class: 'when' }, 'Updated ', timeEl(wc.updated))));
    if (wc.last_user_query) {
      panel.append(el('p', { class: 'request' }, el('span', { class: 'label', text: 'Asked: ' }),
        el('span', { class: 'request-text' }, '“', userText(wc.last_user_query), '”')));
    }
    if (wc.goals.length) {
      panel.append(el('h3', { text: wc.goals.length === 1 ? 'Goal' : 'Goals' }), checklist(wc.goals, 'goals'));
    }
    if (wc.failure) {
      const failureBox = (f) => el('div', { class: 'failure' },
        el('span', { class: 'failure-kind', text: f.kind }), ' ', timeEl(f.at),
        el('pre', { class: 'failure-text', tabindex: '0', dir: 'auto', text: f.text }));
      panel.append(el('h3', { text: 'Latest failure' }), failureBox(wc.failure));
      // The other open failures (one a kind) open under it.
      const others = wc.more_failures || [];
      if (others.length) {
        panel.append(el('details', { class: 'more-failures' },
          el('summary', { text: '+' + others.length + ' more open ' + (others.length === 1 ? 'failure' : 'failures') }),
          ...others.map(failureBox)));
      }
    }
    if (wc.recent_files.length) {
      panel.append(el('h3', { text: 'Recent files' }),
        el('ul', { class: 'files' }, wc.recent_files.map((f) =>
          el('li', null, el('code', null, userText(f.path)),
            f.changed ? el('span', { class: 'changed', text: 'changed' }) : null))));
    }
    if (wc.progress_total) {
      panel.append(el('h3', { text: 'Progress · ' + wc.progress_done + ' of ' + wc.progress_total + ' done' }),
        checklist(wc.progress, 'progress'));
    }
    const decisions = wc.decisions || [];
    if (decisions.length) {
      const more = (wc.decisions_total || 0) > decisions.length ? ' · the newest ' + decisions.length + ' of ' + wc.decisions_total : '';
      panel.append(el('h3', { text: (decisions.length === 1 ? 'Decision' : 'Decisions') + more }),
        el('ul', { class: 'decisions' }, decisions.map((d) => el('li', null, userText(d)))));
    }
    // Without the research that left them open (noggin restarted), the
    // session's open questions are shown here.
    if (wc.open_questions.length) {
      panel.append(el('h3', { text: 'Still open for you' }),
        el('ul', { class: 'open-questions' }, wc.open_questions.map((q) => el('li', null, userText(q)))));
    }
    const confirmed = wc.confirmed || [];
    if (confirmed.length) {
      panel.append(el('h3', { text: 'You confirmed' }),
        el('ul', { class: 'confirmed' }, confirmed.map((c) => el('li', null,
          el('span', { class: 'confirmed-question' }, userText(c.question)), ' → ',
          el('span', { class: 'confirmed-answer' }, userText(c.answer))))));
    }
    return panel;
  }

  let shownWorking = null;

  function renderWorkingContext(card) {
    const wc = card.working_context;
    const box = $('working');
    const key = wc ? JSON.stringify([card.session, wc.version, wc.open_questions.length]) : null;
    if (key !== shownWorking) {
      shownWorking = key;
      box.replaceChildren(...(wc ? [renderWorking(wc)] : []));
    }
    box.hidden = !wc;
    $('main').classList.toggle('has-working', !!wc);
  }

  function renderCard(card) {
    renderSessions(card);
    renderWorkingContext(card);
    const research = card.research;
    // A question the user answered since is a change too.
    const key = JSON.stringify([card.session, card.session_found, research ? [research.research_id, research.answered_by_user] : null]);
    const container = $('research');
    if (key !== shownKey) {
      shownKey = key;
      const missing = card.session && !card.session_found;
      container.replaceChildren(...(research ? renderResearch(card)
        : missing ? renderNoSession(card.session)
        : card.session ? renderNoResearchYet(card.session)
        : renderEmpty()));
    }
    container.setAttribute('aria-busy', 'false');
    const found = research ? research.facts.length + research.more_facts : 0;
    document.title = found ? found + ' found · noggin' : 'noggin';
  }

  // --- brain status --------------------------------------------------------
  const WATCHER = { watching: 'following edits', polling: 'checking for edits', waiting: 'waiting for the brain folder', off: 'not following edits' };

  // Why noggin says it is not healthy, in words.
  function unhealthy(status) {
    if (status.brain_error) return 'Cannot read your brain: ' + status.brain_error;
    if (status.commit_error) return 'Cannot update the index: ' + status.commit_error;
    if (status.session_store_error) return 'Cannot keep sessions: ' + status.session_store_error;
    return 'noggin is not healthy';
  }

  async function refreshStatus() {
    const box = $('brain-status');
    try {
      const status = await getJson('/v1/status');
      if (status.healthy === false) {
        const reason = unhealthy(status);
        $('status-text').textContent = reason;
        box.title = reason;
        box.dataset.state = live || !stream ? 'unhealthy' : 'reconnecting';
        return;
      }
      const parts = [status.notes + (status.notes === 1 ? ' note' : ' notes')];
      if (status.indexing) parts.push('indexing…');
      else if (status.last_commit) parts.push('indexed ' + relativeTime(status.last_commit));
      parts.push(WATCHER[status.watcher.state] || status.watcher.state);
      $('status-text').textContent = parts.join(' · ');
      box.title = status.watcher.reason ? status.watcher.reason : status.brain;
      box.dataset.state = live || !stream ? status.watcher.state : 'reconnecting';
    } catch (error) {
      if (error instanceof Unauthorized) return needToken();
      $('status-text').textContent = 'noggin is not reachable';
      box.dataset.state = 'down';
    }
  }

  // --- live updates --------------------------------------------------------
  // Server-sent events read with fetch, so that the token can go in a header
  // (EventSource cannot send one). Reconnects with a growing pause.
  let live = false;
  // The stream followed, if any: without one there is nothing to reconnect.
  let stream = null;

  async function readEvents(body, onEvent) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        let type = 'message';
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length) onEvent(type, data.join('\n'));
      }
    }
  }

  function setLive(on) {
    live = on;
    if (!on) $('brain-status').dataset.state = 'reconnecting';
  }

  async function follow() {
    if (stream) stream.abort();
    const control = new AbortController();
    stream = control;
    let pause = 500;
    while (!control.signal.aborted) {
      try {
        const response = await fetch(cardUrl('/v1/card/events'), {
          headers: headers({ Accept: 'text/event-stream' }), cache: 'no-store', signal: control.signal,
        });
        if (response.status === 401) return needToken();
        if (response.status >= 400 && response.status < 500) return refused((await errorOf(response)).message);
        if (!response.ok || !response.body) throw new Error('HTTP ' + response.status);
        setLive(true);
        pause = 500;
        await readEvents(response.body, (type, data) => {
          if (type !== 'card') return;
          renderCard(JSON.parse(data));
          refreshStatus();
        });
      } catch (error) {
        if (control.signal.aborted) return;
      }
      setLive(false);
      refreshStatus();
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 10000);
    }
  }

  async function start() {
    $('token-panel').hidden = true;
    try {
      // Also hands this browser the cookie that opens rendered notes when
      // noggin has a token.
      renderCard(await getJson(cardUrl('/v1/card')));
    } catch (error) {
      if (error instanceof Unauthorized) return needToken();
      if (error instanceof Refused) return refused(error.message);
    }
    refreshStatus();
    follow();
  }

  // noggin refuses this card's address (a session name it cannot take):
  // asking again would not help, so say why and offer the way back.
  function refused(message) {
    if (stream) stream.abort();
    stream = null;
    $('research').replaceChildren(el('section', { class: 'panel refused', role: 'alert', 'aria-labelledby': 'refused-heading' },
      el('h2', { id: 'refused-heading', text: 'This card cannot show that session' }),
      el('p', { text: 'noggin refused it: ' + message }),
      el('p', null, el('a', { href: '/', text: 'Show the latest of all sessions' }))));
    $('research').setAttribute('aria-busy', 'false');
    $('working').hidden = true;
    $('session-bar').hidden = true;
    shownKey = null;
    refreshStatus();
  }

  // True once the user entered a token, so a refusal says it was wrong.
  let tokenTried = false;

  function needToken() {
    if (stream) stream.abort();
    $('token-panel').hidden = false;
    $('token-error').hidden = !tokenTried;
    $('research').replaceChildren();
    $('research').setAttribute('aria-busy', 'false');
    $('status-text').textContent = 'Locked: token needed';
    $('brain-status').dataset.state = 'locked';
    $('token-input').focus();
  }

  // --- search --------------------------------------------------------------
  const SEARCH_LIMIT = 8;
  let searchControl = null;

  async function search(query) {
    if (searchControl) searchControl.abort();
    searchControl = new AbortController();
    const summary = $('search-summary');
    const list = $('search-results');
    summary.textContent = 'Searching…';
    try {
      const body = await getJson('/v1/search?limit=' + SEARCH_LIMIT + '&q=' + encodeURIComponent(query), searchControl.signal);
      const hits = body.hits || [];
      // One hit per note: fewer than asked for are all the notes that match;
      // as many may be the best of more.
      const found = hits.length === SEARCH_LIMIT
        ? 'The top ' + hits.length + ' notes for “'
        : hits.length === 1 ? '1 note matches “' : hits.length + ' notes match “';
      summary.replaceChildren(...(hits.length
        ? [found, userText(query), '”']
        : ['No note matches “', userText(query), '”.']));
      list.replaceChildren(...hits.map((hit) => el('li', { class: 'result' },
        el('a', { class: 'result-title', href: noteLinkFor(hit.path) }, userText(hit.title || hit.path)),
        headingBelow(hit.title, hit.heading),
        el('p', { class: 'snippet', dir: 'auto', lang: langOf(String(hit.snippet)) }, snippetNodes(hit.snippet)),
        el('p', { class: 'path' }, userText(hit.path)))));
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error instanceof Unauthorized) return needToken();
      summary.textContent = 'Search failed: ' + error.message;
      list.replaceChildren();
    }
  }

  // --- wiring --------------------------------------------------------------
  document.addEventListener('DOMContentLoaded', () => {
    $('search-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const query = $('q').value.trim();
      if (query) search(query);
    });
    $('session').addEventListener('change', (event) => {
      session = event.target.value;
      const url = new URL(location.href);
      if (session) url.searchParams.set('session', session); else url.searchParams.delete('session');
      history.replaceState(null, '', url);
      shownKey = null;
      start();
    });
    // A token put into the address of an open card (#token=…) is taken at
    // once, as it is when the card opens.
    window.addEventListener('hashchange', () => {
      if (new URLSearchParams(location.hash.slice(1)).get('token')) start();
    });
    $('token-form').addEventListener('submit', (event) => {
      event.preventDefault();
      storeToken($('token-input').value.trim());
      tokenTried = true;
      $('token-input').value = '';
      start();
    });
    setInterval(refreshTimes, 30000);
    setInterval(refreshStatus, 30000);
    start();
  });
})();
