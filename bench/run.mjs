#!/usr/bin/env node
// Harness benchmarks (issue: skill-up core). Runs skill-up in-process on generated suites
// and prints the numbers the issues set targets for. Not a test: nothing here asserts.
//
//   core: 200 jobs of a custom engine that exits at once, parallelism 8 →
//         harness overhead per job (job wall time minus engine time, median and p95)
//         and the peak RSS of the skill-up process.
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { main } = await import('../dist/src/cli/main.js');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

async function benchCore() {
  const root = mkdtempSync(join(tmpdir(), 'skill-up-bench-'));
  const skill = join(root, 'bench-skill');
  mkdirSync(join(skill, 'evals/cases'), { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: bench-skill\ndescription: A skill used only to benchmark the harness.\n---\n\n# Bench\n');
  writeFileSync(
    join(skill, 'evals/eval.yaml'),
    `schema_version: v1alpha1
engine:
  name: instant
  custom:
    transport: local
    response_format: text
    local: { command: "true", args: [] }
cases:
  files: [evals/cases/*.yaml]
  parallelism: 8
trials: 10
`,
  );
  for (let i = 0; i < 20; i++) {
    writeFileSync(join(skill, `evals/cases/case-${i}.yaml`), `input:\n  prompt: "job ${i}"\nexpect:\n  exit_code: 0\n`);
  }
  const out = join(root, 'out');
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  const code = await main(['run', skill, '--output-dir', out]);
  const wall = performance.now() - t0;
  clearInterval(sampler);
  const maxRssKb = process.resourceUsage().maxRSS;
  const result = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
  const overhead = result.jobs.map((j) => j.duration_ms - j.engine_duration_ms);
  const engine = result.jobs.map((j) => j.engine_duration_ms);
  console.log('\n== core: 200 jobs, custom engine `true`, parallelism 8 ==');
  console.log(`exit code                     ${code}`);
  console.log(`jobs                          ${result.jobs.length} (${result.totals.pass} pass)`);
  console.log(`wall time                     ${(wall / 1000).toFixed(2)} s (${(wall / result.jobs.length).toFixed(1)} ms per job at parallelism 8)`);
  console.log(`engine time per job           median ${median(engine).toFixed(1)} ms`);
  console.log(`harness overhead per job      median ${median(overhead).toFixed(1)} ms, p95 ${pct(overhead, 0.95).toFixed(1)} ms  (target < 20 ms)`);
  console.log(`peak memory (max RSS)         ${(maxRssKb / 1024).toFixed(0)} MB (sampled RSS peak ${(peak / 1048576).toFixed(0)} MB)  (target < 200 MB)`);
  rmSync(root, { recursive: true, force: true });
}

await benchCore();
