/**
 * Runtime containment: whatever a config or an agent names, skill-up reads and writes only
 * inside the workspace (src/util/contain.ts): the custom engine's input_file, output_file and
 * cwd after template expansion, a fixture's symbolic links, collected artifacts and the files
 * judges read.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaseSpec, CustomEngineConfig, EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { createCustomAdapter } from '../../engines/custom/adapter.js';
import { collectArtifacts, createWorkspace, WorkspaceError } from '../../src/runtime/index.js';
import { inspectPath, resolveInWorkspace } from '../../src/judge/index.js';
import { readWorkspaceFile } from '../../src/judge/paths.js';
import { ContainmentError, isInside, openInside, realpathNearest, resolveInside } from '../../src/util/contain.js';
import { runCli, writeSkill } from '../cli/helpers.js';

const PASSWD_LINE = /root:.*:0:0:/;

function temp(prefix = 'su-contain-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

describe('util/contain', () => {
  it('isInside is lexical and treats `..x` names as inside', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/..x')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
  });

  it('realpathNearest follows links as far as the path exists, dangling links included', async () => {
    const d = temp();
    await mkdir(join(d, 'real'));
    await symlink(join(d, 'real'), join(d, 'link'));
    await symlink('/nonexistent-su/deeper', join(d, 'dangling'));
    expect(await realpathNearest(join(d, 'link/missing/file'))).toBe(join(d, 'real/missing/file'));
    expect(await realpathNearest(join(d, 'dangling/x'))).toBe('/nonexistent-su/deeper/x');
    expect(await realpathNearest(join(d, 'nope'))).toBe(join(d, 'nope'));
  });

  it('resolveInside refuses `..`, absolute paths elsewhere and links out (even through a missing tail)', async () => {
    const ws = temp();
    const outside = temp();
    await symlink(outside, join(ws, 'out'));
    await symlink(join(outside, 'not-yet'), join(ws, 'dangling'));
    await mkdir(join(ws, 'sub'));
    expect(await resolveInside(ws, 'sub/new.json')).toBe(join(ws, 'sub/new.json'));
    expect(await resolveInside(ws, join(ws, 'sub'))).toBe(join(ws, 'sub'));
    for (const p of ['../x', '../../x', '/etc/passwd', 'out/x', 'out', 'dangling', 'sub/../../x']) {
      const e = await resolveInside(ws, p, 'engine.custom.local.input_file').catch((x: unknown) => x);
      expect(e, p).toBeInstanceOf(ContainmentError);
      expect((e as Error).message).toMatch(/^engine\.custom\.local\.input_file `.*` (resolves to|leads through a symbolic link to) .*, outside /);
    }
  });

  it('openInside never opens a link out, nor a final link at all (O_NOFOLLOW)', async () => {
    const ws = temp();
    await writeFile(join(ws, 'a.txt'), 'A');
    await symlink('/etc/passwd', join(ws, 'p'));
    const fh = await openInside(ws, 'a.txt');
    expect(await fh.readFile('utf8')).toBe('A');
    await fh.close();
    await expect(openInside(ws, 'p')).rejects.toBeInstanceOf(ContainmentError);
  });
});

function customSetup(local: NonNullable<CustomEngineConfig['local']>, responseFormat: CustomEngineConfig['responseFormat'] = 'session_result') {
  const root = temp('su-contain-custom-');
  const cfg: CustomEngineConfig = { transport: 'local', responseFormat, conversationMode: 'batch', env: {}, kwargs: {}, local };
  const engine: EngineConfig = { name: 'custom', displayName: 'agent', model: { name: 'm' }, kwargs: {}, custom: cfg };
  const ws = join(root, 'a/b/ws');
  const home = join(root, 'home');
  const out = join(root, 'out');
  for (const d of [ws, home, out]) mkdirSync(d, { recursive: true });
  const ctx: EngineContext = {
    engine,
    case: { id: 'c1', maxTurns: 5, turns: [] } as unknown as CaseSpec,
    variant: 'with_skill',
    trial: 1,
    workspace: ws,
    homeDir: home,
    outputDir: out,
    installedSkills: [],
    baseEnv: { PATH: process.env.PATH },
    signal: new AbortController().signal,
    deadline: Infinity,
  };
  return { root, ws, ctx, adapter: createCustomAdapter(cfg, root) };
}

function agent(root: string, body: string): string {
  const p = join(root, 'agent.sh');
  writeFileSync(p, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const turn = { index: 1, prompt: 'go', history: ['go'], timeoutMs: 10_000 };

describe('custom engine: input_file, output_file and cwd stay in the workspace (after templates)', () => {
  it('input_file ../../x is a turn error naming the field, and nothing is written outside', async () => {
    const { root, ctx, adapter } = customSetup({ command: '/bin/true', args: [], inputFile: '../../x' });
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn);
    expect(t.error?.message).toMatch(/^engine\.custom\.local\.input_file `\.\.\/\.\.\/x` resolves to .*\/a\/x, outside /);
    expect(existsSync(join(root, 'a/x'))).toBe(false);
  });

  it('input_file through a template (${home}/x) is refused too', async () => {
    const { ctx, adapter } = customSetup({ command: '/bin/true', args: [], inputFile: '${home}/in.json' });
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn);
    expect(t.error?.message).toMatch(/input_file `.*\/home\/in\.json` resolves to/);
    expect(existsSync(join(ctx.homeDir, 'in.json'))).toBe(false);
  });

  it('output_file /etc/passwd is refused before anything runs, and never read', async () => {
    const dir = temp();
    const { ctx, adapter } = customSetup({ command: agent(dir, 'echo ran > "$0.ran"'), args: [], outputFile: '/etc/passwd' });
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn);
    expect(t.error?.message).toMatch(/^engine\.custom\.local\.output_file `\/etc\/passwd` resolves to \/etc\/passwd, outside /);
    expect(JSON.stringify(t)).not.toMatch(PASSWD_LINE);
    expect(readdirSync(dir)).not.toContain('agent.sh.ran');
  });

  it('cwd ../../.. is refused', async () => {
    const { ctx, adapter } = customSetup({ command: '/bin/pwd', args: [], cwd: '../../..' }, 'text');
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn);
    expect(t.error?.message).toMatch(/^engine\.custom\.local\.cwd `\.\.\/\.\.\/\.\.` resolves to .*, outside /);
  });

  it('an output_file the agent turned into a link to /etc/passwd is not read', async () => {
    const dir = temp();
    const { ctx, adapter } = customSetup({ command: agent(dir, 'mkdir -p out && ln -sf /etc/passwd out/result.json'), args: [], outputFile: 'out/result.json' });
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn);
    expect(t.error?.message).toMatch(/^engine\.custom\.local\.output_file `.*out\/result\.json` leads through a symbolic link to \/etc\/passwd, outside /);
    expect(JSON.stringify(t)).not.toMatch(PASSWD_LINE);
  });

  it('paths inside the workspace, also written as ${workspace}/…, work as before', async () => {
    const dir = temp();
    const { ws, ctx, adapter } = customSetup({
      command: agent(dir, 'test -f "$1" && echo "{\\"exit_code\\":0,\\"final_message\\":\\"in $(pwd)\\"}" > "$2"'),
      args: ['${input_file}', '${output_file}'],
      inputFile: '${workspace}/.skill-up/in.json',
      outputFile: 'out/r.json',
      cwd: 'sub/..',
    });
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn);
    expect(t.error).toBeUndefined();
    expect(t.finalText).toBe(`in ${ws}`);
  });
});

describe('fixtures: symbolic links never lead out of the workspace', () => {
  async function skillWithFixture() {
    const skill = temp('su-contain-skill-');
    const fx = join(skill, 'evals/fixtures/repo');
    await mkdir(join(fx, 'src'), { recursive: true });
    await writeFile(join(fx, 'src/app.py'), 'print(1)\n');
    await mkdir(join(skill, 'evals/common/data'), { recursive: true });
    await writeFile(join(skill, 'evals/common/data/table.csv'), 'a,b\n');
    await writeFile(join(skill, 'evals/common/notes.txt'), 'notes\n');
    return { skill, fx };
  }
  const make = (fx: string, skillDir?: string) =>
    createWorkspace({ root: temp('su-contain-ws-'), jobId: 'j', context: { repoFixture: fx, files: {} }, env: {}, setupSteps: [], skillDir });

  it('refuses a link to outside the skill folder, naming the link and its target', async () => {
    const { skill, fx } = await skillWithFixture();
    await symlink('/etc', join(fx, 'etc-link'));
    const e = await make(fx, skill).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WorkspaceError);
    expect((e as WorkspaceError).stage).toBe('fixture');
    expect((e as Error).message).toBe(`repo_fixture ${fx} holds a symbolic link etc-link to /etc, outside the skill folder ${skill}`);
  });

  it('refuses a dangling link that points outside (a write through it would land there)', async () => {
    const { skill, fx } = await skillWithFixture();
    const target = join(temp(), 'will-be-created');
    await symlink(target, join(fx, 'drop'));
    await expect(make(fx, skill)).rejects.toThrow(/holds a symbolic link drop to .*will-be-created, outside the skill folder/);
  });

  it('keeps links inside the fixture as relative links into the copy (absolute ones too)', async () => {
    const { skill, fx } = await skillWithFixture();
    await symlink('src/app.py', join(fx, 'rel-link'));
    await symlink(join(fx, 'src'), join(fx, 'abs-link'));
    await symlink('src/missing.py', join(fx, 'dangling-inside'));
    const ws = await make(fx, skill);
    expect(await readlink(join(ws.dir, 'rel-link'))).toBe('src/app.py');
    expect(await readlink(join(ws.dir, 'abs-link'))).toBe('src');
    expect(await readlink(join(ws.dir, 'dangling-inside'))).toBe('src/missing.py');
    expect(realpathSync(join(ws.dir, 'abs-link/app.py'))).toBe(join(ws.dir, 'src/app.py'));
    await ws.remove();
  });

  it('copies what a link to elsewhere in the skill folder points to (a file, a folder), never a link into the skill', async () => {
    const { skill, fx } = await skillWithFixture();
    await symlink('../../common/notes.txt', join(fx, 'notes.txt'));
    await symlink(join(skill, 'evals/common/data'), join(fx, 'data'));
    const ws = await make(fx, skill);
    expect((await stat(join(ws.dir, 'notes.txt'))).isFile()).toBe(true);
    expect(readlinkSafe(join(ws.dir, 'notes.txt'))).toBeUndefined();
    expect(await readFile(join(ws.dir, 'data/table.csv'), 'utf8')).toBe('a,b\n');
    expect(readlinkSafe(join(ws.dir, 'data'))).toBeUndefined();
    await ws.remove();
  });

  it('refuses a link to a folder holding the fixture (a copy that would never end)', async () => {
    const { skill, fx } = await skillWithFixture();
    await symlink(skill, join(fx, 'up'));
    await expect(make(fx, skill)).rejects.toThrow(/holds a symbolic link up to .*a folder that holds the link itself/);
  });

  it('without a skill folder, links must stay inside the fixture', async () => {
    const { fx } = await skillWithFixture();
    await symlink('../../common/notes.txt', join(fx, 'notes.txt'));
    await expect(make(fx)).rejects.toThrow(/holds a symbolic link notes\.txt to .*notes\.txt, outside the fixture/);
  });
});

function readlinkSafe(p: string): string | undefined {
  try {
    return readlinkSync(p);
  } catch {
    return undefined;
  }
}

describe('after the run: artifacts and judges never follow a link out', () => {
  async function hostileWorkspace() {
    const ws = temp('su-contain-agent-');
    await writeFile(join(ws, 'ok.txt'), 'fine\n');
    await symlink('/etc/passwd', join(ws, 'passwd.txt'));
    await symlink('/etc', join(ws, 'etc'));
    await symlink('ok.txt', join(ws, 'inside-link.txt'));
    return ws;
  }

  it('collect_artifacts copies no link target outside the workspace into outputs/', async () => {
    const ws = await hostileWorkspace();
    const dest = join(temp(), 'outputs/workspace');
    const skipped: string[] = [];
    const copied = await collectArtifacts(ws, ['**', 'etc/**'], dest, { onSkip: (rel, why) => skipped.push(`${rel}: ${why}`) });
    expect(copied.sort()).toEqual(['inside-link.txt', 'ok.txt']);
    expect(existsSync(join(dest, 'passwd.txt'))).toBe(false);
    expect(existsSync(join(dest, 'etc'))).toBe(false);
    expect(skipped.join('\n')).toContain('passwd.txt: symbolic link pointing outside the workspace');
  });

  it('file rules and expect refuse links out, also through a missing tail, and never read /etc/passwd', async () => {
    const ws = await hostileWorkspace();
    const read = await readWorkspaceFile(ws, 'passwd.txt');
    expect(read.ok).toBe(false);
    expect(JSON.stringify(read)).not.toMatch(PASSWD_LINE);
    expect(!read.ok && read.reason).toMatch(/escapes the workspace through a symbolic link: passwd\.txt -> \/etc\/passwd/);
    expect((await inspectPath(ws, 'etc/passwd')).refused).toBe(true);
    expect((await inspectPath(ws, 'etc/no-such-file')).refused).toBe(true);
    expect((await resolveInWorkspace(ws, '../x')).ok).toBe(false);
    expect((await readWorkspaceFile(ws, 'inside-link.txt')).ok).toBe(true);
    expect(await inspectPath(ws, 'ok.txt')).toMatchObject({ exists: true, refused: false });
  });
});

describe('skill-up run (built CLI): an output_file linked to /etc/passwd', () => {
  it('is a turn error, and /etc/passwd reaches neither result.json nor report.html', async () => {
    const skill = writeSkill({
      'evals/agent.sh': '#!/usr/bin/env bash\nmkdir -p out && ln -sf /etc/passwd out/result.json\n',
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'engine:',
        '  name: sneaky',
        '  custom:',
        '    transport: local',
        '    response_format: session_result',
        '    local: { command: ./evals/agent.sh, args: ["${input_file}"], output_file: out/result.json }',
        'cases:',
        '  files: [evals/cases/*.yaml]',
        'report:',
        '  formats: [json, html]',
      ].join('\n'),
      'evals/cases/a.yaml': 'input: { prompt: hi }\nexpect: { must_contain: [root] }\n',
    });
    const out = resolve(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.stderr).not.toContain('internal error');
    expect(r.code).toBe(3);
    const result = readFileSync(join(out, 'iteration-1/result.json'), 'utf8');
    const job = JSON.parse(result).jobs[0];
    expect(job.status).toBe('error');
    expect(job.reason).toMatch(/output_file `.*out\/result\.json` leads through a symbolic link to \/etc\/passwd, outside/);
    expect(result).not.toMatch(PASSWD_LINE);
    expect(readFileSync(join(out, 'iteration-1/report.html'), 'utf8')).not.toMatch(PASSWD_LINE);
  });
});
