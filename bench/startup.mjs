// startup: the fixed cost a user feels on every command (issue 13). Whole processes, medians of
// BENCH_STARTUP_RUNS (default 10), alternating: `node -e 0`; a node script that only reads every
// file of a 200-case suite (the floor for loading it); `skill-up run --dry-run`, `validate` and
// `--help` on that suite. Target: the dry run ≤ 2 × `node -e 0` + the time to read the files.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAUNCHER, measure, median } from './compare.mjs';
import { removeAtExit } from './scratch.mjs';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '../dist/src/cli/skill-up.cjs');

/** A 200-case suite of a custom engine, as in the comparison; returns the skill folder. */
function writeSuite(root) {
  const skill = join(root, 'startup-skill');
  mkdirSync(join(skill, 'evals/cases'), { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: startup-skill\ndescription: A skill used only to time start-up.\n---\n\n# Start-up\n');
  writeFileSync(join(skill, 'evals/eval.yaml'), 'schema_version: v1alpha1\nengine:\n  name: echo\n  custom:\n    transport: local\n    response_format: text\n    local: { command: echo, args: [done] }\ncases:\n  files: [evals/cases/*.yaml]\ntrials: 3\n');
  for (let i = 0; i < 200; i++) writeFileSync(join(skill, `evals/cases/case-${i}.yaml`), `input:\n  prompt: "job ${i}"\nexpect:\n  must_contain: [done]\n`);
  return skill;
}

/** Prints the start-up table; returns the dry run's median and its target (ms). */
export async function benchStartup() {
  const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 10);
  const root = mkdtempSync(join(tmpdir(), 'skill-up-bench-startup-'));
  const skill = writeSuite(root);
  const readAll = `const fs=require('fs'),p=require('path');const d=${JSON.stringify(skill)};let n=0;for(const f of ['SKILL.md','evals/eval.yaml'])n+=fs.readFileSync(p.join(d,f)).length;for(const f of fs.readdirSync(p.join(d,'evals/cases')))n+=fs.readFileSync(p.join(d,'evals/cases',f)).length;`;
  const env = { ...process.env, NO_COLOR: '1' };
  const noCa = { ...env };
  delete noCa.NODE_EXTRA_CA_CERTS;
  const commands = {
    'node -e 0': [process.execPath, ['-e', '0']],
    // What Node's start costs without reading that file: the floor the launcher starts from.
    ...(env.NODE_EXTRA_CA_CERTS ? { 'node -e 0, no NODE_EXTRA_CA_CERTS': [process.execPath, ['-e', '0'], noCa] } : {}),
    'node: read the suite files': [process.execPath, ['-e', readAll]],
    'skill-up --help': [LAUNCHER, ['--help']],
    'skill-up validate': [LAUNCHER, ['validate', skill]],
    'skill-up run --dry-run': [LAUNCHER, ['run', skill, '--dry-run']],
    // The same dry run started as `node dist/src/cli/skill-up.cjs` (no launcher): Node reads NODE_EXTRA_CA_CERTS first.
    'node skill-up.cjs run --dry-run': [process.execPath, [CLI, 'run', skill, '--dry-run']],
  };
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const rss = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let r = 0; r < RUNS + 1; r++) {
    for (const [name, [cmd, args, own]] of Object.entries(commands)) {
      const m = await measure(cmd, args, { env: own ?? env, cwd: root });
      if (m.code !== 0) throw new Error(`${name} exited ${m.code}: ${m.err.slice(-1000)}`);
      if (r === 0) continue; // warm-up round
      times[name].push(m.wall);
      rss[name].push(m.rssMb);
    }
  }
  removeAtExit(root);
  const med = (k) => median(times[k]);
  const node = med('node -e 0');
  const read = Math.max(0, med('node: read the suite files') - node);
  const target = 2 * node + read;
  console.log(`\n== start-up: whole processes, a 200-case suite, median of ${RUNS} alternating runs ==`);
  for (const k of Object.keys(commands)) console.log(`${k.padEnd(30)}${`${med(k).toFixed(0)} ms`.padStart(8)}  ${`${median(rss[k]).toFixed(0)} MB`.padStart(7)}`);
  const dry = med('skill-up run --dry-run');
  console.log(`dry run vs target             ${dry.toFixed(0)} ms vs ${target.toFixed(0)} ms  (target ≤ 2 × node -e 0 + the time to read the files = 2 × ${node.toFixed(0)} + ${read.toFixed(0)} ms)`);
  if (times['node -e 0, no NODE_EXTRA_CA_CERTS']) {
    const bare = med('node -e 0, no NODE_EXTRA_CA_CERTS');
    console.log(`dry run vs the stricter target ${dry.toFixed(0)} ms vs ${(2 * bare + read).toFixed(0)} ms  (2 × node -e 0 without NODE_EXTRA_CA_CERTS + reading = 2 × ${bare.toFixed(0)} + ${read.toFixed(0)} ms: the launcher spares skill-up that file, so it is held to Node's start without it)`);
  }
  return { dry, target };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup();
