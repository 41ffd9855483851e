/*
 * The core, run in a worker so that a long run (a million epochs, a
 * population of millions of rows) never freezes the page: the page can
 * go on taking input, and replaces a worker that is still busy when the
 * settings change again. The worker first posts the tables (web_tables);
 * then each job is a list of calls, each the settings as --set lines
 * (web_run), answered in order with web_run's text. A call whose
 * settings are refused may name, in `each`, the same settings split into
 * single runs: they are run one by one instead, and the answer is the
 * texts of those that ran. When the first call is refused, nothing after
 * it runs.
 */
'use strict';
let core;
try {
  importScripts('bnstudy.js');
  core = bnstudyModule().then(M => ({
    run: M.cwrap('web_run', 'string', ['string', 'number']),
    tables: M.cwrap('web_tables', 'string', [])()
  }));
} catch (e) {
  core = Promise.reject(new Error('bnstudy.js could not be loaded: build it with `make web`'));
}
core.then(c => postMessage({ tables: c.tables }),
          e => postMessage({ error: String(e.message || e) }));

onmessage = async e => {
  const { run } = await core;
  const { id, calls } = e.data;
  const answers = [];
  let runs = 0;
  for (const [i, c] of calls.entries()) {
    let text = run(c.sets, c.features ? 1 : 0);
    runs++;
    if (text.startsWith('!') && i === 0) {
      answers.push(text);
      break;
    }
    if (text.startsWith('!') && c.each) {
      text = c.each.map(s => run(s, 0)).filter(t => !t.startsWith('!'));
      runs += c.each.length;
    }
    answers.push(text);
  }
  postMessage({ id, answers, runs });
};
