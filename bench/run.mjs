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

process.env.UV_THREADPOOL_SIZE ??= '16'; // as the skill-up executable does
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
  const P = Number(process.env.BENCH_P ?? 8);
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
  parallelism: ${P}
trials: 10
`,
  );
  for (let i = 0; i < 20; i++) {
    writeFileSync(join(skill, `evals/cases/case-${i}.yaml`), `input:\n  prompt: "job ${i}"\nexpect:\n  exit_code: 0\n`);
  }
  const out = join(root, 'out');
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const code = await main(['run', skill, '--output-dir', out]);
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  clearInterval(sampler);
  const maxRssKb = process.resourceUsage().maxRSS;
  const result = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
  const overhead = result.jobs.map((j) => j.duration_ms - j.engine_duration_ms);
  const engine = result.jobs.map((j) => j.engine_duration_ms);
  console.log(`\n== core: 200 jobs, custom engine 'true', parallelism ${P} ==`);
  console.log(`exit code                     ${code}`);
  console.log(`jobs                          ${result.jobs.length} (${result.totals.pass} pass)`);
  console.log(`wall time                     ${(wall / 1000).toFixed(2)} s (${(wall / result.jobs.length).toFixed(1)} ms of wall time per job)`);
  console.log(`engine time per job           median ${median(engine).toFixed(1)} ms`);
  console.log(`harness overhead per job      median ${median(overhead).toFixed(1)} ms, p95 ${pct(overhead, 0.95).toFixed(1)} ms  (job wall time minus engine time; target < 20 ms)`);
  console.log(`harness CPU per job           ${((cpu.user + cpu.system) / 1000 / result.jobs.length).toFixed(1)} ms (user+sys of the skill-up process, engine processes excluded)`);
  console.log(`peak memory (max RSS)         ${(maxRssKb / 1024).toFixed(0)} MB (sampled RSS peak ${(peak / 1048576).toFixed(0)} MB)  (target < 200 MB)`);
  rmSync(root, { recursive: true, force: true });
}

async function benchClaude() {
  const TRIALS = Number(process.env.BENCH_CLAUDE_TRIALS ?? 5);
  const { resolveEngineBinary } = await import('../dist/src/engine/resolve.js');
  const { startModelServer, parseModelScript } = await import('../dist/src/model/index.js');
  const { execFile } = await import('node:child_process');
  const bin = process.env.SKILL_UP_CLAUDE_CODE_BIN
    ?? (await resolveEngineBinary({ npmPackage: '@anthropic-ai/claude-code', bin: 'claude', version: '2.1.332', onProgress: (l) => console.log(l) })).path;
  process.env.SKILL_UP_CLAUDE_CODE_BIN = bin;
  const scriptText = `rules:
  - when: { prompt_contains: notes }
    reply:
      - write_file: { path: notes.md, content: "# Notes\\n" }
      - say: "Created notes.md"
`;
  const root = mkdtempSync(join(tmpdir(), 'skill-up-bench-claude-'));
  const prompt = 'Create notes.md with a Notes heading.';
  // Bare claude -p against the same kind of scripted server, same flags and environment.
  const server = await startModelServer({ script: parseModelScript(scriptText, 'bench.yaml') });
  const bare = [];
  for (let i = 0; i < TRIALS; i++) {
    const dir = join(root, `bare-${i}`);
    mkdirSync(join(dir, 'ws'), { recursive: true });
    mkdirSync(join(dir, 'home'), { recursive: true });
    const env = {
      PATH: process.env.PATH, HOME: join(dir, 'home'), CLAUDE_CONFIG_DIR: join(dir, 'home/cfg'),
      ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'dummy', IS_SANDBOX: '1', CLAUDE_CODE_MAX_RETRIES: '0',
      DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_BUNDLED_SKILLS: '1',
    };
    const t0 = performance.now();
    await new Promise((res, rej) => execFile(bin, ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--max-turns', '10', '--', prompt], { cwd: join(dir, 'ws'), env, maxBuffer: 64 << 20 }, (e) => (e ? rej(e) : res())).stdin?.end());
    bare.push(performance.now() - t0);
  }
  await server.close();
  // The same prompt as a skill-up case, one job at a time.
  const skill = join(root, 'bench-claude');
  mkdirSync(join(skill, 'evals/cases'), { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: bench-claude\ndescription: A skill used only to benchmark the harness around Claude Code.\n---\n\n# Bench\n');
  writeFileSync(join(skill, 'evals/model.yaml'), scriptText);
  writeFileSync(join(skill, 'evals/eval.yaml'), `schema_version: v1alpha1
engine:
  name: claude_code
  model: { provider: scripted, script: evals/model.yaml }
cases:
  files: [evals/cases/*.yaml]
trials: ${TRIALS}
`);
  writeFileSync(join(skill, 'evals/cases/notes.yaml'), `input:\n  prompt: "${prompt}"\nexpect:\n  files_exist: [notes.md]\n`);
  const out = join(root, 'out');
  const code = await main(['run', skill, '--output-dir', out]);
  const result = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
  const jobs = result.jobs.map((j) => j.duration_ms);
  const engine = result.jobs.map((j) => j.engine_duration_ms);
  const b = median(bare);
  const s = median(jobs);
  console.log(`\n== claude_code: the same prompt, ${TRIALS} runs each, one at a time ==`);
  console.log(`exit code                     ${code} (${result.totals.pass}/${result.jobs.length} pass)`);
  console.log(`bare claude -p                median ${b.toFixed(0)} ms  [${bare.map((x) => x.toFixed(0)).join(', ')}]`);
  console.log(`through skill-up, per job     median ${s.toFixed(0)} ms  [${jobs.join(', ')}] (engine part median ${median(engine).toFixed(0)} ms)`);
  console.log(`skill-up adds                 ${(((s - b) / b) * 100).toFixed(1)}% to the engine's own time  (target < 10%)`);
  rmSync(root, { recursive: true, force: true });
}

await benchCore();
if (!process.env.BENCH_SKIP_CLAUDE) await benchClaude();
