/*
 * The browser test of the web page (web/, `make test-web`): web/ served
 * from 127.0.0.1, the page opened in headless Chromium through
 * puppeteer-core, its controls found as a person finds them (by the
 * label they read, within its section; a button by its words) and set
 * as a person sets them (selects chosen, text typed, a slider moved with
 * the arrow keys, features edited, added and removed, files chosen and
 * dragged onto the page) for each configuration below, and every number the page
 * shows compared as text with what `bnstudy run` prints for the same
 * settings: the summary's every column, the features table, the TSV the
 * page copies, and points of its figures (each a run at another batch
 * size or order). The command line each configuration is checked
 * against is written here by hand, not taken from the page; the page's
 * own command is run too and must print the page's TSV. It saves a
 * screenshot of the page in the published setting, and prints how long
 * the page took to answer each change, from the change to its answer
 * laid out (the core runs in a worker, so typing goes on meanwhile).
 *
 *   node tests/web/test.mjs --bnstudy ./bnstudy --web web --screenshot FILE
 *
 * Prints "ok" or "not ok" per check and "N passed, N failed".
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const opt = { bnstudy: './bnstudy', web: 'web', screenshot: null };
for (let i = 2; i < process.argv.length; i += 2) {
  const name = process.argv[i].replace(/^--/, '');
  if (!(name in opt) || i + 1 >= process.argv.length) {
    console.error(`test.mjs: unknown option or missing value '${process.argv[i]}'`);
    process.exit(2);
  }
  opt[name] = process.argv[i + 1];
}
const bnstudy = path.resolve(opt.bnstudy);

let passed = 0, failed = 0;
function check(name, problems) {
  if (problems.length === 0) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}`);
    for (const p of problems.slice(0, 8))
      console.log(`    ${p}`);
  }
}

/* ---- bnstudy run, the reference ---- */

/* argv with the options of more (name, value pairs) replacing its own:
 * bnstudy refuses an option given twice. */
function replaced(argv, more) {
  const names = new Set(more.filter((_, i) => i % 2 === 0));
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    if (names.has(argv[i])) {
      i++;
      continue;
    }
    out.push(argv[i]);
  }
  return out.concat(more);
}

function cli(argv) {
  const r = spawnSync(bnstudy, ['run', ...argv, '--write-features', '-'], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function parseTsv(text) {
  const lines = text.split('\n').filter(l => l !== '');
  const header = lines[0].split('\t');
  return { header, rows: lines.slice(1).map(l => l.split('\t')) };
}

/* ---- finding a control as a person does: by the text beside it ---- */

/* The element a scope names: null for the whole page; else a list whose
 * first step is the text of a section's heading or a fieldset's legend
 * (or {css} for a box with no heading of its own, a figure), and each
 * further step the label of a control's box within it. One match each,
 * or the test stops saying what it looked for and found. */
function findIn(page, scope, what, text) {
  return page.evaluateHandle((scope, what, text) => {
    const norm = s => s.replace(/\s+/g, ' ').trim();
    /* A label's own words, without those of a control it holds. */
    const own = l => {
      const c = l.cloneNode(true);
      c.querySelectorAll('input, select, textarea, button').forEach(e => e.remove());
      return norm(c.textContent);
    };
    const where = [];
    let root = document;
    for (const [i, step] of (scope || []).entries()) {
      let hits;
      if (typeof step === 'object')
        hits = [...document.querySelectorAll(step.css)];
      else if (i === 0)
        hits = [...document.querySelectorAll('fieldset, section')].filter(s => {
          const h = s.querySelector(':scope > legend, :scope > h2, :scope > h3');
          return h && norm(h.textContent) === step;
        });
      else
        hits = [...root.querySelectorAll('label')].filter(l => own(l) === step).map(l => l.closest('.control'));
      where.push(typeof step === 'object' ? step.css : `"${step}"`);
      if (hits.length !== 1 || !hits[0])
        return `${hits.length} boxes named ${where.join(' > ')}`;
      root = hits[0];
    }
    const inside = where.length ? ` in ${where.join(' > ')}` : '';
    if (what === 'button') {
      const b = [...root.querySelectorAll('button')].filter(e => norm(e.textContent) === text);
      return b.length === 1 ? b[0] : `${b.length} buttons reading "${text}"${inside}`;
    }
    const labels = [...root.querySelectorAll('label')].filter(l => own(l) === text);
    if (labels.length !== 1)
      return `${labels.length} labels reading "${text}"${inside}`;
    return labels[0].control || `the label "${text}"${inside} labels no control`;
  }, scope, what, text);
}

async function found(page, scope, what, text) {
  const h = await findIn(page, scope, what, text);
  const el = h.asElement();
  if (!el)
    throw new Error(`no single control: ${await h.jsonValue()}`);
  return el;
}
/* The control a label names, and the button that reads text. */
const labelled = (page, scope, text) => found(page, scope, 'label', text);
const button = (page, scope, text) => found(page, scope, 'button', text);

/* The controls of a key of the layer's: its fieldset's legend, [section],
 * and its name, as the page writes them. */
const keyScope = key => [`[${key.split('.')[0]}]`];
const keyControl = (page, key) => labelled(page, keyScope(key), key.split('.')[1]);
/* A feature's field: the row of the features table, its column by the
 * header a person reads over it. */
async function featureCell(page, i, field) {
  const h = await page.evaluateHandle((i, field) => {
    const t = document.querySelectorAll('fieldset table.features-edit');
    if (t.length !== 1)
      return `${t.length} feature tables`;
    const row = t[0].rows[i + 1];
    /* The button that reads − in the row, under no header. */
    if (row && field === '\u2212')
      return [...row.querySelectorAll('button')].find(b => b.textContent === field) || `no − in row ${i + 1}`;
    const col = [...t[0].rows[0].cells].findIndex(c => c.textContent.trim() === field);
    if (col < 0 || !row)
      return `no column "${field}" or no feature ${i + 1}`;
    return row.cells[col].querySelector('input');
  }, i, field);
  const el = h.asElement();
  if (!el)
    throw new Error(`no feature cell: ${await h.jsonValue()}`);
  return el;
}
const reset = async page => (await button(page, null, 'the published study')).click();

/* ---- setting the controls, as a user does ---- */

async function typeInto(page, el, value) {
  /* Everything in it selected (a textarea's triple click selects one
   * line), then replaced. */
  await el.click();
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await el.type(value);
}

async function choose(page, el, value) {
  const got = await el.select(value);
  if (got[0] !== value)
    throw new Error(`${await el.evaluate(e => e.id)} has no option '${value}'`);
}
/* A text typed or a choice made, as the control takes it. */
async function setControl(page, el, value) {
  if (await el.evaluate(e => e.tagName) === 'SELECT')
    await choose(page, el, value);
  else
    await typeInto(page, el, value);
}

/* Actions: [key, value] for a key's own control, ['order', NAME, ARG],
 * ['feature', I, FIELD, VALUE], ['add-feature'], ['remove-feature', I],
 * ['click', TEXT] (a button), ['keys', KEY, PRESS, N] (press a key N
 * times in the key's slider). */
const idle = page => page.waitForFunction('window.bnIdle === true', { timeout: 20000 });

async function apply(page, actions) {
  await idle(page);
  for (const a of actions) {
    if (a[0] === 'order') {
      await choose(page, await keyControl(page, 'sweep.order'), a[1]);
      if (a[2] !== undefined) {
        const byFeature = await findIn(page, ['[sweep]', 'order'], 'label', 'by');
        if (byFeature.asElement())
          await choose(page, byFeature.asElement(), a[2]);
        else
          await typeInto(page, await labelled(page, ['[sweep]', 'order'], 'groups K'), a[2]);
      }
    } else if (a[0] === 'feature') {
      await typeInto(page, await featureCell(page, a[1], a[2]), a[3]);
    } else if (a[0] === 'add-feature') {
      await (await button(page, ['[population]'], 'Add a feature')).click();
    } else if (a[0] === 'remove-feature') {
      await (await featureCell(page, a[1], '\u2212')).click();
    } else if (a[0] === 'click') {
      await (await button(page, null, a[1])).click();
    } else if (a[0] === 'keys') {
      await (await labelled(page, keyScope(a[1]).concat([a[1].split('.')[1]]), 'or slide')).focus();
      for (let i = 0; i < a[3]; i++)
        await page.keyboard.press(a[2]);
    } else {
      await setControl(page, await keyControl(page, a[0]), a[1]);
    }
    await idle(page);
  }
}

/* The configurations: the page's actions and, written independently,
 * the bnstudy run options that must give the same numbers. */
const F = (name, mean, sd, rho) => `population.feature=${name} ${mean} ${sd} ${rho}`;
/* The default eight, as docs/definitions.md gives them. */
const defaults8 = [F('f0', 0, 1, 1), F('f1', 0.5, 0.8, 0.8), F('f2', -0.5, 1.2, 0.6),
                   F('f3', 0.3, 0.9, 0.5), F('f4', 0.2, 1.1, 0.3), F('f5', -0.3, 0.7, 0.2),
                   F('f6', 0.4, 2.76, 0.4), F('f7', 0.1, 1, 0)];
const sets = lines => lines.flatMap(l => ['--set', l]);
const configurations = [
  ['the published setting', [], []],
  ['batch size 8', [['sweep.batch_size', '8']], ['--batch-size', '8']],
  ['64 rows, B 8, 10 epochs, momentum 0.99 new: zeros on a log axis',
   [['population.rows', '64'], ['sweep.batch_size', '8'], ['sweep.epochs', '10'],
    ['layer.momentum', '0.99'], ['layer.momentum_weights', 'new']],
   ['--set', 'population.rows=64', '--batch-size', '8', '--epochs', '10', '--momentum', '0.99',
    '--momentum-weights', 'new']],
  ['the PyTorch preset', [['click', 'PyTorch BatchNorm1d']],
   ['--momentum', '0.1', '--momentum-weights', 'new', '--variance', 'unbiased']],
  ['the Keras preset at B 32', [['click', 'Keras/TF BatchNormalization'], ['sweep.batch_size', '32']],
   ['--momentum', '0.99', '--eps', '1e-3', '--batch-size', '32']],
  ['batch size 100, a partial batch dropped', [['sweep.batch_size', '100']], ['--batch-size', '100']],
  ['partial batch kept', [['sweep.batch_size', '100'], ['sweep.partial', 'keep']],
   ['--batch-size', '100', '--partial', 'keep']],
  ['momentum 0.99 on the old value', [['layer.momentum', '0.99']], ['--momentum', '0.99']],
  ['PyTorch: momentum 0.1 on the new value, unbiased variance',
   [['layer.momentum', '0.1'], ['layer.momentum_weights', 'new'], ['layer.variance', 'unbiased']],
   ['--momentum', '0.1', '--momentum-weights', 'new', '--variance', 'unbiased']],
  ['Keras: momentum 0.99 old, eps 1e-3', [['layer.momentum', '0.99'], ['layer.eps', '1e-3']],
   ['--momentum', '0.99', '--eps', '1e-3']],
  ['three epochs at B 32', [['sweep.epochs', '3'], ['sweep.batch_size', '32']],
   ['--epochs', '3', '--batch-size', '32']],
  ['sorted by the first feature', [['order', 'sorted']], ['--order', 'sorted']],
  ['sorted by f3 at B 64', [['order', 'sorted', 'f3'], ['sweep.batch_size', '64']],
   ['--order', 'sorted:f3', '--batch-size', '64']],
  ['sorted descending by f6', [['order', 'sorted-desc', 'f6']], ['--order', 'sorted-desc:f6']],
  ['grouped:4 at B 16', [['order', 'grouped', '4'], ['sweep.batch_size', '16']],
   ['--order', 'grouped:4', '--batch-size', '16']],
  ['interleaved, ema-debiased', [['order', 'interleaved'], ['layer.estimator', 'ema-debiased']],
   ['--order', 'interleaved', '--estimator', 'ema-debiased']],
  ['as-is, cumulative', [['order', 'as-is'], ['layer.estimator', 'cumulative']],
   ['--order', 'as-is', '--estimator', 'cumulative']],
  ['precise over 3 batches at B 32, sorted',
   [['layer.estimator', 'precise'], ['sweep.precise_batches', '3'], ['sweep.batch_size', '32'],
    ['order', 'sorted']],
   ['--estimator', 'precise', '--precise-batches', '3', '--batch-size', '32', '--order', 'sorted']],
  ['shuffle seed 7, gamma 2, beta -1',
   [['sweep.seed', '7'], ['layer.gamma', '2'], ['layer.beta', '-1']],
   ['--seed', '7', '--gamma', '2', '--beta', '-1']],
  ['new-value momentum 1, ema-debiased, B 128',
   [['layer.momentum', '1'], ['layer.momentum_weights', 'new'],
    ['layer.estimator', 'ema-debiased'], ['sweep.batch_size', '128']],
   ['--momentum', '1', '--momentum-weights', 'new', '--estimator', 'ema-debiased',
    '--batch-size', '128']],
  ['an edited feature: f6 with sd 5', [['feature', 6, 'sd', '5']],
   sets(defaults8.map(l => l.startsWith('population.feature=f6 ') ? F('f6', 0.4, 5, 0.4) : l))],
  ['a renamed feature, sorted by it',
   [['feature', 2, 'name', 'width'], ['order', 'sorted', 'width']],
   sets(defaults8.map(l => l.replace('=f2 ', '=width '))).concat(['--order', 'sorted:width'])],
  ['a feature added, another removed, B 64',
   [['add-feature'], ['feature', 8, 'mean', '3'], ['feature', 8, 'sd', '0.5'],
    ['feature', 8, 'rho', '-0.9'], ['remove-feature', 0], ['sweep.batch_size', '64']],
   sets(defaults8.slice(1).concat([F('f8', 3, 0.5, -0.9)])).concat(['--batch-size', '64'])],
  ['300 rows from population seed 5, B 32, cumulative',
   [['population.rows', '300'], ['population.seed', '5'], ['sweep.batch_size', '32'],
    ['layer.estimator', 'cumulative']],
   ['--set', 'population.rows=300', '--set', 'population.seed=5', '--batch-size', '32',
    '--estimator', 'cumulative']],
  ['a name with a space, sorted descending by it, grouped features',
   [['feature', 0, 'name', 'worst area'], ['order', 'sorted-desc', 'worst area'],
    ['sweep.batch_size', '64']],
   sets(defaults8.map(l => l.replace('=f0 ', '="worst area" ')))
     .concat(['--order', '"sorted-desc:worst area"', '--batch-size', '64'])],
  ['the momentum slider moved by the keyboard: 3 steps down',
   [['keys', 'layer.momentum', 'ArrowLeft', 3]], ['--momentum', '0.897']],
  ['the batch-size slider moved by the keyboard: 5 steps down, then momentum new 0.3',
   [['keys', 'sweep.batch_size', 'ArrowLeft', 5], ['layer.momentum_weights', 'new'],
    ['layer.momentum', '0.3']],
   ['--batch-size', '251', '--momentum-weights', 'new', '--momentum', '0.3']],
];

async function pageNumbers(page) {
  return page.evaluate(() => ({
    summary: [...document.querySelectorAll('#scores [data-col], #keys [data-col]')]
      .map(e => [e.dataset.col, e.textContent]),
    features: [...document.querySelectorAll('#features [data-col]')]
      .map(e => [e.dataset.feature, e.dataset.col, e.textContent]),
    tsv: document.getElementById('tsv').textContent,
    command: document.getElementById('command').textContent,
    error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent,
  }));
}

async function plotValue(page, svg, series, x) {
  return page.evaluate((svg, series, x) => {
    const e = document.querySelector(`#${svg} [data-series="${series}"] [data-x="${x}"]`);
    return e ? e.dataset.value : null;
  }, svg, series, x);
}

function column(out, name) {
  const t = parseTsv(out.split('\n\n')[0]);
  const i = t.header.indexOf(name);
  return i < 0 ? null : t.rows[0][i];
}

async function runConfigurations(page) {
  for (const [name, actions, argv] of configurations) {
    await reset(page);
    await apply(page, actions);
    const got = await pageNumbers(page);
    const want = cli(argv);
    const problems = [];
    if (want.status !== 0) {
      problems.push(`bnstudy run ${argv.join(' ')}: status ${want.status}: ${want.err.trim()}`);
      check(name, problems);
      continue;
    }
    if (got.error)
      problems.push(`the page refuses: ${got.error}`);
    /* Every column of the summary, string-equal, and nothing else. */
    const [sumText, featText] = want.out.split('\n\n');
    const s = parseTsv(sumText), shown = new Map(got.summary);
    s.header.forEach((h, i) => {
      if (shown.get(h) !== s.rows[0][i])
        problems.push(`${h}: page ${shown.get(h)}, bnstudy ${s.rows[0][i]}`);
    });
    for (const [h] of got.summary)
      if (!s.header.includes(h))
        problems.push(`the page shows ${h}, which bnstudy does not print`);
    /* The features table. */
    const f = parseTsv(featText), fcol = n => f.header.indexOf(n);
    const fshown = new Map(got.features.map(([feat, col, v]) => [`${feat}\t${col}`, v]));
    for (const r of f.rows)
      for (const c of ['true_mean', 'true_var', 'running_mean', 'running_var']) {
        const k = `${r[fcol('feature')]}\t${c}`;
        if (fshown.get(k) !== r[fcol(c)])
          problems.push(`${r[fcol('feature')]} ${c}: page ${fshown.get(k)}, bnstudy ${r[fcol(c)]}`);
      }
    if (fshown.size !== 4 * f.rows.length)
      problems.push(`the page shows ${fshown.size / 4} features, bnstudy ${f.rows.length}`);
    /* The TSV the page copies is what bnstudy prints, whole. */
    if (got.tsv !== want.out)
      problems.push('the TSV differs from bnstudy run --write-features -');
    /* The page's own command prints the page's TSV. */
    const own = spawnSync('bash', ['-c', `${got.command} --write-features -`],
                          { encoding: 'utf8', env: { ...process.env, PATH: `${path.dirname(bnstudy)}:${process.env.PATH}` },
                            cwd: path.dirname(bnstudy) });
    if (own.stdout !== got.tsv)
      problems.push(`the page's command prints other numbers: ${got.command} (${own.stderr.trim()})`);
    /* Figure points, each a run of its own: stats_err at B 8 in the
     * order chosen, train_eval_rmse sorted at B 32, init_weight at B 16. */
    const order = column(want.out, 'order');
    for (const [svg, series, b, extra, col] of [
      ['plot-batch', 'stats_err', 8, [], 'stats_err'],
      ['plot-order', 'train_eval_rmse:sorted', 32, ['--order', 'sorted'], 'train_eval_rmse'],
      ['plot-weight', 'init_weight', 16, [], 'init_weight']]) {
      const p = cli(replaced(argv, ['--batch-size', String(b)].concat(extra)));
      const v = await plotValue(page, svg, series, b);
      if (p.status !== 0) {
        if (v !== null)
          problems.push(`${svg} has a point at B ${b} that bnstudy refuses`);
      } else if (v !== column(p.out, col)) {
        problems.push(`${svg} ${series} at B ${b} (${order}): page ${v}, bnstudy ${column(p.out, col)}`);
      }
    }
    problems.push(...await figureProblems(page));
    check(name, problems);
  }
}

/* What a figure must not have: a coordinate that is not a number (a 0
 * on a log axis), or a series missing a batch size the sweep ran. */
async function figureProblems(page) {
  return page.evaluate(() => {
    const out = [];
    for (const svg of document.querySelectorAll('figure svg')) {
      for (const e of svg.querySelectorAll('*'))
        for (const a of e.attributes)
          if (/NaN|Infinity/.test(a.value))
            out.push(`${svg.id}: <${e.tagName}> ${a.name}="${a.value}"`);
      /* The batch sizes any series of these settings has, every one has
       * (bnstudy refuses some settings at some sizes, for every series). */
      const mine = [...svg.querySelectorAll('[data-series]')].filter(g => !g.dataset.series.endsWith('_published'));
      const xs = new Set(mine.flatMap(g => [...g.querySelectorAll('[data-x]')].map(e => e.dataset.x)));
      for (const g of svg.id === 'plot-features' ? [] : mine)
        if (g.querySelectorAll('[data-x]').length < xs.size)
          out.push(`${svg.id}: ${g.dataset.series} has ${g.querySelectorAll('[data-x]').length} of ${xs.size} points`);
    }
    return out;
  });
}

/* The layout at one window size: the page no wider than the window, no
 * element past its right edge, and no two pieces of text on each other
 * (each line of text a box, clipped to the boxes that scroll or clip it;
 * the figures' texts among them). */
async function layoutProblems(page) {
  return page.evaluate(() => {
    const out = [], W = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > W)
      out.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${W} px window`);
    /* A text's own element may clip it (a <pre> that scrolls); an
     * element's own overflow clips its contents, not itself. */
    const clipOf = (el, self) => {
      let r = { left: -1e9, right: 1e9, top: -1e9, bottom: 1e9 };
      for (let a = self ? el : el.parentElement; a; a = a.parentElement) {
        const cs = getComputedStyle(a);
        if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
          const b = a.getBoundingClientRect();
          r = { left: Math.max(r.left, b.left), right: Math.min(r.right, b.right),
                top: Math.max(r.top, b.top), bottom: Math.min(r.bottom, b.bottom) };
        }
      }
      return r;
    };
    const boxes = [];
    const add = (b, el, text, self) => {
      const c = clipOf(el, self);
      const r = { left: Math.max(b.left, c.left), right: Math.min(b.right, c.right),
                  top: Math.max(b.top, c.top), bottom: Math.min(b.bottom, c.bottom) };
      if (r.right - r.left > 0.5 && r.bottom - r.top > 0.5)
        boxes.push({ r, el, text: text.trim().slice(0, 40) });
      if (b.right > W + 0.5 && c.right > W)
        out.push(`"${text.trim().slice(0, 40)}" ends at ${Math.round(b.right)} px, past the window's ${W}`);
    };
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n; (n = walk.nextNode());) {
      const el = n.parentElement;
      if (!n.textContent.trim() || el.closest('svg, [hidden], script, style, option, select'))
        continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const b of range.getClientRects())
        add(b, el, n.textContent, true);
    }
    for (const e of document.querySelectorAll('input, select, button, svg'))
      if (!e.closest('[hidden]'))
        add(e.getBoundingClientRect(), e, e.id || e.tagName);
    for (const t of document.querySelectorAll('svg text'))
      if (t.textContent.trim())
        add(t.getBoundingClientRect(), t, t.textContent, true);
    const over = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
                           Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        /* A control and the text inside it, a figure and its own texts. */
        if (a.el.contains(b.el) || b.el.contains(a.el))
          continue;
        if (over(a.r, b.r))
          out.push(`"${a.text}" overlaps "${b.text}"`);
      }
    return out;
  });
}

async function otherChecks(page) {
  /* A refusal: the page says what bnstudy says, and marks the control. */
  await reset(page);
  await apply(page, [['sweep.batch_size', '600']]);
  const got = await pageNumbers(page);
  const want = cli(['--batch-size', '600']);
  const msg = want.err.trim().replace(/^bnstudy run: [^:]*: /, '');
  const invalid = await (await keyControl(page, 'sweep.batch_size')).evaluate(e => e.getAttribute('aria-invalid'));
  check('batch size 600 is refused as bnstudy refuses it, the control marked',
        [want.status === 2 ? null : `bnstudy exits ${want.status}`,
         got.error && got.error.endsWith(msg) ? null : `page: ${got.error}; bnstudy: ${want.err.trim()}`,
         invalid === 'true' ? null : 'the batch size control is not marked invalid'].filter(x => x));

  /* A list typed into a field is refused, as bnstudy run refuses it. */
  await reset(page);
  await apply(page, [['layer.momentum', '0.9 0.99']]);
  const list = await pageNumbers(page);
  const listWant = cli(['--momentum', '0.9 0.99']);
  const marked = await (await keyControl(page, 'layer.momentum')).evaluate(e => e.getAttribute('aria-invalid'));
  const tail = ': one value at a time (a sweep takes lists)';
  check('a list in one field is refused, as bnstudy refuses it, the control marked',
        [listWant.status === 2 && listWant.err.trim().endsWith(tail) ? null : `bnstudy: ${listWant.err.trim()}`,
         list.error && list.error.endsWith(tail) ? null : `page: ${list.error}`,
         marked === 'true' ? null : 'the momentum control is not marked invalid'].filter(x => x));

  /* The copy buttons put the command and the TSV on the clipboard. */
  await reset(page);
  await apply(page, [['layer.momentum', '0.95'], ['order', 'grouped', '2']]);
  const shown = await pageNumbers(page);
  await (await button(page, null, 'Copy the bnstudy run command')).click();
  await page.waitForFunction(() => document.getElementById('copy-status').textContent !== '');
  const cmd = await page.evaluate(() => navigator.clipboard.readText());
  await (await button(page, null, 'Copy the numbers as TSV')).click();
  await page.waitForFunction(() => /TSV/.test(document.getElementById('copy-status').textContent));
  const tsv = await page.evaluate(() => navigator.clipboard.readText());
  check('the buttons copy the command and the TSV',
        [cmd === shown.command ? null : `copied command: ${cmd}`,
         cmd === './bnstudy run --momentum 0.95 --order grouped:2' ? null : `command: ${cmd}`,
         tsv === shown.tsv ? null : 'the copied TSV is not the one shown'].filter(x => x));

  /* A long run does not hold the page: a million epochs are abandoned
   * for the next change, which is answered as bnstudy answers it. */
  await reset(page);
  await idle(page);
  await setOnce(await keyControl(page, 'sweep.epochs'), '1000000');
  await new Promise(ok => setTimeout(ok, 500));
  const noted = await page.$eval('#busy', e => !e.hidden);
  await setOnce(await keyControl(page, 'sweep.epochs'), '2');
  await idle(page);
  const after = await pageNumbers(page);
  check('a million epochs do not hold the page: the next change is answered',
        [noted ? null : 'no note that the page is computing',
         after.tsv === cli(['--epochs', '2']).out ? null : 'the answer is not bnstudy run --epochs 2\'s'].filter(x => x));

  /* Every control is reached with the Tab key, from the top of the page. */
  await reset(page);
  await idle(page);
  const all = await page.evaluate(() => {
    const controls = [...document.querySelectorAll('#controls input, #controls select, #controls button')]
      .filter(e => !e.disabled);
    controls.forEach((e, i) => { e.dataset.tab = i; });
    document.activeElement.blur();
    return controls.length;
  });
  const reached = new Set();
  for (let i = 0; i < 3 * all && reached.size < all; i++) {
    await page.keyboard.press('Tab');
    const t = await page.evaluate(() => document.activeElement.dataset.tab);
    if (t !== undefined)
      reached.add(t);
  }
  check(`every one of the ${all} controls is reached with the Tab key`,
        reached.size === all ? [] : [`${all - reached.size} never reached`]);
}

/* The classifier's section, set through its own labelled controls (and
 * the layer's), against bnstudy run --type classifier --write-curve -:
 * every number it shows, every point of its curve, and its command. */
const CLASSIFIER = 'The classifier: accuracy in train mode and in eval mode';
const clfIdle = page => page.waitForFunction('window.bnIdle === true && window.bnSectionsIdle === true',
                                             { timeout: 30000 });
async function classifierChecks(page) {
  const cases = [
    ['the classifier at its defaults here: 2 classes, 10 epochs', [], [],
     ['--set', 'population.classes=2', '--epochs', '10']],
    ['the classifier: 3 classes, 8 hidden units, lr 0.05, 6 epochs, B 64',
     [['classes', '3'], ['hidden', '8'], ['lr', '0.05'], ['epochs', '6']],
     [['sweep.batch_size', '64']],
     ['--set', 'population.classes=3', '--hidden', '8', '--lr', '0.05', '--epochs', '6', '--batch-size', '64']],
    ['the classifier without batch norm, shuffle seed 3, 4 epochs',
     [['norm', 'none'], ['epochs', '4']], [['sweep.seed', '3']],
     ['--set', 'population.classes=2', '--norm', 'none', '--epochs', '4', '--seed', '3']],
    ['the classifier with PyTorch\'s layer, sorted, gamma 2 (the layer\'s alone)',
     [], [['click', 'PyTorch BatchNorm1d'], ['order', 'sorted'], ['layer.gamma', '2']],
     ['--set', 'population.classes=2', '--epochs', '10', '--momentum', '0.1', '--momentum-weights', 'new',
      '--variance', 'unbiased', '--order', 'sorted']],
  ];
  for (const [name, mine, layer, argv] of cases) {
    await reset(page);
    await clfIdle(page);
    await apply(page, layer);
    for (const [name, value] of mine) {
      await setControl(page, await labelled(page, [CLASSIFIER], name), value);
      await clfIdle(page);
    }
    await clfIdle(page);
    const want = spawnSync(bnstudy, ['run', '--type', 'classifier', ...argv, '--write-curve', '-'], { encoding: 'utf8' });
    const problems = [];
    if (want.status !== 0) {
      check(name, [`bnstudy: ${want.stderr.trim()}`]);
      continue;
    }
    const [sumText, curveText] = want.stdout.split('\n\n');
    const sum = parseTsv(sumText), curve = parseTsv(curveText);
    const got = await page.evaluate(() => ({
      cols: [...document.querySelectorAll('#clf-scores [data-col]')].map(e => [e.dataset.col, e.textContent]),
      points: [...document.querySelectorAll('#plot-curve [data-series] [data-x]')]
        .map(e => [e.closest('[data-series]').dataset.series, e.dataset.x, e.dataset.value]),
      command: document.getElementById('clf-command').textContent,
      error: document.getElementById('clf-error').hidden ? null : document.getElementById('clf-error').textContent,
      caption: document.getElementById('plot-curve-caption').textContent,
    }));
    if (got.error)
      problems.push(`the page refuses: ${got.error}`);
    if (got.cols.length < 5)
      problems.push(`only ${got.cols.length} numbers shown`);
    for (const [col, v] of got.cols)
      if (v !== sum.rows[0][sum.header.indexOf(col)])
        problems.push(`${col}: page ${v}, bnstudy ${sum.rows[0][sum.header.indexOf(col)]}`);
    const wantPoints = ['acc_train_mode', 'acc_eval_mode'].flatMap(c =>
      curve.rows.map(r => [c, r[curve.header.indexOf('epoch')], r[curve.header.indexOf(c)]]));
    if (JSON.stringify(got.points) !== JSON.stringify(wantPoints))
      problems.push(`the curve's ${got.points.length} points are not bnstudy's ${wantPoints.length}: ` +
                    `${JSON.stringify(got.points.slice(0, 2))} against ${JSON.stringify(wantPoints.slice(0, 2))}`);
    const own = spawnSync('bash', ['-c', got.command], { encoding: 'utf8', cwd: path.dirname(bnstudy) });
    if (own.stdout !== want.stdout)
      problems.push(`the page's command prints other numbers: ${got.command} (${own.stderr.trim()})`);
    if (!/What it draws: /.test(got.caption))
      problems.push(`the caption is not bnstudy plot's: ${got.caption}`);
    check(name, problems);
  }
  /* A refusal of its own: no classes is no labels. */
  await reset(page);
  await clfIdle(page);
  await typeInto(page, await labelled(page, [CLASSIFIER], 'classes'), '0');
  await clfIdle(page);
  const want = spawnSync(bnstudy, ['run', '--type', 'classifier'], { encoding: 'utf8' });
  const msg = await page.$eval('#clf-error', e => e.hidden ? '' : e.textContent);
  /* The message past the option that names the key (--type, or the
   * page's --set model.type=...). */
  const tail = want.stderr.trim().replace(/^bnstudy run: [^:]*: /, '');
  check('the classifier with 0 classes is refused as bnstudy refuses it',
        [want.status === 2 ? null : `bnstudy exits ${want.status}`,
         msg.endsWith(tail) ? null : `page: "${msg}"; bnstudy: "${tail}"`].filter(x => x));
}

/* The other causes' sections, each set through its labelled controls
 * (and the layer's) in three configurations, against bnstudy run: every
 * score shown, the effective counts of feature maps, a point of the
 * figure's chosen series (a run of its own at that batch size), and the
 * section's own command. */
const D8 = sets(defaults8);
/* Each section's heading, as the page shows it. */
const CAUSES = {
  shift: 'A shift between training and evaluation data', drift: 'Drift during training',
  collapse: 'A channel that collapses', initial: 'Buffers that were never filled',
  maps: 'Feature maps: what a batch mean counts',
};
const causeCases = [
  ['shift', 'a shift of 1 sd at its defaults', [], [], ['--shift', '1'], 'evaluation.shift', '1', 'train_eval_rmse'],
  ['shift', 'shift 0.5, scale 2, B 32', [['shift', '0.5'], ['scale', '2']],
   [['sweep.batch_size', '32']], ['--shift', '0.5', '--scale', '2', '--batch-size', '32'], 'evaluation.shift', '0.5', 'train_eval_rmse'],
  ['shift', 'shift 2 with offset 1, PyTorch\'s layer', [['shift', '2'], ['offset', '1']],
   [['click', 'PyTorch BatchNorm1d']], ['--shift', '2', '--offset', '1', '--momentum', '0.1', '--momentum-weights', 'new',
                                    '--variance', 'unbiased'], 'evaluation.shift', '2', 'train_eval_rmse'],
  ['drift', 'a step of 2 sd after update 4, 4 epochs', [], [], ['--drift', 'step:4', '--drift-size', '2', '--epochs', '4'],
   'sweep.drift_size', '2', 'stats_err'],
  ['drift', 'a ramp from 2 to 10 of 1 sd, 3 epochs, momentum 0.99', [['drift', 'ramp:2:10'],
    ['drift_size', '1'], ['epochs', '3']], [['layer.momentum', '0.99']],
   ['--drift', 'ramp:2:10', '--drift-size', '1', '--epochs', '3', '--momentum', '0.99'], 'sweep.drift_size', '1', 'stats_err'],
  ['drift', 'a step of 3 sd after update 1, 2 epochs, B 64', [['drift', 'step:1'],
    ['drift_size', '3'], ['epochs', '2']], [['sweep.batch_size', '64']],
   ['--drift', 'step:1', '--drift-size', '3', '--epochs', '2', '--batch-size', '64'], 'sweep.drift_size', '3', 'stats_err'],
  ['collapse', 'a dead feature offset by 0.01', [], [], D8.concat(['--set', 'population.feature=dead 0 0 0', '--offset', '0.01']),
   'evaluation.offset', '0.01', 'train_eval_rmse'],
  ['collapse', 'offset 1 at Keras\'s eps 1e-3', [['offset', '1'], ['eps', '1e-3']], [],
   D8.concat(['--set', 'population.feature=dead 0 0 0', '--offset', '1', '--eps', '1e-3']), 'evaluation.offset', '1', 'train_eval_rmse'],
  ['collapse', 'offset 0.1 at B 32, an edited feature', [['offset', '0.1']],
   [['sweep.batch_size', '32'], ['feature', 0, 'sd', '2']],
   sets([F('f0', 0, 2, 1)].concat(defaults8.slice(1))).concat(['--set', 'population.feature=dead 0 0 0', '--offset', '0.1',
                                                               '--batch-size', '32']), 'evaluation.offset', '0.1', 'train_eval_rmse'],
  ['initial', 'buffers never filled', [], [], ['--estimator', 'initial'], 'layer.estimator', 'initial', 'stats_err'],
  ['initial', 'adaptive at B 64', [['estimator', 'adaptive']], [['sweep.batch_size', '64']],
   ['--estimator', 'adaptive', '--batch-size', '64'], 'layer.estimator', 'adaptive', 'stats_err'],
  ['initial', 'initial, sorted, gamma 2', [], [['order', 'sorted'], ['layer.gamma', '2']],
   ['--estimator', 'initial', '--order', 'sorted', '--gamma', '2'], 'layer.estimator', 'initial', 'stats_err'],
  ['maps', 'generated maps, near and apart channels', [], [],
   ['--set', 'maps.size=7 7', '--set', 'maps.samples=64', '--set', 'maps.channel=near 0 1 0.8',
    '--set', 'maps.channel=apart 0 1 -0.5', '--batch-size', '8', '--order', 'shuffled-samples'], null, null, 'n_eff'],
  ['maps', '5x5 maps of 32 samples, one channel, B 4', [['size', '5 5'], ['samples', '32'],
    ['channel', 'only 1 2 0.3'], ['batch_size', '4']], [],
   ['--set', 'maps.size=5 5', '--set', 'maps.samples=32', '--set', 'maps.channel=only 1 2 0.3', '--batch-size', '4',
    '--order', 'shuffled-samples'], null, null, 'n_eff'],
  ['maps', 'maps seed 3, momentum 0.5', [['seed', '3']], [['layer.momentum', '0.5']],
   ['--set', 'maps.size=7 7', '--set', 'maps.samples=64', '--set', 'maps.channel=near 0 1 0.8',
    '--set', 'maps.channel=apart 0 1 -0.5', '--set', 'maps.seed=3', '--batch-size', '8', '--order', 'shuffled-samples',
    '--momentum', '0.5'], null, null, 'n_eff'],
];

async function causeChecks(page) {
  for (const [id, name, mine, layer, argv, seriesKey, chosen, col] of causeCases) {
    await reset(page);
    await clfIdle(page);
    await apply(page, layer);
    for (const [name, value] of mine) {
      await setControl(page, await labelled(page, [CAUSES[id]], name), value);
      await clfIdle(page);
    }
    await clfIdle(page);
    const maps = id === 'maps';
    const extra = maps ? ['--write-effective', '-'] : [];
    const want = spawnSync(bnstudy, ['run', ...argv, ...extra], { encoding: 'utf8' });
    if (want.status !== 0) {
      check(`${id}: ${name}`, [`bnstudy: ${want.stderr.trim()}`]);
      continue;
    }
    const got = await page.evaluate(id => ({
      cols: [...document.querySelectorAll(`#x-${id}-scores [data-col]`)].map(e => [e.dataset.col, e.textContent]),
      table: [...document.querySelectorAll(`#x-${id}-table [data-col]`)].map(e => [e.dataset.feature, e.dataset.col, e.textContent]),
      command: document.getElementById(`x-${id}-command`).textContent,
      error: document.getElementById(`x-${id}-error`).hidden ? null : document.getElementById(`x-${id}-error`).textContent,
      caption: document.getElementById(`plot-x-${id}-caption`).textContent,
    }), id);
    const problems = [];
    if (got.error)
      problems.push(`the page refuses: ${got.error}`);
    const [sumText, tableText] = want.stdout.split('\n\n');
    const sum = parseTsv(sumText);
    if (got.cols.length < 10)
      problems.push(`only ${got.cols.length} scores shown`);
    for (const [c, v] of got.cols)
      if (v !== sum.rows[0][sum.header.indexOf(c)])
        problems.push(`${c}: page ${v}, bnstudy ${sum.rows[0][sum.header.indexOf(c)]}`);
    if (maps) {
      const e = parseTsv(tableText), ix = n => e.header.indexOf(n);
      const wantCells = e.rows.flatMap(r => ['count', 'count_fpc', 'n_eff', 'ratio'].map(c => [r[ix('feature')], c, r[ix(c)]]));
      if (JSON.stringify(got.table) !== JSON.stringify(wantCells))
        problems.push(`the effective counts are not bnstudy's: ${JSON.stringify(got.table.slice(0, 2))}`);
    }
    /* A point of the figure: the chosen series at B 16, a run of its own. */
    const at = 16;
    const p = spawnSync(bnstudy, ['run', ...replaced(argv, ['--batch-size', String(at)]), ...extra], { encoding: 'utf8' });
    let wantPoint = null;
    if (maps) {
      const e = parseTsv(p.stdout.split('\n\n')[1]);
      wantPoint = e.rows[0][e.header.indexOf(col)];
    } else {
      wantPoint = column(p.stdout, col);
    }
    const series = maps ? `n_eff:${parseTsv(p.stdout.split('\n\n')[1]).rows[0][0 + parseTsv(p.stdout.split('\n\n')[1]).header.indexOf('feature')]}`
      : `${col}:${chosen}`;
    const drawn = await plotValue(page, `plot-x-${id}`, series, at);
    if (drawn !== wantPoint)
      problems.push(`the figure's ${series} at B ${at}: page ${drawn}, bnstudy ${wantPoint}`);
    const own = spawnSync('bash', ['-c', got.command], { encoding: 'utf8', cwd: path.dirname(bnstudy) });
    if (own.stdout !== want.stdout)
      problems.push(`the section's command prints other numbers: ${got.command} (${own.stderr.trim()})`);
    if (!/What it draws: /.test(got.caption))
      problems.push(`no caption from bnstudy plot: ${got.caption}`);
    problems.push(...await figureProblems(page));
    check(`${id}: ${name}`, problems);
  }
}

/* Your data: a CSV and a .npy chosen through the page's file control
 * (as a person picks one), read in the page, every number bnstudy run
 * --population FILE's; a file bnstudy refuses and one too large say so;
 * no request is made (checked with the rest at the end). */
function writeData(dir) {
  const rows = [];
  for (let i = 0; i < 200; i++)
    rows.push([((i * 37) % 101) / 10, Math.round(100 * Math.sin(i)) / 50, (i % 9) - 4]);
  const csv = path.join(dir, 'my rows.csv');
  fs.writeFileSync(csv, 'width,height,depth\n' + rows.map(r => r.join(',')).join('\n') + '\n');
  /* The same rows as a .npy: format 1.0, little-endian float64, C order. */
  let header = `{'descr': '<f8', 'fortran_order': False, 'shape': (200, 3), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.alloc(200 * 3 * 8);
  rows.flat().forEach((v, i) => body.writeDoubleLE(v, 8 * i));
  const npy = path.join(dir, 'rows.npy');
  fs.writeFileSync(npy, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
  const bad = path.join(dir, 'bad.csv');
  fs.writeFileSync(bad, 'a,b\n1,2\n3,x\n');
  const big = path.join(dir, 'big.csv');
  fs.writeFileSync(big, Buffer.alloc(65 << 20, 0x31));
  return { csv, npy, bad, big };
}

async function dataChecks(page) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bnstudy-data-'));
  const files = writeData(dir);
  const choose_ = async file => {
    await page.$eval('#drop-status', e => { e.textContent = ''; });
    const input = await labelled(page, [DATA], 'Your rows (CSV, TSV or .npy):');
    await input.uploadFile(file);
    await page.waitForFunction(() => document.getElementById('drop-status').textContent !== '', { timeout: 20000 });
    await clfIdle(page);
    return page.$eval('#drop-status', e => e.textContent);
  };
  const cases = [
    ['a CSV of yours at B 32', files.csv, [['sweep.batch_size', '32']], ['--batch-size', '32']],
    ['a CSV of yours sorted by its column height, B 16', files.csv,
     [['order', 'sorted', 'height'], ['sweep.batch_size', '16']], ['--order', 'sorted:height', '--batch-size', '16']],
    ['a .npy of yours with PyTorch\'s layer, 3 epochs', files.npy,
     [['click', 'PyTorch BatchNorm1d'], ['sweep.epochs', '3'], ['sweep.batch_size', '64']],
     ['--momentum', '0.1', '--momentum-weights', 'new', '--variance', 'unbiased', '--epochs', '3', '--batch-size', '64']],
  ];
  for (const [name, file, actions, argv] of cases) {
    await reset(page);
    await clfIdle(page);
    const status = await choose_(file);
    await apply(page, actions);
    await clfIdle(page);
    const got = await pageNumbers(page);
    const want = spawnSync(bnstudy, ['run', '--population', file, ...argv, '--write-features', '-'], { encoding: 'utf8' });
    const own = spawnSync('bash', ['-c', `${got.command.replace(/^\.\/bnstudy/, shq(bnstudy))} --write-features -`],
                          { encoding: 'utf8', cwd: dir });
    /* The shift section on the same rows. */
    const shift = await page.evaluate(() => [...document.querySelectorAll('#x-shift-scores [data-col]')]
      .map(e => [e.dataset.col, e.textContent]));
    const wantShift = spawnSync(bnstudy, ['run', '--population', file, ...argv, '--shift', '1'], { encoding: 'utf8' });
    const ws = wantShift.status === 0 ? parseTsv(wantShift.stdout) : { header: [], rows: [[]] };
    check(name, [
      want.status === 0 ? null : `bnstudy: ${want.stderr.trim()}`,
      /200 rows of 3 features/.test(status) ? null : `the page says: ${status}`,
      got.error ? `the page refuses: ${got.error}` : null,
      got.tsv === want.stdout ? null : 'the TSV is not bnstudy run --population\'s',
      own.stdout === want.stdout ? null : `the page's command prints other numbers: ${got.command} (${own.stderr.trim()})`,
      shift.length > 0 && shift.every(([c, v]) => v === ws.rows[0][ws.header.indexOf(c)])
        ? null : `the shift section on these rows is not bnstudy run --shift 1's (${wantShift.stderr.trim()})`,
    ].filter(x => x));
  }
  const refused = await choose_(files.bad);
  const wantBad = spawnSync(bnstudy, ['run', '--population', files.bad], { encoding: 'utf8' });
  const tail = wantBad.stderr.trim().replace(/^.*bad\.csv/, 'bad.csv');
  const big = await choose_(files.big);
  check('a file bnstudy refuses, and one too large, are said so', [
    wantBad.status === 2 ? null : `bnstudy exits ${wantBad.status}`,
    refused.endsWith(tail) ? null : `page: "${refused}"; bnstudy: "${wantBad.stderr.trim()}"`,
    /more than the page reads .*\.\/bnstudy run --population big\.csv/.test(big) ? null : `page: "${big}"`,
  ].filter(x => x));
  await (await button(page, [DATA], 'Back to the generated population')).click();
  await clfIdle(page);
  fs.rmSync(dir, { recursive: true, force: true });
}
const DATA = 'Your data, diagnosed locally';
const shq = s => `'${s.replace(/'/g, `'\\''`)}'`;

/* A dump folder as scripts/dump_bn_inputs.py writes one (docs/diagnose.md,
 * "The dump"; tests/fuzz/seeds.sh's): one layer "a" of 2 features, 8
 * training rows in 2 batches of 4, 6 evaluation rows moved by shift; its
 * buffers the checkpoint's (0.9 of the truth and 0.1 of the initial
 * values), or never filled. */
function writeDump(dir, { shift = 0, filled = true }) {
  fs.mkdirSync(dir, { recursive: true });
  const tr = [...Array(8).keys()].map(i => [0.1 * i, 1 - 0.2 * i]);
  const ev = [...Array(6).keys()].map(i => [0.15 * i + 0.3 + shift, 0.5 - 0.1 * i + shift]);
  const npy = rows => {
    let head = `{'descr': '<f8', 'fortran_order': False, 'shape': (${rows.length}, 2), }`;
    head += ' '.repeat(63 - ((10 + head.length) % 64)) + '\n';
    const b = Buffer.alloc(16 * rows.length);
    rows.flat().forEach((v, i) => b.writeDoubleLE(v, 8 * i));
    const len = Buffer.alloc(2);
    len.writeUInt16LE(head.length);
    return Buffer.concat([Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]), len, Buffer.from(head, 'latin1'), b]);
  };
  const moments = (rows, j) => {
    const m = rows.reduce((a, r) => a + r[j], 0) / rows.length;
    return [m, rows.reduce((a, r) => a + (r[j] - m) ** 2, 0) / rows.length];
  };
  const g = v => String(v);
  let stats = 'feature\trunning_mean\trunning_var\tnum_batches_tracked\ttrain_mean\ttrain_var\ttrain_batch_var\t' +
              'train_unit_var\ttrain_eval_mode_mean\ttrain_eval_mode_var\teval_mean\teval_var\n';
  for (const j of [0, 1]) {
    const [tm, tv] = moments(tr, j), [em, evv] = moments(ev, j);
    const bv = (moments(tr.slice(0, 4), j)[1] + moments(tr.slice(4), j)[1]) / 2;
    stats += [`f${j}`, filled ? g(0.9 * tm) : '0', filled ? g(0.9 * tv + 0.1) : '1', filled ? '2' : '0',
              g(tm), g(tv), g(bv), g(tv), g(tm), g(tv), g(em), g(evv)].join('\t') + '\n';
  }
  const files = {
    'model.tsv': 'key\tvalue\nformat\tbnstudy-dump 2\nkind\tdump\nmodel\tm.pt\nloaded\ta whole pickled model\n' +
                 'notes\t-\nlayers\t1\nbatch_size\t4\ntrain_rows\t8\neval_rows\t6\ntrain_mode_accuracy\t0.95\n' +
                 `eval_mode_accuracy\t${filled && !shift ? 0.9 : 0.5}\nbatch_dependence\t0\n`,
    'layers.tsv': 'layer\ttype\tfeatures\na\tBatchNorm1d\t2\n',
    'fixes.tsv': 'fix\teval_mode_accuracy\twhat\nrecompute-train\t0.95\t-\n',
    'a.layer.tsv': 'key\tvalue\nlayer\ta\ntype\tBatchNorm1d\nfeatures\t2\nmomentum\t0.1\neps\t1e-05\n' +
                   `num_batches_tracked\t${filled ? 2 : 0}\nbatch_size\t4\nrows_per_sample\t1\ntrain_samples\t8\n` +
                   'eval_samples\t6\ndtype\tfloat32\n',
    'a.batches.tsv': 'batch\trows\tsamples\n0\t4\t4\n1\t4\t4\n',
    'a.stats.tsv': stats,
  };
  for (const [name, text] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), text);
  const means = [0, 1].map(k => [0, 1].map(j => moments(tr.slice(4 * k, 4 * k + 4), j)[0]));
  for (const [name, rows] of [['a.train.npy', tr], ['a.train-eval.npy', tr], ['a.eval.npy', ev], ['a.batchmeans.npy', means]])
    fs.writeFileSync(path.join(dir, name), npy(rows));
}

/* A dump folder chosen in the page is diagnosed there, to the byte what
 * bnstudy diagnose DIR prints; a broken one gets its refusal. */
async function dumpChecks(page) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bnstudy-dumps-'));
  const cases = [['as saved', 'checkpoint', {}], ['never filled', 'fresh', { filled: false }],
                 ['evaluation data moved by 3', 'moved', { shift: 3 }], ['a file missing', 'broken', {}]];
  for (const [label, name, opt] of cases) {
    const dir = path.join(root, name);
    writeDump(dir, opt);
    if (name === 'broken')
      fs.rmSync(path.join(dir, 'a.stats.tsv'));
    const want = spawnSync(bnstudy, ['diagnose', name], { encoding: 'utf8', cwd: root });
    await page.$eval('#dump-status', e => { e.textContent = ''; });
    const input = await labelled(page, [DATA], 'Your dump folder:');
    await input.uploadFile(dir);
    await page.waitForFunction(() => /: the diagnosis|refuses/.test(document.getElementById('dump-status').textContent),
                               { timeout: 20000 });
    const got = await page.evaluate(() => ({
      status: document.getElementById('dump-status').textContent,
      text: document.getElementById('diagnosis').hidden ? null : document.getElementById('diagnosis').textContent,
    }));
    const problems = [];
    if (name === 'broken') {
      /* The file named as bnstudy names it (the page's words for a file
       * missing are its own: it has no filesystem to ask). */
      const file = (/(broken\/[^:]*):/.exec(want.stderr) || [])[1];
      if (want.status !== 2 || !file)
        problems.push(`bnstudy exits ${want.status}: ${want.stderr.trim()}`);
      else if (!got.status.includes(`refuses broken: ${file}:`) || got.text !== null)
        problems.push(`page: "${got.status}"; bnstudy: "${want.stderr.trim()}"`);
    } else {
      if (want.status !== 0)
        problems.push(`bnstudy: ${want.stderr.trim()}`);
      if (got.text !== want.stdout)
        problems.push(`the page's diagnosis is not bnstudy diagnose's:\n${got.text}\n---\n${want.stdout}`);
    }
    check(`a dump folder, ${label}: the page's diagnosis is bnstudy diagnose's`, problems);
  }
  fs.rmSync(root, { recursive: true, force: true });
}

/* Drag and drop, as a person drags from a file manager: Chromium's own
 * drag events (dragenter, dragover, drop) carrying the files or the
 * folder named, let go on the words "or drop the file here" (not on the
 * chooser, which takes a file dropped on it without the page's help). */
async function dropOn(page, paths) {
  const chooser = await labelled(page, [DATA], 'Your rows (CSV, TSV or .npy):');
  const box = (await chooser.evaluateHandle(e => [...e.parentElement.querySelectorAll('span')]
    .find(x => x.textContent.trim() === 'or drop the file here') || null)).asElement();
  if (!box)
    throw new Error('no "or drop the file here" beside the chooser');
  await box.scrollIntoView();
  const b = await box.boundingBox();
  const at = { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  const cdp = await page.createCDPSession();
  const data = { items: [], files: paths, dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop'])
    await cdp.send('Input.dispatchDragEvent', { type, ...at, data });
  await cdp.detach();
}

/* A file dropped runs the study on its rows, as the chooser does; a dump
 * folder dropped, and all of its files dropped, are diagnosed as bnstudy
 * diagnose DIR diagnoses it (no request is made: checked at the end). */
async function dropChecks(page) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bnstudy-drop-'));
  await dropRows(page, writeData(dir));
  await dropDumps(page, dir);
  fs.rmSync(dir, { recursive: true, force: true });
}

async function dropRows(page, files) {
  await reset(page);
  await clfIdle(page);
  await page.$eval('#drop-status', e => { e.textContent = ''; });
  await dropOn(page, [files.csv]);
  /* Nothing said is the failure the check below names. */
  await page.waitForFunction(() => document.getElementById('drop-status').textContent !== '', { timeout: 20000 })
    .catch(() => {});
  await clfIdle(page);
  const status = await page.$eval('#drop-status', e => e.textContent);
  const name = 'a CSV dropped on the page, sorted by its column height at B 16: bnstudy run --population\'s numbers';
  if (!/200 rows of 3 features/.test(status)) {
    check(name, [`the drop was not taken: the page says "${status}"`]);
    return;
  }
  await apply(page, [['order', 'sorted', 'height'], ['sweep.batch_size', '16']]);
  await clfIdle(page);
  const got = await pageNumbers(page);
  const argv = ['--order', 'sorted:height', '--batch-size', '16'];
  const want = spawnSync(bnstudy, ['run', '--population', files.csv, ...argv, '--write-features', '-'], { encoding: 'utf8' });
  const shift = await page.evaluate(() => [...document.querySelectorAll('#x-shift-scores [data-col]')]
    .map(e => [e.dataset.col, e.textContent]));
  const wantShift = spawnSync(bnstudy, ['run', '--population', files.csv, ...argv, '--shift', '1'], { encoding: 'utf8' });
  const ws = wantShift.status === 0 ? parseTsv(wantShift.stdout) : { header: [], rows: [[]] };
  check(name, [
    want.status === 0 ? null : `bnstudy: ${want.stderr.trim()}`,
    got.error ? `the page refuses: ${got.error}` : null,
    got.tsv === want.stdout ? null : 'the TSV is not bnstudy run --population\'s',
    shift.length > 0 && shift.every(([c, v]) => v === ws.rows[0][ws.header.indexOf(c)])
      ? null : 'the shift section on these rows is not bnstudy run --shift 1\'s',
  ].filter(x => x));
  await (await button(page, [DATA], 'Back to the generated population')).click();
  await clfIdle(page);
}

async function dropDumps(page, dir) {
  /* Loose files have no folder's name: the page calls them "the dropped
   * files", so bnstudy diagnoses a folder of that name. */
  for (const [label, name, loose] of [['the folder', 'moved', false], ['all of its files', 'the dropped files', true]]) {
    const dump = path.join(dir, name);
    writeDump(dump, { shift: 3 });
    const want2 = spawnSync(bnstudy, ['diagnose', name], { encoding: 'utf8', cwd: dir });
    const paths = loose ? fs.readdirSync(dump).sort().map(n => path.join(dump, n)) : [dump];
    /* Nothing left from the chooser's checks to pass for the drop's answer. */
    await page.evaluate(() => {
      document.getElementById('dump-status').textContent = '';
      document.getElementById('diagnosis').hidden = true;
    });
    await dropOn(page, paths);
    await page.waitForFunction(() => /: the diagnosis|refuses/.test(document.getElementById('dump-status').textContent),
                               { timeout: 20000 }).catch(() => {});
    const d = await page.evaluate(() => ({
      status: document.getElementById('dump-status').textContent,
      text: document.getElementById('diagnosis').hidden ? null : document.getElementById('diagnosis').textContent,
    }));
    check(`a dump dropped on the page, ${label}: the diagnosis is bnstudy diagnose's`, [
      want2.status === 0 ? null : `bnstudy: ${want2.stderr.trim()}`,
      d.status.startsWith(`${name}: the diagnosis`) ? null : `the drop was not taken as ${name}`,
      d.text === want2.stdout ? null : `the page says "${d.status}", and shows:\n${d.text}\n---\n${want2.stdout}`,
    ].filter(x => x));
  }
}

/* The phone screenshot beside the laptop one: web.png, web-phone.png. */
const phoneShot = file => file ? file.replace(/(\.png)?$/, '-phone.png') : null;

/* A fresh tab at url, ready, its script errors kept with the others. */
async function openTab(browser, url, pageErrors) {
  const tab = await browser.newPage();
  await tab.setViewport({ width: 1366, height: 900 });
  tab.on('pageerror', e => pageErrors.push(String(e)));
  tab.on('console', m => { if (m.type() === 'error') pageErrors.push(m.text()); });
  await tab.goto(url, { waitUntil: 'load' });
  await tab.waitForFunction('window.bnReady === true && window.bnIdle === true', { timeout: 20000 });
  return tab;
}

/* A link to a configuration opens it in another tab, every number and
 * control as they were; a bad or stale link says so and shows the
 * defaults, which are bnstudy run's. */
async function linkChecks(browser, page, origin, pageErrors) {
  await reset(page);
  await apply(page, [['order', 'sorted', 'f3'], ['sweep.batch_size', '64'], ['layer.momentum', '0.95'],
                     ['feature', 2, 'sd', '3'], ['layer.estimator', 'ema-debiased']]);
  /* The sections' own keys travel in the link too. */
  await typeInto(page, await labelled(page, [CLASSIFIER], 'hidden'), '8');
  await typeInto(page, await labelled(page, [CAUSES.shift], 'shift'), '0.5');
  await clfIdle(page);
  const shown = await pageNumbers(page);
  const sectionsShown = await page.evaluate(() => [document.getElementById('clf-command').textContent,
                                                   document.getElementById('x-shift-command').textContent]);
  const url = page.url();
  const tab = await openTab(browser, url, pageErrors);
  await tab.waitForFunction('window.bnSectionsIdle === true', { timeout: 30000 });
  const got = await pageNumbers(tab);
  const sectionsGot = await tab.evaluate(() => [document.getElementById('clf-command').textContent,
                                                document.getElementById('x-shift-command').textContent]);
  const controls = [];
  for (const el of [await keyControl(tab, 'sweep.order'), await labelled(tab, ['[sweep]', 'order'], 'by'),
                    await keyControl(tab, 'sweep.batch_size'), await keyControl(tab, 'layer.momentum'),
                    await featureCell(tab, 2, 'sd'), await keyControl(tab, 'layer.estimator')])
    controls.push(await el.evaluate(e => e.value));
  const want = cli(sets(defaults8.map(l => l.startsWith('population.feature=f2 ') ? F('f2', -0.5, 3, 0.6) : l))
    .concat(['--order', 'sorted:f3', '--batch-size', '64', '--momentum', '0.95', '--estimator', 'ema-debiased']));
  check(`a shared link restores the configuration (${url.slice(url.indexOf('#'), url.indexOf('#') + 60)}...)`,
        [url.includes('#') ? null : 'the settings are not in the link',
         got.tsv === shown.tsv ? null : 'the restored page shows other numbers',
         got.tsv === want.out ? null : 'the restored numbers are not bnstudy run\'s',
         got.command === shown.command ? null : `command ${got.command}`,
         JSON.stringify(sectionsGot) === JSON.stringify(sectionsShown) ? null : `the sections' commands: ${sectionsGot}`,
         /--hidden 8/.test(sectionsGot[0]) && /--shift 0\.5/.test(sectionsGot[1]) ? null : `sections: ${sectionsGot}`,
         JSON.stringify(controls) === JSON.stringify(['sorted', 'f3', '64', '0.95', '3', 'ema-debiased'])
           ? null : `controls ${controls}`].filter(x => x));
  await tab.close();
  const defaults = cli([]).out;
  for (const [hash, why] of [['#layer.momentm=0.5', 'momentm'], ['#sweep.batch_size=600', 'batch size'],
                             ['#population.feature=onlyaname', 'NAME MEAN SD RHO'],
                             ['#layer.momentum=0.5&layer.momentum=0.6', 'twice']]) {
    const bad = await openTab(browser, `${origin}/${hash}`, pageErrors);
    const b = await pageNumbers(bad);
    const msg = await bad.$eval('#link-error', e => e.hidden ? '' : e.textContent);
    check(`a bad link (${hash}) says why and shows the defaults`,
          [msg.includes(why) ? null : `message: "${msg}"`,
           b.tsv === defaults ? null : 'the numbers are not the defaults\'',
           b.error ? `an error besides: ${b.error}` : null].filter(x => x));
    await bad.close();
  }
}

/* Each download, read back: the TSV is bnstudy run's output, the script
 * prints it, each figure's SVG holds the points the page drew (bnstudy
 * run's numbers) and its PNG is an image twice the figure's size. */
async function downloadChecks(page) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bnstudy-downloads-'));
  const cdp = await page.createCDPSession();
  /* A file is read once the browser says its download completed: it can
   * be on the disk, under its own name, before its last bytes are (a
   * TSV or an SVG read short, now and then, on a busy machine). */
  let completed = 0;
  cdp.on('Browser.downloadProgress', e => { if (e.state === 'completed') completed++; });
  await cdp.send('Browser.setDownloadBehavior',
                 { behavior: 'allow', downloadPath: dir, eventsEnabled: true });
  const fetched = async (scope, text, name) => {
    const file = path.join(dir, name);
    fs.rmSync(file, { force: true });
    const before = completed;
    await (await button(page, scope, text)).click();
    for (let i = 0; i < 200 && !(completed > before && fs.existsSync(file)); i++)
      await new Promise(ok => setTimeout(ok, 50));
    if (!fs.existsSync(file) || !(completed > before))
      throw new Error(`${text} downloaded no complete ${name} (${fs.readdirSync(dir)}; the page says: ${
        await page.$eval('#copy-status', e => e.textContent)})`);
    return fs.readFileSync(file);
  };
  await reset(page);
  await apply(page, [['layer.momentum', '0.95'], ['sweep.batch_size', '32']]);
  const argv = ['--momentum', '0.95', '--batch-size', '32'];
  const want = cli(argv);
  const tsv = (await fetched(null, 'Download the numbers (.tsv)', 'bnstudy-run.tsv')).toString();
  const script = path.join(dir, 'bnstudy-run.sh');
  await fetched(null, 'Download the command (.sh)', 'bnstudy-run.sh');
  const ran = spawnSync('bash', [script, '--write-features', '-'], { encoding: 'utf8', cwd: path.dirname(bnstudy) });
  check('the downloaded TSV is bnstudy run\'s output; the downloaded command prints it',
        [tsv === want.out ? null : 'the TSV differs',
         ran.stdout === want.out ? null : `the script prints other numbers (${ran.stderr.trim()})`].filter(x => x));
  const f = parseTsv(want.out.split('\n\n')[1]);
  const expected = {
    'plot-batch': [column(want.out, 'stats_err')],
    'plot-order': [column(cli(replaced(argv, ['--order', 'sorted'])).out, 'train_eval_rmse')],
    'plot-features': f.rows.map(r => r[f.header.indexOf('running_var')]),
    'plot-weight': [column(want.out, 'init_weight')],
  };
  for (const id of Object.keys(expected)) {
    const problems = [];
    const svg = (await fetched([{ css: `figure:has(#${id})` }], 'Download as SVG', `${id.replace('plot-', 'bnstudy-')}.svg`)).toString();
    const drawn = await page.$$eval(`#${id} [data-value]`, es => es.map(e => e.dataset.value));
    const inFile = [...svg.matchAll(/data-value="([^"]*)"/g)].map(m => m[1]);
    if (!svg.startsWith('<?xml') || !svg.includes('xmlns="http://www.w3.org/2000/svg"'))
      problems.push('the SVG does not stand alone');
    if (JSON.stringify(inFile) !== JSON.stringify(drawn))
      problems.push(`the SVG holds ${inFile.length} values, the page drew ${drawn.length}`);
    for (const v of expected[id])
      if (!inFile.includes(v))
        problems.push(`bnstudy run's ${v} is not in the SVG`);
    const png = await fetched([{ css: `figure:has(#${id})` }], 'Download as PNG', `${id.replace('plot-', 'bnstudy-')}.png`);
    const sig = png.subarray(0, 8).toString('hex');
    if (sig !== '89504e470d0a1a0a')
      problems.push('the PNG is not a PNG');
    else if (png.readUInt32BE(16) !== 1280 || png.readUInt32BE(20) !== 840)
      problems.push(`the PNG is ${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`);
    check(`${id}: the downloaded SVG holds bnstudy run's numbers, the PNG is 1280x840`, problems);
  }
  await cdp.detach();
  fs.rmSync(dir, { recursive: true, force: true });
}

/* A control's value changed by one event, as a choice or a paste makes it. */
const setOnce = (el, value) => el.evaluate((e, v) => {
  e.value = v;
  e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }));
}, value);

/* One change at a time, each made by a single event as a click or a
 * choice makes it, and the time the page took to answer it. */
async function timeChanges(page) {
  const changes = [
    ['sweep.batch_size', '8'], ['sweep.batch_size', '64'], ['sweep.batch_size', '256'],
    ['layer.momentum', '0.99'], ['layer.momentum', '0.5'], ['layer.momentum', '0.9'],
    ['layer.momentum_weights', 'new'], ['layer.momentum_weights', 'old'],
    ['layer.variance', 'unbiased'], ['layer.variance', 'biased'],
    ['sweep.order', 'sorted'], ['sweep.order', 'interleaved'], ['sweep.order', 'shuffled'],
    ['layer.estimator', 'precise'], ['layer.estimator', 'cumulative'],
    ['layer.estimator', 'ema'], ['sweep.epochs', '3'], ['sweep.epochs', '1'],
    ['sweep.seed', '2'], ['sweep.seed', '1'], [6, '4'], [6, '2.76'],
  ];
  const times = [];
  await reset(page);
  await idle(page);
  for (const [sel, value] of changes) {
    const before = await page.evaluate(() => window.bnTimings.length);
    await setOnce(typeof sel === 'number' ? await featureCell(page, sel, 'sd') : await keyControl(page, sel), value);
    /* The whole page at rest before the next change: the classifier
     * reruns after the layer's answer. */
    await clfIdle(page);
    const t = await page.evaluate(n => window.bnTimings.slice(n), before);
    if (t.length !== 1)
      throw new Error(`${sel} = ${value}: ${t.length} answers to one change`);
    times.push(t[0]);
  }
  return times;
}

async function main() {
  /* ---- serving web/ ---- */

  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                  '.wasm': 'application/wasm', '.png': 'image/png' };
  const root = path.resolve(opt.web);
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(root, url === '/' ? 'index.html' : url);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise(ok => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${server.address().port}`;

  /* ---- the browser ---- */

  function chromium() {
    if (process.env.CHROMIUM)
      return process.env.CHROMIUM;
    for (const name of ['chromium', 'chromium-browser']) {
      const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
      if (r.status === 0)
        return r.stdout.trim();
    }
    throw new Error('no chromium on PATH (set CHROMIUM)');
  }

  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bnstudy-chromium-'));
  /* The flags that keep Chromium from reaching for the network at start. */
  const browser = await puppeteer.launch({
    executablePath: chromium(),
    userDataDir: profile,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
           '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--disable-quic', '--disable-dev-shm-usage'],
  });

  const pageErrors = [];
  try {
    const context = browser.defaultBrowserContext();
    await context.overridePermissions(origin, ['clipboard-read', 'clipboard-write',
                                               'clipboard-sanitized-write']);
    const page = await browser.newPage();
    await page.setViewport({ width: 1366, height: 900 });
    page.on('pageerror', e => pageErrors.push(String(e)));
    page.on('console', m => { if (m.type() === 'error') pageErrors.push(m.text()); });
    const requests = [];
    page.on('request', r => requests.push(r.url()));
    /* Requests made after the load: none, downloads and drops included
     * (a blob of the page's own is not a request anywhere). */
    const foreign = () => requests.filter(u => !u.startsWith(origin) && !u.startsWith(`blob:${origin}/`));
    await page.goto(`${origin}/`, { waitUntil: 'load' });
    await page.waitForFunction('window.bnReady === true && window.bnIdle === true', { timeout: 20000 });
    check('the page loads from web/ alone, with no error and no request elsewhere',
          pageErrors.concat(requests.filter(u => !u.startsWith(origin)).map(u => `request to ${u}`)));

    await runConfigurations(page);
    await otherChecks(page);
    await classifierChecks(page);
    await causeChecks(page);
    await dataChecks(page);
    await dumpChecks(page);
    await dropChecks(page);
    await linkChecks(browser, page, origin, pageErrors);
    await downloadChecks(page);
    /* The layout at a phone's width and a laptop's, in the published
     * setting and in one whose figures have the most to say; the
     * screenshots the README shows are the published setting's. */
    for (const [w, h, file] of [[390, 844, phoneShot(opt.screenshot)], [1366, 900, opt.screenshot]]) {
      await page.setViewport({ width: w, height: h });
      for (const [label, actions] of [['the published setting', []],
                                      ['sorted by f3 at B 8, 3 epochs',
                                       [['order', 'sorted', 'f3'], ['sweep.batch_size', '8'], ['sweep.epochs', '3']]]]) {
        await reset(page);
        await apply(page, actions);
        /* Everything laid out, as it is once scrolled to. */
        const style = await page.addStyleTag({ content: '* { content-visibility: visible !important; }' });
        check(`at ${w}x${h}, ${label}: nothing overlaps, nothing past the window's edge`,
              await layoutProblems(page));
        await style.evaluate(e => e.remove());
      }
      await reset(page);
      await idle(page);
      if (file) {
        /* The laptop's from the top; the phone's at the results, as the
         * skip link takes a reader there. */
        await page.evaluate(phone => {
          document.activeElement.blur();
          document.getElementById('controls').scrollTop = 0;
          window.scrollTo(0, 0);
          if (phone)
            document.getElementById('results').scrollIntoView();
        }, w < 960);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        await page.screenshot({ path: file });
      }
    }
    /* The page's own clock, from a change to its answer laid out: the
     * first, at load, compiles the code on its first run; then one change
     * at a time; then everything above, where keys typed in a row queue
     * behind the answer being computed. */
    const all = await page.evaluate(() => window.bnTimings);
    const single = await timeChanges(page);
    const typed = all.slice(1);
    const stats = t => {
      t = t.slice().sort((a, b) => a - b);
      const q = f => t[Math.min(t.length - 1, Math.floor(f * t.length))].toFixed(1);
      return `median ${q(0.5)} ms, 90th percentile ${q(0.9)} ms, max ${t[t.length - 1].toFixed(1)} ms`;
    };
    console.log(`# the page's answer (target: 50 ms): ${all[0].toFixed(1)} ms at load; ` +
                `${single.length} single changes: ${stats(single)}; ` +
                `${typed.length} answers while typing: ${stats(typed)}`);
    check('no script error in the page', pageErrors);
    check('no request beyond the page\'s own host, from load to the last check',
          foreign().map(u => `request to ${u}`));
  } catch (e) {
    failed++;
    console.log(`not ok - the test stopped: ${e.stack || e}`);
    for (const m of pageErrors.slice(0, 8))
      console.log(`    the page said: ${m}`);
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);

}

await main();
