/*
 * The page: controls built from bnstudy's own tables, and every change run
 * through the C core compiled to WebAssembly (web/glue.c, `make web`), in
 * a worker (worker.js).
 * The controls are the rows of the key table (src/study/exp.c) a run of the
 * layer model reads, each drawn by its type: its choices, its range, its
 * default and its help text come from the table, the orders from the
 * order table and the estimators' help from theirs, so a new key, order or
 * estimator appears here without an edit. The settings go to the core as
 * `bnstudy run --set` takes them ("section.key=value" lines), and the
 * numbers come back formatted by bnstudy's own writers, so the page shows
 * exactly what `bnstudy run` prints. Besides the run itself, each change
 * reruns the batch sizes 8 to 256 for the figures, for the order chosen,
 * shuffled and sorted, and for the published setting (every key at its
 * default) on the same population. What the figures say (their titles
 * and findings, labels, axes and series roles) is what bnstudy plot says
 * of the same rows (web_figures), not words of the page's own.
 */
'use strict';
(async function main() {
  /* The core runs in a worker (worker.js); its first word is the tables. */
  let worker;
  const T = JSON.parse(await new Promise((ok, fail) => {
    worker = new Worker('worker.js');
    worker.onmessage = e => e.data.error ? fail(new Error(e.data.error)) : ok(e.data.tables);
    worker.onerror = e => fail(new Error(e.message));
  }));
  const C = bnPlot.colours;
  const $ = id => document.getElementById(id);

  /* ---- the keys the page sets ---- */

  const LAYER = T.models.findIndex(m => m.name === 'layer');
  const TYPES = ['uint', 'feature', 'reals', 'uints', 'choices', 'orders'];
  /* The layer's keys; [model] type, which would choose another model,
   * is not the page's to set, nor [maps], which would make its
   * population feature maps, nor drift_size, which moves nothing
   * without a drift profile (a type the page has no control for), nor
   * the classes, which only the classifier's section reads. */
  const keys = T.keys.filter(k => k.section && TYPES.includes(k.type) &&
                                  (k.models & (1 << LAYER)) &&
                                  k.section !== 'model' && k.section !== 'maps' &&
                                  k.name !== 'drift_size' && k.name !== 'classes');
  const kid = k => `${k.section}.${k.name}`;
  const FEATURE = keys.find(k => k.type === 'feature');
  const ORDER = keys.find(k => k.type === 'orders');
  const BATCH = keys.find(k => k.name === 'batch_size');
  const ROWS = keys.find(k => k.section === FEATURE.section && k.name === 'rows');
  /* Orders that need a population file's label or group column are left
   * out: the page generates its population. */
  const orders = T.orders.filter(o => ['none', 'feature', 'count'].includes(o.arg));

  const short = s => String(Number(s));
  /* A list item as exp_values.c's tokenizer reads it: quoted when it holds a
   * space, a comma or a quote. */
  const token = s => /[\s,"]/.test(s) || s === '' ? `"${s.replace(/"/g, '""')}"` : s;
  const untoken = s => s.startsWith('"') ? s.slice(1, -1).replace(/""/g, '"') : s;
  const shellWord = s => /^[A-Za-z0-9_.,:=+\/@%-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

  const state = {};
  function setDefaults() {
    clfDefaults();
    causeDefaults();
    for (const k of keys)
      if (k !== FEATURE)
        state[kid(k)] = k.default;
    state.features = T.features.map(f => ({
      name: f.name, mean: short(f.mean), sd: short(f.sd), rho: short(f.rho)
    }));
  }
  const featureLine = f => `${token(f.name)} ${f.mean} ${f.sd} ${f.rho}`;
  const defaultFeatures = T.features.map(f =>
    featureLine({ name: f.name, mean: short(f.mean), sd: short(f.sd), rho: short(f.rho) })).join('\n');
  const featuresChanged = () => state.features.map(featureLine).join('\n') !== defaultFeatures;

  /* The settings as --set lines; over replaces some of them. */
  /* A file given to the page (your data, below) replaces the generated
   * population: its keys are left out, and population.file names it. */
  let fileInfo = null;
  const generated = k => !(fileInfo && k.section === FEATURE.section);
  const fileLines = () => fileInfo ? [`${FEATURE.section}.file=${fileInfo.name}`] : [];
  function setsText(over) {
    const s = Object.assign({}, state, over || {});
    const lines = keys.filter(k => k !== FEATURE && generated(k)).map(k => `${kid(k)}=${s[kid(k)]}`);
    for (const f of generated(FEATURE) ? s.features : [])
      lines.push(`${kid(FEATURE)}=${featureLine(f)}`);
    return lines.concat(fileLines()).join('\n');
  }

  /* The same settings as a command: an option for each axis (its name
   * with dashes, as bnstudy's cli_key_options makes it), --set for the
   * other keys; only what differs from the defaults. */
  function commandArgs(only) {
    const args = fileInfo ? ['--population', fileInfo.name] : [];
    for (const k of (only || keys).filter(generated)) {
      if (k === FEATURE) {
        if (featuresChanged())
          for (const f of state.features)
            args.push('--set', `${kid(k)}=${featureLine(f)}`);
      } else if (state[kid(k)] !== k.default) {
        if (k.nest > 0)
          args.push(`--${k.name.replace(/_/g, '-')}`, state[kid(k)]);
        else
          args.push('--set', `${kid(k)}=${state[kid(k)]}`);
      }
    }
    return args;
  }
  const command = () => ['./bnstudy', 'run'].concat(commandArgs()).map(shellWord).join(' ');

  /* The published setting: every axis at its default, on the population
   * the page holds. */
  const axes = keys.filter(k => k.nest > 0);
  const isPublished = () => axes.every(k => state[kid(k)] === k.default);
  const publishedOver = () => Object.fromEntries(axes.map(k => [kid(k), k.default]));

  /* ---- running ---- */

  function parseTsv(text) {
    const lines = text.split('\n').filter(l => l !== '');
    const header = lines[0].split('\t');
    const rows = lines.slice(1).map(l => {
      const v = l.split('\t');
      return Object.fromEntries(header.map((h, i) => [h, v[i]]));
    });
    return { header, rows };
  }

  /* The figures' batch sizes: the study's 8 to 256, doubling, within the
   * population, and the one the settings hold. */
  function batchSizes(n, b) {
    const bs = [];
    for (let x = 8; x <= 256 && x <= n; x *= 2)
      bs.push(x);
    if (Number.isInteger(b) && !bs.includes(b))
      bs.push(b);
    return bs.sort((x, y) => x - y);
  }

  /* Batch sizes by order for the figures, as one product; when a setting
   * is refused at some batch size (a partial batch of one row, say), the
   * worker runs them one by one and keeps those that run. */
  function sweepCall(over, bs, orderTokens) {
    /* Batch size and order replace the state's (a key set twice is
     * refused, as bnstudy run refuses it). */
    const with_ = (b, o) => setsText(Object.assign({}, over, { [kid(BATCH)]: b, [kid(ORDER)]: o }));
    const each = orderTokens.flatMap(o => bs.map(b => with_(b, o)));
    return { sets: with_(bs.join(' '), orderTokens.join(' ')), each };
  }
  const sweepRows = answer => typeof answer === 'string'
    ? parseTsv(answer).rows : answer.map(t => parseTsv(t).rows[0]);

  /* A job: the settings as they are now, and the calls that answer
   * them; the page shows each job's answer with that job's settings. */
  let jobs = 0;
  function makeJob() {
    const n = fileInfo ? fileInfo.rows : Number(state[kid(ROWS)]), b = Number(state[kid(BATCH)]);
    const bs = batchSizes(n, b), ord = state[kid(ORDER)];
    const calls = [{ sets: setsText(), features: true },
                   sweepCall({}, bs, [...new Set([ord, 'shuffled', 'sorted'])])];
    const published = isPublished();
    if (!published)
      calls.push(sweepCall(publishedOver(), bs, [ORDER.default]));
    /* The figures bnstudy plot draws of the sweep's rows of the order
     * chosen, of all its orders, and of the run itself. */
    const sets = calls[0].sets;
    const figures = [{ sets, from: 1, order: untoken(ord) }, { sets, from: 1 },
                     { sets, from: 0, features: true }];
    return { id: ++jobs, t0: performance.now(), calls, figures, bs, n, ord: untoken(ord), published,
             command: command(), lists: keys.filter(k => k !== FEATURE && /[\s,]/.test(state[kid(k)])) };
  }

  /* One job in the worker at a time, and the newest waiting; a worker
   * still busy after a while when the settings change is replaced. */
  let busy = null, waiting = null;
  /* Set with the link's code below: the link kept up to date, a link the
   * core refuses, and whether the job in hand is a link's. */
  let saveLink = () => {}, linkRefused = null, linkPending = false;
  window.bnIdle = false;
  function listen() {
    /* A worker that fails (out of memory, say) is replaced, and the
     * failure shown as a refusal is. */
    worker.onerror = e => {
      e.preventDefault();
      busy = null;
      restart();
      refuse(e.message, 'The computation stopped');
      if (waiting)
        send();
      window.bnIdle = !busy && !waiting;
      $('busy').hidden = !busy;
      afterLayer();
    };
    worker.onmessage = e => {
      if (!e.data.answers || !busy || e.data.id !== busy.id)
        return;
      const job = busy;
      busy = null;
      show(job, e.data.answers, e.data.runs, e.data.figures);
      if (waiting)
        send();
      window.bnIdle = !busy && !waiting;
      $('busy').hidden = !busy;
      afterLayer();
    };
  }
  function send() {
    busy = waiting;
    waiting = null;
    busy.sent = performance.now();
    worker.postMessage({ id: busy.id, calls: busy.calls, figures: busy.figures });
    /* Say so when an answer takes long. */
    const id = busy.id;
    setTimeout(() => { if (busy && busy.id === id) $('busy').hidden = false; }, 150);
  }
  /* The sections below the layer (the classifier, the other causes)
   * rerun after the layer's answer: the numbers a knob moves first come
   * first, and the sections never take the cores from it. */
  let belowPending = false;
  const computeAll = () => { belowPending = true; compute(); };
  const afterLayer = () => {
    if (belowPending && !busy && !waiting) {
      belowPending = false;
      computeClf();
      computeCauses();
    }
  };
  function compute() {
    window.bnIdle = false;
    saveLink();
    waiting = makeJob();
    waiting.fromLink = linkPending;
    if (!busy)
      return send();
    if (performance.now() - busy.sent > 250) {
      restart();
      busy = null;
      send();
    }
  }
  function restart() {
    worker.terminate();
    worker = new Worker('worker.js');
    giveTo(worker);
    listen();
  }

  window.bnTimings = [];
  function show(job, answers, runs, figures) {
    const text = answers[0];
    const fromLink = job.fromLink;
    linkPending = false;
    if (text.startsWith('!') && fromLink)
      return linkRefused(`bnstudy run refuses them: ${text.slice(1)}`);
    if (text.startsWith('!'))
      return refuse(text.slice(1));
    const [sumText, featText] = text.split('\n\n');
    const summary = parseTsv(sumText), features = parseTsv(featText);
    if (summary.rows.length !== 1) {
      /* A list typed into a field: name the key, as bnstudy run's
       * one-configuration check does; it is the one whose column varies,
       * or failing that (the same value twice) one that held a list. */
      const [a, b] = summary.rows, col = summary.header.find(h => a[h] !== b[h]);
      const k = keys.find(x => x.name === col) || job.lists[0];
      const value = job.calls[0].sets.split('\n').find(l => l.startsWith(`${kid(k)}=`));
      return refuse(`--set ${value}: one value at a time (a sweep takes lists)`);
    }
    refuse(null);
    const row = summary.rows[0];
    showScores(summary.header, row);
    showFeatures(features);
    $('command').textContent = job.command;
    $('tsv').textContent = text;

    const rows = sweepRows(answers[1]);
    const pub = job.published ? null : sweepRows(answers[2]);
    const b = Number(row[BATCH.name]);
    const [mine, orders, run] = figures.map(f => f.startsWith('!') ? [] : JSON.parse(f));
    plotBatch(rows, pub, job.bs, b, job.ord, figureOf(mine, 'stats-err'));
    plotOrder(rows, job.bs, b, figureOf(orders, 'train-eval'));
    plotFeatures(features.rows, figureOf(run, 'features'));
    plotWeight(rows, pub, job.bs, b, job.ord, figureOf(mine, 'init-weight'),
               figureOf(mine, 'stats-err'));
    caption('plot-batch', mine, 'stats-err');
    caption('plot-order', orders, 'train-eval');
    caption('plot-features', run, 'features');
    caption('plot-weight', mine, 'init-weight');

    /* Timed from the change to the page laid out anew (reading a size
     * forces the layout), as the browser test reports it. */
    void document.body.offsetHeight;
    const ms = performance.now() - job.t0;
    window.bnTimings.push(ms);
    $('timing').textContent = `Answered in ${ms.toFixed(1)} ms (${runs} calls into the core).`;
  }

  function refuse(msg, lead = 'bnstudy run refuses these settings') {
    const box = $('error');
    document.querySelectorAll('[aria-invalid="true"]').forEach(e => e.removeAttribute('aria-invalid'));
    $('results').classList.toggle('stale', !!msg);
    box.hidden = !msg;
    if (!msg)
      return;
    box.textContent = `${lead}: ${msg}`;
    /* The key the message blames, by the --set it names. */
    const m = /--set ([a-z_]+\.[a-z_]+)=/.exec(msg);
    if (m)
      document.querySelectorAll(`[data-key="${m[1]}"]`).forEach(e => e.setAttribute('aria-invalid', 'true'));
  }

  /* ---- the numbers ---- */

  function cell(tr, tag, text, attrs) {
    const c = document.createElement(tag);
    c.textContent = text;
    for (const [k, v] of Object.entries(attrs || {}))
      c.setAttribute(k, v);
    tr.appendChild(c);
    return c;
  }

  const scoreNames = T.scores.filter(s => s.models & (1 << LAYER)).map(s => s.name);
  const HEADLINE = ['stats_err', 'train_eval_rmse', 'init_weight'];
  function showScores(header, row) {
    const scores = $('scores'), keyTable = $('keys');
    scores.replaceChildren();
    keyTable.replaceChildren();
    for (const name of header) {
      const s = T.scores.find(x => x.name === name);
      const tr = document.createElement('tr');
      cell(tr, 'th', name, { scope: 'row' });
      cell(tr, 'td', row[name], { class: 'num', 'data-col': name });
      if (s) {
        cell(tr, 'td', s.definition, { class: 'def' });
        scores.appendChild(tr);
      } else {
        keyTable.appendChild(tr);
      }
    }
    const head = $('headline');
    head.replaceChildren();
    for (const name of HEADLINE.filter(n => scoreNames.includes(n))) {
      const d = document.createElement('div');
      d.className = 'big';
      cell(d, 'span', name, { class: 'name' });
      cell(d, 'span', Number(row[name]).toPrecision(4), { class: 'value' });
      cell(d, 'span', row[name], { class: 'exact' });
      cell(d, 'span', T.scores.find(x => x.name === name).definition, { class: 'def' });
      head.appendChild(d);
    }
  }

  function showFeatures(f) {
    const cols = ['feature', 'true_mean', 'running_mean', 'true_var', 'running_var'];
    const t = $('features');
    t.replaceChildren();
    const tr = document.createElement('tr');
    for (const c of cols)
      cell(tr, 'th', c, { scope: 'col' });
    t.appendChild(tr);
    for (const r of f.rows) {
      const tr = document.createElement('tr');
      cols.forEach((c, i) => cell(tr, i ? 'td' : 'th', r[c],
        i ? { class: 'num', 'data-feature': r.feature, 'data-col': c } : { scope: 'row' }));
      t.appendChild(tr);
    }
  }

  /* ---- the figures ---- */

  /* What each figure says is bnstudy plot's (web_figures): the title and
   * its finding where the numbers bear one out, the notes, the axes'
   * labels and scales, and each series' label and colour role, for the
   * same rows as the page draws. Their texts are gnuplot's enhanced text:
   * its escapes and bold markup are taken off here. */
  const figureOf = (list, name) => {
    const f = list.find(x => x.name === name);
    return f ? f.values : null;
  };
  /* A figure's caption: its title and findings, then what it draws, in
   * bnstudy plot's words (its kind table's), or why there is none. */
  function caption(id, list, name) {
    const f = list.find(x => x.name === name);
    const v = f ? f.values : {};
    const said = [v.title, v.note, v.worst_text, v.wlabel, v.labnote].map(plain)
      .filter(t => t).map(t => t.replace(/\n/g, ' ').replace(/[.:]?$/, '.'));
    $(`${id}-caption`).textContent = f
      ? `${said.join(' ')} What it draws: ${plain(f.what)}.`
      : 'bnstudy plot draws no such figure of these rows (it needs two or more update counts among the runs).';
  }
  const plain = s => String(s || '').replace(/\{\/:Bold ([^}]*)\}/g, '$1').replace(/\\(.)/g, '$1');
  const first = a => plain(Array.isArray(a) ? a[0] : a);
  /* A log y axis where bnstudy plot draws one; values 0 up to rounding
   * go on its floor (plot.js), as they do in bnstudy plot's figure. */
  const logScale = v => Boolean(v.ylog && v.ylog[0]);
  /* gnuplot's x2tics, "\"64\" 8, \"32\" 16": the top label by batch size. */
  const topTics = tics => Object.fromEntries([...String(tics || '').matchAll(/"([^"]*)" ([^,]+)/g)]
    .map(m => [Number(m[2]), `T=${m[1]}`]));

  const points = (rows, order, col) => rows.filter(r => r.order === order)
    .map(r => ({ x: Number(r.batch_size), y: Number(r[col]), text: r[col] }));
  const settingText = () =>
    `momentum ${state['layer.momentum']} ${state['layer.momentum_weights']}, ${state['layer.estimator']}`;

  /* A score over batch size for these settings and, beside it, the
   * published setting's, black and thicker than the rest (style.gp);
   * when these settings are the published ones, they are drawn so. */
  function againstPublished(rows, pub, ord, col, label) {
    const mine = {
      key: col, colour: pub ? C.vermilion : C.black, shape: 'square',
      width: pub ? bnPlot.LINE : bnPlot.PUBLISHED, points: points(rows, ord, col),
      label: pub ? `${label}\n(${settingText()})` : `${label}\n(the published setting)`
    };
    return pub ? [{ key: `${col}_published`, label: `${label}\n(the published setting)`,
                    colour: C.black, width: bnPlot.PUBLISHED, shape: 'circle',
                    points: points(pub, ORDER.default, col) }, mine] : [mine];
  }

  /* stats_err beside one batch's mean error, of the order chosen: the
   * stats-err figure of its rows. */
  function plotBatch(rows, pub, bs, b, ord, v) {
    v = v || {};
    const series = [{
      key: 'batch_mean_err', label: plain(v.comptitle) || 'batch_mean_err',
      colour: C.blue, shape: 'circle', points: points(rows, ord, 'batch_mean_err')
    }].concat(againstPublished(rows, pub, ord, 'stats_err', plain(v.mtitle) || 'stats_err'));
    bnPlot.lines($('plot-batch'), {
      title: plain(v.title), note: plain(v.note), xlabel: plain(v.xlabel),
      ylabel: first(v.yl), ylog: logScale(v), bs, current: b,
      legend: 'left', x2: v.x2tics ? topTics(v.x2tics) : null, series
    });
  }

  /* train_eval_rmse of every order the sweep ran: the train-eval
   * figure, a series per order, each labelled over its points with its
   * ratio to shuffled batches. */
  function plotOrder(rows, bs, b, v) {
    v = v || { sv: [], sl: [], srole: [], sname: [], lab: [] };
    const shapes = ['circle', 'square', 'diamond'];
    const series = v.sv.map((o, i) => ({
      key: `train_eval_rmse:${o}`, label: plain(v.sl[i]) || o,
      colour: bnPlot.seriesColour(v.srole[i], v.sname[i], i + 1, v.sv.length),
      shape: shapes[i % shapes.length], points: points(rows, o, 'train_eval_rmse')
    }));
    const at = x => v.xv.findIndex(b => b === x);
    const labels = series.flatMap((s, i) => s.points.map(p => ({
      x: p.x, y: p.y, colour: s.colour,
      text: at(p.x) < 0 ? '' : v.lab[i * v.xv.length + at(p.x)]
    }))).filter(l => l.text);
    bnPlot.lines($('plot-order'), {
      title: plain(v.title), note: plain(v.labnote), xlabel: plain(v.xlabel),
      ylabel: first(v.yl), ylog: logScale(v), bs, current: b,
      legend: 'right', series, labels
    });
  }

  /* The run's means and variances per feature against the truth: the
   * features figure's title and its worst feature. */
  function plotFeatures(rows, v) {
    v = v || {};
    const names = rows.map(r => r.feature);
    const vals = col => rows.map(r => ({ y: Number(r[col]), text: r[col] }));
    /* The settings the x label gives are the other figures' too, and it
     * would not fit under a panel a third of the width. */
    const xlabel = '';
    bnPlot.bars($('plot-features'), {
      title: plain(v.title), note: plain(v.worst_text),
      panels: [{
        xlabel, ylabel: 'mean', names, ref: { y: 0, label: 'initial running values, 0 and 1' },
        bars: [{ key: 'true_mean', label: 'the population\u2019s truth', colour: C.grey, values: vals('true_mean') },
               { key: 'running_mean', label: 'running mean', colour: C.blue, values: vals('running_mean') }]
      }, {
        xlabel, ylabel: 'variance', names, ref: { y: 1, label: 'initial running values, 0 and 1' },
        bars: [{ key: 'true_var', label: 'the population\u2019s truth', colour: C.grey, values: vals('true_var') },
               { key: 'running_var', label: plain(v.khi) || 'running variance', colour: C.vermilion,
                 values: vals('running_var') }]
      }]
    });
  }

  /* init_weight over batch size: the init-weight figure's title and the
   * weight it reads off (ema's alone: for another estimator, its
   * definition from the score table). */
  function plotWeight(rows, pub, bs, b, ord, v, axes) {
    const def = T.scores.find(x => x.name === 'init_weight').definition;
    bnPlot.lines($('plot-weight'), {
      title: v ? plain(v.title) : `init_weight: ${def}`, note: v ? plain(v.wlabel) : '',
      xlabel: axes ? plain(axes.xlabel) : '', ylabel: 'init_weight', bs, current: b,
      legend: 'right', x2: axes && axes.x2tics ? topTics(axes.x2tics) : null,
      series: againstPublished(rows, pub, ord, 'init_weight', 'init_weight')
    });
  }

  /* ---- the controls ---- */

  function rangeText(k) {
    if (k.type === 'reals') {
      const lo = Number(k.lo), hi = Number(k.hi);
      if (lo <= -1.7e308 && hi >= 1.7e308)
        return 'a finite number';
      if (hi >= 1.7e308)
        return `a number ${k.lo_open ? '>' : '\u2265'} ${lo}`;
      return `in ${k.lo_open ? '(' : '['}${lo}, ${hi}]`;
    }
    /* The table's 1 is one sample of feature maps; a batch of the
     * layer's rows needs two (exp_checks refuses fewer). */
    if (k === BATCH)
      return 'from 2 to the population\'s rows';
    return `${k.min} to ${k.max}`;
  }

  function help(parent, id, text) {
    const p = document.createElement('p');
    p.className = 'help';
    p.id = id;
    p.textContent = text;
    parent.appendChild(p);
    return p;
  }

  /* A change to the layer's settings is one to the classifier's too. */
  const changed = () => computeAll();

  function textInput(k, box, onSet) {
    const id = `k-${k.section}-${k.name}`;
    const input = document.createElement('input');
    Object.assign(input, { type: 'text', id, value: state[kid(k)], spellcheck: false });
    input.setAttribute('inputmode', k.type === 'reals' ? 'decimal' : 'numeric');
    input.setAttribute('aria-describedby', `${id}-help`);
    input.dataset.key = kid(k);
    input.addEventListener('input', () => { state[kid(k)] = input.value.trim(); onSet && onSet(); changed(); });
    box.appendChild(input);
    return input;
  }

  /* A slider beside the text of a real key with a finite range, and of
   * the batch size (up to the population's rows). */
  function slider(k, box, input) {
    let lo, hi, step;
    if (k === BATCH) {
      lo = Math.max(2, Number(k.min)); hi = Number(state[kid(ROWS)]) || lo; step = 1;
    } else if (k.type === 'reals' && Number(k.hi) < 1.7e308 && Number(k.lo) > -1.7e308) {
      step = (Number(k.hi) - Number(k.lo)) / 1000;
      lo = Number(k.lo) + (k.lo_open ? step : 0); hi = Number(k.hi);
    } else {
      return null;
    }
    const s = document.createElement('input');
    Object.assign(s, { type: 'range', min: lo, max: hi, step, value: Number(state[kid(k)]) });
    s.id = `${input.id}-slider`;
    s.dataset.key = kid(k);
    /* Its own visible label, as every control has one to be read by. */
    const l = document.createElement('label');
    l.className = 'slider';
    l.append('or slide', s);
    s.addEventListener('input', () => {
      const v = String(Number(s.value));
      input.value = v;
      state[kid(k)] = v;
      changed();
    });
    input.addEventListener('input', () => { if (Number.isFinite(Number(input.value))) s.value = input.value; });
    box.appendChild(l);
    return s;
  }

  function choiceHelp(name) {
    const e = T.estimators.find(x => x.name === name);
    return e ? `${name}: ${e.help}` : '';
  }

  function choicesControl(k, box) {
    const id = `k-${k.section}-${k.name}`;
    const sel = document.createElement('select');
    sel.id = id;
    sel.dataset.key = kid(k);
    sel.setAttribute('aria-describedby', `${id}-help`);
    for (const c of k.choices)
      sel.appendChild(new Option(c, c, false, c === state[kid(k)]));
    box.appendChild(sel);
    const more = help(box, `${id}-choice`, choiceHelp(sel.value));
    sel.addEventListener('change', () => {
      state[kid(k)] = sel.value;
      more.textContent = choiceHelp(sel.value);
      changed();
    });
  }

  /* An order: its name from the order table, then its argument, a
   * feature of the population or a count. */
  let refreshOrderFeatures = () => {};
  function orderControl(k, box) {
    const id = `k-${k.section}-${k.name}`;
    const value = untoken(state[kid(k)]);
    const colon = value.indexOf(':');
    const name = colon < 0 ? value : value.slice(0, colon);
    const arg0 = colon < 0 ? '' : value.slice(colon + 1);
    const sel = document.createElement('select');
    sel.id = id;
    sel.dataset.key = kid(k);
    sel.setAttribute('aria-describedby', `${id}-help`);
    for (const o of orders)
      sel.appendChild(new Option(o.name, o.name, false, o.name === name));
    box.appendChild(sel);
    const argBox = document.createElement('span');
    argBox.className = 'order-arg';
    box.appendChild(argBox);
    const more = help(box, `${id}-choice`, '');
    const feature = document.createElement('select');
    feature.id = `${id}-feature`;
    const featureLabel = document.createElement('label');
    featureLabel.append('by', feature);
    const count = document.createElement('input');
    Object.assign(count, { type: 'text', id: `${id}-count`, value: '8' });
    count.setAttribute('inputmode', 'numeric');
    count.dataset.key = kid(k);
    const countLabel = document.createElement('label');
    countLabel.append('groups K', count);

    const def = () => orders.find(o => o.name === sel.value);
    refreshOrderFeatures = () => {
      const keep = feature.value;
      feature.replaceChildren();
      if (def().optional)
        feature.appendChild(new Option('(the first feature)', ''));
      for (const name of fileInfo ? fileInfo.features : state.features.map(f => f.name))
        feature.appendChild(new Option(name, name));
      feature.value = [...feature.options].some(o => o.value === keep) ? keep : feature.options[0].value;
    };
    const compose = () => {
      const d = def();
      let v = d.name;
      if (d.arg === 'feature' && feature.value !== '')
        v += `:${feature.value}`;
      if (d.arg === 'count')
        v += `:${count.value.trim()}`;
      state[kid(k)] = token(v);
    };
    const layout = () => {
      const d = def();
      argBox.replaceChildren();
      if (d.arg === 'feature') {
        refreshOrderFeatures();
        argBox.appendChild(featureLabel);
      } else if (d.arg === 'count') {
        argBox.appendChild(countLabel);
      }
      more.textContent = `${d.name}${d.arg === 'feature' ? ':NAME' : d.arg === 'count' ? ':K' : ''}: ${d.help}`;
    };
    layout();
    if (def().arg === 'feature')
      feature.value = arg0;
    if (def().arg === 'count')
      count.value = arg0;
    sel.addEventListener('change', () => { layout(); compose(); changed(); });
    feature.addEventListener('change', () => { compose(); changed(); });
    count.addEventListener('input', () => { compose(); changed(); });
    return () => { if (def().arg === 'feature') { refreshOrderFeatures(); compose(); } };
  }

  /* The population's features: a row of four fields each, NAME MEAN SD
   * RHO as the key takes them; any change replaces the default eight. */
  function featuresControl(k, box, onNames) {
    const table = document.createElement('table');
    table.className = 'features-edit';
    table.id = 'k-features';
    box.appendChild(table);
    const fields = ['name', 'mean', 'sd', 'rho'];
    const draw = () => {
      table.replaceChildren();
      const head = document.createElement('tr');
      for (const f of fields.concat(['']))
        cell(head, 'th', f, { scope: 'col' });
      table.appendChild(head);
      state.features.forEach((f, i) => {
        const tr = document.createElement('tr');
        for (const field of fields) {
          const td = document.createElement('td');
          const input = document.createElement('input');
          Object.assign(input, { type: 'text', value: f[field], spellcheck: false });
          input.id = `k-feature-${i}-${field}`;
          input.dataset.key = kid(k);
          input.className = `f-${field}`;
          input.setAttribute('aria-label', `feature ${i + 1}, ${field}`);
          if (field !== 'name')
            input.setAttribute('inputmode', 'decimal');
          input.addEventListener('input', () => {
            f[field] = input.value.trim();
            if (field === 'name')
              onNames();
            changed();
          });
          td.appendChild(input);
          tr.appendChild(td);
        }
        const td = document.createElement('td');
        const rm = document.createElement('button');
        Object.assign(rm, { type: 'button', textContent: '\u2212', disabled: state.features.length < 2 });
        rm.setAttribute('aria-label', `remove feature ${i + 1}`);
        rm.addEventListener('click', () => {
          state.features.splice(i, 1);
          draw();
          onNames();
          changed();
        });
        td.appendChild(rm);
        tr.appendChild(td);
        table.appendChild(tr);
      });
    };
    draw();
    const add = document.createElement('button');
    Object.assign(add, { type: 'button', id: 'add-feature', textContent: 'Add a feature' });
    add.addEventListener('click', () => {
      let j = state.features.length;
      while (state.features.some(f => f.name === `f${j}`))
        j++;
      state.features.push({ name: `f${j}`, mean: '0', sd: '1', rho: '0.5' });
      draw();
      onNames();
      changed();
      table.querySelector(`#k-feature-${state.features.length - 1}-name`).focus();
    });
    box.appendChild(add);
  }

  function buildControls() {
    const form = $('controls');
    form.querySelectorAll('fieldset').forEach(f => f.remove());
    /* Sections by the fastest-varying axis they hold (the key table's
     * nest): the batch size's first, the population's, with none, last. */
    const rank = sec => Math.max(0, ...keys.filter(k => k.section === sec).map(k => k.nest));
    const sections = [...new Set(keys.map(k => k.section))].sort((a, b) => rank(b) - rank(a));
    let orderFeatures = () => {};
    let batchSlider = null;
    for (const section of sections) {
      const fs = document.createElement('fieldset');
      const lg = document.createElement('legend');
      lg.textContent = `[${section}]`;
      fs.appendChild(lg);
      if (!generated(keys.find(x => x.section === section))) {
        fs.disabled = true;
        help(fs, 'population-file', `The rows of ${fileInfo.name} replace the generated population (your data, below).`);
      }
      for (const k of keys.filter(x => x.section === section)) {
        const box = document.createElement('div');
        box.className = `control ${k.type}`;
        const id = `k-${k.section}-${k.name}`;
        const label = document.createElement('label');
        label.htmlFor = k === FEATURE ? 'k-feature-0-name' : id;
        cell(label, 'code', k.name);
        box.appendChild(label);
        if (k.type === 'choices') {
          choicesControl(k, box);
        } else if (k.type === 'orders') {
          orderFeatures = orderControl(k, box);
        } else if (k.type === 'feature') {
          featuresControl(k, box, () => orderFeatures());
        } else {
          const onRows = k === ROWS ? () => {
            const n = Number(state[kid(ROWS)]);
            if (batchSlider && Number.isInteger(n) && n >= 2)
              batchSlider.max = n;
          } : null;
          const input = textInput(k, box, onRows);
          const s = slider(k, box, input);
          if (k === BATCH)
            batchSlider = s;
        }
        const range = ['reals', 'uints', 'uint'].includes(k.type) ? ` (${rangeText(k)})` : '';
        help(box, `${id}-help`, `${k.help}${range}; default ${k.default || 'the eight above'}`);
        fs.appendChild(box);
      }
      form.appendChild(fs);
    }
    buildClfControls();
    buildCauseControls();
  }

  /* ---- the classifier: the layer's settings with its own keys over
   * them, in a worker of its own, so a change to its keys reruns it alone
   * and the layer's answer never waits for it ---- */

  const tkey = id => T.keys.find(k => kid(k) === id);
  /* Its keys, each the key table's row; the defaults differ from the
   * table's where the table's would train nothing worth seeing: no class
   * labels (classes 0), one epoch (no curve). */
  const CLF_KEYS = [
    { key: 'population.classes', dflt: '2' },
    { key: 'sweep.epochs', dflt: '10', option: '--epochs' },
    { key: 'model.hidden', option: '--hidden' },
    { key: 'model.norm', option: '--norm' },
    { key: 'model.lr', option: '--lr' },
  ].map(c => Object.assign(c, { def: tkey(c.key) }))
   .map(c => Object.assign(c, { dflt: c.dflt || c.def.default }));
  const clfState = {};
  const clfDefaults = () => CLF_KEYS.forEach(c => { clfState[c.key] = c.dflt; });
  /* The layer's settings it takes: those the classifier reads (not
   * gamma and beta, which it learns), and of them only those that differ
   * from their defaults, as a command line would give them (a key set
   * that no configuration reads is refused). */
  const CLF = T.models.findIndex(m => m.name === 'classifier');
  const clfReads = k => (k.models & (1 << CLF)) && kid(k) !== 'sweep.epochs';
  const clfSets = () => {
    const lines = ['model.type=classifier'].concat(fileLines());
    for (const k of keys.filter(clfReads).filter(generated)) {
      if (k === FEATURE && featuresChanged())
        lines.push(...state.features.map(f => `${kid(k)}=${featureLine(f)}`));
      else if (k !== FEATURE && state[kid(k)] !== k.default)
        lines.push(`${kid(k)}=${state[kid(k)]}`);
    }
    return lines.concat(CLF_KEYS.filter(c => generated(c.def)).map(c => `${c.key}=${clfState[c.key]}`)).join('\n');
  };
  /* bnstudy run's command for it: the layer's options it reads, then the
   * classifier's. */
  function clfCommand() {
    const args = commandArgs(keys.filter(clfReads));
    args.push('--type', 'classifier');
    if (!fileInfo)
      args.push('--set', `population.classes=${clfState['population.classes']}`);
    for (const c of CLF_KEYS.filter(c => c.option))
      if (clfState[c.key] !== c.def.default)
        args.push(c.option, clfState[c.key]);
    return ['./bnstudy', 'run'].concat(args).map(shellWord).join(' ');
  }

  /* A section's own controls, one per key of its table (each the key
   * table's row, with the section's default `dflt`, and `lines` for a key
   * given once a line): the control's id is prefix and the key's name,
   * its value in values, and each change calls changed. */
  function sectionControls(form, prefix, list, values, changed) {
    form.replaceChildren();
    for (const x of list) {
      const k = x.def, id = `${prefix}-${k.section}-${k.name}`;
      const box = document.createElement('div');
      box.className = 'control';
      const label = document.createElement('label');
      label.htmlFor = id;
      cell(label, 'code', k.name);
      box.appendChild(label);
      let input;
      if (k.type === 'choices') {
        input = document.createElement('select');
        for (const v of k.choices)
          input.appendChild(new Option(v, v, false, v === values[x.key]));
      } else if (x.lines) {
        input = document.createElement('textarea');
        Object.assign(input, { rows: 3, value: values[x.key], spellcheck: false });
      } else {
        input = document.createElement('input');
        Object.assign(input, { type: 'text', value: values[x.key], spellcheck: false });
        input.setAttribute('inputmode', k.type === 'real' || k.type === 'reals' ? 'decimal' : 'numeric');
      }
      input.id = id;
      input.dataset.key = x.key;
      input.setAttribute('aria-describedby', `${id}-help`);
      input.addEventListener(k.type === 'choices' ? 'change' : 'input', () => {
        values[x.key] = x.lines ? input.value : input.value.trim();
        changed();
      });
      box.appendChild(input);
      help(box, `${id}-help`, `${k.help}; default here ${x.dflt.replace(/\n/g, '; ')}`);
      form.appendChild(box);
    }
  }
  const buildClfControls = () => sectionControls($('clf-controls'), 'c', CLF_KEYS, clfState, computeClf);


  /* A section's worker: one job at a time and the newest waiting; a job
   * still running after 250 ms is abandoned for the newest (the worker
   * replaced). show(job, answers, figures) takes each answer; fail(msg)
   * a worker that stopped (out of memory, say). */
  const sections = [];
  function sectionWorker(show, fail) {
    let w = null, busy = null, waiting = null, n = 0;
    const send = () => {
      busy = waiting;
      waiting = null;
      busy.sent = performance.now();
      w.postMessage({ id: busy.id, calls: busy.calls, figures: busy.figures });
    };
    const start = () => {
      w = new Worker('worker.js');
      giveTo(w);
      w.onmessage = e => {
        if (!e.data.answers || !busy || e.data.id !== busy.id)
          return;
        const job = busy;
        busy = null;
        show(job, e.data.answers, e.data.figures);
        if (waiting)
          send();
      };
      w.onerror = e => {
        e.preventDefault();
        busy = null;
        w.terminate();
        start();
        fail(`the computation stopped: ${e.message}`);
        if (waiting)
          send();
      };
    };
    const s = {
      run(job) {
        job.id = ++n;
        waiting = job;
        if (!w)
          start();
        if (!busy)
          return send();
        if (performance.now() - busy.sent > 250) {
          w.terminate();
          busy = null;
          start();
          send();
        }
      },
      idle: () => !busy && !waiting,
      give: () => w && giveTo(w),
    };
    sections.push(s);
    return s;
  }
  /* For the browser test: every section below the layer at rest. */
  Object.defineProperty(window, 'bnSectionsIdle', { get: () => !belowPending && sections.every(s => s.idle()) });

  const clfWorker = sectionWorker((job, answers, figures) => showClf(job, answers[0], figures[0]),
                                  msg => clfRefuse(msg));
  function computeClf() {
    saveLink();
    const sets = clfSets();
    clfWorker.run({ sets, command: clfCommand(), calls: [{ sets, tables: 2 }],
                    figures: [{ sets, from: 0, curve: true }] });
  }
  function clfRefuse(msg) {
    const box = $('clf-error');
    box.hidden = !msg;
    box.textContent = msg ? `bnstudy run refuses these settings: ${msg}` : '';
    $('classifier').classList.toggle('stale', !!msg);
    document.querySelectorAll('#clf-controls [aria-invalid]').forEach(e => e.removeAttribute('aria-invalid'));
    const m = msg && /--set ([a-z_]+\.[a-z_]+)=|--([a-z-]+)/.exec(msg);
    if (m) {
      const key = m[1] || CLF_KEYS.map(c => c.key).find(k => k.endsWith(`.${m[2].replace(/-/g, '_')}`));
      document.querySelectorAll(`#clf-controls [data-key="${key}"]`).forEach(e => e.setAttribute('aria-invalid', 'true'));
    }
  }
  /* The accuracies and the rest of its summary, and its curve: both
   * accuracies after every epoch, train mode dashed, eval mode solid
   * (accuracy.gp's), its words bnstudy plot's curve figure's. */
  const CLF_SHOWN = ['acc_train_mode', 'acc_eval_mode', 'agreement', 'loss_train_mode', 'loss_eval_mode',
                     'fit_acc_train_mode', 'fit_acc_eval_mode', 'stats_err'];
  function showClf(job, text, figures) {
    if (text.startsWith('!'))
      return clfRefuse(text.slice(1));
    clfRefuse(null);
    const [sumText, curveText] = text.split('\n\n');
    const row = parseTsv(sumText).rows[0], curve = parseTsv(curveText || '').rows;
    const t = $('clf-scores');
    t.replaceChildren();
    for (const name of CLF_SHOWN) {
      const s = T.scores.find(x => x.name === name);
      const tr = document.createElement('tr');
      cell(tr, 'th', name, { scope: 'row' });
      cell(tr, 'td', row[name], { class: 'num', 'data-col': name });
      cell(tr, 'td', s ? s.definition : '', { class: 'def' });
      t.appendChild(tr);
    }
    $('clf-command').textContent = `${job.command} --write-curve -`;
    const figs = figures && !figures.startsWith('!') ? JSON.parse(figures) : [];
    const f = figs.find(x => x.name === 'curve');
    const v = f ? f.values : {};
    const pts = col => curve.map(r => ({ x: Number(r.epoch), y: Number(r[col]), text: r[col] }));
    bnPlot.lines($('plot-curve'), {
      title: plain(v.title) || 'accuracy after every epoch', note: plain(v.note),
      xlabel: 'epoch', xname: 'epoch', ylabel: 'accuracy on held-out rows', xlog: false,
      bs: curve.map(r => Number(r.epoch)), legend: 'right',
      series: [{ key: 'acc_train_mode', label: 'train mode (batch statistics)', colour: C.blue,
                 shape: 'circle', dash: '6 4', points: pts('acc_train_mode') },
               { key: 'acc_eval_mode', label: 'eval mode (running statistics)', colour: C.vermilion,
                 shape: 'square', points: pts('acc_eval_mode') }]
    });
    $('plot-curve-caption').textContent = f
      ? `${[v.title, v.note].map(plain).filter(x => x).map(x => x.replace(/\n/g, ' ')).join('. ')}. What it draws: ${plain(f.what)}.`
      : 'bnstudy plot draws the curve of two or more epochs.';
  }

  /* ---- the other causes: a section each, from this table. A cause is
   * the layer's settings with its own keys over them (defaults here
   * where the table's would show nothing: no shift, no drift), and a
   * figure of bnstudy plot's (its kind `figure`) over the batch sizes,
   * a series per value of its `series` key: its `base` values and the
   * one chosen. `omit` leaves the layer's keys of a section out (feature
   * maps are their own population), `fixed` sets keys the cause needs,
   * `feature` adds a feature to the population, `tables` asks web_run
   * for a table beside the summary (4: effective.tsv's rows). ---- */
  const CAUSES = [
    { id: 'shift', heading: 'A shift between training and evaluation data',
      lede: 'The rows the layer is evaluated on, moved: by shift standard deviations of each feature, ' +
            'their spread scaled, or offset in the features\u2019 units. Eval mode normalises them with ' +
            'the training data\u2019s buffers; train mode with their own statistics, so it never sees the move.',
      keys: [{ key: 'evaluation.shift', dflt: '1' }, { key: 'evaluation.scale' }, { key: 'evaluation.offset' }],
      series: 'evaluation.shift', base: ['0'], figure: 'train-eval' },
    { id: 'drift', heading: 'Drift during training',
      lede: 'The training stream moves by drift_size standard deviations after update T0 (step:T0) or ' +
            'from T0 to T1 (ramp:T0:T1); the buffers follow at the pace of the momentum, and the truth ' +
            'is the stream as the last update leaves it.',
      keys: [{ key: 'sweep.drift', dflt: 'step:4' }, { key: 'sweep.drift_size', dflt: '2' },
             { key: 'sweep.epochs', dflt: '4' }],
      series: 'sweep.drift_size', base: ['0'], figure: 'stats-err' },
    { id: 'collapse', heading: 'A channel that collapses',
      lede: 'A feature constant in training (dead, sd 0) has its stored variance fall to 0; eval mode then ' +
            'multiplies any later move of it by gamma / sqrt(running_var + eps), train mode not at all.',
      keys: [{ key: 'evaluation.offset', dflt: '0.01' }, { key: 'layer.eps' }], feature: 'dead 0 0 0',
      series: 'evaluation.offset', base: ['0'], figure: 'train-eval' },
    { id: 'initial', heading: 'Buffers that were never filled',
      lede: 'A checkpoint loaded without its running statistics, or evaluation before any training step, ' +
            'leaves the initial 0 and 1 (estimator initial); beside it ema and precise, which fills them.',
      keys: [{ key: 'layer.estimator', dflt: 'initial' }],
      series: 'layer.estimator', base: ['ema', 'precise'], figure: 'stats-err' },
    { id: 'maps', heading: 'Feature maps: what a batch mean counts',
      lede: 'BatchNorm2d pools each channel over every sample and position, but values within one map ' +
            'are not independent: the effective number of values behind a batch mean against the count ' +
            'B\u00b7H\u00b7W (a channel a line: NAME MEAN SD R, r the neighbours\u2019 correlation).',
      keys: [{ key: 'maps.size', dflt: '7 7' }, { key: 'maps.samples', dflt: '64' },
             { key: 'maps.channel', dflt: 'near 0 1 0.8\napart 0 1 -0.5', lines: true }, { key: 'maps.seed' },
             { key: 'sweep.batch_size', dflt: '8' }],
      omit: ['population'], fixed: { 'sweep.order': 'shuffled-samples' }, tables: 4,
      write: '--write-effective', figure: 'effective' },
  ].map(c => Object.assign(c, {
    keys: c.keys.map(k => Object.assign(k, { def: tkey(k.key) }))
      .map(k => Object.assign(k, { dflt: k.dflt || k.def.default }))
  }));
  const causeState = {};
  const causeDefaults = () => CAUSES.forEach(c => {
    causeState[c.id] = Object.fromEntries(c.keys.map(k => [k.key, k.dflt]));
  });
  /* The layer's keys a cause takes: not those of a section it omits, nor
   * those it sets itself. */
  const causeTakes = c => k => !(c.omit || []).includes(k.section) && k !== FEATURE && generated(k) &&
    !c.keys.some(x => x.key === kid(k)) && !(kid(k) in (c.fixed || {}));
  const causeFeatures = c => (c.omit || []).includes('population') || fileInfo ? []
    : (featuresChanged() || c.feature ? state.features.map(featureLine) : []).concat(c.feature ? [c.feature] : []);
  /* key=value pairs, a key that takes lines (maps.channel) once a line. */
  const pairs = (key, value, lines) => lines
    ? value.split('\n').map(l => l.trim()).filter(l => l).map(l => [key, l]) : [[key, value]];
  function causePairs(c, over) {
    const m = new Map();
    for (const k of keys.filter(causeTakes(c)))
      if (state[kid(k)] !== k.default)
        m.set(kid(k), state[kid(k)]);
    for (const k of c.keys)
      m.set(k.key, causeState[c.id][k.key]);
    for (const [k, v] of Object.entries(Object.assign({}, c.fixed, over)))
      m.set(k, v);
    const file = fileInfo && !(c.omit || []).includes('population') ? [['population.file', fileInfo.name]] : [];
    return file.concat([...m].flatMap(([k, v]) => pairs(k, v, c.keys.some(x => x.key === k && x.lines))),
                       causeFeatures(c).map(f => ['population.feature', f]));
  }
  const causeSets = (c, over) => causePairs(c, over).map(([k, v]) => `${k}=${v}`).join('\n');
  /* bnstudy run's command: an axis by its option, any other key by --set,
   * only what differs from the key table's defaults. */
  function causeCommand(c) {
    const args = [];
    for (const [k, v] of causePairs(c)) {
      const d = tkey(k);
      if (k === 'population.file')
        args.push('--population', v);
      else if (k === 'population.feature' || k === 'maps.channel' || d.nest === 0)
        args.push('--set', `${k}=${v}`);
      else if (v !== d.default)
        args.push(`--${d.name.replace(/_/g, '-')}`, v);
    }
    return ['./bnstudy', 'run'].concat(args, c.write ? [c.write, '-'] : []).map(shellWord).join(' ');
  }

  function buildCauseSections() {
    const box = $('causes');
    for (const c of CAUSES) {
      const sec = document.createElement('section');
      sec.id = `cause-${c.id}`;
      sec.setAttribute('aria-labelledby', `h-cause-${c.id}`);
      sec.innerHTML = `<h2 id="h-cause-${c.id}"></h2><p class="note"></p>
        <form id="x-${c.id}-controls" class="inline-controls" autocomplete="off"></form>
        <div id="x-${c.id}-error" class="error" role="alert" hidden></div>
        <div class="scroll"><table id="x-${c.id}-scores" class="numbers"></table></div>
        ${c.tables ? `<div class="scroll"><table id="x-${c.id}-table" class="numbers"></table></div>` : ''}
        <figure><svg id="plot-x-${c.id}" role="img" aria-labelledby="plot-x-${c.id}-title"></svg>
          <figcaption id="plot-x-${c.id}-caption"></figcaption></figure>
        <pre id="x-${c.id}-command" class="command"></pre>`;
      sec.querySelector('h2').textContent = c.heading;
      sec.querySelector('p').textContent = c.lede;
      sec.querySelector('form').setAttribute('aria-label', `${c.heading}: its settings`);
      box.appendChild(sec);
      c.worker = sectionWorker((job, answers, figures) => showCause(c, job, answers, figures),
                               msg => causeRefuse(c, msg));
    }
  }
  buildCauseSections();

  const buildCauseControls = () => CAUSES.forEach(c =>
    sectionControls($(`x-${c.id}-controls`), `x-${c.id}`, c.keys, causeState[c.id], () => computeCause(c)));


  /* The run chosen, and the sweep the figure draws: the batch sizes 8 to
   * 256 within the rows (feature maps: within half the samples, as a
   * batch of all of them has no variance over orderings), a series per
   * value of the cause's key. */
  function computeCause(c) {
    saveLink();
    const own = causeState[c.id];
    const n = c.tables ? Math.floor(Number(own['maps.samples']) / 2) : Number(state[kid(ROWS)]);
    const bs = batchSizes(n, NaN);
    const over = { [kid(BATCH)]: bs.join(' ') };
    if (c.series)
      over[c.series] = [...new Set(c.base.concat([own[c.series]]))].map(token).join(' ');
    const sets = causeSets(c), sweep = causeSets(c, over);
    const each = bs.flatMap(b => (c.series ? over[c.series].split(' ') : ['']).map(v =>
      causeSets(c, Object.assign({}, over, { [kid(BATCH)]: String(b) }, c.series ? { [c.series]: v } : {}))));
    c.worker.run({ command: causeCommand(c), chosen: c.series ? own[c.series] : null,
                   calls: [{ sets, tables: c.tables || 0 }, { sets: sweep, tables: c.tables || 0, each }],
                   figures: [{ sets: sweep, from: 1, effective: Boolean(c.tables) }] });
  }
  const computeCauses = () => CAUSES.forEach(computeCause);

  function causeRefuse(c, msg) {
    const box = $(`x-${c.id}-error`);
    box.hidden = !msg;
    box.textContent = msg ? `bnstudy run refuses these settings: ${msg}` : '';
    $(`cause-${c.id}`).classList.toggle('stale', !!msg);
  }

  function showCause(c, job, answers, figures) {
    const text = answers[0];
    if (text.startsWith('!'))
      return causeRefuse(c, text.slice(1));
    causeRefuse(c, null);
    const [sumText, tableText] = text.split('\n\n');
    const sum = parseTsv(sumText);
    const t = $(`x-${c.id}-scores`);
    t.replaceChildren();
    for (const name of sum.header.filter(h => scoreNames.includes(h))) {
      const tr = document.createElement('tr');
      cell(tr, 'th', name, { scope: 'row' });
      cell(tr, 'td', sum.rows[0][name], { class: 'num', 'data-col': name });
      cell(tr, 'td', T.scores.find(x => x.name === name).definition, { class: 'def' });
      t.appendChild(tr);
    }
    if (c.tables)
      showEffective($(`x-${c.id}-table`), parseTsv(tableText || ''));
    $(`x-${c.id}-command`).textContent = job.command;
    const list = figures && figures[0] && !figures[0].startsWith('!') ? JSON.parse(figures[0]) : [];
    const f = list.find(x => x.name === c.figure);
    const svg = $(`plot-x-${c.id}`);
    const sweep = typeof answers[1] === 'string' && answers[1].startsWith('!') ? [] : sweepRows(answers[1]);
    if (f && c.tables)
      plotEffective(svg, secondRows(answers[1]), f.values);
    else if (f)
      plotCurves(svg, sweep, f.values, Number(sum.rows[0][BATCH.name]));
    $(`plot-x-${c.id}-caption`).textContent = f
      ? `${[f.values.title, f.values.note].map(plain).filter(x => x).map(x => x.replace(/\n/g, ' ')).join('. ')}. ` +
        `What it draws: ${plain(f.what)}.`
      : 'bnstudy plot draws no such figure of these rows.';
  }

  /* The rows of the table beside a sweep's summaries (its answer, or
   * its single runs' answers). */
  const secondRows = a => (typeof a === 'string' ? [a] : a)
    .flatMap(t => t.startsWith('!') ? [] : parseTsv(t.split('\n\n')[1] || 'x\n').rows);
  function showEffective(t, e) {
    const cols = ['feature', 'count', 'count_fpc', 'n_eff', 'ratio'];
    t.replaceChildren();
    const head = document.createElement('tr');
    cols.forEach(x => cell(head, 'th', x, { scope: 'col' }));
    t.appendChild(head);
    for (const r of e.rows) {
      const tr = document.createElement('tr');
      cols.forEach((x, i) => cell(tr, i ? 'td' : 'th', r[x],
        i ? { class: 'num', 'data-feature': r.feature, 'data-col': x } : { scope: 'row' }));
      t.appendChild(tr);
    }
  }

  /* A curves figure as bnstudy plot draws it: its score against its x
   * axis, a series per value of its series column (skey), each series'
   * label and colour role its own. */
  /* A cell and a series value: the same text, or the same number
   * (0.10000000000000001 and 0.1). */
  const same = (a, b) => a === b || (a !== '' && b !== '' && Number(a) === Number(b));
  function plotCurves(svg, rows, v, b) {
    const col = (/strcol\("([^"]+)"\)/.exec(v['skey(d)'] || '') || [])[1];
    const y = v.sc[0], sv = v.sv && v.sv.length ? v.sv : [''];
    const shapes = ['circle', 'square', 'diamond'];
    bnPlot.lines(svg, {
      title: plain(v.title), note: plain(v.note), xlabel: plain(v.xlabel), ylabel: first(v.yl),
      ylog: logScale(v), bs: v.xv, current: b, legend: 'right',
      series: sv.map((val, i) => ({
        key: `${y}:${val !== '' && Number.isFinite(Number(val)) ? Number(val) : val}`, label: plain(v.sl && v.sl[i]) || y,
        colour: bnPlot.seriesColour(v.srole && v.srole[i], v.sname ? v.sname[i] : val, i + 1, sv.length),
        shape: shapes[i % shapes.length],
        points: rows.filter(r => !col || same(r[col], val))
          .map(r => ({ x: Number(r[v.xcol]), y: Number(r[y]), text: r[y] }))
      }))
    });
  }

  /* The effective figure: each channel's n_eff against the batch size,
   * beside the count B H W and the count with the finite-population
   * correction (the same for every channel: the first's). */
  function plotEffective(svg, rows, v) {
    const pts = (ch, col) => rows.filter(r => r.feature === ch)
      .map(r => ({ x: Number(r.batch_size), y: Number(r[col]), text: r[col] }));
    const shapes = ['circle', 'square', 'diamond'];
    bnPlot.lines(svg, {
      title: plain(v.title), xlabel: plain(v.xlabel), ylabel: 'values behind a batch mean',
      ylog: true, xlog: Boolean(v.xlog), bs: v.xv, legend: 'left',
      series: v.cn.map((ch, i) => ({
        key: `n_eff:${ch}`, label: plain(v.cl[i]), colour: bnPlot.seriesColour('index', ch, i + 1, v.cn.length),
        shape: shapes[i % shapes.length], points: pts(ch, 'n_eff')
      })).concat([
        { key: 'count', label: 'count B\u00b7H\u00b7W', colour: C.grey, dash: '6 4', shape: 'circle', points: pts(v.cn[0], 'count') },
        { key: 'count_fpc', label: 'count, finite-population corrected', colour: C.black, dash: '2 3', shape: 'circle',
          points: pts(v.cn[0], 'count_fpc') }])
    });
  }

  /* ---- your data: a CSV, TSV or .npy chosen or dropped, read in the
   * page and handed to every worker (each its own copy of the core, with
   * no filesystem: web_give_file), never sent anywhere ---- */
  const MAX_FILE = 64 << 20;
  let given = null;
  function giveTo(w) {
    if (given)
      w.postMessage({ give: given });
  }
  /* The layer's worker reads the file first and says what bnstudy reads
   * of it (its rows and features) or why it refuses it. */
  const describe = file => new Promise(ok => {
    const on = e => {
      if (e.data.given === undefined)
        return;
      worker.removeEventListener('message', on);
      ok(e.data.given);
    };
    worker.addEventListener('message', on);
    worker.postMessage({ give: file });
  });
  async function takeFile(file) {
    const status = $('drop-status');
    const cmd = `./bnstudy run --population ${shellWord(file.name)}`;
    if (file.size > MAX_FILE) {
      status.textContent = `${file.name} is ${(file.size / 1048576).toFixed(1)} MB, more than the page reads ` +
        `(${MAX_FILE >> 20} MB): run the study on it on the command line, ${cmd}`;
      return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const reply = await describe({ name: file.name, bytes });
    if (reply.startsWith('!')) {
      status.textContent = `bnstudy refuses ${file.name}: ${reply.slice(1)}`;
      return;
    }
    given = { name: file.name, bytes };
    fileInfo = JSON.parse(reply);
    sections.forEach(s => s.give());
    status.textContent = `${fileInfo.name}: ${fileInfo.rows} rows of ${fileInfo.features.length} features ` +
      `(${fileInfo.features.join(', ')}), read in this page and sent nowhere. Every section runs on them; ` +
      `${cmd} prints the same numbers.`;
    $('drop-clear').hidden = false;
    state[kid(ORDER)] = ORDER.default;
    buildControls();
    computeAll();
  }
  /* Emptied once read, so that choosing the same file again (edited
   * since) reads it again. */
  /* A dump folder: its files (each its path in the folder, as
   * `bnstudy diagnose DIR` opens them) diagnosed in a worker of its own,
   * which goes when it has answered. */
  const MAX_DUMP = 256 << 20;
  async function diagnoseDump(dir, files) {
    const status = $('dump-status'), out = $('diagnosis');
    const size = files.reduce((n, f) => n + f.file.size, 0);
    const cmd = `./bnstudy diagnose ${shellWord(dir)}`;
    out.hidden = true;
    if (size > MAX_DUMP) {
      status.textContent = `${dir} holds ${(size / 1048576).toFixed(1)} MB, more than the page reads ` +
        `(${MAX_DUMP >> 20} MB): diagnose it on the command line, ${cmd}`;
      return;
    }
    status.textContent = `Diagnosing ${dir} (${files.length} files) in this page…`;
    const dump = { dir, files: await Promise.all(files.map(async f =>
      ({ path: `${dir}/${f.name}`, bytes: new Uint8Array(await f.file.arrayBuffer()) }))) };
    const text = await new Promise(ok => {
      const w = new Worker('worker.js');
      w.onmessage = e => {
        if (e.data.tables)
          w.postMessage({ dump });
        else if (e.data.diagnosis !== undefined || e.data.error) {
          w.terminate();
          ok(e.data.error ? `!${e.data.error}` : e.data.diagnosis);
        }
      };
    });
    if (text.startsWith('!')) {
      status.textContent = `bnstudy diagnose refuses ${dir}: ${text.slice(1)}`;
      return;
    }
    status.textContent = `${dir}: the diagnosis ${cmd} prints, worked out in this page (nothing was sent anywhere):`;
    out.textContent = text;
    out.hidden = false;
  }
  /* A folder chosen: its files are those directly in it. */
  $('dump-files').addEventListener('change', e => {
    const all = [...e.target.files];
    e.target.value = '';
    if (!all.length)
      return;
    const dir = (all[0].webkitRelativePath || '').split('/')[0] || 'the chosen files';
    diagnoseDump(dir, all.filter(f => (f.webkitRelativePath || f.name).split('/').length <= 2)
      .map(f => ({ name: f.name, file: f })));
  });
  /* A folder dropped: its entries read one level down. */
  const entries = dir => new Promise((ok, fail) => {
    const r = dir.createReader(), all = [];
    const more = () => r.readEntries(batch => { if (!batch.length) ok(all); else { all.push(...batch); more(); } }, fail);
    more();
  });
  const entryFile = entry => new Promise((ok, fail) => entry.file(ok, fail));
  async function dropped(dt) {
    const item = [...dt.items].map(i => i.webkitGetAsEntry && i.webkitGetAsEntry()).find(x => x);
    if (item && item.isDirectory) {
      const files = await Promise.all((await entries(item)).filter(x => x.isFile)
        .map(async x => ({ name: x.name, file: await entryFile(x) })));
      return diagnoseDump(item.name, files);
    }
    const files = [...dt.files];
    if (files.some(f => f.name === 'model.tsv'))
      return diagnoseDump('the dropped files', files.map(f => ({ name: f.name, file: f })));
    if (files[0])
      takeFile(files[0]);
  }

  $('drop-file').addEventListener('change', e => {
    const file = e.target.files[0];
    e.target.value = '';
    if (file)
      takeFile(file);
  });
  const zone = $('drop');
  zone.addEventListener('dragover', e => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', e => {
    e.preventDefault();
    zone.classList.remove('over');
    dropped(e.dataTransfer);
  });
  $('drop-clear').addEventListener('click', () => {
    fileInfo = null;
    $('drop-clear').hidden = true;
    $('drop-status').textContent = 'Back to the generated population.';
    $('drop-file').value = '';
    state[kid(ORDER)] = ORDER.default;
    buildControls();
    computeAll();
  });

  /* ---- the buttons ---- */

  async function copy(text, what) {
    let ok = true;
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      const area = document.createElement('textarea');
      area.value = text;
      document.body.appendChild(area);
      area.select();
      ok = document.execCommand('copy');
      area.remove();
    }
    $('copy-status').textContent = ok ? `Copied ${what}.` : `Could not copy ${what}: select it below.`;
  }
  $('copy-command').addEventListener('click', () => copy($('command').textContent, 'the command'));
  $('copy-tsv').addEventListener('click', () => copy($('tsv').textContent, 'the TSV'));
  $('copy-link').addEventListener('click', () => copy(location.href, 'the link'));

  /* A file made in the page and handed to the browser's downloads: a
   * blob of the page's own, nothing fetched. */
  function download(name, type, data) {
    const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }));
    const a = document.createElement('a');
    Object.assign(a, { href: url, download: name, hidden: true });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    $('copy-status').textContent = `Downloaded ${name}.`;
  }
  $('download-tsv').addEventListener('click', () =>
    download('bnstudy-run.tsv', 'text/tab-separated-values', $('tsv').textContent));
  /* The command as a script run from the repository's top folder; its
   * arguments are bnstudy run's own (--write-features - prints the TSV). */
  $('download-command').addEventListener('click', () =>
    download('bnstudy-run.sh', 'text/x-shellscript',
             `#!/bin/sh\n# The page's settings, from the top folder of the repository.\n${$('command').textContent} "$@"\n`));

  /* A figure as a file: the SVG the page drew, standing alone, or that
   * SVG drawn at twice its size on a canvas. */
  function svgFile(svg) {
    const c = svg.cloneNode(true);
    const vb = svg.viewBox.baseVal;
    c.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
    c.setAttribute('width', vb.width);
    c.setAttribute('height', vb.height);
    return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(c)}\n`;
  }
  async function pngFile(svg) {
    const vb = svg.viewBox.baseVal;
    const url = URL.createObjectURL(new Blob([svgFile(svg)], { type: 'image/svg+xml' }));
    try {
      const img = new Image();
      await new Promise((ok, fail) => { img.onload = ok; img.onerror = () => fail(new Error('the figure did not draw')); img.src = url; });
      const canvas = document.createElement('canvas');
      canvas.width = 2 * vb.width;
      canvas.height = 2 * vb.height;
      canvas.getContext('2d').drawImage(img, 0, 0, canvas.width, canvas.height);
      return await new Promise(ok => canvas.toBlob(ok, 'image/png'));
    } finally {
      URL.revokeObjectURL(url);
    }
  }
  for (const fig of document.querySelectorAll('figure')) {
    const svg = fig.querySelector('svg');
    const name = svg.id.replace(/^plot-/, 'bnstudy-');
    const box = document.createElement('div');
    box.className = 'figure-actions';
    for (const [ext, make] of [['svg', async () => new Blob([svgFile(svg)], { type: 'image/svg+xml' })],
                               ['png', () => pngFile(svg)]]) {
      const b = document.createElement('button');
      Object.assign(b, { type: 'button', id: `${svg.id}-${ext}`, textContent: `Download as ${ext.toUpperCase()}` });
      b.setAttribute('aria-describedby', `${svg.id}-caption`);
      b.addEventListener('click', async () => {
        try {
          download(`${name}.${ext}`, '', await make());
        } catch (e) {
          $('copy-status').textContent = `Could not save the figure: ${e.message || e}`;
        }
      });
      box.appendChild(b);
    }
    fig.appendChild(box);
  }

  /* ---- presets: the frameworks' conventions (docs/frameworks.md's
   * command lines), each a few keys over the defaults ---- */
  const PRESETS = [
    { id: 'reset', label: 'the published study', sets: {} },
    { id: 'preset-pytorch', label: 'PyTorch BatchNorm1d',
      sets: { 'layer.momentum': '0.1', 'layer.momentum_weights': 'new', 'layer.variance': 'unbiased' } },
    { id: 'preset-keras', label: 'Keras/TF BatchNormalization',
      sets: { 'layer.momentum': '0.99', 'layer.eps': '1e-3' } },
  ];
  for (const p of PRESETS) {
    const b = document.createElement('button');
    Object.assign(b, { type: 'button', id: p.id, textContent: p.label });
    b.addEventListener('click', () => {
      $('copy-status').textContent = '';
      $('link-error').hidden = true;
      setDefaults();
      Object.assign(state, p.sets);
      buildControls();
      computeAll();
    });
    document.querySelector('.presets').appendChild(b);
  }

  /* ---- the settings in the link: every key that differs from its
   * default, as "section.key=value" in the fragment (never sent to the
   * server), the features one per feature= ---- */
  function linkText() {
    const p = new URLSearchParams();
    for (const k of keys) {
      if (k === FEATURE) {
        if (featuresChanged())
          for (const f of state.features)
            p.append(kid(k), featureLine(f));
      } else if (state[kid(k)] !== k.default) {
        p.set(kid(k), state[kid(k)]);
      }
    }
    for (const c of CLF_KEYS)
      if (clfState[c.key] !== c.dflt)
        p.set(`clf.${c.key}`, clfState[c.key]);
    for (const c of CAUSES)
      for (const k of c.keys)
        if (causeState[c.id][k.key] !== k.dflt)
          p.set(`${c.id}.${k.key}`, causeState[c.id][k.key]);
    return p.toString();
  }
  saveLink = () => {
    const h = linkText();
    if (h !== location.hash.slice(1))
      history.replaceState(null, '', h ? `#${h}` : location.pathname + location.search);
  };
  /* A link's settings into the state; what is wrong with it, or null. */
  function readLink(hash) {
    const byId = new Map(keys.map(k => [kid(k), k]));
    const seen = new Set(), features = [];
    for (const [name, value] of new URLSearchParams(hash)) {
      const k = byId.get(name);
      if (!k && CLF_KEYS.some(c => `clf.${c.key}` === name)) {
        clfState[name.slice(4)] = value;
        continue;
      }
      const cause = !k && CAUSES.find(c => c.keys.some(x => `${c.id}.${x.key}` === name));
      if (cause) {
        causeState[cause.id][name.slice(cause.id.length + 1)] = value;
        continue;
      }
      if (!k)
        return `it names ${name}, a setting this page does not have`;
      if (k === FEATURE) {
        const m = /^("(?:[^"]|"")*"|\S+) (\S+) (\S+) (\S+)$/.exec(value);
        if (!m)
          return `its feature "${value}" is not NAME MEAN SD RHO`;
        features.push({ name: untoken(m[1]), mean: m[2], sd: m[3], rho: m[4] });
      } else if (seen.has(name)) {
        return `it sets ${name} twice`;
      } else {
        seen.add(name);
        state[name] = value;
      }
    }
    if (features.length)
      state.features = features;
    return null;
  }
  /* A bad or stale link: said above the results, and the defaults. */
  linkRefused = why => {
    const box = $('link-error');
    box.hidden = false;
    box.textContent = `This link's settings could not be used (${why}); the page shows the published setting instead.`;
    setDefaults();
    buildControls();
    computeAll();
  };
  function openLink() {
    setDefaults();
    const hash = location.hash.slice(1);
    const why = hash ? readLink(hash) : null;
    if (why) {
      linkRefused(why);
      return;
    }
    $('link-error').hidden = true;
    buildControls();
    linkPending = Boolean(hash);
    computeAll();
  }
  /* The skip link scrolls; it leaves the link's settings alone. */
  $('skip').addEventListener('click', e => {
    e.preventDefault();
    $('results').scrollIntoView();
  });
  window.addEventListener('hashchange', () => {
    if (location.hash.slice(1) !== linkText())
      openLink();
  });

  listen();
  $('loading').remove();
  $('version').textContent = T.version;
  openLink();
  window.bnReady = true;
})().catch(e => {
  /* A page opened as a file cannot start its worker: say how to serve it. */
  const box = document.getElementById('error');
  box.hidden = false;
  box.textContent = location.protocol === 'file:'
    ? 'The page must be served, not opened as a file: python3 -m http.server -d web'
    : `The page could not start: ${e.message || e}`;
  throw e;
});
