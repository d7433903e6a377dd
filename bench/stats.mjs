// stats: the decision layer proven by simulation through the REAL CLI (issue: decision layer).
// Each scenario is a suite of the random agent (test/fixtures/random-agent: it passes each
// trial with the probability its case's prompt gives, deterministically from a seed), run many
// times in-process with `main(['run', ...])`, one seed per run. Per scenario it prints the share
// of exit codes 0/1/3/4, the verdicts written to result.json (improves / regresses /
// inconclusive) and, over consecutive runs of the identical configuration (run k vs run k+1),
// the share of pairs where one run PASSes (exit 0) and the other FAILs (exit 1): a CI gate that
// flips on unchanged code. Not a test: nothing here asserts.
//
//   BENCH_STATS_RUNS   runs per scenario (default 40)
//   BENCH_STATS_P      parallelism of each run (default 8)
//
// Run alone with `node bench/stats.mjs` (after `npm run build`), or as part of `npm run bench`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { uniformCases, writeRandomSuite } from '../test/fixtures/random-agent/suite.mjs';

/** The scenarios: a suite, the gate flags, and what a sound decision layer should show. */
function scenarios() {
  const nearPerfect = uniformCases(20, (i) => `pass_with=${i <= 18 ? 100 : 90}`);
  return [
    { name: 'A/A 20×3 p=0.5', cases: uniformCases(20, 'pass_with=50 pass_without=50'), trials: 3, args: ['--baseline', '--min-uplift', '10'], expect: 'never exit 0; "improves" in ≤ 5% of runs' },
    { name: 'A/A 10×5 p=0.5', cases: uniformCases(10, 'pass_with=50 pass_without=50'), trials: 5, args: ['--baseline', '--min-uplift', '10'], expect: 'never exit 0; "improves" in ≤ 5% of runs' },
    { name: '+30 pts 20×3 0.5→0.8', cases: uniformCases(20, 'pass_with=80 pass_without=50'), trials: 3, args: ['--baseline', '--min-uplift', '5'], expect: 'mostly exit 0 and "improves"; never exit 1' },
    { name: 'near-perfect --min-pass-rate 0.8', cases: nearPerfect, trials: 3, args: ['--min-pass-rate', '0.8'], expect: 'always exit 0 (true rate 99%)' },
    { name: 'near-perfect, default gate', cases: nearPerfect, trials: 3, args: [], expect: 'the all-trials gate: exit 1 whenever one of the 6 trials at 0.9 fails (1 − 0.9^6 ≈ 47%)' },
  ];
}

const share = (n, of) => (of ? `${((100 * n) / of).toFixed(0)}%` : '-');

/** Runs `fn` with process.stdout/stderr silenced (the in-process CLI prints a full summary per run). */
export async function quietly(fn) {
  const saved = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  process.stdout.write = () => true;
  process.stderr.write = () => true;
  try {
    return await fn();
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
  }
}

/**
 * @param {(argv: string[]) => Promise<number>} main  skill-up's CLI entry (dist/src/cli/main.js)
 */
export async function benchStats(main) {
  const RUNS = Number(process.env.BENCH_STATS_RUNS ?? 40);
  const P = Number(process.env.BENCH_STATS_P ?? 8);
  const root = mkdtempSync(join(tmpdir(), 'skill-up-bench-stats-'));
  const savedSeed = process.env.RANDOM_AGENT_SEED;
  const rows = [];
  const t0 = performance.now();
  let jobs = 0;
  try {
    for (const [k, s] of scenarios().entries()) {
      const skill = writeRandomSuite(join(root, `s${k}`), { cases: s.cases, trials: s.trials, parallelism: P });
      const codes = [];
      const verdicts = { improves: 0, regresses: 0, inconclusive: 0 };
      const ts = performance.now();
      for (let run = 1; run <= RUNS; run++) {
        // The same seeds in every scenario: the two near-perfect rows see identical trials.
        process.env.RANDOM_AGENT_SEED = String(run);
        const out = join(root, `s${k}-out-${run}`);
        const code = await quietly(() => main(['run', skill, '--output-dir', out, ...s.args]));
        const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
        jobs += doc.jobs.length;
        for (const u of doc.summary.uplift ?? []) verdicts[u.verdict] = (verdicts[u.verdict] ?? 0) + 1;
        codes.push(code);
        rmSync(out, { recursive: true, force: true });
      }
      let flips = 0;
      for (let i = 1; i < codes.length; i++) if ((codes[i - 1] === 0 && codes[i] === 1) || (codes[i - 1] === 1 && codes[i] === 0)) flips++;
      const count = (c) => codes.filter((x) => x === c).length;
      const other = codes.filter((x) => ![0, 1, 3, 4].includes(x)).length;
      rows.push({ ...s, codes, count, other, verdicts, flips, pairs: codes.length - 1, seconds: (performance.now() - ts) / 1000, baseline: s.args.includes('--baseline') });
    }
  } finally {
    if (savedSeed === undefined) delete process.env.RANDOM_AGENT_SEED;
    else process.env.RANDOM_AGENT_SEED = savedSeed;
    rmSync(root, { recursive: true, force: true });
  }
  const wall = (performance.now() - t0) / 1000;
  console.log(`\n== stats: gates and verdicts by simulation through the real CLI, ${RUNS} runs per scenario (seeds 1..${RUNS}), parallelism ${P} ==`);
  console.log('random agent (test/fixtures/random-agent): each trial passes with its case\'s probability, independently; cases × trials per arm');
  const head = ['scenario', 'flags', 'runs', 'exit 0', 'exit 1', 'exit 3', 'exit 4', 'improves', 'regresses', 'inconcl.', 'PASS≠FAIL'];
  const table = rows.map((r) => [
    r.name,
    r.args.filter((a) => a !== '--baseline').join(' ') || '(none)',
    String(r.codes.length),
    share(r.count(0), r.codes.length),
    share(r.count(1), r.codes.length),
    share(r.count(3), r.codes.length),
    share(r.count(4), r.codes.length) + (r.other ? ` (+${r.other} other)` : ''),
    r.baseline ? String(r.verdicts.improves) : '-',
    r.baseline ? String(r.verdicts.regresses) : '-',
    r.baseline ? String(r.verdicts.inconclusive) : '-',
    `${share(r.flips, r.pairs)} (${r.flips}/${r.pairs})`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  for (const row of table) console.log(line(row));
  console.log('PASS≠FAIL: share of consecutive runs (k, k+1) of the identical configuration where one exits 0 and the other 1.');
  console.log('what a sound decision layer shows:');
  for (const r of rows) console.log(`  ${r.name.padEnd(widths[0])}  ${r.expect}  (${r.seconds.toFixed(1)} s)`);
  console.log(`total ${rows.reduce((a, r) => a + r.codes.length, 0)} runs, ${jobs} jobs, ${wall.toFixed(1)} s wall`);
}

// `node bench/stats.mjs`: run this section alone.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.env.UV_THREADPOOL_SIZE ??= '16';
  const { main } = await import('../dist/src/cli/main.js');
  await benchStats(main);
}
