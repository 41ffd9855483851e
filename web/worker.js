/*
 * The core, run in a worker so that a long run (a million epochs, a
 * population of millions of rows) never freezes the page: the page can
 * go on taking input, and replaces a worker that is still busy when the
 * settings change again. The worker first posts the tables (web_tables);
 * then each job is a list of calls, each the settings as --set lines
 * and the tables wanted beside the summary (web_run's bits), answered in
 * order with web_run's text. The page runs one worker per section. A call whose
 * settings are refused may name, in `each`, the same settings split into
 * single runs: they are run one by one instead, and the answer is the
 * texts of those that ran. When the first call is refused, nothing after
 * it runs. A job's `figures` then name tables of those answers (a call's
 * summary rows, those of one order only, or the first call's summary and
 * features), and each is answered with the figures bnstudy plot draws of
 * them (web_figures' JSON).
 */
'use strict';
let core;
try {
  importScripts('bnstudy.js');
  core = bnstudyModule().then(M => ({
    run: M.cwrap('web_run', 'string', ['string', 'number']),
    figures: M.cwrap('web_figures', 'string', ['string', 'string', 'string', 'string', 'string']),
    tables: M.cwrap('web_tables', 'string', [])(),
    /* A dump folder's files, each copied into the core's memory, then
     * its report. */
    diagnose: (dir, files) => {
      for (const f of files) {
        const p = M._malloc(f.bytes.length || 1);
        M.HEAPU8.set(f.bytes, p);
        const rc = M.ccall('web_dump_add', 'number', ['string', 'number', 'number'], [f.path, p, f.bytes.length]);
        M._free(p);
        if (rc !== 0)
          return '!out of memory';
      }
      return M.ccall('web_dump_report', 'string', ['string'], [dir]);
    },
    give: (name, bytes) => {
      const p = M._malloc(bytes.length || 1);
      M.HEAPU8.set(bytes, p);
      const text = M.ccall('web_give_file', 'string', ['string', 'number', 'number'], [name, p, bytes.length]);
      M._free(p);
      return text;
    }
  }));
} catch (e) {
  core = Promise.reject(new Error('bnstudy.js could not be loaded: build it with `make web`'));
}
core.then(c => postMessage({ tables: c.tables }),
          e => postMessage({ error: String(e.message || e) }));

/* A call's summary.tsv: its answer's first table, or the one-row tables
 * of its single runs joined under one header; only the rows of order
 * when it is given. */
function summaryOf(answer, order) {
  if (typeof answer === 'string' && answer.startsWith('!'))
    return '';
  const texts = typeof answer === 'string' ? [answer.split('\n\n')[0]] : answer;
  const lines = texts.flatMap((t, i) => t.split('\n').filter(l => l !== '').slice(i ? 1 : 0));
  if (lines.length === 0)
    return '';
  const col = lines[0].split('\t').indexOf('order');
  const kept = order === undefined ? lines
    : lines.filter((l, i) => i === 0 || l.split('\t')[col] === order);
  return kept.join('\n') + '\n';
}

onmessage = async e => {
  const { run, figures, give, diagnose } = await core;
  if (e.data.dump) {
    postMessage({ diagnosis: diagnose(e.data.dump.dir, e.data.dump.files) });
    return;
  }
  /* A file for population.file: its bytes copied into the core's
   * memory, kept there under its name. */
  if (e.data.give) {
    postMessage({ given: give(e.data.give.name, e.data.give.bytes) });
    return;
  }
  const { id, calls } = e.data;
  const answers = [];
  let runs = 0;
  for (const [i, c] of calls.entries()) {
    let text = run(c.sets, c.tables !== undefined ? c.tables : c.features ? 1 : 0);
    runs++;
    if (text.startsWith('!') && i === 0) {
      answers.push(text);
      postMessage({ id, answers, runs, figures: [] });
      return;
    }
    if (text.startsWith('!') && c.each) {
      text = c.each.map(s => run(s, 0)).filter(t => !t.startsWith('!'));
      runs += c.each.length;
    }
    answers.push(text);
  }
  /* A call's second table is its features', its curve's or its
   * effective counts', the one it asked for. */
  const second = f => {
    const a = answers[f.from];
    const texts = (typeof a === 'string' ? [a] : a).map(t => t.split('\n\n')[1] || '').filter(t => t);
    return texts.map((t, i) => i ? t.slice(t.indexOf('\n') + 1) : t).join('');
  };
  const figs = (e.data.figures || []).map(f => figures(
    f.sets, summaryOf(answers[f.from], f.order),
    f.features ? second(f) : '', f.curve ? second(f) : '', f.effective ? second(f) : ''));
  postMessage({ id, answers, runs, figures: figs });
};
