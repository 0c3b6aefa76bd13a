// The mcpsup timeline page. It reads mcpsup events in their JSON form (one
// object per line, as events.JSONLines writes them) from the
// #mcpsup-events element, and, when body[data-live] names a URL, from
// server-sent events there; it builds the model by the rules of
// htmltimeline.Model and draws it as SVG. Every event text is set with
// textContent or setAttribute, never parsed as markup.
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var GUTTER = 190, RIGHT = 16, AXIS_H = 26, LANE_H = 86;
  var BAND_Y = 16, BAND_H = 24, MARK_Y = 28, MARK_ROW = 13, MARK_ROWS = 3;
  var CAT_Y = 62, CAT_H = 18;
  // Beyond these many items in view, a lane aggregates them per pixel column.
  var MAX_MARKERS = 300, MAX_BANDS = 1500, AGG_PX = 8;

  var STATE_COLORS = {
    'idle': '#f1f5f9', 'connecting': '#60a5fa', 'resuming-blind': '#a78bfa',
    'resuming-known': '#c4b5fd', 'probing': '#38bdf8', 'listing-declared': '#7dd3fc',
    'ready': '#22c55e', 'stale-recovering': '#f59e0b', 'failed': '#ef4444', 'closed': '#d1d5db'
  };
  var MARKERS = [
    ['call-failed', 'failed call'], ['retry', 'retry scheduled'],
    ['rate-limit-window', 'rate-limit window'], ['stream', 'standalone stream decision']
  ];
  var MARKER_OF = {
    'call-failed': 'call-failed', 'retry-scheduled': 'retry', 'rate-limit-window': 'rate-limit-window',
    'stream-disabled': 'stream', 'stream-enabled': 'stream', 'stream-declined': 'stream'
  };

  function stateColor(s) {
    if (Object.prototype.hasOwnProperty.call(STATE_COLORS, s)) return STATE_COLORS[s];
    var h = 0;
    for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) % 360;
    return 'hsl(' + h + ',45%,65%)';
  }

  // ---- the model (htmltimeline.Model's rules) ----

  var model = { lanes: [], byServer: new Map(), start: NaN, end: NaN, prev: NaN, count: 0, bad: 0 };

  // parseTime returns milliseconds since the epoch with sub-millisecond
  // precision (Date.parse keeps only milliseconds), or NaN.
  function parseTime(s) {
    if (typeof s !== 'string') return NaN;
    var m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(s);
    if (!m) return NaN;
    var t = Date.parse(m[1] + m[3]);
    return m[2] ? t + parseFloat('0' + m[2]) * 1000 : t;
  }

  function str(v) { return typeof v === 'string' ? v : ''; }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : 0; }

  function extend(t) {
    if (isNaN(t)) return;
    if (isNaN(model.start) || t < model.start) model.start = t;
    if (isNaN(model.end) || t > model.end) model.end = t;
  }

  function addEvent(e) {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) { model.bad++; return; }
    model.count++;
    var server = str(e.server);
    var lane = model.byServer.get(server);
    if (!lane) {
      lane = { server: server, index: model.lanes.length, events: 0, bands: [], boundaries: [], markers: [], catalog: [], last: NaN, gen: 0, state: '' };
      model.lanes.push(lane);
      model.byServer.set(server, lane);
    }
    var t = parseTime(e.time);
    if (isNaN(t)) t = model.prev;
    if (isNaN(t)) t = Date.now(); // live, before any timed event: it is happening now
    model.prev = t;
    if (!isNaN(lane.last) && t < lane.last) t = lane.last;
    lane.last = t;
    extend(t);
    lane.events++;
    lane.gen = Math.max(lane.gen, num(e.generation));
    var kind = str(e.kind);
    if (kind === 'transition') {
      var from = str(e.from), to = str(e.to);
      if (from === to) return;
      var n = lane.bands.length;
      if (n > 0) lane.bands[n - 1].end = t;
      lane.bands.push({ state: to, start: t, end: NaN, seq: num(e.seq), ev: e });
      lane.state = to;
    } else if (kind === 'session-opened' || kind === 'session-ended') {
      lane.boundaries.push({ t: t, opened: kind === 'session-opened', gen: num(e.generation), ev: e });
    } else if (kind === 'catalog-changed') {
      lane.catalog.push({ t: t, tools: num(e.tools), ev: e });
    } else if (Object.prototype.hasOwnProperty.call(MARKER_OF, kind)) {
      var mk = { kind: MARKER_OF[kind], t: t, until: t, ev: e };
      if (mk.kind === 'rate-limit-window' && num(e.delay_ms) > 0) {
        mk.until = t + num(e.delay_ms);
        extend(mk.until);
      }
      lane.markers.push(mk);
    }
  }

  // A timeless first event was placed at 0; once times are known, place it
  // (and every band end still open) at the recording's edges.
  function modelEnd() {
    var end = model.end;
    if (isNaN(end) || end - model.start < 1) end = (isNaN(model.start) ? 0 : model.start) + 1;
    return end;
  }
  function clampStart(t) { return t < model.start ? model.start : t; }

  // readEmbedded adds the events of #mcpsup-events. A timeless event takes
  // the time of the one before it, the first timeless ones the recording's
  // first time.
  function readEmbedded() {
    var node = document.getElementById('mcpsup-events');
    var lines = (node ? node.textContent : '').split('\n'), evs = [];
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i].trim();
      if (line === '') continue;
      try { evs.push(JSON.parse(line)); } catch (err) { model.bad++; }
    }
    for (var j = 0; j < evs.length && isNaN(model.prev); j++) if (evs[j] && typeof evs[j] === 'object') model.prev = parseTime(evs[j].time);
    evs.forEach(addEvent);
  }

  // ---- the view ----

  var view = { t0: 0, t1: 1, follow: true };
  var chart = document.getElementById('chart');
  var tip = document.getElementById('tip');
  var svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('id', 'timeline');
  chart.appendChild(svg);

  function el(name, attrs, parent) {
    var n = document.createElementNS(NS, name);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) n.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(n);
    return n;
  }
  function text(parent, x, y, cls, s) {
    var n = el('text', { x: x, y: y, 'class': cls }, parent);
    n.textContent = s;
    return n;
  }

  function fit() {
    view.t0 = isNaN(model.start) ? 0 : model.start;
    view.t1 = modelEnd();
    var pad = (view.t1 - view.t0) * 0.01;
    view.t0 -= pad; view.t1 += pad;
    view.follow = true;
  }

  function plotWidth() { return Math.max(200, chart.clientWidth - 32 - GUTTER - RIGHT); }

  function xOf(t, w) { return GUTTER + (t - view.t0) / (view.t1 - view.t0) * w; }

  // first index i with arr[i][key] >= t (arr sorted by key)
  function lowerBound(arr, key, t) {
    var lo = 0, hi = arr.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid][key] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function fmtOffset(ms) {
    var a = Math.abs(ms), sign = ms < 0 ? '-' : '+';
    if (a === 0) return '0';
    if (a < 1) return sign + (a * 1000).toFixed(0) + ' µs';
    if (a < 1000) return sign + trim(a.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0)) + ' ms';
    if (a < 60000) return sign + trim((a / 1000).toFixed(3)) + ' s';
    if (a < 3600000) return sign + Math.floor(a / 60000) + ' min ' + trim(((a % 60000) / 1000).toFixed(1)) + ' s';
    return sign + Math.floor(a / 3600000) + ' h ' + Math.floor((a % 3600000) / 60000) + ' min';
  }
  function trim(s) { return s.indexOf('.') < 0 ? s : s.replace(/\.?0+$/, ''); }
  function fmtSpan(ms) { return fmtOffset(ms).slice(1); }

  function niceStep(span, n) {
    var raw = span / Math.max(1, n), p = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * p >= raw) return steps[i] * p;
    return 10 * p;
  }

  function render() {
    var w = plotWidth();
    var width = GUTTER + w + RIGHT;
    var height = AXIS_H + model.lanes.length * LANE_H + 4;
    svg.replaceChildren();
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    var clipId = 'plot-clip';
    var defs = el('defs', {}, svg);
    var clip = el('clipPath', { id: clipId }, defs);
    el('rect', { x: GUTTER, y: 0, width: w, height: height }, clip);

    drawAxis(w, height);
    for (var i = 0; i < model.lanes.length; i++) drawLane(model.lanes[i], AXIS_H + i * LANE_H, w, clipId);
    drawSummary();
  }

  function drawAxis(w, height) {
    var g = el('g', { 'class': 'axis' }, svg);
    var span = view.t1 - view.t0, base = isNaN(model.start) ? 0 : model.start;
    var step = niceStep(span, w / 110);
    var first = Math.ceil((view.t0 - base) / step) * step;
    for (var o = first; base + o <= view.t1; o += step) {
      var x = xOf(base + o, w);
      el('line', { x1: x, y1: AXIS_H - 6, x2: x, y2: height, 'class': 'tick' }, g);
      text(g, x + 3, AXIS_H - 10, 'tick-label', fmtOffset(o));
    }
  }

  function drawLane(lane, y, w, clipId) {
    var g = el('g', { 'class': 'lane', 'data-lane': lane.index, 'data-server': lane.server }, svg);
    el('line', { x1: 0, y1: y + LANE_H - 1, x2: GUTTER + w + RIGHT, y2: y + LANE_H - 1, 'class': 'lane-sep' }, g);
    var name = text(g, 4, y + BAND_Y + 10, 'lane-name', lane.server === '' ? '(unnamed)' : clip(lane.server, 26));
    el('title', {}, name).textContent = lane.server;
    var sub = lane.events + (lane.events === 1 ? ' event' : ' events') + ', gen ' + lane.gen;
    text(g, 4, y + BAND_Y + 24, 'lane-sub', sub);
    text(g, 4, y + CAT_Y + 12, 'lane-sub', 'tools');
    var plot = el('g', { 'clip-path': 'url(#' + clipId + ')' }, g);
    drawBands(lane, plot, y, w);
    drawWindows(lane, plot, y, w);
    drawBoundaries(lane, plot, y, w);
    drawCatalog(lane, plot, y, w);
    drawMarkers(lane, plot, y, w);
  }

  function clip(s, n) { return s.length <= n ? s : s.slice(0, n - 1) + '…'; }

  function bandEnd(lane, i) {
    var b = lane.bands[i];
    return isNaN(b.end) ? modelEnd() : b.end;
  }

  function drawBands(lane, g, y, w) {
    var bands = lane.bands;
    var lo = Math.max(0, lowerBound(bands, 'start', view.t0) - 1), hi = lowerBound(bands, 'start', view.t1);
    var aggregate = hi - lo > MAX_BANDS;
    var i = lo;
    while (i < hi) {
      var b = bands[i], end = bandEnd(lane, i);
      if (end < view.t0) { i++; continue; }
      var x0 = xOf(clampStart(b.start), w), x1 = xOf(end, w);
      if (aggregate && x1 - x0 < 1) {
        // a run of sub-pixel bands: one rect, coloured by the longest state
        var j = i, dur = Object.create(null), best = '', bestDur = -1, xEnd = x1;
        while (j < hi && xOf(bandEnd(lane, j), w) - x0 < AGG_PX) {
          var d = bandEnd(lane, j) - bands[j].start;
          dur[bands[j].state] = (dur[bands[j].state] || 0) + d;
          if (dur[bands[j].state] > bestDur) { bestDur = dur[bands[j].state]; best = bands[j].state; }
          xEnd = xOf(bandEnd(lane, j), w);
          j++;
        }
        if (j === i) j = i + 1;
        el('rect', { x: x0, y: y + BAND_Y, width: Math.max(1, xEnd - x0), height: BAND_H, fill: stateColor(best),
          'class': 'band agg', 'data-count': j - i, 'data-first': i, 'data-lane': lane.index }, g);
        i = j;
        continue;
      }
      el('rect', { x: x0, y: y + BAND_Y, width: Math.max(1, x1 - x0), height: BAND_H, fill: stateColor(b.state),
        'class': 'band', 'data-state': b.state, 'data-seq': b.seq, 'data-band': i, 'data-lane': lane.index }, g);
      if (x1 - x0 > 48) {
        var label = text(g, Math.max(x0, GUTTER) + 4, y + BAND_Y + 16, 'band-label', clip(b.state, Math.floor((x1 - Math.max(x0, GUTTER)) / 7)));
        label.setAttribute('fill', b.state === 'failed' ? '#fff' : '#0b1220');
        label.setAttribute('font-size', '11');
        label.setAttribute('pointer-events', 'none');
      }
      i++;
    }
  }

  function drawWindows(lane, g, y, w) {
    lane.markers.forEach(function (m) {
      if (m.kind !== 'rate-limit-window' || m.until <= m.t || m.until < view.t0 || m.t > view.t1) return;
      var x0 = xOf(m.t, w), x1 = xOf(m.until, w);
      el('rect', { x: x0, y: y + BAND_Y - 3, width: Math.max(1, x1 - x0), height: BAND_H + 6, 'class': 'window' }, g);
    });
  }

  function drawBoundaries(lane, g, y, w) {
    var bs = lane.boundaries, lo = lowerBound(bs, 't', view.t0), hi = lowerBound(bs, 't', view.t1 + 1e-9);
    var lastLabelEnd = -1e9, lastX = -1e9;
    for (var i = lo; i < hi; i++) {
      var b = bs[i], x = xOf(b.t, w);
      if (hi - lo > MAX_MARKERS && x - lastX < 1) continue;
      lastX = x;
      // from the band's top edge down: the label row above stays clear
      var line = el('line', { x1: x, y1: y + BAND_Y - 3, x2: x, y2: y + BAND_Y + BAND_H + 3,
        'class': 'boundary' + (b.opened ? ' opened' : ' ended'), 'data-gen': b.gen, 'data-lane': lane.index, 'data-ev': 'b' + i }, g);
      line.setAttribute('stroke-linecap', 'round');
      // "gen n" beside the line, or before it at the right edge; only where
      // it does not run into the previous label
      var labelW = 22 + 6 * String(b.gen).length, right = x + 2 + labelW > GUTTER + w;
      var left = right ? x - 2 - labelW : x + 2;
      if (b.opened && left > lastLabelEnd + 6) {
        var label = text(g, right ? x - 2 : x + 2, y + 11, 'gen', 'gen ' + b.gen);
        if (right) label.setAttribute('text-anchor', 'end');
        lastLabelEnd = left + labelW;
      }
    }
  }

  function drawCatalog(lane, g, y, w) {
    var cs = lane.catalog;
    if (cs.length === 0) return;
    var maxTools = 1;
    cs.forEach(function (c) { if (c.tools > maxTools) maxTools = c.tools; });
    var top = y + CAT_Y, h = CAT_H;
    function yOf(n) { return top + h - (n / maxTools) * h; }
    var end = modelEnd();
    var lo = Math.max(0, lowerBound(cs, 't', view.t0) - 1), hi = lowerBound(cs, 't', view.t1 + 1e-9);
    if (lo >= hi) return;
    var d = '', lastLabel = -1e9;
    for (var i = lo; i < hi; i++) {
      var x = xOf(Math.max(cs[i].t, view.t0), w).toFixed(1), yy = yOf(cs[i].tools).toFixed(1);
      d += i === lo ? 'M' + x + ' ' + yy : 'H' + x + 'V' + yy;
      if (x - lastLabel > 26 && (i === 0 || cs[i].tools !== cs[i - 1].tools)) {
        text(g, +x + 2, Math.max(top + 8, yy - 2), 'catalog-label', String(cs[i].tools));
        lastLabel = +x;
      }
    }
    d += 'H' + xOf(Math.min(end, view.t1), w).toFixed(1);
    var area = d + 'V' + (top + h) + 'H' + xOf(Math.max(cs[lo].t, view.t0), w).toFixed(1) + 'Z';
    el('path', { d: area, 'class': 'catalog-area' }, g);
    el('path', { d: d, 'class': 'catalog', 'data-lane': lane.index }, g);
    el('line', { x1: GUTTER, y1: top + h, x2: GUTTER + w, y2: top + h, 'class': 'lane-sep' }, g);
  }

  function markerShape(g, kind, x, cy, attrs) {
    var n;
    if (kind === 'call-failed') n = el('circle', { cx: x, cy: cy, r: 5 }, g);
    else if (kind === 'retry') n = el('path', { d: 'M' + x + ' ' + (cy - 6) + 'L' + (x + 6) + ' ' + (cy + 5) + 'L' + (x - 6) + ' ' + (cy + 5) + 'Z' }, g);
    else if (kind === 'rate-limit-window') n = el('path', { d: 'M' + x + ' ' + (cy - 6) + 'L' + (x + 6) + ' ' + cy + 'L' + x + ' ' + (cy + 6) + 'L' + (x - 6) + ' ' + cy + 'Z' }, g);
    else n = el('rect', { x: x - 4.5, y: cy - 4.5, width: 9, height: 9 }, g);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) n.setAttribute(k, attrs[k]);
    return n;
  }

  function drawMarkers(lane, g, y, w) {
    var ms = lane.markers, lo = lowerBound(ms, 't', view.t0), hi = lowerBound(ms, 't', view.t1 + 1e-9);
    if (hi - lo > MAX_MARKERS) {
      // aggregate per AGG_PX column: one marker with the count, shaped by
      // the column's most frequent kind
      var i = lo;
      while (i < hi) {
        var col = Math.floor(xOf(ms[i].t, w) / AGG_PX), j = i, counts = Object.create(null), best = '', bestN = 0;
        while (j < hi && Math.floor(xOf(ms[j].t, w) / AGG_PX) === col) {
          counts[ms[j].kind] = (counts[ms[j].kind] || 0) + 1;
          if (counts[ms[j].kind] > bestN) { bestN = counts[ms[j].kind]; best = ms[j].kind; }
          j++;
        }
        // below the band, which stays visible
        var x = col * AGG_PX + AGG_PX / 2, cy = y + BAND_Y + BAND_H + 11;
        markerShape(g, best, x, cy, { 'class': 'marker agg ' + best, 'data-count': j - i, 'data-first': i, 'data-lane': lane.index, 'data-ev': 'a' + i + ':' + j });
        if (j - i > 1) {
          var t = text(g, x, cy + 3, 'agg-count', j - i > 99 ? '99+' : String(j - i));
          t.setAttribute('text-anchor', 'middle');
        }
        i = j;
      }
      return;
    }
    var rows = [];
    for (var r = 0; r < MARK_ROWS; r++) rows.push(-1e9);
    for (var k = lo; k < hi; k++) {
      var m = ms[k], mx = xOf(m.t, w), row = 0;
      while (row < MARK_ROWS && mx - rows[row] < 12) row++;
      if (row === MARK_ROWS) { row = 0; for (var q = 1; q < MARK_ROWS; q++) if (rows[q] < rows[row]) row = q; }
      rows[row] = mx;
      markerShape(g, m.kind, mx, y + MARK_Y + row * MARK_ROW, { 'class': 'marker ' + m.kind, 'data-seq': num(m.ev.seq), 'data-lane': lane.index, 'data-ev': 'm' + k });
    }
  }

  function drawSummary() {
    var s = model.count + (model.count === 1 ? ' event' : ' events') + ', ' + model.lanes.length + (model.lanes.length === 1 ? ' server' : ' servers');
    if (!isNaN(model.start) && model.start > 0) s += ', from ' + new Date(model.start).toISOString() + ' for ' + fmtSpan(modelEnd() - model.start);
    if (model.bad > 0) s += '; ' + model.bad + ' unreadable ' + (model.bad === 1 ? 'line' : 'lines') + ' skipped';
    if (live.url) s += ' · live: ' + live.status;
    document.getElementById('summary').textContent = s;
    var base = isNaN(model.start) ? 0 : model.start;
    document.getElementById('view').textContent = 'showing ' + fmtOffset(view.t0 - base) + ' to ' + fmtOffset(view.t1 - base) + ' (' + fmtSpan(view.t1 - view.t0) + ')';
  }

  // ---- the legend ----

  function legend() {
    var box = document.getElementById('legend');
    function item(draw, label) {
      var span = document.createElement('span');
      span.className = 'item';
      var s = document.createElementNS(NS, 'svg');
      s.setAttribute('width', 16); s.setAttribute('height', 16);
      draw(s);
      span.appendChild(s);
      span.appendChild(document.createTextNode(label));
      box.appendChild(span);
    }
    var title = document.createElement('span');
    title.className = 'title';
    title.textContent = 'states';
    box.appendChild(title);
    Object.keys(STATE_COLORS).forEach(function (st) {
      item(function (s) { el('rect', { x: 1, y: 3, width: 14, height: 10, fill: STATE_COLORS[st] }, s); }, st);
    });
    var t2 = document.createElement('span');
    t2.className = 'title';
    t2.textContent = 'marks';
    box.appendChild(t2);
    MARKERS.forEach(function (mk) {
      item(function (s) { markerShape(s, mk[0], 8, 8, { 'class': 'marker ' + mk[0] }); }, mk[1]);
    });
    item(function (s) { el('rect', { x: 1, y: 2, width: 14, height: 12, 'class': 'window' }, s); }, 'calls fail at once (Retry-After)');
    item(function (s) { el('line', { x1: 8, y1: 1, x2: 8, y2: 15, 'class': 'boundary' }, s); }, 'session opened (gen n)');
    item(function (s) { el('line', { x1: 8, y1: 1, x2: 8, y2: 15, 'class': 'boundary ended' }, s); }, 'session ended');
    item(function (s) { el('path', { d: 'M1 13H6V5H15', 'class': 'catalog' }, s); }, 'tools in the catalog');
    var hint = document.createElement('span');
    hint.className = 'item';
    hint.textContent = 'scroll to zoom, drag to pan, hover a mark for its event; many marks in a few pixels are drawn as one with their count';
    box.appendChild(hint);
  }

  // ---- hover ----

  function describe(e) {
    var rows = [];
    function add(k, v) { if (v !== undefined && v !== null && v !== '' && v !== 0 && v !== false) rows.push([k, String(v)]); }
    add('kind', e.kind);
    add('server', e.server);
    add('seq', e.seq);
    add('time', e.time);
    if (e.kind === 'transition') add('transition', str(e.from) + ' -> ' + str(e.to));
    add('trigger', e.trigger);
    add('guard', e.guard);
    add('op', e.op);
    add('name', e.name);
    var v = e.verdict;
    if (v && typeof v === 'object') {
      add('verdict', v.class);
      add('HTTP status', v.http_status);
      if (v.rpc && typeof v.rpc === 'object') add('JSON-RPC', 'code ' + num(v.rpc.code) + (v.rpc.message ? ' ' + JSON.stringify(String(v.rpc.message)) : '') + (v.rpc.has_id ? '' : ' (null id)'));
      if (num(v.retry_after_ms) > 0) add('Retry-After', fmtSpan(num(v.retry_after_ms)));
      add('method', v.method);
      add('verdict detail', v.detail);
    }
    add('delivery', e.delivery);
    if (num(e.delay_ms) > 0) add('delay', fmtSpan(num(e.delay_ms)));
    add('generation', e.generation);
    add('attempt', e.attempt);
    add('reason', e.reason);
    add('session', e.session_id);
    if (e.kind === 'catalog-changed') add('tools', num(e.tools));
    add('detail', e.detail);
    add('dropped before', e.dropped);
    // fields this page does not know (a newer writer's, a host's tags):
    // shown as they are
    Object.keys(e).forEach(function (k) {
      if (KNOWN_FIELDS.indexOf(k) >= 0) return;
      var v = e[k];
      add(k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
    });
    return rows;
  }
  var KNOWN_FIELDS = ['v', 'kind', 'server', 'seq', 'time', 'from', 'to', 'trigger', 'guard', 'verdict', 'generation',
    'attempt', 'reason', 'lists', 'added', 'removed', 'changed', 'tools', 'op', 'name', 'delivery', 'delay_ms',
    'session_id', 'detail', 'dropped'];

  function showTip(x, y, head, rows) {
    tip.replaceChildren();
    var h = document.createElement('div');
    h.className = 'h';
    h.textContent = head;
    tip.appendChild(h);
    rows.forEach(function (r) {
      var line = document.createElement('div');
      var k = document.createElement('span');
      k.className = 'k';
      k.textContent = r[0] + ': ';
      line.appendChild(k);
      line.appendChild(document.createTextNode(r[1]));
      tip.appendChild(line);
    });
    tip.hidden = false;
    var tw = tip.offsetWidth, th = tip.offsetHeight;
    tip.style.left = Math.min(x + 14, window.innerWidth - tw - 8) + 'px';
    tip.style.top = (y + 14 + th > window.innerHeight ? Math.max(4, y - th - 10) : y + 14) + 'px';
  }

  svg.addEventListener('mousemove', function (ev) {
    if (drag) return;
    var n = ev.target;
    var laneIdx = n.getAttribute && n.getAttribute('data-lane');
    if (laneIdx === null || laneIdx === undefined) { tip.hidden = true; return; }
    var lane = model.lanes[+laneIdx];
    if (!lane) { tip.hidden = true; return; }
    var base = isNaN(model.start) ? 0 : model.start;
    var ref = n.getAttribute('data-ev'), band = n.getAttribute('data-band');
    if (band !== null) {
      var b = lane.bands[+band];
      var rows = [['from', fmtOffset(b.start - base) + ' for ' + fmtSpan(bandEnd(lane, +band) - b.start)]].concat(describe(b.ev));
      showTip(ev.clientX, ev.clientY, b.state, rows);
    } else if (ref && ref[0] === 'm') {
      var m = lane.markers[+ref.slice(1)];
      showTip(ev.clientX, ev.clientY, m.ev.kind + ' at ' + fmtOffset(m.t - base), describe(m.ev));
    } else if (ref && ref[0] === 'b') {
      var bd = lane.boundaries[+ref.slice(1)];
      showTip(ev.clientX, ev.clientY, bd.ev.kind + ' at ' + fmtOffset(bd.t - base), describe(bd.ev));
    } else if (ref && ref[0] === 'a') {
      var parts = ref.slice(1).split(':'), i = +parts[0], j = +parts[1], counts = Object.create(null);
      for (var k = i; k < j; k++) counts[lane.markers[k].ev.kind] = (counts[lane.markers[k].ev.kind] || 0) + 1;
      var list = Object.keys(counts).map(function (kk) { return [kk, String(counts[kk])]; });
      list.push(['span', fmtOffset(lane.markers[i].t - base) + ' to ' + fmtOffset(lane.markers[j - 1].t - base)]);
      list.push(['', 'zoom in to see each one']);
      showTip(ev.clientX, ev.clientY, (j - i) + ' events', list);
    } else if (n.getAttribute('data-count') !== null) {
      showTip(ev.clientX, ev.clientY, n.getAttribute('data-count') + ' short states', [['', 'zoom in to see each one']]);
    } else {
      tip.hidden = true;
    }
  });
  svg.addEventListener('mouseleave', function () { tip.hidden = true; });

  // ---- zoom and pan ----

  var drag = null, pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  }
  function zoom(factor, atT) {
    var span = view.t1 - view.t0, full = modelEnd() - (isNaN(model.start) ? 0 : model.start);
    var next = Math.min(Math.max(span * factor, 0.001), full * 1.5);
    var f = (atT - view.t0) / span;
    view.t0 = atT - f * next;
    view.t1 = view.t0 + next;
    view.follow = false;
    schedule();
  }
  function timeAt(clientX) {
    var r = svg.getBoundingClientRect();
    return view.t0 + (clientX - r.left - GUTTER) / plotWidth() * (view.t1 - view.t0);
  }
  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    zoom(ev.deltaY < 0 ? 1 / 1.25 : 1.25, timeAt(ev.clientX));
  }, { passive: false });
  svg.addEventListener('mousedown', function (ev) {
    drag = { x: ev.clientX, t0: view.t0, t1: view.t1 };
    svg.classList.add('panning');
    tip.hidden = true;
  });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag.x) / plotWidth() * (drag.t1 - drag.t0);
    view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt;
    view.follow = false;
    schedule();
  });
  window.addEventListener('mouseup', function () { drag = null; svg.classList.remove('panning'); });
  svg.addEventListener('dblclick', function (ev) { zoom(1 / 2, timeAt(ev.clientX)); });
  document.getElementById('zoom-in').addEventListener('click', function () { zoom(1 / 2, (view.t0 + view.t1) / 2); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoom(2, (view.t0 + view.t1) / 2); });
  document.getElementById('zoom-fit').addEventListener('click', function () { fit(); schedule(); });
  window.addEventListener('keydown', function (ev) {
    var span = view.t1 - view.t0;
    if (ev.key === '+' || ev.key === '=') zoom(1 / 2, (view.t0 + view.t1) / 2);
    else if (ev.key === '-') zoom(2, (view.t0 + view.t1) / 2);
    else if (ev.key === '0') { fit(); schedule(); }
    else if (ev.key === 'ArrowLeft') { view.t0 -= span / 5; view.t1 -= span / 5; view.follow = false; schedule(); }
    else if (ev.key === 'ArrowRight') { view.t0 += span / 5; view.t1 += span / 5; view.follow = false; schedule(); }
  });
  window.addEventListener('resize', schedule);

  // ---- live ----

  var live = { url: document.body.getAttribute('data-live') || '', status: 'connecting', lastId: 0 };
  // the id of the last event the page holds, from the stream's ?after=
  var afterParam = /[?&]after=(\d+)/.exec(live.url);
  if (afterParam) live.lastId = +afterParam[1];
  function startLive() {
    if (!live.url || typeof EventSource === 'undefined') return;
    var src = new EventSource(live.url);
    src.onopen = function () { live.status = 'connected'; schedule(); };
    src.onerror = function () { live.status = 'reconnecting'; schedule(); };
    src.onmessage = function (msg) {
      var id = +msg.lastEventId;
      if (id <= live.lastId) { window.location.reload(); return; } // a new server: its page has it all
      live.lastId = id;
      try { addEvent(JSON.parse(msg.data)); } catch (err) { model.bad++; }
      if (view.follow) fit();
      schedule();
    };
  }

  // Render synchronously: a page dump taken at load sees the drawing.
  var t0 = performance.now();
  readEmbedded();
  fit();
  legend();
  render();
  document.body.setAttribute('data-render-ms', (performance.now() - t0).toFixed(1));
  document.body.setAttribute('data-ready-ms', performance.now().toFixed(1));
  document.body.setAttribute('data-rendered', 'true');
  startLive();
})();
