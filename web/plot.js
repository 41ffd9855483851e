/*
 * The page's figures, drawn as SVG in the house style of the gnuplot
 * figures (scripts/style.gp): DejaVu Sans, a left and bottom border with
 * the tics outside, a light grey grid, the Okabe-Ito colours in the same
 * order, batch sizes on a log2 axis with a tic at each size run, log y
 * axes with tics at 1, 2 and 5 per decade, and the published setting
 * drawn black and thicker than everything else. Two kinds of figure:
 * lines over batch size (bnPlot.lines) and grouped bars per feature
 * (bnPlot.bars). Every point carries its value as bnstudy printed it
 * (data-value, %.17g), which the browser test reads back.
 */
'use strict';
(function () {
  const NS = 'http://www.w3.org/2000/svg';
  const colours = {
    blue: '#0072B2', vermilion: '#D55E00', green: '#009E73',
    orange: '#E69F00', sky: '#56B4E9', purple: '#CC79A7',
    grey: '#999999', black: '#000000', grid: '#d8d8d8'
  };
  const W = 640, H = 420, FONT = 14, LINE = 2.4, PUBLISHED = 5;
  /* 0 up to rounding (plot_parts.h's EXACT). */
  const EXACT = 1e-12;

  function el(parent, name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {}))
      e.setAttribute(k, v);
    if (text !== undefined)
      e.textContent = text;
    parent.appendChild(e);
    return e;
  }

  /* The canvas, its title and a note under it (each may be several
   * lines, as bnstudy plot words them); returns the height they take
   * past the first line. */
  function start(svg, title, note) {
    while (svg.firstChild)
      svg.removeChild(svg.firstChild);
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('font-family', '"DejaVu Sans", Verdana, sans-serif');
    svg.setAttribute('font-size', FONT);
    el(svg, 'rect', { width: W, height: H, fill: 'white' });
    el(svg, 'title', { id: svg.id + '-title' },
       [title, note].filter(t => t).join('. ').replace(/\n/g, ' '));
    /* Lines 1.3 times their font size apart, so that no two touch. */
    let y = 20;
    for (const line of (title || '').split('\n')) {
      el(svg, 'text', { x: W / 2, y, 'text-anchor': 'middle',
                        'font-size': FONT + 2, class: 'title' }, line);
      y += Math.ceil((FONT + 2) * 1.3);
    }
    for (const line of note ? note.split('\n') : []) {
      el(svg, 'text', { x: W / 2, y, 'text-anchor': 'middle', fill: colours.vermilion,
                        'font-size': FONT - 1, class: 'note' }, line);
      y += Math.ceil((FONT - 1) * 1.3);
    }
    return y - 20 - Math.ceil((FONT + 2) * 1.3);
  }

  /* Tics for a linear axis: steps of 1, 2 or 5 times a power of ten. */
  function linearTicks(lo, hi) {
    const raw = (hi - lo) / 5;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(m => m * p).find(s => s >= raw);
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
      out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    return out;
  }

  /* Tics for a log axis: 1, 2 and 5 per decade (style.gp's log_ytics),
   * only 1 per decade when the range spans many. */
  function logTicks(lo, hi) {
    const out = [], wide = Math.log10(hi / lo) > 4;
    for (let d = Math.floor(Math.log10(lo)); d <= Math.ceil(Math.log10(hi)); d++)
      for (const m of wide ? [1] : [1, 2, 5]) {
        const t = m * Math.pow(10, d);
        if (t >= lo && t <= hi)
          out.push(t);
      }
    return out;
  }

  function fmt(v) {
    if (v === 0)
      return '0';
    const a = Math.abs(v);
    if (a >= 1e5 || a < 1e-3)
      return v.toExponential(0).replace('e+', 'e');
    return String(Number(v.toPrecision(6)));
  }

  /* A plot area: scales, grid, border, tics and labels. */
  function frame(svg, box, o) {
    const { x0, y0, w, h } = box;
    const lx = o.xlog ? Math.log2 : v => v, ly = o.ylog ? Math.log10 : v => v;
    const X = v => x0 + (lx(v) - lx(o.xlo)) / (lx(o.xhi) - lx(o.xlo)) * w;
    const Y = v => y0 + h - (ly(v) - ly(o.ylo)) / (ly(o.yhi) - ly(o.ylo)) * h;
    const g = el(svg, 'g', { class: 'frame' });
    /* On a log axis with a floor, the floor's tic says 0 and the tics
     * start a quarter decade above it. */
    const yt = o.ylog ? logTicks(o.ylo, o.yhi).filter(t => !(t < o.yfloor * Math.pow(10, 0.25))) : linearTicks(o.ylo, o.yhi);
    const label = t => t === o.yfloor ? '0' : fmt(t);
    if (o.ylog && o.yfloor > 0)
      yt.unshift(o.yfloor);
    for (const t of yt) {
      el(g, 'line', { x1: x0, x2: x0 + w, y1: Y(t), y2: Y(t),
                      stroke: colours.grid, 'stroke-width': 1 });
      el(g, 'line', { x1: x0, x2: x0 - 5, y1: Y(t), y2: Y(t), stroke: 'black' });
      el(g, 'text', { x: x0 - 8, y: Y(t) + FONT * 0.35,
                      'text-anchor': 'end' }, label(t));
    }
    for (const t of o.xticks) {
      if (o.xgrid !== false)
        el(g, 'line', { x1: X(t.at), x2: X(t.at), y1: y0, y2: y0 + h,
                        stroke: colours.grid, 'stroke-width': 1 });
      el(g, 'line', { x1: X(t.at), x2: X(t.at), y1: y0 + h, y2: y0 + h + 5,
                      stroke: 'black' });
      el(g, 'text', { x: X(t.at), y: y0 + h + 8 + FONT,
                      'text-anchor': 'middle' }, t.label);
    }
    for (const t of o.x2ticks || []) {
      el(g, 'line', { x1: X(t.at), x2: X(t.at), y1: y0, y2: y0 - 5,
                      stroke: 'black' });
      el(g, 'text', { x: X(t.at), y: y0 - 9, 'text-anchor': 'middle',
                      'font-size': FONT - 3 }, t.label);
    }
    el(g, 'polyline', { points: `${x0},${y0} ${x0},${y0 + h} ${x0 + w},${y0 + h}`,
                        fill: 'none', stroke: 'black', 'stroke-width': 1.2 });
    el(g, 'text', { x: x0 + w / 2, y: y0 + h + 2 * FONT + 14,
                    'text-anchor': 'middle' }, o.xlabel || '');
    /* The y label clear of the widest tic label. */
    const wide = Math.max(0, ...yt.map(t => label(t).length));
    const yl = el(g, 'text', { 'text-anchor': 'middle',
                               transform: `translate(${Math.min(x0 - 54, x0 - 18 - wide * FONT * 0.62)},${y0 + h / 2}) rotate(-90)` },
                  o.ylabel);
    yl.setAttribute('font-size', FONT - 1);
    return { X, Y };
  }

  function marker(g, shape, x, y, colour, attrs) {
    const r = 4.2;
    let m;
    if (shape === 'square')
      m = el(g, 'rect', { x: x - r, y: y - r, width: 2 * r, height: 2 * r });
    else if (shape === 'diamond')
      m = el(g, 'polygon', { points: `${x},${y - r * 1.3} ${x + r * 1.3},${y} ${x},${y + r * 1.3} ${x - r * 1.3},${y}` });
    else
      m = el(g, 'circle', { cx: x, cy: y, r });
    m.setAttribute('fill', colour);
    for (const [k, v] of Object.entries(attrs))
      m.setAttribute(k, v);
    return m;
  }

  /* A key entry per item, each of its label's lines under the first. */
  function legend(svg, box, items, where) {
    const lineH = FONT * 1.35, x = where === 'right' ? box.x0 + box.w - 8 : box.x0 + 12;
    const g = el(svg, 'g', { class: 'legend' });
    let y = box.y0 + 14;
    for (const s of items) {
      const sx = where === 'right' ? x - 30 : x;
      el(g, 'line', { x1: sx, x2: sx + 30, y1: y, y2: y, stroke: s.colour,
                      'stroke-width': s.width || LINE,
                      'stroke-dasharray': s.dash || 'none' });
      for (const line of s.label.split('\n')) {
        el(g, 'text', { x: where === 'right' ? sx - 8 : sx + 38, y: y + FONT * 0.35,
                        'text-anchor': where === 'right' ? 'end' : 'start' }, line);
        y += lineH;
      }
    }
  }

  /*
   * Lines over batch size. spec: title, note, xlabel, ylabel, ylog, bs (the
   * batch sizes run), x2 (a top-axis label per batch size, optional),
   * current (the batch size the settings hold), legend ('left' or
   * 'right'), series: [{key, label, colour, width, shape, points: [{x, y,
   * text}]}], labels: [{x, y, text, colour}].
   */
  function lines(svg, spec) {
    const head = start(svg, spec.title, spec.note);
    const box = { x0: 76, y0: (spec.x2 ? 62 : 44) + head, w: W - 76 - 18, h: 0 };
    box.h = H - box.y0 - 64;
    /* A log axis draws the values that are 0 up to rounding on a floor
     * half a decade under the smallest other value, labelled 0, as
     * bnstudy plot does (curves.gp); all of them 0, a linear axis. */
    const ys = spec.series.flatMap(s => s.points.map(p => p.y)).filter(Number.isFinite);
    const pos = ys.filter(v => v >= EXACT);
    const ylog = Boolean(spec.ylog) && pos.length > 0;
    const zero = ylog && pos.length < ys.length;
    const floorY = zero ? Math.pow(10, Math.floor(Math.log10(Math.min(...pos))) - 0.5) : NaN;
    const yv = v => zero && v < EXACT ? floorY : v;
    /* Headroom above the data for the legend, a line per line of it. */
    const n = spec.series.reduce((k, s) => k + s.label.split('\n').length, 0);
    let ylo = 0, yhi = Math.max(...ys, 0) * (1.1 + 0.11 * n) || 1;
    if (ylog) {
      const lo = zero ? floorY : Math.min(...pos), hi = Math.max(...pos);
      ylo = lo / 1.6;
      yhi = hi * Math.pow(hi / ylo, 0.12 * n) * 1.5;
    }
    /* Batch sizes on a log2 axis; another x (epochs) on a linear one,
     * its tics thinned to about ten. */
    const xlog = spec.xlog !== false, xs = spec.bs;
    const xlo = xlog ? Math.min(...xs) / 1.5 : Math.min(...xs) - 0.5;
    const xhi = xlog ? Math.max(...xs) * 1.3 : Math.max(...xs) + 0.5;
    const every = xlog ? 1 : Math.ceil(xs.length / 10);
    const { X, Y } = frame(svg, box, {
      xlog, ylog, xlo, xhi, ylo, yhi, yfloor: floorY,
      xticks: xs.filter((b, i) => i % every === 0).map(b => ({ at: b, label: String(b) })),
      x2ticks: spec.x2 ? spec.bs.map(b => ({ at: b, label: spec.x2[b] })) : null,
      xlabel: spec.xlabel, ylabel: spec.ylabel
    });
    if (spec.current) {
      el(svg, 'line', { x1: X(spec.current), x2: X(spec.current), y1: box.y0,
                        y2: box.y0 + box.h, stroke: colours.grey,
                        'stroke-dasharray': '4 4', 'stroke-width': 1.5 });
    }
    for (const s of spec.series) {
      const g = el(svg, 'g', { class: 'series', 'data-series': s.key });
      const pts = s.points.filter(p => Number.isFinite(p.y) && (!ylog || yv(p.y) > 0));
      el(g, 'polyline', { points: pts.map(p => `${X(p.x)},${Y(yv(p.y))}`).join(' '),
                          fill: 'none', stroke: s.colour,
                          'stroke-width': s.width || LINE, 'stroke-dasharray': s.dash || 'none',
                          'stroke-linejoin': 'round' });
      for (const p of pts) {
        const m = marker(g, s.shape, X(p.x), Y(yv(p.y)), s.colour,
                         { 'data-x': p.x, 'data-value': p.text });
        el(m, 'title', {}, `${spec.xname || 'B'} ${p.x}: ${s.label.replace(/\n/g, ' ')}, ${p.text}`);
      }
    }
    /* Each label over its point, or under it, or further off, where it
     * does not fall on a label already placed (two series close
     * together). */
    const placed = [], LH = FONT;
    for (const l of spec.labels || []) {
      const x = X(l.x), y = Y(yv(l.y)), w = l.text.length * (FONT - 2) * 0.62;
      const free = ty => placed.every(q => Math.abs(q.x - x) > (q.w + w) / 2 + 2 || Math.abs(q.y - ty) > LH + 1);
      const ty = [y - 10, y + LH + 8, y - 10 - LH - 2, y + 2 * LH + 10].find(free) ?? y - 10;
      placed.push({ x, y: ty, w });
      el(svg, 'text', { x, y: ty, 'text-anchor': 'middle',
                        fill: l.colour, 'font-size': FONT - 2 }, l.text);
    }
    legend(svg, box, spec.series, spec.legend);
  }

  /*
   * Grouped bars per feature, in panels side by side. spec: title, note,
   * panels: [{xlabel, ylabel, names, ref: {y, label}, bars: [{key, label,
   * colour, values: [{y, text}]}]}].
   */
  function bars(svg, spec) {
    const head = start(svg, spec.title, spec.note);
    const n = spec.panels.length, gap = 84, x0 = 76;
    const pw = (W - x0 - 18 - gap * (n - 1)) / n;
    spec.panels.forEach((p, i) => {
      const box = { x0: x0 + i * (pw + gap), y0: 44 + head, w: pw, h: H - 44 - head - 86 };
      const ys = p.bars.flatMap(b => b.values.map(v => v.y)).concat([p.ref.y]);
      let ylo = Math.min(0, ...ys), yhi = Math.max(0, ...ys);
      const pad = (yhi - ylo) * 0.12 || 1;
      yhi += pad;
      if (ylo < 0)
        ylo -= pad;
      const k = p.names.length;
      const { X, Y } = frame(svg, box, {
        xlo: 0.4, xhi: k + 0.6, ylo, yhi, xgrid: false,
        xticks: k <= 12 ? p.names.map((name, j) => ({ at: j + 1, label: name })) : [],
        xlabel: p.xlabel, ylabel: p.ylabel
      });
      const bw = Math.min(0.8 / p.bars.length, 0.3);
      p.bars.forEach((b, bi) => {
        const g = el(svg, 'g', { class: 'series', 'data-series': b.key });
        b.values.forEach((v, j) => {
          const cx = j + 1 + (bi - (p.bars.length - 1) / 2) * bw;
          const xa = X(cx - bw / 2), xb = X(cx + bw / 2);
          const ya = Y(Math.max(v.y, 0)), yb = Y(Math.min(v.y, 0));
          const r = el(g, 'rect', { x: xa, y: ya, width: Math.max(xb - xa - 1, 1),
                                    height: Math.max(yb - ya, 0.5), fill: b.colour,
                                    'data-feature': p.names[j], 'data-value': v.text });
          el(r, 'title', {}, `${p.names[j]}: ${b.label}, ${v.text}`);
        });
      });
      el(svg, 'line', { x1: box.x0, x2: box.x0 + box.w, y1: Y(p.ref.y), y2: Y(p.ref.y),
                        stroke: 'black', 'stroke-width': 1.8, 'stroke-dasharray': '6 4' });
      if (ylo < 0)
        el(svg, 'line', { x1: box.x0, x2: box.x0 + box.w, y1: Y(0), y2: Y(0),
                          stroke: 'black', 'stroke-width': 0.8 });
      p.legendRef = { label: p.ref.label, colour: 'black', dash: '6 4', width: 1.8 };
    });
    /* One legend under the panels, wrapped into rows, each label once. */
    const items = spec.panels.flatMap(p => p.bars).concat(spec.panels.map(p => p.legendRef))
      .filter((s, i, all) => all.findIndex(t => t.label === s.label) === i);
    const g = el(svg, 'g', { class: 'legend' });
    let x = x0, y = H - 2 * FONT * 1.3 + 4;
    for (const s of items) {
      const wText = s.label.length * FONT * 0.56 + 44;
      if (x > x0 && x + wText > W - 18) { x = x0; y += FONT * 1.3; }
      if (s.dash)
        el(g, 'line', { x1: x, x2: x + 26, y1: y - 4, y2: y - 4, stroke: s.colour,
                        'stroke-width': s.width, 'stroke-dasharray': s.dash });
      else
        el(g, 'rect', { x, y: y - 11, width: 26, height: 12, fill: s.colour });
      el(g, 'text', { x: x + 32, y }, s.label);
      x += wText;
    }
  }

  /* A series' colour by the role bnstudy plot gives it (srole), with its
   * name (sname) and its place i (1, 2, ...) of n: scripts/style.gp's
   * series_colour, so a series has the colour it has in the figures. */
  const cycle = ['blue', 'vermilion', 'green', 'orange', 'sky', 'purple', 'grey']
    .map(c => colours[c]);
  const seqStops = ['#0D0887', '#4C02A1', '#7E03A8', '#A92395', '#CC4778', '#E56B5D', '#F89441'];
  const indexColour = i => cycle[(i - 1) % cycle.length];
  function seriesColour(role, name, i, n) {
    if (role === 'published')
      return colours.black;
    if (role === 'seq')
      return seqStops[n < 2 ? 0 : Math.floor((i - 1) * (seqStops.length - 1) / (n - 1) + 0.5)];
    if (role === 'order')
      return name === 'shuffled' ? colours.blue
        : name.startsWith('sorted') ? colours.vermilion : indexColour(i + 2);
    if (role === 'estimator')
      return { 'ema-debiased': colours.vermilion, cumulative: colours.blue,
               precise: colours.green, ema: colours.orange }[name] || indexColour(i + 4);
    return indexColour(i);
  }

  window.bnPlot = { lines, bars, colours, seriesColour, PUBLISHED, LINE };
})();
