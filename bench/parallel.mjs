// parallel: how well skill-up keeps `parallelism` engines busy (issue 13). Jobs of a custom
// engine that sleeps 0.5 s, run in-process at parallelism 1, 4, 8 and 16 (20 jobs at 1, 100 at 4,
// 200 at 8 and 16). Efficiency = (jobs × 0.5 s / parallelism) / wall time, for the whole `run`
// command (loading, jobs, grading, reports) and for the job phase alone (first job start to
// last job end, from result.json). Target ≥ 90 % at 16.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeAtExit } from './scratch.mjs';

const SLEEP_S = 0.5;

/** Runs the table through `main` (skill-up's in-process CLI entry); returns efficiency at 16. */
export async function benchParallel(main, quietly) {
  const root = mkdtempSync(join(tmpdir(), 'skill-up-bench-parallel-'));
  console.log(`\n== parallel efficiency: jobs of an engine that sleeps ${SLEEP_S} s ==`);
  console.log('parallelism  jobs   ideal      run wall  efficiency   job phase  efficiency');
  let at16;
  for (const [p, jobs] of [[1, 20], [4, 100], [8, 200], [16, 200]]) {
    const skill = join(root, `p${p}`, 'parallel-skill');
    mkdirSync(join(skill, 'evals/cases'), { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: parallel-skill\ndescription: A skill used only to time parallel jobs.\n---\n\n# Parallel\n');
    const trials = jobs / 10;
    writeFileSync(join(skill, 'evals/eval.yaml'), `schema_version: v1alpha1\nengine:\n  name: sleeper\n  custom:\n    transport: local\n    response_format: text\n    local: { command: sleep, args: ["${SLEEP_S}"] }\ncases:\n  files: [evals/cases/*.yaml]\n  parallelism: ${p}\ntrials: ${trials}\n`);
    for (let i = 0; i < 10; i++) writeFileSync(join(skill, `evals/cases/c${i}.yaml`), `input:\n  prompt: "job ${i}"\nexpect:\n  exit_code: 0\n`);
    const out = join(root, `out-${p}`);
    const t0 = performance.now();
    const code = await quietly(() => main(['run', skill, '--output-dir', out]));
    const wall = performance.now() - t0;
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    const starts = doc.jobs.map((j) => Date.parse(j.started_at));
    const ends = doc.jobs.map((j) => Date.parse(j.started_at) + j.duration_ms);
    const phase = Math.max(...ends) - Math.min(...starts);
    const ideal = (Math.ceil(jobs / p) * SLEEP_S * 1000);
    const eff = ideal / wall;
    if (p === 16) at16 = eff;
    console.log(`${String(p).padStart(11)}  ${String(jobs).padStart(4)}  ${`${(ideal / 1000).toFixed(2)} s`.padStart(7)}  ${`${(wall / 1000).toFixed(2)} s`.padStart(11)}  ${`${(100 * eff).toFixed(0)}%`.padStart(10)}  ${`${(phase / 1000).toFixed(2)} s`.padStart(10)}  ${`${((100 * ideal) / phase).toFixed(0)}%`.padStart(10)}${code ? `  exit ${code}` : ''}`);
  }
  console.log('target: ≥ 90 % at parallelism 16 (whole run)');
  removeAtExit(root);
  return at16;
}
