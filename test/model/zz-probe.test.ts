import { test } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
const run = promisify(execFile);
import { mkdirSync, writeFileSync, rmSync, readFileSync, existsSync } from 'node:fs';
import { loadModelScript, startModelServer } from '/work/main/src/model/index.js';
test('probe', async () => {
  const root = '/tmp/probe'; rmSync(root, { recursive: true, force: true });
  for (const d of ['home', 'config', 'work/.claude/skills/hello-world', 'logs']) mkdirSync(`${root}/${d}`, { recursive: true });
  writeFileSync(`${root}/work/.claude/skills/hello-world/SKILL.md`, '---\nname: hello-world\ndescription: Writes a hello world program. Use when asked to create hello.py.\n---\n# Hello\nWrite hello.py.\n');
  const script = await loadModelScript('test/model/fixtures/hello-world.yaml');
  const server = await startModelServer({ script, logDir: `${root}/logs` });
  const t0 = Date.now();
  let out = '';
  try {
    out = (await run('/tmp/cc/node_modules/.bin/claude', ['-p', 'create hello.py', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--max-turns', '5'], {
      cwd: `${root}/work`, encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: `${root}/home`, CLAUDE_CONFIG_DIR: `${root}/config`, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'skill-up-job:probe1', IS_SANDBOX: '1', CLAUDE_CODE_MAX_RETRIES: '0', DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
    })).stdout;
  } catch (e) { out = String((e as any).stdout) + '\nERR ' + String((e as any).stderr); }
  console.log('elapsed', Date.now() - t0);
  await server.close();
  writeFileSync(`${root}/out.jsonl`, out);
  console.log(out.split('\n').map(l => l.slice(0, 300)).join('\n'));
  console.log(existsSync(`${root}/work/hello.py`) ? readFileSync(`${root}/work/hello.py`, 'utf8') : 'NO FILE');
}, 60000);
