/**
 * The skill-creator files skill-up writes, read back the way Anthropic's own tools read them.
 *
 * Anthropic's code is not part of this repository. Below is a faithful TypeScript re-reading of
 * what it reads, each step citing the source it follows:
 * - `aggregate_benchmark.py` (anthropics/skills, skills/skill-creator/scripts/, read at commit
 *   12726c43): `load_run_results`, `aggregate_results`, `calculate_stats`;
 * - `eval-viewer/generate_review.py` (commit 0911b1b1): `find_runs` / `build_run`;
 * - `eval-viewer/viewer.html` (commit 311287a7): `renderBenchmark` and `renderGrades`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchmarkJson } from '../../src/report/benchmark.js';
import { writeDocReports } from '../../src/report/write.js';
import type { JobResult } from '../../src/run/types.js';
import { job, makeDoc } from './helpers.js';

type Json = Record<string, any>;  

const readJson = (p: string): Json => JSON.parse(readFileSync(p, 'utf8'));
const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
const sorted = (dir: string) => readdirSync(dir).sort().map((n) => join(dir, n));

/** aggregate_benchmark.py `calculate_stats`: mean, sample stddev (n − 1), min, max, `round(x, 4)`; zeros when empty. */
function calculateStats(values: number[]) {
  if (values.length === 0) return { mean: 0, stddev: 0, min: 0, max: 0 };
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const stddev = n > 1 ? Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return { mean: r(mean), stddev: r(stddev), min: r(Math.min(...values)), max: r(Math.max(...values)) };
}

/**
 * aggregate_benchmark.py `load_run_results`. `strictEvalGlob` keeps the script's
 * `search_dir.glob("eval-*")`; false accepts any folder, as open PR anthropics/skills#825 does.
 */
function loadRunResults(benchmarkDir: string, strictEvalGlob: boolean): Map<string, Json[]> {
  const results = new Map<string, Json[]>();
  // `for eval_idx, eval_dir in enumerate(sorted(search_dir.glob("eval-*")))`
  const evalDirs = sorted(benchmarkDir).filter((p) => isDir(p) && (!strictEvalGlob || /\/eval-[^/]*$/.test(p)));
  evalDirs.forEach((evalDir, evalIdx) => {
    // `metadata_path = eval_dir / "eval_metadata.json"` → `.get("eval_id", eval_idx)`
    const metadataPath = join(evalDir, 'eval_metadata.json');
    const evalId = existsSync(metadataPath) ? (readJson(metadataPath).eval_id ?? evalIdx) : evalIdx;
    // `for config_dir in sorted(eval_dir.iterdir())`; skipped unless it has `run-*` or a flat grading.json
    for (const configDir of sorted(evalDir)) {
      if (!isDir(configDir)) continue;
      const runDirs = sorted(configDir).filter((p) => /\/run-[^/]*$/.test(p));
      if (runDirs.length === 0 && !existsSync(join(configDir, 'grading.json'))) continue;
      const config = configDir.split('/').pop()!;
      if (!results.has(config)) results.set(config, []);
      // `(int(run_dir.name.split("-")[1]), run_dir)`
      const entries: [number, string][] = runDirs.length ? runDirs.map((d) => [Number.parseInt(d.split('/').pop()!.split('-')[1]!, 10), d]) : [[1, configDir]];
      for (const [runNumber, runDir] of entries) {
        const gradingFile = join(runDir, 'grading.json');
        if (!existsSync(gradingFile)) continue;
        const grading = readJson(gradingFile);
        // `grading.get("summary", {}).get("pass_rate", 0.0)` etc.
        const summary = grading.summary ?? {};
        const result: Json = {
          eval_id: evalId,
          run_number: runNumber,
          pass_rate: summary.pass_rate ?? 0,
          passed: summary.passed ?? 0,
          failed: summary.failed ?? 0,
          total: summary.total ?? 0,
        };
        // `timing.get("total_duration_seconds", 0.0)`; timing.json only read when that is 0.0
        result.time_seconds = (grading.timing ?? {}).total_duration_seconds ?? 0;
        const timingFile = join(runDir, 'timing.json');
        if (result.time_seconds === 0 && existsSync(timingFile)) {
          const t = readJson(timingFile);
          result.time_seconds = t.total_duration_seconds ?? 0;
          result.tokens = t.total_tokens ?? 0;
        }
        // `metrics = grading.get("execution_metrics", {})`: total_tool_calls, output_chars (token fallback), errors_encountered
        const metrics = grading.execution_metrics ?? {};
        result.tool_calls = metrics.total_tool_calls ?? 0;
        if (!result.tokens) result.tokens = metrics.output_chars ?? 0;
        result.errors = metrics.errors_encountered ?? 0;
        // `raw_expectations = grading.get("expectations", [])`; warns when `text` or `passed` is missing
        result.expectations = grading.expectations ?? [];
        result.expectationWarnings = result.expectations.filter((e: Json) => !('text' in e) || !('passed' in e)).length;
        // notes: uncertainties + needs_review + workarounds of `user_notes_summary`
        const ns = grading.user_notes_summary ?? {};
        result.notes = [...(ns.uncertainties ?? []), ...(ns.needs_review ?? []), ...(ns.workarounds ?? [])];
        results.get(config)!.push(result);
      }
    }
  });
  return results;
}

/** aggregate_benchmark.py `aggregate_results`: stats per config, delta = first config − second (`+.2f`, `+.1f`, `+.0f`). */
function aggregateResults(results: Map<string, Json[]>) {
  const runSummary: Json = {};
  const configs = [...results.keys()];
  for (const c of configs) {
    const runs = results.get(c)!;
    runSummary[c] = {
      pass_rate: calculateStats(runs.map((r) => r.pass_rate)),
      time_seconds: calculateStats(runs.map((r) => r.time_seconds)),
      tokens: calculateStats(runs.map((r) => r.tokens ?? 0)),
    };
  }
  const primary = runSummary[configs[0]!] ?? {};
  const baseline = configs.length >= 2 ? runSummary[configs[1]!] : {};
  const d = (k: string) => (primary[k]?.mean ?? 0) - (baseline[k]?.mean ?? 0);
  const sign = (x: number, n: number) => (x.toFixed(n).startsWith('-') ? x.toFixed(n) : `+${x.toFixed(n)}`);
  runSummary.delta = { pass_rate: sign(d('pass_rate'), 2), time_seconds: sign(d('time_seconds'), 1), tokens: sign(d('tokens'), 0) };
  return runSummary;
}

/** generate_review.py `find_runs` + `build_run`: folders holding `outputs/`; prompt from eval_metadata.json in the run folder or its parent. */
function findRuns(root: string): Json[] {
  const runs: Json[] = [];
  const walk = (dir: string) => {
    if (isDir(join(dir, 'outputs'))) {
      let prompt = '';
      let evalId: unknown = null;
      for (const c of [join(dir, 'eval_metadata.json'), join(dir, '..', 'eval_metadata.json')]) {
        if (existsSync(c)) {
          const m = readJson(c);
          prompt = m.prompt ?? '';
          evalId = m.eval_id;
          if (prompt) break;
        }
      }
      let grading: Json | null = null;
      for (const c of [join(dir, 'grading.json'), join(dir, '..', 'grading.json')]) {
        if (existsSync(c)) {
          grading = readJson(c);
          break;
        }
      }
      runs.push({ id: dir.slice(root.length + 1).replace(/\//g, '-'), prompt: prompt || '(No prompt found)', eval_id: evalId, grading });
      return;
    }
    for (const child of sorted(dir)) if (isDir(child) && !['node_modules', '.git', '__pycache__', 'skill', 'inputs'].includes(child.split('/').pop()!)) walk(child);
  };
  walk(root);
  return runs;
}

/** viewer.html `renderBenchmark`: what it needs to show non-empty values. */
function checkViewerBenchmark(b: Json): void {
  const summary = b.run_summary ?? {};
  // `const configs = Object.keys(summary).filter(k => k !== "delta")`: every other key is a configuration
  const configs = Object.keys(summary).filter((k) => k !== 'delta');
  for (const c of configs) {
    for (const metric of ['pass_rate', 'time_seconds', 'tokens']) {
      // `fmtStat`: `stat.mean.toFixed(…)`, `stat.stddev.toFixed(…)`
      expect(typeof summary[c][metric].mean, `${c}.${metric}.mean`).toBe('number');
      expect(typeof summary[c][metric].stddev, `${c}.${metric}.stddev`).toBe('number');
    }
  }
  // `metadata.evals_run.map(escapeHtml)`, `metadata.runs_per_configuration`
  expect(Array.isArray(b.metadata.evals_run)).toBe(true);
  expect(b.metadata.runs_per_configuration).toBeGreaterThan(0);
  for (const r of b.runs) {
    // `runs.map(r => r.eval_id)` sorted numerically; `r.configuration` groups rows; `r.result.pass_rate|passed|total|time_seconds|errors`
    expect(typeof r.eval_id).toBe('number');
    expect(['with_skill', 'without_skill']).toContain(r.configuration);
    expect(typeof r.run_number).toBe('number');
    expect(typeof r.result.pass_rate).toBe('number');
    expect(typeof r.result.time_seconds).toBe('number');
    expect(r).not.toHaveProperty('pass_rate'); // schemas.md: at the top level it blanks the viewer
    expect(r).not.toHaveProperty('config');
    for (const e of r.expectations) expect(Object.keys(e).sort()).toEqual(['evidence', 'passed', 'text']);
  }
  if (summary.delta) for (const k of ['pass_rate', 'time_seconds', 'tokens']) expect(summary.delta[k]).toMatch(/^[+-]\d+(\.\d+)?$/);
}

function suiteResults(): JobResult[] {
  const out: JobResult[] = [];
  for (const [caseId, withOk, withoutOk] of [
    ['eval-1', [true, true, true], [false, true, false]],
    ['eval-2', [true, false, true], [false, false, false]],
    ['eval-7', [true, true, true], [true, true, true]],
  ] as const) {
    for (let t = 1; t <= 3; t++) {
      out.push(job(caseId, 'with_skill', t, [['exit_code: 0', true], [`${caseId} check`, withOk[t - 1]!]]));
      out.push(job(caseId, 'without_skill', t, [['exit_code: 0', true], [`${caseId} check`, withoutOk[t - 1]!], ['extra', t !== 3]]));
    }
  }
  return out;
}

/** Writes the benchmark format of `results` and creates the `outputs/` folders a real run has. */
async function writeRun(results: JobResult[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'su-compat-'));
  for (const r of results) mkdirSync(join(dir, r.outputDir, 'outputs'), { recursive: true });
  const { skipped } = await writeDocReports(dir, makeDoc(results), ['benchmark']);
  expect(skipped).toEqual([]);
  return dir;
}

describe("skill-creator's aggregator and viewer read skill-up's files", () => {
  it('aggregate_benchmark.py re-reading gives back every run and the same run_summary and delta', async () => {
    const results = suiteResults();
    const dir = await writeRun(results);
    const ours = readJson(join(dir, 'benchmark.json')) as BenchmarkJson;
    const theirs = loadRunResults(dir, true); // case folders are named eval-<n>: the script's own glob finds them
    expect([...theirs.keys()]).toEqual(['with_skill', 'without_skill']);
    expect(theirs.get('with_skill')).toHaveLength(9);
    expect(theirs.get('without_skill')).toHaveLength(9);
    for (const [config, runs] of theirs) {
      for (const r of runs) {
        expect(r.expectationWarnings).toBe(0);
        const mine = ours.runs.find((x) => x.configuration === config && x.eval_id === r.eval_id && x.run_number === r.run_number)!;
        expect(mine, `${config} eval ${r.eval_id} run ${r.run_number}`).toBeDefined();
        expect(mine.result.pass_rate).toBe(r.pass_rate);
        expect([mine.result.passed, mine.result.failed, mine.result.total]).toEqual([r.passed, r.failed, r.total]);
        expect(mine.result.time_seconds).toBe(r.time_seconds);
        expect(mine.result.tool_calls).toBe(r.tool_calls);
        expect(mine.result.errors).toBe(r.errors);
        expect(mine.expectations).toEqual(r.expectations);
        expect(mine.notes).toEqual(r.notes);
      }
    }
    // eval ids come from eval_metadata.json: eval-7 keeps 7
    expect(ours.metadata.evals_run).toEqual([1, 2, 7]);
    expect([...new Set(theirs.get('with_skill')!.map((r) => r.eval_id))]).toEqual([1, 2, 7]);
    const summary = aggregateResults(theirs);
    for (const c of ['with_skill', 'without_skill'] as const) {
      expect(ours.run_summary[c]!.pass_rate).toEqual(summary[c].pass_rate);
      expect(ours.run_summary[c]!.time_seconds).toEqual(summary[c].time_seconds);
    }
    expect(ours.run_summary.delta!.pass_rate).toBe(summary.delta.pass_rate);
    expect(ours.run_summary.delta!.time_seconds).toBe(summary.delta.time_seconds);
    // The script's token fallback is `output_chars` (no timing.json): skill-up's own benchmark.json holds real tokens.
    expect(theirs.get('with_skill')![0]!.tokens).toBe('answer of eval-1 with_skill 1'.length);
    expect(ours.runs.find((r) => r.eval_id === 1 && r.configuration === 'with_skill' && r.run_number === 1)!.result.tokens).toBe(115);
  });

  it('with case folders not named eval-*, the script at that commit finds nothing; the relaxed walk (PR #825) finds every run', async () => {
    const results = [job('hello', 'with_skill', 1, [['a', true]]), job('hello', 'without_skill', 1, [['a', false]])];
    const dir = await writeRun(results);
    expect(loadRunResults(dir, true).size).toBe(0);
    const relaxed = loadRunResults(dir, false);
    expect(relaxed.get('with_skill')![0]!.pass_rate).toBe(1);
    expect(relaxed.get('without_skill')![0]!.pass_rate).toBe(0);
  });

  it("the viewer's Benchmark tab gets numbers for every configuration, and nothing else sits in run_summary", async () => {
    const dir = await writeRun(suiteResults());
    const b = readJson(join(dir, 'benchmark.json'));
    checkViewerBenchmark(b);
    expect(Object.keys(b.run_summary)).toEqual(['with_skill', 'without_skill', 'delta']);
    expect(b.statistics.configurations.with_skill.job_pass_rate).toBeCloseTo(8 / 9);
  });

  it("the viewer's Outputs tab finds each run's prompt, eval id and grades", async () => {
    const dir = await writeRun(suiteResults());
    const runs = findRuns(dir);
    expect(runs).toHaveLength(18);
    for (const r of runs) {
      expect(r.prompt).toMatch(/^prompt of eval-\d$/);
      expect(typeof r.eval_id).toBe('number');
      // viewer.html renderGrades: summary.pass_rate / passed / failed / total, expectations[{text, passed, evidence}]
      expect(typeof r.grading.summary.pass_rate).toBe('number');
      expect(r.grading.summary.passed + r.grading.summary.failed).toBe(r.grading.summary.total);
      for (const e of r.grading.expectations) expect(typeof e.evidence).toBe('string');
    }
    // The config badge is matched from the run id: `run.id.match(/(with_skill|without_skill|…)/)`
    expect(runs.filter((r) => /with_skill/.test(r.id) && !/without_skill/.test(r.id))).toHaveLength(9);
  });

  it('with several engines, each engine folder is a workspace the aggregator reads on its own', async () => {
    const results = ['claude_code', 'codex'].flatMap((engine) => [
      job('eval-1', 'with_skill', 1, [['a', true]], { engine }),
      job('eval-1', 'without_skill', 1, [['a', engine === 'codex']], { engine }),
    ]);
    const dir = await writeRun(results);
    expect(existsSync(join(dir, 'benchmark.json'))).toBe(false);
    for (const engine of ['claude_code', 'codex']) {
      const b = readJson(join(dir, engine, 'benchmark.json'));
      checkViewerBenchmark(b);
      const theirs = aggregateResults(loadRunResults(join(dir, engine), true));
      expect(b.run_summary.delta.pass_rate).toBe(theirs.delta.pass_rate);
      expect(b.statistics.engine).toBe(engine);
    }
    expect(readJson(join(dir, 'claude_code', 'benchmark.json')).run_summary.delta.pass_rate).toBe('+1.00');
    expect(readJson(join(dir, 'codex', 'benchmark.json')).run_summary.delta.pass_rate).toBe('+0.00');
  });
});
