// @ts-check
/*
 * skill-up HTML report: the page script, inlined into report.html (allowed by the page's
 * Content-Security-Policy through its SHA-256 hash).
 *
 * It reads the run data from <script type="application/json" id="data"> (the compact format of
 * src/report/html/data.ts: a string table `s` and positional job records `j`), builds the case
 * table, and builds a case's details only when the case is opened. Every datum reaches the page
 * through text nodes (`append(string)`, `textContent`, `setAttribute`), never through innerHTML,
 * so no run output can become markup. Number formats follow src/report/html/format.ts.
 */
(function () {
  'use strict';

  /** @typedef {[number, number, 0|1, number, 0|1|2|3, number, number, number|null, number, any[], 1?]} Job */
  // The fields of a Job row (src/report/html/data.ts JobRow), by name: a job is an array to keep the page small.
  const J_CASE = 0, J_ENGINE = 1, J_VARIANT = 2, J_TRIAL = 3, J_STATUS = 4, J_MS = 5, J_TOKENS = 6, J_COST = 7, J_REASON = 8, J_DETAIL = 9, J_ESTIMATED = 10;
  /**
   * One turn (src/report/html/data.ts TurnRow); strings are indexes into D.s.
   * @typedef {{index: number, prompt: number, status: number, final: number, reason: number, durationMs: number,
   *   tokens: number[], costUsd: number|null, toolCalls: any[][], activations: number[][], skillsListed: number[]|null,
   *   sessionId: number|string, error: number}} TurnRow
   */

  const dataEl = document.getElementById('data');
  /** @type {{v: number, s: string[], e: string[], c: string[], vs: (0|1)[], j: Job[]}} */
  const D = JSON.parse((dataEl && dataEl.textContent) || '{"v":1,"s":[],"e":[],"c":[],"vs":[0],"j":[]}');
  const S = D.s;
  /** A string of the data: an index into the string table (−1 = absent) or the string itself. @param {number|string} i */
  const str = (i) => (typeof i === 'string' ? i : i >= 0 ? S[i] : '');
  const STATUS = ['pass', 'fail', 'error', 'skipped'];
  const SYM = ['✓', '✗', '!', '–'];
  const VNAME = ['with_skill', 'without_skill'];
  const baseline = D.vs.indexOf(1) >= 0;
  const nE = D.e.length;
  const nCols = 1 + nE * (baseline ? 3 : 1) + 2;

  // ---- formatting (same rules as format.ts) ----
  /** @param {number|null|undefined} p */
  const fmtPct = (p) => (p == null || !isFinite(p) ? '—' : Math.round(p * 100) + '%');
  /** @param {number|null|undefined} ms */
  function fmtMs(ms) {
    if (ms == null || !isFinite(ms)) return '—';
    const a = Math.abs(ms);
    const sign = ms < 0 ? '−' : '';
    if (a < 1000) return sign + Math.round(a) + ' ms';
    if (a < 60000) return sign + (a / 1000).toFixed(a < 10000 ? 1 : 0) + ' s';
    const s = Math.round(a / 1000);
    if (s < 3600) return sign + Math.floor(s / 60) + 'm ' + String(s % 60).padStart(2, '0') + 's';
    return sign + Math.floor(s / 3600) + 'h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
  }
  /** @param {number|null|undefined} n */
  function fmtTokens(n) {
    if (n == null || !isFinite(n)) return '—';
    const a = Math.abs(n);
    const sign = n < 0 ? '−' : '';
    if (a < 1000) return sign + Math.round(a);
    if (a < 1e6) return sign + (a / 1000).toFixed(a < 10000 ? 2 : 1).replace(/\.?0+$/, '') + 'k';
    return sign + (a / 1e6).toFixed(2).replace(/\.?0+$/, '') + 'M';
  }
  /** @param {number|null|undefined} usd */
  const fmtUsd = (usd) => (usd == null || !isFinite(usd) ? '—' : usd !== 0 && Math.abs(usd) < 0.01 ? '$' + usd.toPrecision(2) : '$' + usd.toFixed(2));
  /** @param {string} iso */
  function fmtDate(iso) {
    const t = Date.parse(iso);
    return isNaN(t) ? iso : new Date(t).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
  }
  /** @param {number} n */
  const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
  /** @param {number[]} u */
  const usageTitle = (u) => 'input ' + fmtInt(u[0]) + ' · output ' + fmtInt(u[1]) + ' · cache read ' + fmtInt(u[2]) + ' · cache write ' + fmtInt(u[3]);

  // ---- DOM building: text only ----
  /**
   * Creates an element with a class and children; strings become text nodes.
   * @param {string} tag @param {string|null} cls @param {...any} kids
   * @returns {HTMLElement}
   */
  function h(tag, cls, ...kids) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    add(n, kids);
    return n;
  }
  /** @param {Node & ParentNode} n @param {any} k */
  function add(n, k) {
    if (k == null || k === false) return;
    if (Array.isArray(k)) for (const x of k) add(n, x);
    else n.append(typeof k === 'object' ? k : String(k));
  }
  /** @param {string} label @param {any} value @param {string} [title] */
  function kv(label, value, title) {
    const n = h('span', 'kv', h('span', 'k', label), ' ', h('b', null, value));
    if (title) n.title = title;
    return n;
  }

  // ---- the cases ----
  /**
   * @typedef {{i: number, id: string, lower: string, cells: Job[][][], mask: number[], delta: (number|null)[],
   *   dur: (number|null)[], tok: (number|null)[], durAll: number|null, tokAll: number|null, flaky: boolean,
   *   row: HTMLTableRowElement|null, detail: HTMLTableRowElement|null, open: boolean}} Case
   */
  /** @type {Case[]} */
  const cases = D.c.map((id, i) => ({
    i, id, lower: id.toLowerCase(),
    cells: D.e.map(() => [[], []]),
    mask: [0, 0], delta: [], dur: [null, null], tok: [null, null], durAll: null, tokAll: null, flaky: false,
    row: null, detail: null, open: false,
  }));
  for (const j of D.j) cases[j[J_CASE]].cells[j[J_ENGINE]][j[J_VARIANT]].push(j);

  /** @param {number[]} xs */
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  /** Pass rate over graded trials (errors and skips excluded, as in the stats stage). @param {Job[]} jobs */
  function rate(jobs) {
    let p = 0, g = 0;
    for (const j of jobs) if (j[J_STATUS] <= 1) { g++; if (j[J_STATUS] === 0) p++; }
    return g ? p / g : null;
  }
  for (const c of cases) {
    /** @type {number[][]} */
    const dur = [[], []];
    /** @type {number[][]} */
    const tok = [[], []];
    c.cells.forEach((byV) => {
      byV.forEach((jobs, v) => {
        jobs.sort((a, b) => a[3] - b[3]);
        let p = 0, f = 0;
        for (const j of jobs) {
          c.mask[v] |= 1 << j[J_STATUS];
          dur[v].push(j[J_MS]);
          tok[v].push(j[J_TOKENS]);
          if (j[J_STATUS] === 0) p++;
          if (j[J_STATUS] === 1) f++;
        }
        if (p && f) c.flaky = true;
      });
      const w = rate(byV[0]), wo = rate(byV[1]);
      c.delta.push(w == null || wo == null ? null : w - wo);
    });
    c.dur = [mean(dur[0]), mean(dur[1])];
    c.tok = [mean(tok[0]), mean(tok[1])];
    c.durAll = mean(dur[0].concat(dur[1]));
    c.tokAll = mean(tok[0].concat(tok[1]));
  }

  // ---- table rows ----
  /** @param {Job} j */
  function jobTitle(j) {
    const reason = str(j[J_REASON]);
    return D.e[j[J_ENGINE]] + ' · ' + VNAME[j[J_VARIANT]] + ' · run-' + j[J_TRIAL] + ': ' + STATUS[j[J_STATUS]] + (reason ? ' — ' + (reason.length > 300 ? reason.slice(0, 300) + '…' : reason) : '');
  }
  /** @param {Job[]} jobs */
  function frac(jobs) {
    let p = 0, g = 0;
    for (const j of jobs) if (j[J_STATUS] <= 1) { g++; if (j[J_STATUS] === 0) p++; }
    return p + '/' + g;
  }
  /** @param {number|null} d */
  function deltaNode(d) {
    if (d == null) return h('span', 'delta none', '—');
    const v = Math.round(d * 100);
    const cls = v > 0 ? 'up' : v < 0 ? 'down' : 'flat';
    const n = h('span', 'delta ' + cls, (v > 0 ? '▲ +' : v < 0 ? '▼ −' : '±') + Math.abs(v));
    n.title = 'with_skill − without_skill pass rate: ' + (v > 0 ? '+' : v < 0 ? '−' : '±') + Math.abs(v) + ' percentage points';
    return n;
  }
  /** @param {(number|null)[]} pair @param {(n: number|null) => string} fmt */
  const pairText = (pair, fmt) => (baseline ? fmt(pair[0]) + ' · ' + fmt(pair[1]) : fmt(pair[0]));

  /** @param {Case} c */
  function buildRow(c) {
    const tr = /** @type {HTMLTableRowElement} */ (h('tr', 'case'));
    tr.dataset.i = String(c.i);
    const btn = h('button', 'case-btn', h('span', 'chev', '▸'), h('span', 'cid', c.id));
    btn.setAttribute('type', 'button');
    btn.setAttribute('aria-expanded', 'false');
    const th = h('th', 'c-case', btn, c.flaky ? h('span', 'badge flaky', 'flaky') : null);
    th.setAttribute('scope', 'row');
    if (c.flaky) th.lastElementChild?.setAttribute('title', 'some trials passed and some failed');
    tr.append(th);
    c.cells.forEach((byV, ei) => {
      for (const v of D.vs) {
        const jobs = byV[v];
        const td = h('td', 'cell v' + v);
        if (!jobs.length) td.append(h('span', 'muted', '—'));
        else {
          const sqs = h('span', 'sqs');
          for (const j of jobs) {
            const sq = h('span', 'sq s-' + STATUS[j[J_STATUS]], SYM[j[J_STATUS]]);
            sq.title = jobTitle(j);
            sq.dataset.e = String(ei);
            sq.dataset.v = String(v);
            sq.dataset.t = String(j[J_TRIAL]);
            sqs.append(sq);
          }
          td.append(sqs, h('span', 'frac', frac(jobs)));
        }
        tr.append(td);
      }
      if (baseline) tr.append(h('td', 'num d', deltaNode(c.delta[ei])));
    });
    const td1 = h('td', 'num', pairText(c.dur, fmtMs));
    const td2 = h('td', 'num', pairText(c.tok, fmtTokens));
    tr.append(td1, td2);
    return tr;
  }

  const tbody = /** @type {HTMLElement} */ (document.getElementById('rows'));

  // ---- case details (built when a case is first opened) ----
  /** @param {any[]} d the job's DetailRow */
  const turnsOf = (d) => /** @type {TurnRow[]} */ (d[10]);

  /** @param {string} text */
  function prettyJson(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (_) {
      return text;
    }
  }
  const PREVIEW_KEYS = ['skill', 'command', 'cmd', 'file_path', 'filePath', 'path', 'pattern', 'url', 'query', 'description', 'prompt'];
  /** A one-line hint of a tool call's input. @param {string} text */
  function preview(text) {
    let v = text;
    try {
      const o = JSON.parse(text);
      if (o && typeof o === 'object' && !Array.isArray(o)) {
        const k = PREVIEW_KEYS.find((x) => typeof o[x] === 'string');
        v = k ? o[k] : JSON.stringify(o);
      } else if (typeof o === 'string') v = o;
    } catch (_) { /* clipped or not JSON: show the start */ }
    v = v.replace(/\s+/g, ' ').trim();
    return v.length > 90 ? v.slice(0, 90) + '…' : v;
  }

  /** @param {any[]} call @param {any[][]} acts */
  function isSkillCall(call, acts) {
    const name = str(call[0]);
    if (/skill/i.test(name)) return true;
    if (acts.some((a) => str(a[1]).split(/\s+/).indexOf(name) >= 0)) return true;
    return str(call[1]).indexOf('SKILL.md') >= 0;
  }

  /** @param {any[]} call @param {any[][]} acts */
  function toolNode(call, acts) {
    const skill = isSkillCall(call, acts);
    const err = call[2] === 1;
    const det = /** @type {HTMLDetailsElement} */ (h('details', 'tool' + (skill ? ' skill-call' : '') + (err ? ' err' : '')));
    const sum = h('summary', null,
      h('span', 'tname', str(call[0])),
      h('span', 'targ', preview(str(call[1]))),
      skill ? h('span', 'tag skill', '⚡ skill') : null,
      err ? h('span', 'tag bad', '✗ error') : null);
    det.append(sum);
    det.addEventListener('toggle', () => {
      if (!det.open || det.dataset.filled) return;
      det.dataset.filled = '1';
      det.append(h('div', 'io-l', 'input'), h('pre', 'io', prettyJson(str(call[1]))));
      if (call[3] >= 0) det.append(h('div', 'io-l', err ? 'output (error)' : 'output'), h('pre', 'io out', str(call[3])));
    });
    return det;
  }

  /** @param {TurnRow} t @param {number} nTurns */
  function turnNode(t, nTurns) {
    const { index: idx, status: statusS, final: finalS, reason: reasonS, durationMs: durMs, tokens: usage, costUsd: cost, toolCalls: calls, activations: acts, skillsListed: listed, error: errS } = t;
    const status = str(statusS);
    const head = h('div', 'turn-h',
      h('span', 'turn-n', nTurns > 1 ? 'Turn ' + idx : 'Transcript'),
      status !== 'completed' ? h('span', 'tag ' + (status === 'skipped' ? 'muted' : 'bad'), status) : null,
      h('span', 'muted', fmtMs(durMs) + ' · ' + fmtTokens(usage[0] + usage[1] + usage[2] + usage[3]) + ' tokens' + (cost != null ? ' · ' + fmtUsd(cost) : '')));
    head.lastElementChild?.setAttribute('title', usageTitle(usage));
    const n = h('div', 'turn', head);
    if (nTurns > 1) {
      // The full prompt is at the top of the case; here one line says which turn this is.
      const u = h('div', 'turn-prompt', h('span', 'lbl', 'user'), ' ', str(t.prompt));
      u.title = str(t.prompt);
      n.append(u);
    }
    if (listed && nTurns > 1) n.append(h('div', 'listed muted', 'skills offered to the model: ', listed.length ? listed.map(str).join(', ') : 'none'));
    for (const a of acts) n.append(h('div', 'act', h('span', 'act-i', '⚡'), ' skill activated: ', h('b', null, str(a[0])), h('span', 'muted', ' via ' + str(a[1]))));
    if (calls.length) {
      const list = h('div', 'tools', h('div', 'lbl', calls.length + ' tool call' + (calls.length > 1 ? 's' : '')));
      for (const c of calls) list.append(toolNode(c, acts));
      n.append(list);
    }
    if (errS >= 0) n.append(h('div', 'reason bad', str(errS)));
    else if (reasonS >= 0) n.append(h('div', 'reason', str(reasonS)));
    n.append(h('div', 'say agent', h('div', 'lbl', 'Final answer'), finalS >= 0 && str(finalS) ? h('div', 'pre', str(finalS)) : h('div', 'muted', '(no answer)')));
    return n;
  }

  /** @param {number[]} xs @param {string} [cls] */
  const chips = (xs, cls) => (xs.length ? xs.map((x) => h('span', 'chip' + (cls ? ' ' + cls : ''), str(x))) : h('span', 'muted', 'none'));

  /** @param {Job} j */
  function jobNode(j) {
    const d = j[J_DETAIL];
    const [, attempts, startedS, usage, , finalS, installed, offered, acts, asserts, turns, outDirS, artifacts] = d;
    const st = j[J_STATUS];
    const n = h('div', 'job');
    const meta = h('div', 'jmeta',
      h('span', 'badge s-' + STATUS[st], SYM[st] + ' ' + STATUS[st]),
      kv('time', fmtMs(j[J_MS])),
      kv('tokens', fmtTokens(j[J_TOKENS]), usageTitle(usage)),
      j[J_COST] != null ? kv('cost', j[J_ESTIMATED] ? '~' + fmtUsd(j[J_COST]) + ' (estimated)' : fmtUsd(j[J_COST])) : null,
      attempts > 1 ? kv('attempts', attempts) : null,
      h('span', 'muted', fmtDate(str(startedS))));
    n.append(meta);
    if (j[J_REASON] >= 0) n.append(h('div', 'reason' + (st === 2 ? ' bad' : ''), str(j[J_REASON])));
    n.append(h('div', 'skills',
      h('span', 'k', 'installed'), chips(installed),
      offered ? [h('span', 'k', 'offered'), chips(offered)] : null,
      h('span', 'k', 'activated'), chips(acts.map((/** @type {number[]} */ a) => a[0]), 'skill')));
    const passed = asserts.filter((/** @type {any[]} */ a) => a[1] === 1).length;
    n.append(h('h4', null, 'Assertions ', h('span', 'muted', passed + '/' + asserts.length + ' passed')));
    if (asserts.length) {
      const ul = h('ul', 'asserts');
      for (const a of asserts) {
        ul.append(h('li', a[1] ? 'ok' : 'no',
          h('span', 'mark', a[1] ? '✓' : '✗'),
          h('div', null, h('div', 'atext', str(a[0])), a[2] >= 0 && str(a[2]) ? h('div', 'evidence', str(a[2])) : null)));
      }
      n.append(ul);
    } else n.append(h('p', 'muted', 'No assertions were graded.'));
    if (turns.length) for (const t of turns) n.append(turnNode(t, turns.length));
    else n.append(h('div', 'say agent', h('div', 'lbl', 'Final message'), h('div', 'pre', str(finalS) || '(none)')));
    n.append(h('div', 'jfoot muted', 'folder ', h('code', null, str(outDirS)), artifacts.length ? [' · artifacts ', artifacts.map((/** @type {number} */ a) => h('code', null, str(a)))] : null));
    return n;
  }

  /**
   * One variant's column in a case's details: trial tabs and the selected trial.
   * @param {Case} c @param {number} ei @param {0|1} v @param {number|null} trial
   */
  function variantCol(c, ei, v, trial) {
    const jobs = c.cells[ei][v];
    const col = h('section', 'vcol v' + v);
    col.setAttribute('aria-label', D.e[ei] + ' ' + VNAME[v]);
    const r = rate(jobs);
    col.append(h('header', 'vhead',
      h('span', 'swatch ' + (v ? 'without' : 'with')),
      h('span', 'vname', VNAME[v]),
      h('span', 'vsum', jobs.length ? frac(jobs) + ' passed · ' + fmtPct(r) : 'not run')));
    if (!jobs.length) return col;
    const tabs = h('div', 'tabs');
    tabs.setAttribute('role', 'tablist');
    const pane = h('div', 'pane');
    pane.setAttribute('role', 'tabpanel');
    let sel = Math.max(0, jobs.findIndex((j) => j[J_TRIAL] === trial));
    /** @type {HTMLElement[]} */
    const btns = [];
    /** @param {number} k */
    const select = (k) => {
      sel = k;
      btns.forEach((b, i) => b.setAttribute('aria-selected', String(i === k)));
      pane.replaceChildren(jobNode(jobs[k]));
    };
    jobs.forEach((j, k) => {
      const b = h('button', 'tab s-' + STATUS[j[J_STATUS]], h('span', 'sym', SYM[j[J_STATUS]]), ' run-' + j[J_TRIAL]);
      b.setAttribute('type', 'button');
      b.setAttribute('role', 'tab');
      b.title = jobTitle(j);
      b.addEventListener('click', () => select(k));
      btns.push(b);
      tabs.append(b);
    });
    col.append(tabs, pane);
    select(sel);
    return col;
  }

  /** @param {Case} c @param {{e: number, v: number, t: number}|null} focus */
  function buildDetail(c, focus) {
    const tr = /** @type {HTMLTableRowElement} */ (h('tr', 'detail'));
    const td = /** @type {HTMLTableCellElement} */ (h('td', null));
    td.colSpan = nCols;
    const body = h('div', 'detail-body');
    // The prompt(s): the same for every job of a case; take the job with the most turns.
    /** @type {Job|null} */
    let longest = null;
    for (const byV of c.cells) for (const jobs of byV) for (const j of jobs) if (!longest || turnsOf(j[J_DETAIL]).length > turnsOf(longest[J_DETAIL]).length) longest = j;
    const turns = longest ? turnsOf(longest[J_DETAIL]) : [];
    const prompts = h('div', 'prompts');
    turns.forEach((t) => prompts.append(h('div', 'say user', h('div', 'lbl', turns.length > 1 ? 'Turn ' + t.index + ' · user' : 'Prompt'), h('div', 'pre', str(t.prompt)))));
    body.append(prompts);
    c.cells.forEach((byV, ei) => {
      if (!byV[0].length && !byV[1].length) return;
      if (nE > 1) body.append(h('h3', 'eng-title', D.e[ei]));
      const grid = h('div', 'sbs' + (D.vs.length > 1 ? '' : ' one'));
      for (const v of D.vs) grid.append(variantCol(c, ei, v, focus && focus.e === ei ? focus.t : null));
      body.append(grid);
    });
    td.append(body);
    tr.append(td);
    return tr;
  }

  /** @param {Case} c @param {boolean} open @param {{e: number, v: number, t: number}|null} [focus] */
  function setOpen(c, open, focus) {
    if (!c.row) return;
    if (open && (!c.detail || focus)) {
      const fresh = buildDetail(c, focus || null);
      if (c.detail) c.detail.remove();
      c.detail = fresh;
    }
    c.open = open;
    if (c.detail) {
      if (open) c.row.after(c.detail);
      else c.detail.remove();
    }
    c.row.classList.toggle('open', open);
    c.row.querySelector('.case-btn')?.setAttribute('aria-expanded', String(open));
    try {
      history.replaceState(null, '', open ? '#case=' + encodeURIComponent(c.id) : location.pathname + location.search);
    } catch (_) { /* some file:// contexts refuse; the hash is only a convenience */ }
  }

  tbody.addEventListener('click', (ev) => {
    const t = /** @type {HTMLElement} */ (ev.target);
    const row = /** @type {HTMLElement|null} */ (t.closest('tr.case'));
    if (!row) return;
    if (t.closest('a, input, select')) return;
    if (String(window.getSelection()) && !t.closest('button')) return; // selecting text, not clicking
    const c = cases[Number(row.dataset.i)];
    const sq = /** @type {HTMLElement|null} */ (t.closest('.sq'));
    if (sq) setOpen(c, true, { e: Number(sq.dataset.e), v: Number(sq.dataset.v), t: Number(sq.dataset.t) });
    else setOpen(c, !c.open);
  });

  // ---- filter, search, sort, paging ----
  // Only the first PAGE matching cases are in the table; more come as the reader scrolls to the
  // end (or presses "Show more"). A table of thousands of rows costs the browser seconds of layout.
  const PAGE = 200;
  const state = { status: 'all', scope: 'any', q: '' };
  const q = /** @type {HTMLInputElement} */ (document.getElementById('q'));
  const scopeSel = /** @type {HTMLSelectElement|null} */ (document.getElementById('scope'));
  const seg = /** @type {HTMLElement} */ (document.getElementById('status-filter'));
  const countEl = /** @type {HTMLElement} */ (document.getElementById('case-count'));
  const emptyEl = /** @type {HTMLElement} */ (document.getElementById('empty'));
  const moreEl = /** @type {HTMLElement} */ (document.getElementById('more'));
  const moreBtn = /** @type {HTMLButtonElement} */ (document.getElementById('more-btn'));
  const allBtn = /** @type {HTMLButtonElement} */ (document.getElementById('all-btn'));
  /** Cases in table order (run order until a column is sorted). */
  let order = cases.slice();
  /** Cases that pass the filter, in table order. @type {Case[]} */
  let matching = [];
  /** How many of `matching` are in the table. */
  let shownN = 0;

  /** @param {Case} c */
  const scopeMask = (c) => (state.scope === 'any' ? c.mask[0] | c.mask[1] : c.mask[Number(state.scope)]);
  /** @param {Case} c */
  const matchesQuery = (c) => !state.q || c.lower.indexOf(state.q) >= 0;

  /** Puts matching[from, upTo) into the table (after the rows already there when from > 0). @param {number} upTo */
  function fill(upTo) {
    const from = shownN;
    const n = Math.min(upTo, matching.length);
    const f = document.createDocumentFragment();
    for (let k = from; k < n; k++) {
      const c = matching[k];
      if (!c.row) c.row = buildRow(c);
      f.append(c.row);
      if (c.open && c.detail) f.append(c.detail);
    }
    if (from === 0) tbody.replaceChildren(f);
    else tbody.append(f);
    shownN = Math.max(from, n);
    const left = matching.length - shownN;
    moreEl.hidden = left <= 0;
    moreBtn.textContent = 'Show ' + Math.min(PAGE, left) + ' more';
    allBtn.textContent = 'Show all ' + matching.length;
    moreEl.dataset.left = String(left);
  }

  function apply() {
    const bit = state.status === 'all' ? 0 : 1 << STATUS.indexOf(state.status);
    const counts = [0, 0, 0, 0];
    matching = [];
    for (const c of order) {
      const mq = matchesQuery(c);
      const m = scopeMask(c);
      if (mq) for (let s = 0; s < 4; s++) if (m & (1 << s)) counts[s]++;
      if (mq && (!bit || (m & bit) !== 0)) matching.push(c);
    }
    shownN = 0;
    fill(PAGE);
    tbody.dataset.status = state.status;
    tbody.dataset.scope = state.scope;
    seg.querySelectorAll('button').forEach((b) => {
      b.setAttribute('aria-pressed', String(b.dataset.status === state.status));
      const s = STATUS.indexOf(b.dataset.status || '');
      const n = b.querySelector('.n');
      if (n && s >= 0) n.textContent = String(counts[s]);
    });
    countEl.textContent = matching.length === cases.length ? String(cases.length) : matching.length + ' of ' + cases.length;
    emptyEl.hidden = matching.length > 0;
  }

  moreBtn.addEventListener('click', () => fill(shownN + PAGE));
  allBtn.addEventListener('click', () => fill(matching.length));
  if ('IntersectionObserver' in window) {
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && shownN < matching.length) fill(shownN + PAGE);
    }, { rootMargin: '600px 0px' }).observe(moreEl);
  }

  seg.addEventListener('click', (ev) => {
    const b = /** @type {HTMLElement} */ (ev.target).closest('button');
    if (!b || !b.dataset.status) return;
    state.status = b.dataset.status === state.status ? 'all' : b.dataset.status;
    apply();
  });
  q.addEventListener('input', () => {
    state.q = q.value.trim().toLowerCase();
    apply();
  });
  if (scopeSel) scopeSel.addEventListener('change', () => {
    state.scope = scopeSel.value;
    apply();
  });
  document.addEventListener('keydown', (ev) => {
    const active = document.activeElement;
    if (ev.key === '/' && active !== q && !(active instanceof HTMLInputElement) && !(active instanceof HTMLSelectElement)) {
      ev.preventDefault();
      q.focus();
      q.select();
    } else if (ev.key === 'Escape' && active === q) {
      q.value = '';
      state.q = '';
      apply();
    }
  });

  /** @type {{key: string, dir: number}} */
  const sort = { key: '', dir: 1 };
  /** @param {Case} c @param {string} key */
  function sortValue(c, key) {
    if (key === 'dur') return c.durAll;
    if (key === 'tok') return c.tokAll;
    if (key.indexOf('delta:') === 0) return c.delta[Number(key.slice(6))];
    return null;
  }
  document.querySelectorAll('button.sort').forEach((btn) => {
    const b = /** @type {HTMLElement} */ (btn);
    b.addEventListener('click', () => {
      const key = b.dataset.sort || 'id';
      sort.dir = sort.key === key ? -sort.dir : key === 'id' ? 1 : -1;
      sort.key = key;
      order = cases.slice().sort((a, z) => {
        if (key === 'id') return sort.dir * a.id.localeCompare(z.id, undefined, { numeric: true });
        const va = sortValue(a, key), vz = sortValue(z, key);
        if (va == null && vz == null) return a.i - z.i;
        if (va == null) return 1; // unknown values last, whatever the direction
        if (vz == null) return -1;
        return sort.dir * (va - vz) || a.i - z.i;
      });
      apply();
      document.querySelectorAll('button.sort').forEach((o) => o.parentElement?.removeAttribute('aria-sort'));
      b.parentElement?.setAttribute('aria-sort', sort.dir > 0 ? 'ascending' : 'descending');
    });
  });

  apply();

  // A link to a case (#case=<id>) opens it.
  const m = /^#case=(.+)$/.exec(location.hash);
  if (m) {
    let id = '';
    try { id = decodeURIComponent(m[1]); } catch (_) { /* malformed: ignore */ }
    const c = cases.find((x) => x.id === id);
    if (c) {
      const k = matching.indexOf(c);
      if (k >= shownN) fill(k + 1);
      setOpen(c, true);
      c.row?.scrollIntoView({ block: 'start' });
    }
  }
  document.documentElement.dataset.ready = '1';
})();
