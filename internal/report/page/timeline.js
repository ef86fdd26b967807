// The leasecheck timeline: draws the data embedded in #data (written by
// package report) onto a canvas. Every string in the data is user data
// (process names, values, stories): it reaches the page only through
// textContent, canvas text and attribute-free DOM nodes, never as markup.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('data').textContent);
  var $ = function (id) { return document.getElementById(id); };
  var KIND = ['', 'acquire', 'renew', 'release', 'write', 'read'];
  var KCOL = ['#718096', '#2b6cb0', '#6b46c1', '#4a5568', '#2f855a', '#b7791f'];
  var PAL = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#c9a227', '#9c755f', '#5f9ea0'];
  var VIOL = '#d0021b';
  var F_RET = 1, F_OK = 2, F_AT = 4, F_VAL = 8, F_APPLIED = 16;
  var GUTTER = 150, RH_PROC = 78, RH_TERMS = 46, RH_LANE = 36;
  // A process row, top to bottom: faults, op bars, two lines of op labels, beliefs.
  var P_FAULT = 3, P_FAULT_H = 12, P_OP = 18, P_OP_H = 20, P_LABEL = [46, 58], P_BELIEF = 66, P_BELIEF_H = 9;
  // Every time on the page is in ms, as the stories and explanations say
  // it (internal/timefmt): a history in ms keeps its numbers, any other
  // unit is converted to ms at the history's own precision (µs: three
  // decimals). unit is the history's own, named once in the header.
  var unit = D.unit || 'ms', U = D.uncertainty;
  var DIV = unit === 'us' ? 1000 : unit === 'ns' ? 1000000 : 1, MUL = unit === 's' ? 1000 : 1;
  var base = D.base === '0' ? null : D.base;

  // ---- decode the columns ----
  var N = D.ops.n, C = D.ops;
  ['key', 'ret', 'at', 'fence', 'ttl', 'val', 'err'].forEach(function (c) { if (!C[c]) C[c] = new Int32Array(N); }); // all-zero columns are left out
  var oLine = new Float64Array(N), oProc = new Int32Array(N), oKey = new Int32Array(N), oKind = new Int8Array(N);
  var oCall = new Float64Array(N), oRet = new Float64Array(N), oAt = new Float64Array(N), oFence = new Float64Array(N);
  var oTTL = new Float64Array(N), oFlags = new Int8Array(N), oVal = new Int32Array(N), oErr = new Int32Array(N);
  var oOwner = C.owner ? new Int32Array(N) : null;
  var acc = 0, accL = 0, i, j;
  for (i = 0; i < N; i++) {
    accL += C.line[i]; oLine[i] = accL;
    acc += C.call[i]; oCall[i] = acc;
    oProc[i] = C.proc[i]; oKey[i] = C.key[i]; oKind[i] = C.kind[i];
    oFlags[i] = C.flags[i];
    oRet[i] = (C.flags[i] & F_RET) ? acc + C.ret[i] : NaN;
    oAt[i] = (C.flags[i] & F_AT) ? acc + C.at[i] : NaN;
    oFence[i] = C.fence[i]; oTTL[i] = C.ttl[i]; oVal[i] = C.val[i]; oErr[i] = C.err[i];
    if (oOwner) oOwner[i] = C.owner[i];
  }
  var S = D.strs;
  function ownerOf(i) { return oOwner ? S[oOwner[i]] : D.procs[oProc[i]][1]; }
  function procName(p) { return D.procs[p][0]; }

  // ---- numbers and words ----
  function grp(n) {
    var s = String(Math.abs(n)), out = '';
    if (s.indexOf('e') >= 0 || s.indexOf('.') >= 0 || s.length < 5) return (n < 0 ? '-' : '') + s;
    for (var k = 0; k < s.length; k++) { if (k > 0 && (s.length - k) % 3 === 0) out += ','; out += s[k]; }
    return (n < 0 ? '-' : '') + out;
  }
  function msNum(n) { // n (in the history's unit) in ms, without a unit, as timefmt.Times.Num
    n = Math.round(n);
    if (MUL !== 1) return String(n * MUL);
    if (DIV === 1) return String(n);
    var a = Math.abs(n), f = a % DIV, s = String((a - f) / DIV);
    if (f) s += '.' + String(f + DIV).slice(1).replace(/0+$/, '');
    return (n < 0 ? '-' : '') + s;
  }
  function msBig(b) { // msNum of a BigInt (times since 1970 in ns are past 2^53)
    if (MUL !== 1) return (b * BigInt(MUL)).toString();
    if (DIV === 1) return b.toString();
    var neg = b < BigInt(0), a = neg ? -b : b, d = BigInt(DIV), f = a % d, s = (a / d).toString();
    if (f > BigInt(0)) s += '.' + (f + d).toString().slice(1).replace(/0+$/, '');
    return (neg ? '-' : '') + s;
  }
  function abs(t) { // a time in ms, without the unit
    if (base === null) return msNum(t);
    return msBig(BigInt(base) + BigInt(Math.round(t)));
  }
  function T(t) { return abs(t) + ' ms'; }
  function dur(d) { return msNum(d) + ' ms'; } // a duration (a TTL, the clock uncertainty, a clock fault's amount)
  function win(lo, hi) { return lo === hi ? abs(lo) : abs(lo) + '…' + abs(hi); }
  function plural(n, w) { return grp(n) + ' ' + w + (n === 1 ? '' : 's'); }
  function q(s) { return JSON.stringify(s); }

  function describe(i) { // as model.Op.DescribeInUnit
    var k = oKind[i], f = oFlags[i], owner = ownerOf(i), p = procName(oProc[i]);
    var s = owner + (p !== owner ? '(' + p + ')' : '') + ' ' + KIND[k] + '(';
    var args = [];
    if (k === 1 || k === 2) args.push('ttl=' + msNum(oTTL[i]) + (unit === 'ms' ? '' : 'ms'));
    if ((k === 2 || k === 3) && oFence[i]) args.push('fence=' + oFence[i]);
    if (k === 4) { if (oFence[i]) args.push('fence=' + oFence[i]); args.push(q(S[oVal[i] - 1] || '')); }
    s += args.join(', ') + ')';
    if (!(f & F_RET)) s += ' -> ? (no response)';
    else if (!(f & F_OK)) s += ' -> failed' + (oErr[i] ? ' (' + S[oErr[i] - 1] + ')' : '');
    else if (k === 1) s += ' -> ok fence=' + oFence[i];
    else if (k === 5) s += (f & F_VAL) ? ' -> ' + q(S[oVal[i] - 1]) : ' -> nothing';
    else s += ' -> ok';
    var sfx = unit === 'ms' ? '' : 'ms';
    s += (f & F_RET) ? ' [' + abs(oCall[i]) + ',' + abs(oRet[i]) + ']' + sfx : ' [' + abs(oCall[i]) + ',-]' + sfx;
    if (f & F_AT) s += ' at=' + abs(oAt[i]) + sfx;
    return s;
  }
  function shortLabel(i) {
    var k = oKind[i], f = oFlags[i], s = KIND[k];
    if (k === 1 && (f & F_OK)) s += ' → f' + oFence[i];
    if (k === 4) s += ' f' + oFence[i] + ' ' + q(S[oVal[i] - 1] || '');
    if (k === 5 && (f & F_RET) && (f & F_OK)) s += (f & F_VAL) ? ' ' + q(S[oVal[i] - 1]) : ' ∅';
    if (!(f & F_RET)) s += ' ?';
    else if (!(f & F_OK)) s += ' ✗' + (oErr[i] ? ' ' + S[oErr[i] - 1] : '');
    return s;
  }
  function outcome(i) {
    var f = oFlags[i];
    if (!(f & F_RET)) return (f & F_APPLIED) ? 'no response — the linearization applies it' : 'no response: it may or may not have taken effect';
    if (!(f & F_OK)) return 'refused' + (oErr[i] ? ' (' + S[oErr[i] - 1] + ')' : '');
    return 'ok';
  }

  // ---- derived data ----
  var procOps = D.procs.map(function () { return []; });
  for (i = 0; i < N; i++) procOps[oProc[i]].push(i);
  var tMin = Infinity, tMax = -Infinity;
  function see(t) { if (isFinite(t)) { if (t < tMin) tMin = t; if (t > tMax) tMax = t; } }
  for (i = 0; i < N; i++) { see(oCall[i]); see(oRet[i]); see(oAt[i]); if (U && !(oFlags[i] & F_AT)) { see(oCall[i] - U); see(oRet[i] + U); } }
  var prevStart = 0;
  var terms = D.terms.map(function (a) { // times: the start's change from the previous term's, the rest from the start
    var s0 = prevStart + a[3]; prevStart = s0;
    var t = { key: a[0], owner: S[a[1]], fence: a[2], s0: s0, s1: s0 + a[4], g0: s0 + a[5], g1: s0 + a[6], e0: s0 + a[7], e1: s0 + a[8],
      cause: ['expiry', 'release', 'next grant'][a[9]], lin: a[10] === 1, grant: a[11], release: a[12], renewals: a[13], lastRenew: a[14] };
    see(t.s0); see(t.e1); see(t.g1);
    return t;
  });
  terms.forEach(function (t, k) { t.idx = k; });
  var beliefs = D.beliefs.map(function (a) { see(a[2]); see(a[3]); return { proc: a[0], fence: a[1], from: a[2], to: a[3], open: a[4] === 1 }; });
  D.faults.forEach(function (f, k) { f.idx = k; see(f.start); if (f.end !== undefined) see(f.end); });
  D.violations.forEach(function (v, k) { v.idx = k; if (!v.ops.length) { see(v.from); see(v.to); } });
  if (!isFinite(tMin)) { tMin = 0; tMax = 10; }
  if (tMax - tMin < 4) tMax = tMin + 4;
  // Where each op's bar ends: its return; for an op that never returned, the
  // process's next call (it went on) or the end of the history.
  var oEnd = new Float64Array(N);
  procOps.forEach(function (list) {
    for (var k = 0; k < list.length; k++) {
      var o = list[k], end = oRet[o];
      if (isNaN(end)) {
        end = k + 1 < list.length ? Math.max(oCall[list[k + 1]], oCall[o]) : tMax;
        if (end <= oCall[o]) end = oCall[o];
      }
      if (!isNaN(oAt[o])) end = Math.max(end, oAt[o]);
      oEnd[o] = end;
    }
  });
  // per process: ops sorted by call, and the running maximum of their ends, for culling
  var procMaxEnd = procOps.map(function (list) {
    list.sort(function (a, b) { return oCall[a] - oCall[b] || a - b; });
    var m = new Float64Array(list.length), run = -Infinity;
    for (var k = 0; k < list.length; k++) { run = Math.max(run, oEnd[list[k]]); m[k] = run; }
    return m;
  });
  var callsByKey = {};
  function callsOfKey(k) { // the calls of one key's ops, sorted
    if (!callsByKey[k]) {
      var c = []; for (var n = 0; n < N; n++) if (oKey[n] === k) c.push(oCall[n]);
      callsByKey[k] = Float64Array.from(c).sort();
    }
    return callsByKey[k];
  }
  var involved = new Map(); // op -> violation indices
  D.violations.forEach(function (v) { v.ops.forEach(function (o) { if (!involved.has(o)) involved.set(o, []); involved.get(o).push(v.idx); }); });
  var lins = {}; D.lin.forEach(function (l) { var acc2 = 0; l.steps = l.steps.map(function (d) { acc2 += d; return acc2; }); lins[l.key] = l; });
  var stepOf = {}; // key -> Map(op -> step number)
  function stepsOfKey(k) {
    if (!stepOf[k]) { var m = new Map(); if (lins[k]) lins[k].steps.forEach(function (o, n) { m.set(o, n); }); stepOf[k] = m; }
    return stepOf[k];
  }

  // ---- rows ----
  var rows = [];
  rows.push({ type: 'terms', h: RH_TERMS });
  D.lanes.forEach(function (name, k) { rows.push({ type: 'lane', lane: k, name: name, h: RH_LANE }); });
  D.procs.forEach(function (p, k) { rows.push({ type: 'proc', proc: k, name: p[0], owner: p[1], h: RH_PROC }); });
  var y = 0;
  rows.forEach(function (r) { r.y = y; y += r.h; });
  var rowsH = y;
  // The terms lane and the fault lanes of the coordinator, resource and
  // server stay pinned at the top; the process rows scroll under them.
  var pinnedH = 0; rows.forEach(function (r) { if (r.type !== 'proc') { r.pinned = true; pinnedH = r.y + r.h; } });
  var procRow = {}; rows.forEach(function (r, k) { if (r.type === 'proc') procRow[r.proc] = k; });
  var faultsOnProc = D.procs.map(function () { return []; }), faultsOnLane = D.lanes.map(function () { return []; });
  D.faults.forEach(function (f) { if (f.lane !== undefined) faultsOnLane[f.lane].push(f); else f.procs.forEach(function (p) { faultsOnProc[p].push(f); }); });
  var beliefsOn = D.procs.map(function () { return []; });
  beliefs.forEach(function (b) { if (beliefsOn[b.proc]) beliefsOn[b.proc].push(b); });

  // ---- state ----
  var st = { v0: tMin, v1: tMax, key: 0, cur: D.violations.length ? 0 : -1, sel: null, hover: null, linAnchor: null };
  var axis = $('axis'), cv = $('cv'), scroll = $('scroll'), ax = axis.getContext('2d'), cx = cv.getContext('2d');
  var W = 800, H = 300, dpr = 1, marks = [], axisLabels = [];
  function plotW() { return Math.max(50, W - GUTTER - 8); }
  function X(t) { return GUTTER + (t - st.v0) * plotW() / (st.v1 - st.v0); }
  function Tx(x) { return st.v0 + (x - GUTTER) * (st.v1 - st.v0) / plotW(); }

  // ---- header and side panels (text only) ----
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  $('title').textContent = D.title;
  var nAt = 0; for (i = 0; i < N; i++) if (oFlags[i] & F_AT) nAt++;
  var mode = nAt === N ? 'exact mode (every op carries at)' : nAt === 0 ? 'interval mode (no at: the clock is known within [call−u, return+u])' : 'exact where at was recorded, interval elsewhere';
  $('summary').textContent = [plural(D.total, 'operation'), plural(D.procs.length, 'process').replace('processs', 'processes'), plural(D.keys.length, 'key'),
    'times in ms' + (unit === 'ms' ? '' : ' (recorded in ' + (unit === 'us' ? 'µs' : unit) + ')'), 'clock uncertainty u = ' + dur(U), D.semantics + ' semantics', D.fences + ' fences', mode].join(' · ');
  D.properties.forEach(function (p) {
    var mark = p[1] === 'holds' ? '✓ ' : p[1] === 'violated' ? '✗ ' : '? ';
    $('verdicts').appendChild(el('span', p[1], mark + p[0] + ' ' + p[1]));
  });
  var runProps = [];
  D.violations.forEach(function (v) { if (v.run && runProps.indexOf(v.property) < 0) runProps.push(v.property); });
  runProps.forEach(function (p) { $('verdicts').appendChild(el('span', 'violated', '✗ ' + p + ' violated (run property)')); });
  if (!D.properties.length && !runProps.length) $('verdicts').appendChild(el('span', 'unknown', 'not checked: the history alone'));
  if (D.replay) { $('replaycmd').textContent = D.replay; $('replay').hidden = false; }
  if (D.params && D.params.length) {
    const ul = $('params');
    for (const l of D.params) { const li = document.createElement('li'); li.textContent = l; ul.appendChild(li); }
    ul.hidden = false;
  }
  if (D.secondary && !/^\s*[a-z][a-z0-9+.-]*:/i.test(D.secondary.replace(/^(https?|file):/i, ''))) {
    var a = el('a', '', 'porcupine’s view of the same history'); a.href = D.secondary;
    $('secondary').appendChild(el('span', 'muted', 'Also: ')); $('secondary').appendChild(a); $('secondary').hidden = false;
  }
  if (D.omitted) { $('omitted').textContent = D.omitted.text; $('omitted').hidden = false; }
  if (D.keys.length > 1) {
    D.keys.forEach(function (k, n) { var o = el('option', '', q(k)); o.value = String(n); $('keysel').appendChild(o); });
    $('keylabel').hidden = false;
    $('keysel').addEventListener('change', function () { setKey(+this.value); draw(); });
  }

  function faultLabel(f) {
    var s = f.kind;
    if (f.amount) {
      if (f.kind === 'clock-drift') s += ' ' + f.amount + ' ppm';
      else s += ' ' + (f.amount > 0 && /clock/.test(f.kind) ? '+' : '') + dur(f.amount);
    }
    return s;
  }
  function faultText(f) {
    var s = faultLabel(f) + ' on ' + f.target + (f.peer ? ' (from ' + f.peer + ')' : '') + ', t = ' +
      (f.end !== undefined ? abs(f.start) + '–' + T(f.end) : T(f.start));
    if (f.partial) s += ', partly applied';
    if (f.detail) s += ': ' + f.detail;
    if (f.line) s += ' (line ' + f.line + ')';
    return s;
  }

  var cards = [];
  (function buildCards() {
    var list = $('vlist');
    $('vhead').textContent = D.violations.length ? 'Violations (' + D.violations.length + ')' : 'Violations';
    if (!D.violations.length) {
      list.appendChild(el('p', 'ok-note', D.properties.length ? 'No property is violated.' : 'No check was run: the page shows the history alone.'));
    }
    D.violations.forEach(function (v) {
      var c = el('div', 'card'); c.id = 'v' + v.idx;
      var hd = el('div', 'vh'); hd.appendChild(el('span', 'num', String(v.idx + 1))); hd.appendChild(document.createTextNode(v.property + (v.run ? ' (run property)' : '')));
      c.appendChild(hd);
      var meta = [];
      if (v.key !== undefined && (D.keys.length > 1 || v.key !== '')) meta.push('key ' + q(v.key));
      if (v.lines.length) meta.push((v.lines.length === 1 ? 'line ' : 'lines ') + v.lines.join(', '));
      meta.push('t = ' + (v.from === v.to ? T(v.from) : abs(v.from) + '–' + T(v.to)));
      c.appendChild(el('div', 'meta', meta.join(' · ')));
      c.appendChild(el('p', 'story', v.story));
      if (v.faults.length) c.appendChild(el('p', 'during', 'Faults at the time: ' + v.faults.map(function (k) { return faultText(D.faults[k]); }).join('; ')));
      c.addEventListener('click', function () { focusViolation(v.idx, false); });
      list.appendChild(c); cards.push(c);
    });
  })();
  (function buildFaults() {
    $('fhead').textContent = D.faults.length ? 'Faults (' + D.faults.length + ')' : 'Faults';
    if (!D.faults.length) $('flist').appendChild(el('li', 'muted', 'No fault records in this history.'));
    D.faults.forEach(function (f) {
      var li = el('li', '', faultText(f)); li.id = 'f' + f.idx;
      li.addEventListener('click', function () { select({ fault: f }); var e = f.end !== undefined ? f.end : f.start; center(f.start, e); });
      $('flist').appendChild(li);
    });
  })();
  (function buildLabels() {
    var box = $('labels'), pin = el('div', 'pin'); box.style.height = rowsH + 'px';
    pin.style.height = pinnedH + 'px';
    rows.forEach(function (r) {
      var d = el('div', r.type === 'proc' ? '' : r.type); d.style.top = r.y + 'px'; d.style.height = r.h + 'px';
      if (r.type === 'terms') { d.appendChild(el('b', '', 'lease terms')); r.sub = el('small', '', ''); d.appendChild(r.sub); }
      else if (r.type === 'lane') { d.appendChild(el('b', '', r.name)); d.appendChild(el('small', '', 'faults on ' + r.name)); }
      else { d.appendChild(el('b', '', r.name)); d.appendChild(el('small', '', r.owner !== r.name ? 'owner ' + r.owner : 'process')); }
      d.title = r.name || 'lease terms';
      (r.pinned ? pin : box).appendChild(d);
    });
    box.appendChild(pin);
    scroll.addEventListener('scroll', function () { pin.style.top = scroll.scrollTop + 'px'; });
  })();

  function setKey(k) {
    st.key = k;
    $('keysel').value = String(k);
    rows[0].sub.textContent = D.keys.length > 1 ? 'key ' + q(D.keys[k]) : 'the coordinator’s grants';
    st.linAnchor = null;
    buildLin();
  }

  // ---- the linearization list ----
  var LIN_PAGE = 200;
  function buildLin() {
    var l = lins[st.key], list = $('linlist'), key = D.keys[st.key];
    list.textContent = '';
    $('linhead').textContent = D.keys.length === 1 && key === '' ? 'Linearization' : 'Linearization of key ' + q(key !== undefined ? key : '');
    if (!l) { $('linnote').textContent = D.properties.length ? 'No linearization for this key.' : 'No check was run.'; return; }
    var v = st.cur >= 0 ? D.violations[st.cur] : null;
    var bad = l.verdict === 'violated';
    $('linnote').textContent = (bad ? 'The longest order the checker could explain: ' : l.verdict === 'unknown' ? 'The search ran out of budget; the longest order found: ' : 'An order that explains every outcome: ') +
      plural(l.steps.length, 'step') + (l.omitted ? ' (' + grp(l.omitted) + ' more outside the drawn window)' : '') + '. Click a step to find it.';
    var steps = l.steps, n = steps.length;
    var anchor = st.linAnchor !== null ? st.linAnchor : bad ? n - 1 : 0;
    var from = Math.max(0, Math.min(anchor - (bad && st.linAnchor === null ? LIN_PAGE - 1 : LIN_PAGE / 2), n - LIN_PAGE)), to = Math.min(n, from + LIN_PAGE);
    from = Math.max(0, from);
    if (from > 0) { var m1 = el('li', 'more', '… ' + plural(from, 'earlier step') + ' (show)'); m1.addEventListener('click', function () { st.linAnchor = Math.max(0, from - LIN_PAGE / 2); buildLin(); }); list.appendChild(m1); }
    var vOps = v && v.key === key ? v.ops : [];
    for (var s = from; s < to; s++) {
      (function (s) {
        var o = steps[s], li = el('li', vOps.indexOf(o) >= 0 ? 'inv' : '');
        li.appendChild(el('span', 'n', (s + 1) + '.'));
        li.appendChild(document.createTextNode('line ' + oLine[o] + ' · ' + describe(o) + ((oFlags[o] & F_APPLIED) ? ' (took effect here)' : '')));
        li.title = 'line ' + oLine[o] + ': ' + describe(o);
        li.dataset.op = String(o);
        if (st.sel && st.sel.op === o) li.className += ' sel';
        li.addEventListener('mouseenter', function () { st.hover = { op: o }; draw(); });
        li.addEventListener('mouseleave', function () { st.hover = null; draw(); });
        li.addEventListener('click', function () { select({ op: o }, true); center(oCall[o], oEnd[o], true); });
        list.appendChild(li);
      })(s);
    }
    if (to < n) { var m2 = el('li', 'more', '… ' + plural(n - to, 'later step') + ' (show)'); m2.addEventListener('click', function () { st.linAnchor = Math.min(n - 1, to + LIN_PAGE / 2); buildLin(); }); list.appendChild(m2); }
    if (bad && v && v.key === key && v.focus >= 0 && !stepsOfKey(st.key).has(v.focus)) {
      var li = el('li', 'bad', '');
      li.appendChild(el('span', 'n', '✗'));
      li.appendChild(document.createTextNode('no order can place line ' + oLine[v.focus] + ' here: ' + describe(v.focus)));
      li.addEventListener('click', function () { select({ op: v.focus }, true); });
      list.appendChild(li);
    }
    var selLi = list.querySelector('li.sel, li.bad');
    if (selLi) list.scrollTop = Math.max(0, selLi.offsetTop - list.clientHeight / 2);
  }

  // ---- the details panel ----
  function select(obj, keepLin) {
    st.sel = obj;
    var body = $('dbody'); body.textContent = '';
    var tb = el('table'), add = function (k, v) { var tr = el('tr'); tr.appendChild(el('td', '', k)); tr.appendChild(el('td', '', v)); tb.appendChild(tr); };
    if (obj.op !== undefined) {
      var o = obj.op, f = oFlags[o];
      add('line', String(oLine[o]));
      add('process', procName(oProc[o]));
      add('owner', ownerOf(o));
      if (D.keys.length > 1 || D.keys[0] !== '') add('key', q(D.keys[oKey[o]]));
      add('op', KIND[oKind[o]]);
      if (oTTL[o]) add('ttl', dur(oTTL[o]));
      if (oFence[o]) add('fence', String(oFence[o]));
      if (oKind[o] === 4 || (f & F_VAL)) add('value', (f & F_VAL) ? q(S[oVal[o] - 1]) : 'nothing written yet');
      add('call', T(oCall[o]));
      add('return', (f & F_RET) ? T(oRet[o]) : 'never');
      if (f & F_AT) add('at', T(oAt[o]) + ' (the coordinator’s clock when it applied it)');
      else add('clock window', '[' + abs(oCall[o] - U) + ', ' + ((f & F_RET) ? abs(oRet[o] + U) : '∞') + '] ms (no at: somewhere in here)');
      add('outcome', outcome(o));
      if (oKey[o] !== st.key) setKey(oKey[o]);
      var sn = stepsOfKey(oKey[o]).get(o);
      add('linearization', sn !== undefined ? 'step ' + (sn + 1) + (D.keys.length > 1 || D.keys[0] !== '' ? ' of key ' + q(D.keys[oKey[o]]) : '') : lins[oKey[o]] ? 'not placed' : '—');
      var t = termAt(oKey[o], !isNaN(oAt[o]) ? oAt[o] : oCall[o]);
      add('term then', t ? termText(t) : 'nobody held the lease');
      var vs = involved.get(o);
      if (vs) add('violations', vs.map(function (k) { return '#' + (k + 1) + ' ' + D.violations[k].property; }).join(', '));
      if (!keepLin) { var s2 = stepsOfKey(oKey[o]).get(o); st.linAnchor = s2 !== undefined ? s2 : null; }
      buildLin();
    } else if (obj.term) {
      var tm = obj.term;
      add('term', tm.owner + (tm.fence ? ' · fence ' + tm.fence : ' · the lease'));
      add('granted', 't = ' + win(tm.s0, tm.s1) + ' ms' + (tm.grant >= 0 ? ' (line ' + oLine[tm.grant] + ')' : ''));
      add('renewals', tm.renewals ? tm.renewals + (tm.lastRenew >= 0 ? ', the last at line ' + oLine[tm.lastRenew] : '') : 'none');
      add('granted expiry', 't = ' + win(tm.g0, tm.g1) + ' ms');
      add('actual end', 't = ' + win(tm.e0, tm.e1) + ' ms, by ' + tm.cause + (tm.release >= 0 ? ' (line ' + oLine[tm.release] + ')' : ''));
      add('derived from', tm.lin ? 'the checker’s linearization' : 'the recorded outcomes (no linearization covers them)');
    } else if (obj.belief) {
      var b = obj.belief;
      add('belief', procName(b.proc) + ' believes it holds ' + held(b.fence));
      add('from', T(b.from));
      add('to', b.open ? T(b.to) + ' (still believed when the run ended)' : T(b.to));
    } else if (obj.fault) {
      var fl = obj.fault;
      add('fault', fl.kind);
      add('target', fl.target + (fl.peer ? ' (from ' + fl.peer + ')' : ''));
      add('start', T(fl.start));
      add('end', fl.end !== undefined ? T(fl.end) : 'no end recorded');
      if (fl.amount) add('amount', faultLabel(fl));
      if (fl.detail) add('what happened', fl.detail);
      if (fl.partial) add('partial', 'could not be applied in full');
      if (fl.line) add('line', String(fl.line));
    } else if (obj.viol !== undefined) {
      focusViolation(obj.viol, false); return;
    }
    body.appendChild(tb);
    draw();
  }
  // held names what a holder holds: its fence, or (fence-less) the lease.
  function held(f) { return f ? 'fence ' + f : 'the lease'; }
  function termText(t) { return t.owner + ' holds ' + held(t.fence) + ' from t = ' + win(t.s0, t.s1) + ' until ' + win(t.e0, t.e1) + ' ms (' + t.cause + ')'; }
  function termAt(k, t) {
    var best = null;
    terms.forEach(function (tm) { if (tm.key === k && tm.s0 <= t && t < tm.e1) best = tm; });
    return best;
  }

  // ---- view ----
  function clampView() {
    var full = (tMax - tMin), minSpan = Math.min(4, full);
    var span = Math.max(minSpan, Math.min(st.v1 - st.v0, full * 1.5 + 10));
    var mid = (st.v0 + st.v1) / 2;
    mid = Math.max(tMin - full * 0.25, Math.min(tMax + full * 0.25, mid));
    st.v0 = mid - span / 2; st.v1 = mid + span / 2;
  }
  function setView(a, b) { st.v0 = a; st.v1 = b; clampView(); draw(); }
  function fitAll() { var pad = Math.max((tMax - tMin) * 0.03, 1); setView(tMin - pad, tMax + pad); }
  function zoom(f, atX) {
    var t = Tx(atX === undefined ? GUTTER + plotW() / 2 : atX);
    setView(t - (t - st.v0) * f, t + (st.v1 - t) * f);
  }
  function pan(frac) { var d = (st.v1 - st.v0) * frac; setView(st.v0 + d, st.v1 + d); }
  function center(a, b, keepZoom) {
    var span = st.v1 - st.v0;
    if (!keepZoom || b - a > span * 0.8) span = Math.max((b - a) * 3, 8);
    if (keepZoom && a >= st.v0 && b <= st.v1) { draw(); return; }
    var m = (a + b) / 2; setView(m - span / 2, m + span / 2);
  }
  function vSpan(v) { return [v.from, v.to]; }
  function lowerBound(arr, x) { var lo = 0, hi = arr.length; while (lo < hi) { var m = (lo + hi) >> 1; if (arr[m] < x) lo = m + 1; else hi = m; } return lo; }
  function focusViolation(k, initial) {
    if (k < 0 || k >= D.violations.length) return;
    st.cur = k;
    var v = D.violations[k];
    cards.forEach(function (c, n) { c.classList.toggle('current', n === k); });
    $('vpos').textContent = (k + 1) + ' of ' + D.violations.length;
    if (v.key !== undefined && D.keys.indexOf(v.key) >= 0) setKey(D.keys.indexOf(v.key)); else buildLin();
    var sp = vSpan(v), a = sp[0], b = sp[1];
    if (N <= 400) fitAll();
    else {
      // some context: about 60 of the key's ops on either side
      var cs = callsOfKey(D.keys.indexOf(v.key) >= 0 ? D.keys.indexOf(v.key) : st.key), lo = a, hi = b, n = cs.length;
      if (n) {
        var ia = lowerBound(cs, a), ib = lowerBound(cs, b);
        lo = Math.min(a, cs[Math.max(0, ia - 60)]); hi = Math.max(b, cs[Math.min(n - 1, ib + 60)]);
      }
      var pad = Math.max((hi - lo) * 0.06, 2); setView(lo - pad, hi + pad);
    }
    // the focus row in view
    var r = v.focus >= 0 ? rows[procRow[oProc[v.focus]]] : null;
    if (r && (r.y - scroll.scrollTop < pinnedH || r.y + r.h > scroll.scrollTop + scroll.clientHeight)) scroll.scrollTop = Math.max(0, r.y - pinnedH - (scroll.clientHeight - pinnedH) / 2 + r.h / 2);
    if (!initial) { var c = cards[k]; if (c && c.scrollIntoView) c.scrollIntoView({ block: 'nearest' }); }
    if (v.focus >= 0) select({ op: v.focus }, true); // its details at once
    draw();
  }

  // ---- drawing ----
  function pattern(color, bg) {
    var p = document.createElement('canvas'); p.width = p.height = 6;
    var g = p.getContext('2d'); g.fillStyle = bg; g.fillRect(0, 0, 6, 6);
    g.strokeStyle = color; g.lineWidth = 1.6; g.beginPath(); g.moveTo(-1, 7); g.lineTo(7, -1); g.moveTo(-1, 1); g.lineTo(1, -1); g.moveTo(5, 7); g.lineTo(7, 5); g.stroke();
    return cx.createPattern(p, 'repeat');
  }
  var patCache = {};
  function hatch(color, bg) { var k = color + bg; if (!patCache[k]) patCache[k] = pattern(color, bg); return patCache[k]; }
  function fcol(f, k) { return PAL[((f > 0 ? f : k + 1) - 1) % PAL.length]; }
  function alpha(hex, a) { var n = parseInt(hex.slice(1), 16); return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')'; }
  function faultColor(kind) {
    if (/pause|freeze|overrun/.test(kind)) return '#553c7b';
    if (/clock/.test(kind)) return '#a4480b';
    if (/partition|delay|drop|heartbeat/.test(kind)) return '#1d5a80';
    if (/crash/.test(kind)) return '#222';
    return '#5b4636';
  }
  // Text on a white halo, legible over bands, lines and hatching.
  function halo(text, x, y) {
    var f = cx.fillStyle; cx.strokeStyle = 'rgba(255,255,255,0.9)'; cx.lineWidth = 3; cx.lineJoin = 'round';
    cx.strokeText(text, x, y); cx.lineWidth = 1; cx.fillStyle = f; cx.fillText(text, x, y);
  }
  function fit(ctx, texts, w) { for (var k = 0; k < texts.length; k++) if (ctx.measureText(texts[k]).width <= w) return texts[k]; return null; }
  var FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
  var FONT_B = '600 11px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
  var FONT_S = '10px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';

  var pending = false;
  function draw() { if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; render(); }); } }

  // A tick step in the history's unit that is a round number of ms (1, 2
  // or 5 times a power of ten), and at least one of the history's units.
  function niceStep(raw) {
    var ms = raw * MUL / DIV, p = Math.pow(10, Math.floor(Math.log10(ms))), m = ms / p;
    var s = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
    return Math.max(1, Math.round(s * p * DIV / MUL));
  }
  function render() {
    marks = [];
    var sy = scroll.scrollTop;
    // axis
    ax.setTransform(dpr, 0, 0, dpr, 0, 0);
    ax.clearRect(0, 0, W, 44); ax.fillStyle = '#fbfcfd'; ax.fillRect(0, 0, W, 44);
    ax.font = FONT; ax.textBaseline = 'middle';
    var step = niceStep((st.v1 - st.v0) / (plotW() / 90));
    var t0 = Math.ceil(st.v0 / step) * step;
    ax.fillStyle = '#1a202c'; ax.fillText('time (ms)', 8, 32);
    axisLabels = ['time (ms)'];
    if (base !== null) { ax.fillStyle = '#5a6472'; ax.font = FONT_S; ax.fillText('since ' + msBig(BigInt(base)), 8, 12); ax.font = FONT; axisLabels.push('since ' + msBig(BigInt(base))); }
    ax.strokeStyle = '#9aa5b1';
    for (var t = t0; t <= st.v1; t += step) {
      var x = X(t); if (x < GUTTER) continue;
      ax.beginPath(); ax.moveTo(x + 0.5, 36); ax.lineTo(x + 0.5, 44); ax.stroke();
      var tl = base === null ? msNum(t) : '+' + msNum(t);
      ax.fillStyle = '#1a202c'; ax.textAlign = 'center'; ax.fillText(tl, x, 30); axisLabels.push(tl);
    }
    ax.textAlign = 'left';
    // rows
    cx.setTransform(dpr, 0, 0, dpr, 0, 0);
    cx.clearRect(0, 0, W, H);
    cx.save(); cx.beginPath(); cx.rect(GUTTER, 0, W - GUTTER, H); cx.clip();
    // grid
    cx.strokeStyle = '#eef0f3';
    for (t = t0; t <= st.v1; t += step) { x = X(t); cx.beginPath(); cx.moveTo(x + 0.5, 0); cx.lineTo(x + 0.5, H); cx.stroke(); }
    // not drawn: outside the windows
    if (D.omitted) {
      var ws = D.omitted.windows, prev = -Infinity;
      cx.fillStyle = hatch('#e2e5ea', '#f7f8fa');
      for (var w = 0; w <= ws.length; w++) {
        var lo = prev, hi = w < ws.length ? ws[w][0] : Infinity;
        var xa = Math.max(GUTTER, lo === -Infinity ? GUTTER : X(lo)), xb = Math.min(W, hi === Infinity ? W : X(hi));
        if (xb > xa) { cx.fillRect(xa, 0, xb - xa, H); if (xb - xa > 80) { cx.fillStyle = '#5a6472'; cx.font = FONT; cx.fillText('not drawn', xa + 6, 14); cx.fillStyle = hatch('#e2e5ea', '#f7f8fa'); } }
        if (w < ws.length) prev = ws[w][1];
      }
    }
    var sep = function (y) { cx.strokeStyle = '#e3e7ec'; cx.beginPath(); cx.moveTo(GUTTER, y - 0.5); cx.lineTo(W, y - 0.5); cx.stroke(); };
    cx.save(); cx.beginPath(); cx.rect(GUTTER, pinnedH, W - GUTTER, H - pinnedH); cx.clip();
    for (var r = 0; r < rows.length; r++) {
      var row = rows[r], ry = row.y - sy;
      if (row.pinned || ry > H || ry + row.h < pinnedH) continue;
      drawProc(ry, row); sep(ry + row.h);
    }
    cx.restore();
    drawViolations(sy);
    // the pinned lanes over it all
    cx.fillStyle = '#fff'; cx.fillRect(GUTTER, 0, W - GUTTER, pinnedH);
    for (t = t0; t <= st.v1; t += step) { x = X(t); cx.strokeStyle = '#eef0f3'; cx.beginPath(); cx.moveTo(x + 0.5, 0); cx.lineTo(x + 0.5, pinnedH); cx.stroke(); }
    rows.forEach(function (row) {
      if (!row.pinned) return;
      if (row.type === 'terms') drawTerms(row.y, row); else drawLane(row.y, row);
      sep(row.y + row.h);
    });
    drawFocusBand(sy);
    cx.strokeStyle = '#b9c1cc'; cx.beginPath(); cx.moveTo(GUTTER, pinnedH - 0.5); cx.lineTo(W, pinnedH - 0.5); cx.stroke();
    cx.restore();
    drawBadges();
    $('prev').disabled = st.cur <= 0; $('next').disabled = st.cur < 0 || st.cur >= D.violations.length - 1;
    if (st.cur < 0) $('vpos').textContent = D.violations.length ? '' : 'no violation';
    window.leasecheckTimeline.view = { from: st.v0, to: st.v1, scrollTop: sy };
  }

  // Terms alternate between two sub-lanes, so that a term the next grant
  // cut short (a double holder) and its successor are both seen whole.
  function drawTerms(ry, row) {
    var bh = 17, lastLabel = [-Infinity, -Infinity], n = 0;
    terms.forEach(function (t) {
      if (t.key !== st.key) return;
      var lane = n++ % 2, by = ry + 4 + lane * (bh + 4);
      var xs0 = X(t.s0), xs1 = X(t.s1), xe0 = X(t.e0), xe1 = X(t.e1), xg1 = X(t.g1);
      if (Math.max(xe1, xg1) < GUTTER || xs0 > W) return;
      var col = fcol(t.fence, t.idx);
      if (xg1 > xe1 + 0.5) { // granted, but cut short: hatched to the granted expiry
        cx.fillStyle = hatch(alpha(col, 0.6), '#fff'); cx.fillRect(xe1, by + 2, xg1 - xe1, bh - 4);
        cx.strokeStyle = alpha(col, 0.9); cx.setLineDash([3, 2]); cx.strokeRect(xe1 + 0.5, by + 2.5, xg1 - xe1 - 1, bh - 5); cx.setLineDash([]);
      }
      // an uncertain start or end (interval mode) is drawn paler
      cx.fillStyle = alpha(col, 0.25); cx.fillRect(xs0, by, xs1 - xs0, bh); cx.fillRect(xe0, by, xe1 - xe0, bh);
      cx.fillStyle = alpha(col, 0.55); cx.fillRect(xs1, by, Math.max(1, xe0 - xs1), bh);
      cx.strokeStyle = col; cx.lineWidth = 1;
      if (!t.lin) cx.setLineDash([4, 3]);
      cx.strokeRect(xs0 + 0.5, by + 0.5, Math.max(1, xe1 - xs0 - 1), bh - 1); cx.setLineDash([]);
      if (sameSel(st.sel, { term: t })) { cx.strokeStyle = '#000'; cx.lineWidth = 2; cx.strokeRect(xs0, by, xe1 - xs0, bh); cx.lineWidth = 1; }
      cx.font = FONT_B; cx.fillStyle = '#1a202c'; cx.textBaseline = 'middle';
      var lx = Math.max(xs0, GUTTER) + 4, room = Math.min(Math.max(xe1, xg1), W) - lx - 3;
      var fence = t.fence ? 'fence ' + t.fence : 'term';
      var until = 'until ' + win(t.e0, t.e1);
      var label = room > 0 && lx > lastLabel[lane] ? fit(cx, [t.owner + ' · ' + fence + ' · ' + until + ' (' + t.cause + ')' + (xg1 > xe1 + 0.5 ? ', granted until ' + win(t.g0, t.g1) : ''),
        t.owner + ' · ' + fence + ' · ' + until + ' (' + t.cause + ')', t.owner + ' · ' + fence + ' · ' + until, t.owner + ' · ' + fence, t.owner].concat(t.fence ? ['f' + t.fence] : []), room) : null;
      if (label) { halo(label, lx, by + bh / 2 + 0.5); lastLabel[lane] = lx + cx.measureText(label).width; }
    });
  }

  function drawFault(f, ry, top, h, rowH, state) {
    var xs = X(f.start), hasEnd = f.end !== undefined, xe = hasEnd ? Math.max(X(f.end), xs + 2) : xs;
    if (xe < GUTTER - 40 || xs > W) return;
    var col = faultColor(f.kind);
    if (hasEnd) {
      if (/pause|freeze|overrun|crash/.test(f.kind) && rowH) { cx.fillStyle = alpha(col, 0.09); cx.fillRect(xs, ry, xe - xs, rowH); }
      cx.fillStyle = col; cx.fillRect(xs, top, xe - xs, h);
      if (f.partial) { cx.strokeStyle = '#fff'; cx.setLineDash([2, 2]); cx.strokeRect(xs + 1, top + 1, xe - xs - 2, h - 2); cx.setLineDash([]); }
    } else {
      cx.strokeStyle = col; cx.lineWidth = 1.5; cx.beginPath(); cx.moveTo(xs, ry + 1); cx.lineTo(xs, ry + (rowH || h + top - ry) - 1); cx.stroke(); cx.lineWidth = 1;
      cx.fillStyle = col; cx.beginPath(); cx.moveTo(xs - 6, top); cx.lineTo(xs + 6, top); cx.lineTo(xs, top + h); cx.closePath(); cx.fill();
    }
    if (sameSel(st.sel, { fault: f })) { cx.strokeStyle = '#000'; cx.lineWidth = 2; cx.strokeRect(xs - 2, top - 1, xe - xs + 4, h + 2); cx.lineWidth = 1; }
    cx.font = FONT_S; cx.textBaseline = 'middle';
    var text = faultLabel(f), span = hasEnd ? ' ' + abs(f.start) + '–' + abs(f.end) : ' at ' + abs(f.start);
    var inside = hasEnd ? fit(cx, [text + span, text], xe - Math.max(xs, GUTTER) - 6) : null;
    if (inside) { cx.fillStyle = '#fff'; cx.fillText(inside, Math.max(xs, GUTTER) + 3, top + h / 2 + 0.5); state.last = xe; return; }
    var lx = (hasEnd ? xe : xs + 7) + 3;
    if (lx > state.last + 4) { cx.fillStyle = col; cx.fillText(text + span, lx, top + h / 2 + 0.5); state.last = lx + cx.measureText(text + span).width; }
  }
  function drawLane(ry, row) {
    var state = { last: -Infinity };
    faultsOnLane[row.lane].forEach(function (f) { drawFault(f, ry, ry + 10, 14, row.h, state); });
  }

  function drawProc(ry, row) {
    var p = row.proc, list = procOps[p], mx = procMaxEnd[p];
    // the terms its owner held: a light band over the whole row
    terms.forEach(function (t) {
      if (t.key !== st.key || t.owner !== row.owner) return;
      var a = X(t.s0), b = X(t.e1); if (b < GUTTER || a > W) return;
      cx.fillStyle = alpha(fcol(t.fence, t.idx), 0.10); cx.fillRect(a, ry, b - a, row.h - 1);
    });
    // faults: the top strip
    var fst = { last: -Infinity };
    faultsOnProc[p].forEach(function (f) { drawFault(f, ry, ry + P_FAULT, P_FAULT_H, row.h - 1, fst); });
    // beliefs: the bottom strip
    var bTop = ry + P_BELIEF, bH = P_BELIEF_H, blast = -Infinity;
    beliefsOn[p].forEach(function (b) {
      var a = X(b.from), e = X(b.to); if (e < GUTTER || a > W) return;
      var col = fcol(b.fence, 0);
      cx.fillStyle = col; cx.fillRect(a, bTop, Math.max(2, e - a), bH);
      if (b.open) { cx.beginPath(); cx.moveTo(e, bTop - 2); cx.lineTo(e + 6, bTop + bH / 2); cx.lineTo(e, bTop + bH + 2); cx.closePath(); cx.fill(); }
      if (sameSel(st.sel, { belief: b })) { cx.strokeStyle = '#000'; cx.lineWidth = 2; cx.strokeRect(a, bTop, e - a, bH); cx.lineWidth = 1; }
      cx.font = FONT_S; cx.textBaseline = 'middle'; cx.fillStyle = '#fff';
      var lx = Math.max(a, GUTTER) + 3, l = lx > blast ? fit(cx, b.fence ? ['believes it holds fence ' + b.fence + (b.open ? ' (to the end)' : ''), 'believes fence ' + b.fence, 'f' + b.fence] : ['believes it holds the lease' + (b.open ? ' (to the end)' : ''), 'believes it holds', 'holds'], Math.min(e, W) - lx - 3) : null;
      if (l) { cx.fillText(l, lx, bTop + bH / 2 + 0.5); blast = lx + cx.measureText(l).width; }
    });
    // ops: the middle strip; their labels inside the bar or on the line below it
    var top = ry + P_OP, h = P_OP_H;
    var k = lowerBound(mx, st.v0 - 1e-9), lastPx = -1, ppu = plotW() / (st.v1 - st.v0), cands = [], nvis = 0;
    cx.font = FONT;
    for (; k < list.length; k++) {
      var o = list[k];
      if (oCall[o] > st.v1) break;
      var f = oFlags[o], x0 = X(oCall[o]), x1 = X(oEnd[o]), wd = x1 - x0;
      if (wd < 1 && Math.floor(x0) === lastPx && !involved.has(o)) continue; // many ops per pixel
      lastPx = Math.floor(x0); nvis++;
      var col = KCOL[oKind[o]], ret = f & F_RET, ok = f & F_OK, other = oKey[o] !== st.key;
      cx.globalAlpha = other ? 0.28 : 1; // another key's op: dimmed, unlabelled
      if (U && !(f & F_AT) && ppu * U > 1) { // the clock window of an op without at
        cx.strokeStyle = alpha(col, 0.6); cx.beginPath(); cx.moveTo(X(oCall[o] - U), top + h / 2); cx.lineTo(X(ret ? oRet[o] + U : oEnd[o]), top + h / 2); cx.stroke();
      }
      var bw = Math.max(wd, ret ? 1.5 : 6);
      if (ret && ok) { cx.fillStyle = col; cx.fillRect(x0, top, bw, h); }
      else if (ret) { cx.fillStyle = '#fff'; cx.fillRect(x0, top, bw, h); cx.strokeStyle = col; cx.lineWidth = 1.5; cx.strokeRect(x0 + 0.75, top + 0.75, bw - 1.5, h - 1.5); cx.lineWidth = 1; }
      else {
        var g = cx.createLinearGradient(x0, 0, x0 + bw, 0); g.addColorStop(0, alpha(col, 0.55)); g.addColorStop(1, alpha(col, 0.05));
        cx.fillStyle = hatch(alpha(col, 0.5), '#fff'); cx.fillRect(x0, top, bw, h); cx.fillStyle = g; cx.fillRect(x0, top, bw, h);
        cx.strokeStyle = col; cx.setLineDash([3, 2]); cx.beginPath(); cx.moveTo(x0, top + 0.5); cx.lineTo(x0 + bw, top + 0.5); cx.moveTo(x0, top + h - 0.5); cx.lineTo(x0 + bw, top + h - 0.5); cx.moveTo(x0 + 0.5, top); cx.lineTo(x0 + 0.5, top + h); cx.stroke(); cx.setLineDash([]);
      }
      if (f & F_AT) { var xa = X(oAt[o]); cx.fillStyle = '#000'; cx.fillRect(xa - 1, top - 3, 2, h + 6); }
      var sel = sameSel(st.sel, { op: o }) && !(st.cur >= 0 && D.violations[st.cur].focus === o), hov = sameSel(st.hover, { op: o });
      if (sel || hov) {
        cx.strokeStyle = sel ? '#000' : '#444'; cx.lineWidth = sel ? 2.5 : 1.5; cx.strokeRect(x0 - 1.5, top - 1.5, bw + 3, h + 3); cx.lineWidth = 1;
      }
      if (!ret && sameSel(st.sel, { op: o })) { cx.strokeStyle = '#444'; cx.setLineDash([2, 3]); cx.beginPath(); cx.moveTo(x0 + bw, top + h / 2); cx.lineTo(W, top + h / 2); cx.stroke(); cx.setLineDash([]); }
      cx.globalAlpha = 1;
      if (x0 + bw < GUTTER || other) continue;
      var text = shortLabel(o), tw = cx.measureText(text).width, lx = Math.max(x0, GUTTER) + 4;
      if (Math.min(x0 + bw, W) - lx - 3 >= tw) { cx.fillStyle = ret && ok ? '#fff' : '#1a202c'; cx.textBaseline = 'middle'; cx.fillText(text, lx, top + h / 2 + 0.5); }
      else cands.push({ o: o, x: Math.max(x0, GUTTER), text: text, w: tw, prio: involved.has(o) ? 0 : (!ret || !ok) ? 1 : 2 });
    }
    // Where each of its owner's terms ended: a dashed line, labelled with
    // the labels below.
    terms.forEach(function (t) {
      if (t.key !== st.key || t.owner !== row.owner) return;
      var xe = X(t.e1); if (xe < GUTTER || xe > W) return;
      cx.strokeStyle = fcol(t.fence, t.idx); cx.setLineDash([3, 3]); cx.beginPath(); cx.moveTo(xe + 0.5, ry + P_OP - 2); cx.lineTo(xe + 0.5, ry + P_BELIEF - 1); cx.stroke(); cx.setLineDash([]);
      var tx = (t.fence ? 'fence ' + t.fence : 'term') + ' ' + (t.cause === 'release' ? 'released' : t.cause === 'expiry' ? 'expired' : 'cut short') + ' ' + abs(t.e1);
      cands.push({ o: -1, x: xe, text: tx, w: cx.measureText(tx).width, prio: 1, color: fcol(t.fence, t.idx) });
    });
    // The label lines: the ops of a violation first, then refused and
    // unanswered ones and the ends of terms, then the rest, wherever they
    // do not overlap; a label that runs past the right edge moves left.
    if (cands.length && cands.length < 400) {
      cands.sort(function (a, b) { return a.prio - b.prio || a.x - b.x; });
      var placed = [[], []];
      cands.forEach(function (c) {
        var lo = Math.min(c.x, W - c.w - 6), hi = lo + c.w + 8;
        if (lo < GUTTER) return;
        for (var line = 0; line < 2; line++) {
          var free = true;
          for (var q = 0; q < placed[line].length && free; q++) if (lo < placed[line][q][1] && hi > placed[line][q][0]) free = false;
          if (!free) continue;
          placed[line].push([lo, hi]);
          var ly = ry + P_LABEL[line];
          cx.fillStyle = c.prio === 0 ? VIOL : c.color || '#1a202c'; cx.font = c.prio === 0 ? FONT_B : FONT; cx.textBaseline = 'middle';
          halo(c.text, lo, ly + 0.5);
          if (c.o >= 0) { // a tick from the bar down to its label
            cx.strokeStyle = alpha(KCOL[oKind[c.o]], 0.8); cx.beginPath(); cx.moveTo(c.x + 0.5, ry + P_OP + P_OP_H); cx.lineTo(c.x + 0.5, ly - 5); cx.stroke();
          }
          return;
        }
      });
      cx.font = FONT;
    }
  }

  function opRect(o, sy) {
    var r = rows[procRow[oProc[o]]], x0 = X(oCall[o]), x1 = Math.max(X(oEnd[o]), x0 + 6);
    return { x: x0, y: r.y - sy + P_OP, w: x1 - x0, h: P_OP_H };
  }
  function drawViolations(sy) {
    cx.save(); cx.beginPath(); cx.rect(GUTTER, pinnedH, W - GUTTER, H - pinnedH); cx.clip();
    var order = D.violations.map(function (v) { return v.idx; }).filter(function (k) { return k !== st.cur; });
    if (st.cur >= 0) order.push(st.cur);
    order.forEach(function (k) {
      var v = D.violations[k], current = k === st.cur, a = 1;
      var xa = X(v.from), xb = Math.max(X(v.to), xa + 3);
      if (xb < GUTTER || xa > W) return;
      if (!v.ops.length) {
        // A run finding names no op. One about beliefs (exclusive-belief)
        // is outlined on the belief strips its span overlaps; any other
        // (liveness) is a hatched span over the rows.
        var any = false;
        cx.strokeStyle = alpha(VIOL, current ? 1 : 0.45); cx.lineWidth = current ? 2.5 : 1.5;
        if (/belief/.test(v.property)) beliefs.forEach(function (b) {
          if (b.to < v.from || b.from > v.to) return;
          var r = rows[procRow[b.proc]], y0 = r.y - sy + P_BELIEF - 2;
          if (y0 < pinnedH || y0 > H) return;
          var a2 = X(Math.max(b.from, v.from)), b2 = Math.max(X(Math.min(b.to, v.to)), a2 + 3);
          cx.strokeRect(a2, y0, b2 - a2, P_BELIEF_H + 4);
          if (!any) marks.push({ v: k, x: a2, y: y0, w: b2 - a2, h: P_BELIEF_H + 4 });
          any = true;
        });
        if (!any) {
          cx.fillStyle = hatch(alpha(VIOL, current ? 0.22 : 0.1), 'rgba(255,255,255,0)'); cx.fillRect(xa, pinnedH, xb - xa, H - pinnedH);
          cx.fillStyle = alpha(VIOL, current ? 0.8 : 0.35); cx.fillRect(xa, pinnedH, xb - xa, 5);
          marks.push({ v: k, x: xa, y: pinnedH, w: xb - xa, h: Math.min(H, rowsH) - pinnedH });
        }
        cx.lineWidth = 1;
        return;
      }
      var fr = v.focus >= 0 ? opRect(v.focus, sy) : null;
      if (fr) { // the focus op: a band over every row
        cx.fillStyle = alpha(VIOL, current ? 0.10 : 0.05); cx.fillRect(fr.x - 2, pinnedH, fr.w + 4, H - pinnedH);
      }
      var pts = [];
      v.ops.forEach(function (o) {
        var rc = opRect(o, sy);
        pts.push(rc);
        cx.strokeStyle = alpha(VIOL, current ? 1 : 0.5); cx.lineWidth = o === v.focus ? 3 : 2;
        cx.strokeRect(rc.x - 2.5, rc.y - 2.5, rc.w + 5, rc.h + 5); cx.lineWidth = 1;
      });
      if (pts.length > 1 && fr) { // who is involved with the focus op
        cx.strokeStyle = alpha(VIOL, current ? 0.85 : 0.35); cx.setLineDash([5, 3]); cx.lineWidth = 1.5;
        pts.forEach(function (rc) { if (rc === pts[v.ops.indexOf(v.focus)]) return; cx.beginPath(); cx.moveTo(rc.x + rc.w / 2, rc.y + (rc.y < fr.y ? rc.h + 3 : -3)); cx.lineTo(fr.x + fr.w / 2, fr.y + (rc.y < fr.y ? -3 : fr.h + 3)); cx.stroke(); });
        cx.setLineDash([]); cx.lineWidth = 1;
      }
      if (fr) {
        // the mark: a numbered flag right above the focus op
        var fx = Math.max(GUTTER + 9, Math.min(W - 9, fr.x + fr.w / 2)), fy = fr.y - 9;
        cx.fillStyle = current ? VIOL : alpha(VIOL, 0.6); cx.beginPath(); cx.arc(fx, fy, 7.5, 0, 2 * Math.PI); cx.fill();
        cx.fillStyle = '#fff'; cx.font = '600 10px system-ui, Arial, sans-serif'; cx.textAlign = 'center'; cx.textBaseline = 'middle'; cx.fillText(String(k + 1), fx, fy + 0.5); cx.textAlign = 'left';
        if (fy - 8 >= pinnedH && fr.y + fr.h <= H) marks.push({ v: k, x: Math.min(fr.x, fx - 8), y: fy - 8, w: Math.max(fr.w, 16), h: fr.y + fr.h - fy + 8 });
      }
    });
    cx.restore();
  }
  // The focus ops' bands continued over the pinned lanes, so that one sees
  // which term a violation falls in.
  function drawFocusBand(sy) {
    D.violations.forEach(function (v) {
      if (v.focus < 0) return;
      var fr = opRect(v.focus, sy);
      cx.fillStyle = alpha(VIOL, v.idx === st.cur ? 0.10 : 0.05); cx.fillRect(fr.x - 2, 0, fr.w + 4, pinnedH);
    });
  }
  // The violations on the axis, numbered, packed so that none hides
  // another: left to right from where each happens, pushed back from the
  // right edge when they run out of room.
  function drawBadges() {
    var vs = D.violations.map(function (v) {
      var x = X(v.focus >= 0 ? (oCall[v.focus] + oEnd[v.focus]) / 2 : (v.from + v.to) / 2);
      var label = String(v.idx + 1) + ' ' + v.property;
      ax.font = v.idx === st.cur ? FONT_B : FONT;
      return { v: v, x: x, label: label, w: ax.measureText(label).width + 14 };
    }).filter(function (b) { return b.x >= GUTTER - 5 && b.x <= W + 5; });
    vs.sort(function (a, b) { return a.x - b.x || a.v.idx - b.v.idx; });
    var k, lim = W - 4;
    for (k = 0; k < vs.length; k++) vs[k].bx = Math.max(vs[k].x - vs[k].w / 2, k ? vs[k - 1].bx + vs[k - 1].w + 4 : GUTTER + 2);
    for (k = vs.length - 1; k >= 0; k--) { vs[k].bx = Math.min(vs[k].bx, lim - vs[k].w); lim = vs[k].bx - 4; }
    vs.forEach(function (b) {
      if (b.bx < GUTTER) return; // no room left for it: its card still tells it
      var current = b.v.idx === st.cur;
      ax.strokeStyle = VIOL; ax.lineWidth = current ? 2 : 1;
      ax.beginPath(); ax.moveTo(b.bx + b.w / 2, 19); ax.lineTo(b.x, 36); ax.lineTo(b.x, 44); ax.stroke(); ax.lineWidth = 1;
      ax.fillStyle = current ? VIOL : '#fff';
      ax.beginPath(); ax.rect(b.bx + 0.5, 3.5, b.w, 16); ax.fill(); ax.stroke();
      ax.font = current ? FONT_B : FONT; ax.fillStyle = current ? '#fff' : VIOL; ax.textBaseline = 'middle'; ax.fillText(b.label, b.bx + 7, 12);
      marks.push({ v: b.v.idx, x: b.bx, y: 3, w: b.w + 1, h: 17, axis: true });
    });
  }
  function sameSel(a, b) {
    if (!a || !b) return false;
    if (a.op !== undefined) return a.op === b.op;
    if (a.term) return a.term === b.term;
    if (a.belief) return a.belief === b.belief;
    if (a.fault) return a.fault === b.fault;
    return false;
  }

  // ---- hit testing ----
  function hit(mx, my) {
    var yy = my < pinnedH ? my : my + scroll.scrollTop, r = null;
    for (var k = 0; k < rows.length; k++) if ((my < pinnedH) === !!rows[k].pinned && yy >= rows[k].y && yy < rows[k].y + rows[k].h) { r = rows[k]; break; }
    if (!r || mx < GUTTER) return null;
    var t = Tx(mx), tol = 4 * (st.v1 - st.v0) / plotW(), rel = yy - r.y, best = null;
    var inFault = function (f) { var e = f.end !== undefined ? f.end : f.start; return t >= f.start - tol && t <= e + tol; };
    if (r.type === 'terms') {
      terms.forEach(function (tm) { if (tm.key === st.key && t >= tm.s0 - tol && t <= Math.max(tm.e1, tm.g1) + tol) best = { term: tm }; });
      return best;
    }
    if (r.type === 'lane') { faultsOnLane[r.lane].forEach(function (f) { if (inFault(f)) best = { fault: f }; }); return best; }
    if (rel < P_OP - 1) { faultsOnProc[r.proc].forEach(function (f) { if (inFault(f)) best = { fault: f }; }); if (best) return best; }
    if (rel >= P_BELIEF - 2) { beliefsOn[r.proc].forEach(function (b) { if (t >= b.from - tol && t <= b.to + tol) best = { belief: b }; }); if (best) return best; }
    var list = procOps[r.proc], mxe = procMaxEnd[r.proc], bestD = Infinity;
    for (var n = lowerBound(mxe, t - tol); n < list.length && oCall[list[n]] <= t + tol; n++) {
      var o = list[n], a = oCall[o], b = Math.max(oEnd[o], a + 6 * (st.v1 - st.v0) / plotW());
      var d = t < a ? a - t : t > b ? t - b : 0;
      if (d <= tol && d <= bestD) { bestD = d; best = { op: o }; }
    }
    if (best) return best;
    faultsOnProc[r.proc].forEach(function (f) { if (inFault(f)) best = { fault: f }; });
    if (best) return best;
    terms.forEach(function (tm) { if (tm.key === st.key && tm.owner === r.owner && t >= tm.s0 && t <= tm.e1) best = { term: tm }; });
    return best;
  }
  function tipText(h) {
    if (h.op !== undefined) {
      var o = h.op, s = 'line ' + oLine[o] + ': ' + describe(o) + '\n' + outcome(o);
      var vs = involved.get(o); if (vs) s += '\ninvolved in ' + vs.map(function (k) { return '#' + (k + 1) + ' ' + D.violations[k].property; }).join(', ');
      return s;
    }
    if (h.term) return 'term: ' + termText(h.term) + '\ngranted expiry ' + win(h.term.g0, h.term.g1) + ' ms';
    if (h.belief) return procName(h.belief.proc) + ' believes it holds ' + held(h.belief.fence) + ', t = ' + abs(h.belief.from) + '–' + T(h.belief.to) + (h.belief.open ? ' (still at the end)' : '');
    if (h.fault) return faultText(h.fault);
    return '';
  }

  // ---- events ----
  var tip = $('tip'), drag = null;
  function onWheel(e) {
    e.preventDefault();
    var r = cv.getBoundingClientRect(), mx = e.clientX - r.left;
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) { pan((e.deltaX || e.deltaY) / plotW()); return; }
    zoom(Math.exp(e.deltaY * 0.0015), mx);
  }
  cv.addEventListener('wheel', onWheel, { passive: false });
  axis.addEventListener('wheel', onWheel, { passive: false });
  cv.addEventListener('mousedown', function (e) { drag = { x: e.clientX, y: e.clientY, v0: st.v0, v1: st.v1, top: scroll.scrollTop, moved: false }; cv.classList.add('dragging'); e.preventDefault(); });
  window.addEventListener('mousemove', function (e) {
    if (drag) {
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) {
        var d = -dx * (drag.v1 - drag.v0) / plotW(); st.v0 = drag.v0 + d; st.v1 = drag.v1 + d; clampView();
        scroll.scrollTop = drag.top - dy; tip.hidden = true; draw();
      }
      return;
    }
    var r = cv.getBoundingClientRect();
    if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) { if (!tip.hidden) { tip.hidden = true; st.hover = null; draw(); } return; }
    var h = hit(e.clientX - r.left, e.clientY - r.top);
    if (!sameSel(h, st.hover)) { st.hover = h; draw(); }
    if (h) { tip.textContent = tipText(h); tip.hidden = false; tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 470) + 'px'; tip.style.top = (e.clientY + 16) + 'px'; }
    else tip.hidden = true;
  });
  window.addEventListener('mouseup', function (e) {
    if (!drag) return;
    var moved = drag.moved; drag = null; cv.classList.remove('dragging');
    if (!moved) { var r = cv.getBoundingClientRect(), h = hit(e.clientX - r.left, e.clientY - r.top); if (h) select(h); }
  });
  axis.addEventListener('click', function (e) {
    var r = axis.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
    marks.forEach(function (m) { if (m.axis && mx >= m.x && mx <= m.x + m.w && my >= m.y && my <= m.y + m.h) focusViolation(m.v, false); });
  });
  scroll.addEventListener('scroll', draw);
  $('zoomin').addEventListener('click', function () { zoom(0.5); });
  $('zoomout').addEventListener('click', function () { zoom(2); });
  $('fit').addEventListener('click', fitAll);
  $('prev').addEventListener('click', function () { focusViolation(st.cur - 1, false); });
  $('next').addEventListener('click', function () { focusViolation(st.cur + 1, false); });
  document.addEventListener('keydown', function (e) {
    if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var k = e.key, done = true;
    if (k === 'ArrowLeft') pan(-0.15); else if (k === 'ArrowRight') pan(0.15);
    else if (k === 'ArrowUp') scroll.scrollTop -= RH_PROC; else if (k === 'ArrowDown') scroll.scrollTop += RH_PROC;
    else if (k === '+' || k === '=') zoom(0.5); else if (k === '-' || k === '_') zoom(2);
    else if (k === '0' || k === 'Home') fitAll();
    else if (k === 'n') focusViolation(st.cur + 1, false); else if (k === 'p') focusViolation(st.cur - 1, false);
    else done = false;
    if (done) e.preventDefault();
  });

  function layout() {
    var tl = $('tl');
    W = Math.max(300, tl.clientWidth); dpr = window.devicePixelRatio || 1;
    var top = scroll.getBoundingClientRect().top + window.scrollY, legend = $('legend').offsetHeight + 18;
    var room = Math.max(160, window.innerHeight - top - legend);
    H = Math.max(40, Math.min(rowsH, room));
    scroll.style.height = H + 'px';
    $('rows').style.height = rowsH + 'px';
    axis.style.width = W + 'px'; axis.style.height = '44px'; axis.width = W * dpr; axis.height = 44 * dpr;
    cv.style.width = W + 'px'; cv.style.height = H + 'px'; cv.width = W * dpr; cv.height = H * dpr;
    render();
  }
  window.addEventListener('resize', layout);

  // The test hook: what the last frame drew where, in the viewport's coordinates.
  window.leasecheckTimeline = {
    ready: false,
    marks: function () {
      var r = cv.getBoundingClientRect(), ar = axis.getBoundingClientRect();
      return marks.map(function (m) {
        var o = m.axis ? ar : r;
        var x0 = Math.max(m.x, m.axis ? 0 : GUTTER), x1 = Math.min(m.x + m.w, W), y0 = Math.max(m.y, 0), y1 = Math.min(m.y + m.h, m.axis ? 44 : H);
        return { violation: m.v, onAxis: !!m.axis, left: o.left + x0, top: o.top + y0, right: o.left + x1, bottom: o.top + y1 };
      }).filter(function (m) { return m.right > m.left && m.bottom > m.top; });
    },
    focus: function (k) { focusViolation(k, false); render(); },
    axisLabels: function () { return axisLabels.slice(); }
  };

  setKey(0);
  layout();
  if (st.cur >= 0) focusViolation(0, true); else fitAll();
  render();
  window.leasecheckTimeline.ready = true;
})();
