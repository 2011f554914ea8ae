// The dashboard of sluice serve. Everything shown comes from GET /v1/dashboard, polled; every
// string from the service is put in the page with textContent, never parsed as HTML: keys and rule
// names are data a client chose. The admin token stays in this tab's sessionStorage and travels
// only in the Authorization header.
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const COLOURS = ['#2e9d4b', '#c0392b', '#d68910', '#7d3c98'];
  const TOKEN_KEY = 'sluice.adminToken';
  let pollMillis = 2000;
  let timer = null;
  let updates = 0;
  let inFlight = false;

  const $ = (id) => document.getElementById(id);
  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function authHeaders() {
    const t = token();
    return t ? { Authorization: 'Bearer ' + t } : {};
  }

  function duration(ms) {
    if (ms % 86400000 === 0) return ms / 86400000 + 'd';
    if (ms % 3600000 === 0) return ms / 3600000 + 'h';
    if (ms % 60000 === 0) return ms / 60000 + 'm';
    if (ms % 1000 === 0) return ms / 1000 + 's';
    return ms + 'ms';
  }

  function windows(ws) {
    return ws.map((w) => w.limit + '/' + duration(w.periodMs)).join(', ');
  }

  function sparkline(series, bucketSeconds) {
    const w = 240, h = 36;
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('width', w);
    svg.setAttribute('height', h);
    svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    const bg = document.createElementNS(SVG, 'rect');
    bg.setAttribute('width', w);
    bg.setAttribute('height', h);
    bg.setAttribute('fill', '#fafafa');
    bg.setAttribute('stroke', '#ddd');
    svg.appendChild(bg);
    let max = 0;
    for (const b of series) for (let i = 0; i < 4; i++) max = Math.max(max, b[i]);
    const title = document.createElementNS(SVG, 'title');
    title.textContent = 'peak ' + (max / bucketSeconds).toFixed(1) + '/s per outcome';
    svg.appendChild(title);
    if (max === 0) return svg;
    const n = series.length;
    for (let i = 0; i < 4; i++) {
      let any = false;
      const pts = series.map((b, j) => {
        if (b[i] > 0) any = true;
        return (j * (w - 2) / (n - 1) + 1).toFixed(1) + ',' + (h - 2 - b[i] * (h - 4) / max).toFixed(1);
      });
      if (!any) continue;
      const line = document.createElementNS(SVG, 'polyline');
      line.setAttribute('fill', 'none');
      line.setAttribute('stroke', COLOURS[i]);
      line.setAttribute('stroke-width', '1.5');
      line.setAttribute('points', pts.join(' '));
      svg.appendChild(line);
    }
    return svg;
  }

  function ratio(t) {
    const all = t.allowed + t.denied;
    return all === 0 ? '–' : (100 * t.denied / all).toFixed(1) + '%';
  }

  function countCells(tr, t) {
    tr.appendChild(el('td', t.allowed, 'allowed'));
    tr.appendChild(el('td', t.denied, 'denied'));
    tr.appendChild(el('td', t.shadowDenied, 'shadow-denied'));
    tr.appendChild(el('td', t.degraded, 'degraded'));
    const near = t.allowed === 0 ? '–' : (100 * t.nearLimit / t.allowed).toFixed(1) + '%';
    const nc = el('td', near, 'near-limit');
    nc.title = t.nearLimit + ' admitted near the limit';
    tr.appendChild(nc);
    tr.appendChild(el('td', ratio(t), 'deny-ratio'));
  }

  function renderRules(d) {
    const body = $('rules').tBodies[0];
    const rows = [];
    for (const r of d.rules.items) {
      const tr = el('tr');
      tr.dataset.rule = r.name;
      tr.appendChild(el('td', r.name + (r.shadow ? ' (shadow)' : ''), 'text name'));
      const wc = el('td', windows(r.windows) + ' ' + r.algorithm, 'text');
      if (r.allowList || r.denyList) wc.textContent += ' · lists: allow ' + r.allowList + ', deny ' + r.denyList;
      tr.appendChild(wc);
      tr.appendChild(el('td', r.source || '', 'text source'));
      countCells(tr, r.totals);
      const sc = el('td');
      sc.appendChild(sparkline(r.series, d.bucketSeconds));
      tr.appendChild(sc);
      rows.push(tr);
    }
    const o = d.rules.others;
    if (o.rules > 0) {
      const tr = el('tr', null, 'others');
      tr.appendChild(el('td', o.rules + ' other rules', 'text name'));
      tr.appendChild(el('td', ''));
      tr.appendChild(el('td', ''));
      countCells(tr, o.totals);
      const sc = el('td');
      sc.appendChild(sparkline(o.series, d.bucketSeconds));
      tr.appendChild(sc);
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    $('rule-count').textContent = d.rules.matching + ' of ' + d.rules.inForce + ' rules match; the '
      + d.rules.items.length + ' busiest shown' + (d.rules.truncated ? ' (truncated to the answer\'s bound)' : '');
    $('range').textContent = 'last ' + (d.buckets * d.bucketSeconds / 60) + ' min, ' + d.bucketSeconds + '-s buckets';
    const t = d.totals;
    $('totals').replaceChildren(
      el('span', 'allowed ' + t.allowed, 'total-allowed'), el('span', ' · '),
      el('span', 'denied ' + t.denied, 'total-denied'), el('span', ' · '),
      el('span', 'shadow-denied ' + t.shadowDenied), el('span', ' · '),
      el('span', 'degraded ' + t.degraded), el('span', ' · '),
      el('span', 'deny ratio ' + ratio(t)));
  }

  function control(label, onClick) {
    const b = el('button', label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  function path(prefix, rule, key) {
    return prefix + encodeURIComponent(rule) + '/' + encodeURIComponent(key);
  }

  async function act(method, url, body, what) {
    const out = $('action-result');
    out.className = 'meta';
    out.textContent = what + '…';
    try {
      const headers = authHeaders();
      if (body) headers['Content-Type'] = 'application/json';
      const r = await fetch(url, { method, headers, body: body ? JSON.stringify(body) : undefined,
        credentials: 'omit', cache: 'no-store' });
      if (r.ok) {
        out.className = 'good';
        out.textContent = what + ': done';
      } else {
        let msg = r.statusText;
        try { msg = (await r.json()).error.message; } catch (e) { /* not JSON */ }
        out.className = 'bad';
        out.textContent = what + ': refused (' + r.status + ') ' + msg;
      }
    } catch (e) {
      out.className = 'bad';
      out.textContent = what + ': failed, ' + e.message;
    }
    poll();
  }

  function renderKeys(d) {
    const keys = d.keys;
    const visible = d.admin.keysVisible && keys && !keys.error;
    $('keys').classList.toggle('hidden', !visible);
    if (!d.admin.keysVisible) {
      $('keys-note').textContent = d.admin.enabled
        ? 'Top denied keys, bans, live limits and access lists name keys: they are shown with the admin token, as the admin API shows them.'
        : 'The admin API is off (the service listens beyond loopback without an admin token): keys are not shown.';
      return;
    }
    if (!keys) {
      $('keys-note').textContent = 'This store keeps no policies.';
      return;
    }
    if (keys.error) {
      $('keys-note').textContent = 'Keys unavailable: ' + keys.error;
      return;
    }
    $('keys-note').textContent = '';
    const controls = d.admin.enabled;
    const top = [];
    for (const t of keys.topDenied) {
      const tb = el('table');
      tb.dataset.rule = t.rule;
      const hr = el('tr');
      hr.appendChild(el('th', t.rule));
      hr.appendChild(el('th', 'denials (5 min)'));
      tb.appendChild(hr);
      for (const k of t.items) {
        const tr = el('tr');
        tr.appendChild(el('td', k.key, 'key'));
        tr.appendChild(el('td', k.denials + (k.error ? ' ±' + k.error : '')));
        tb.appendChild(tr);
      }
      top.push(tb);
    }
    if (top.length === 0) top.push(el('p', 'No denials yet.', 'meta'));
    $('top').replaceChildren(...top);
    $('bans').tBodies[0].replaceChildren(...keys.bans.items.map((b) => {
      const tr = el('tr');
      tr.dataset.rule = b.rule;
      tr.dataset.key = b.key;
      tr.appendChild(el('td', b.rule, 'text'));
      tr.appendChild(el('td', b.key, 'key'));
      tr.appendChild(el('td', b.until, 'text'));
      tr.appendChild(el('td', b.automatic ? 'automatic' : 'manual', 'text'));
      const c = el('td');
      if (controls) c.appendChild(control('Unban', () => act('DELETE', path('/v1/bans/', b.rule, b.key), null, 'Unban')));
      tr.appendChild(c);
      return tr;
    }));
    $('bans-more').textContent = keys.bans.items.length === 0 ? 'No bans.'
      : keys.bans.more ? 'More bans: GET /v1/bans lists them all.' : '';
    $('limits').tBodies[0].replaceChildren(...keys.limits.items.map((l) => {
      const tr = el('tr');
      tr.dataset.rule = l.rule;
      tr.dataset.key = l.key;
      tr.appendChild(el('td', l.rule, 'text'));
      tr.appendChild(el('td', l.key, 'key'));
      tr.appendChild(el('td', l.tier ? 'tier ' + l.tier : windows(l.windows), 'text'));
      const c = el('td');
      if (controls) {
        c.appendChild(control('Remove', () => act('DELETE', path('/v1/limits/', l.rule, l.key), null, 'Remove live limit')));
      }
      tr.appendChild(c);
      return tr;
    }));
    $('limits-more').textContent = keys.limits.items.length === 0 ? 'No live limits.'
      : keys.limits.more ? 'More live limits: GET /v1/limits lists them all.' : '';
    $('entries').tBodies[0].replaceChildren(...keys.listEntries.items.map((e) => {
      const tr = el('tr');
      tr.dataset.rule = e.rule;
      tr.dataset.list = e.list;
      tr.dataset.entry = e.entry;
      tr.appendChild(el('td', e.rule, 'text'));
      tr.appendChild(el('td', e.list, 'text'));
      tr.appendChild(el('td', e.entry, 'key'));
      const c = el('td');
      if (controls) {
        c.appendChild(control('Remove', () => act('DELETE', path('/v1/lists/' + e.list + '/', e.rule, e.entry), null,
          'Remove list entry')));
      }
      tr.appendChild(c);
      return tr;
    }));
    $('entries-more').textContent = keys.listEntries.items.length === 0 ? 'No entries added at run time.'
      : keys.listEntries.more ? 'More entries: GET /v1/lists/allow and GET /v1/lists/deny list them all.' : '';
  }

  function renderLists(d) {
    const lists = d.lists;
    if (!lists) return;
    $('lists').tBodies[0].replaceChildren(...lists.items.map((l) => {
      const tr = el('tr');
      tr.dataset.rule = l.rule;
      tr.dataset.list = l.list;
      tr.appendChild(el('td', l.rule, 'text'));
      tr.appendChild(el('td', l.list, 'text'));
      tr.appendChild(el('td', l.entries.join(', ') + (l.more > 0 ? ' … and ' + l.more + ' more' : ''), 'key'));
      return tr;
    }));
    $('lists-more').textContent = (lists.items.length === 0 ? 'No configured list in the rules shown. ' : '')
      + (lists.truncated ? 'Cut to the answer\'s bound. ' : '')
      + 'Entries added at run time are listed below.';
  }

  function renderLeases(d) {
    const l = d.leases;
    const body = $('leases').tBodies[0];
    const note = $('leases-note');
    note.className = 'meta';
    if (!l || l.leasedRules === 0) {
      body.replaceChildren();
      $('leases').classList.add('hidden');
      note.textContent = 'No rule is leased (mode: leased): every key is decided by the store.';
      return;
    }
    if (!d.admin.keysVisible || l.rules === undefined) {
      body.replaceChildren();
      $('leases').classList.add('hidden');
      if (l.error) {
        note.className = 'bad';
        note.textContent = 'Leases unavailable: ' + l.error;
      } else {
        note.textContent = l.leasedRules + ' leased rule(s). Leased keys are shown with the admin token, as GET /v1/leases shows them.';
      }
      return;
    }
    $('leases').classList.remove('hidden');
    const leader = l.leader ? 'leader ' + l.leader.instance + (l.leader.self ? ' (this instance)' : '')
      + ', term left ' + Math.round(l.leader.termLeftMs / 1000) + ' s' : 'no leader';
    note.textContent = l.leasedRules + ' leased rule(s); ' + leader + '; ' + l.instances
      + ' instance(s) reporting. Counts are this instance\'s last report'
      + (l.reported ? ' (' + l.intervalMs + ' ms).' : ': none read yet.')
      + (l.partial ? ' Not every report was read.' : '') + (l.truncated ? ' Cut to the answer\'s bound.' : '');
    const rows = [];
    for (const r of l.rules) {
      if (r.keys.length === 0) {
        const tr = el('tr');
        tr.dataset.rule = r.name;
        tr.appendChild(el('td', r.name, 'text'));
        const c = el('td', 'no key leased here', 'text meta');
        c.colSpan = 6;
        tr.appendChild(c);
        rows.push(tr);
      }
      for (const k of r.keys) {
        const tr = el('tr');
        tr.dataset.rule = r.name;
        tr.dataset.key = k.key;
        tr.appendChild(el('td', r.name, 'text'));
        tr.appendChild(el('td', k.key, 'key'));
        tr.appendChild(el('td', k.held, 'held'));
        tr.appendChild(el('td', k.sizeInUse, 'size'));
        tr.appendChild(el('td', k.admitted));
        tr.appendChild(el('td', k.sentToStore));
        tr.appendChild(el('td', k.budget));
        rows.push(tr);
      }
      if (r.keysReported > r.keys.length) {
        const tr = el('tr', null, 'others');
        tr.appendChild(el('td', r.name, 'text'));
        const c = el('td', 'and ' + (r.keysReported - r.keys.length) + ' more keys (' + r.unitsHeld
          + ' units held in all): GET /v1/leases?rule=' + r.name, 'text meta');
        c.colSpan = 6;
        tr.appendChild(c);
        rows.push(tr);
      }
    }
    body.replaceChildren(...rows);
  }

  function age(ms) {
    return ms < 1000 ? ms + ' ms ago' : (ms / 1000).toFixed(1) + ' s ago';
  }

  function renderFleet(d) {
    const f = d.fleet;
    $('fleet-section').classList.toggle('hidden', !f);
    if (!f) return;
    const note = $('fleet-note');
    const body = $('fleet').tBodies[0];
    if (f.error) {
      note.replaceChildren(el('span', 'Fleet unavailable: ' + f.error, 'bad'));
      body.replaceChildren();
      return;
    }
    note.replaceChildren(el('span', f.live + (f.live === 1 ? ' live instance' : ' live instances'), 'fleet-live'),
      el('span', ' on this store (a heartbeat within the last 3 s).', 'meta'));
    $('fleet').classList.toggle('hidden', !f.instances);
    if (!f.instances) {
      body.replaceChildren();
      $('fleet-more').textContent = 'Instance ids are shown with the admin token.';
      return;
    }
    body.replaceChildren(...f.instances.map((i) => {
      const tr = el('tr', null, i.self ? 'self' : null);
      tr.dataset.instance = i.id;
      tr.appendChild(el('td', i.id + (i.self ? ' (this instance)' : ''), 'text'));
      tr.appendChild(el('td', age(i.lastHeartbeatAgeMs)));
      return tr;
    }));
    $('fleet-more').textContent = f.more > 0 ? 'and ' + f.more + ' more' : '';
  }

  function renderConfig(d) {
    const c = d.config;
    const p = $('config');
    p.replaceChildren(el('span', 'Configuration ' + c.generation + ', loaded ' + c.loadedAt + ' from ' + c.files
      + ' file(s). Last reload: '));
    if (c.lastReloadOk) {
      p.appendChild(el('span', 'ok', 'good'));
    } else {
      p.appendChild(el('span', 'rejected at ' + c.lastErrorAt + ': ' + c.lastError + ' (the previous configuration stays in force)', 'bad'));
    }
    $('sources').tBodies[0].replaceChildren(...c.sources.map((s) => {
      const tr = el('tr');
      tr.appendChild(el('td', s.file, 'text'));
      tr.appendChild(el('td', s.format));
      tr.appendChild(el('td', s.rules));
      return tr;
    }));
  }

  function renderStore(d) {
    const s = d.store;
    const p = $('store');
    p.replaceChildren();
    if (s.failing !== undefined) {
      p.appendChild(s.failing
        ? el('span', 'failing for ' + s.failingForMs + ' ms (' + s.failedCalls + ' failed calls)', 'bad')
        : el('span', 'healthy', 'good'));
      p.appendChild(el('span', ' · '));
    }
    p.appendChild(el('span', 'latency per decision: mean ' + s.meanLatencyMicros + ' µs, recent max '
      + s.maxLatencyMicros + ' µs over ' + s.timedDecisions + ' decisions'));
  }

  function renderAdmin(d) {
    const a = d.admin;
    $('admin-controls').classList.toggle('hidden', !a.enabled);
    $('admin-note').textContent = !a.enabled
      ? 'The admin API is off: the service listens beyond loopback without an admin token. Nothing here can change state.'
      : a.needsToken
        ? (token() ? 'Admin token set for this tab.' : 'Read-only: type the admin token to see keys and to use the controls.')
        : 'No admin token is configured: the admin API is open to this host (loopback).';
  }

  async function poll() {
    if (inFlight) return;
    inFlight = true;
    clearTimeout(timer);
    try {
      const f = $('filter').value;
      const r = await fetch('/v1/dashboard' + (f ? '?rule=' + encodeURIComponent(f) : ''),
        { headers: authHeaders(), credentials: 'omit', cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      const d = await r.json();
      pollMillis = d.pollMillis || pollMillis;
      renderAdmin(d);
      renderRules(d);
      renderKeys(d);
      renderLists(d);
      renderLeases(d);
      renderFleet(d);
      renderConfig(d);
      renderStore(d);
      updates++;
      document.body.dataset.updates = String(updates);
      $('status').className = 'meta';
      $('status').textContent = 'updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      $('status').className = 'bad';
      $('status').textContent = 'service unreachable: ' + e.message;
    } finally {
      inFlight = false;
      timer = setTimeout(poll, pollMillis);
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('token').value = token();
    $('token-save').addEventListener('click', () => {
      sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
      poll();
    });
    $('token-forget').addEventListener('click', () => {
      sessionStorage.removeItem(TOKEN_KEY);
      $('token').value = '';
      poll();
    });
    $('ban-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const rule = $('ban-rule').value.trim();
      const key = $('ban-key').value;
      if (!rule || !key) {
        $('action-result').textContent = 'Ban: give a rule and a key';
        return;
      }
      act('PUT', path('/v1/bans/', rule, key), { for: $('ban-for').value.trim() }, 'Ban');
    });
    let debounce = null;
    $('filter').addEventListener('input', () => {
      clearTimeout(debounce);
      debounce = setTimeout(poll, 300);
    });
    poll();
  });
})();
