/**
 * The engine registry (engines/index.ts) is the one list of engines: every other place that
 * names engines derives from it, and the two static copies (the README's engine table, the
 * engine-name `examples` of schemas/eval.schema.json) must agree with it. A new engine is one
 * folder plus one registry line: proved here by registering a copy of an existing definition
 * under a new name, in-process, and finding it everywhere.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CUSTOM_ENGINE, engineDefinitions, findEngineDefinition, registerEngine } from '../../engines/index.js';
import { claudeCode } from '../../engines/claude-code/index.js';
import type { EngineDefinition } from '../../src/engine/definition.js';
import { cliEngine } from '../../src/engine/cli-engine.js';
import { knownEngines } from '../../src/engine/known.js';
import { availableEngines, getAdapter } from '../../src/engine/registry.js';
import { listEngines } from '../../src/engine/resolve.js';
import { runEnginesCommand } from '../../src/engine/engines-command.js';
import { builtinEngines, canonicalEngineName, engineAliases, unknownEngineMessage } from '../../src/config/engines.js';
import { loadSuite } from '../../src/config/load.js';
import { engineNames } from '../../src/model/types.js';
import { recogniseEngine } from '../../src/model/protocols/engines.js';
import { detectChatEngine } from '../../src/model/protocols/openai-chat.js';
import { noteJobEngine } from '../../src/model/offered.js';
import { startModelServer } from '../../src/model/server.js';
import { parseModelScript } from '../../src/model/script.js';
import { PINNED } from '../setup/engines.js';
import { contractEngines } from '../support/engine.js';
import type { Suite } from '../../src/config/types.js';
import { MINIMAL_CASE, writeSkill } from '../config/helpers.js';
import { readmeRow, syncReadme, syncSchema } from '../../scripts/sync-engines.mjs';

const REPO = join(import.meta.dirname, '..', '..');

/** What the README's engine table lacks or has too many, against the registry (empty when they agree). */
function readmeDisagreements(readme: string, defs: readonly EngineDefinition[]): string[] {
  const at = readme.indexOf('| `engine.name` |');
  const table = readme.slice(at).split('\n').slice(2);
  const rows = table.slice(0, table.findIndex((l) => !l.startsWith('|')));
  const engineRows = rows.filter((r) => !r.startsWith('| any other name'));
  const want = defs.map(readmeRow);
  return [...want.filter((r) => !engineRows.includes(r)).map((r) => `missing: ${r}`), ...engineRows.filter((r) => !want.includes(r)).map((r) => `extra: ${r}`)];
}

/** What `schemas/eval.schema.json`'s engine names lack or have too many, against the registry. */
function schemaDisagreements(schema: Record<string, any>, defs: readonly EngineDefinition[]): string[] {
  const name = schema.$defs.engine.properties.name;
  const listed: string[] = name.examples;
  const want = defs.flatMap((d) => [d.name, ...d.aliases]);
  const out = [...want.filter((n) => !listed.includes(n)).map((n) => `examples lack ${n}`), ...listed.filter((n) => !want.includes(n)).map((n) => `examples have unknown ${n}`)];
  for (const d of defs) if (!String(name.description).includes(`\`${d.name}\``)) out.push(`description lacks ${d.name}`);
  return out;
}

/**
 * Asserts the scripted model recognises each engine of `defs` by the same rule on every
 * protocol: a request carrying the engine's `userAgent` mark, or for an engine without marks a
 * request with no mark at all, is that engine's; so is any request whose job runs it.
 */
function expectEachRecognised(defs: readonly EngineDefinition[]): void {
  for (const d of defs) {
    const ua = d.model.userAgent?.[0] ? `${d.model.userAgent[0]}/1.0` : 'some-client/1.0';
    expect(recogniseEngine(d.model.protocol, ua, []), `${d.name} by its marks`).toBe(d.name);
    expect(recogniseEngine(d.model.protocol, 'some-client/1.0', [], d.name), `${d.name} by its job`).toBe(d.name);
  }
}

const readme = () => readFileSync(join(REPO, 'README.md'), 'utf8');
const schema = () => JSON.parse(readFileSync(join(REPO, 'schemas', 'eval.schema.json'), 'utf8')) as Record<string, any>;

describe('the engine registry is the one list of engines', () => {
  const defs = engineDefinitions();
  const names = defs.map((d) => d.name);

  it('every engine folder but custom has a definition in the registry, and each definition its folder and README', () => {
    const folders = readdirSync(join(REPO, 'engines'), { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'custom').map((e) => e.name);
    expect(folders.length).toBe(defs.length);
    for (const d of defs) {
      expect(existsSync(join(REPO, d.doc)), d.doc).toBe(true);
      expect(folders).toContain(d.doc.split('/')[1]);
    }
    expect(new Set(defs.flatMap((d) => [d.name, ...d.aliases])).size).toBe(defs.reduce((n, d) => n + 1 + d.aliases.length, 0));
  });

  it('definitions import no adapter eagerly (a run loads only the engines it uses)', () => {
    const sources = ['engines/index.ts', ...defs.map((d) => d.doc.replace('README.md', 'index.ts'))];
    for (const f of sources) expect(readFileSync(join(REPO, f), 'utf8'), f).not.toMatch(/^import [^;]*adapter\.js'/m);
  });

  it('known engines, available engines, config names, the model server and the test set-up derive from it', () => {
    expect(knownEngines()).toEqual(defs.map((d) => ({ name: d.name, npmPackage: d.npmPackage, bin: d.bin })));
    expect(availableEngines()).toEqual([...names, CUSTOM_ENGINE]);
    expect(builtinEngines()).toEqual(names);
    for (const d of defs) for (const n of [d.name, ...d.aliases]) expect(canonicalEngineName(n)).toBe(d.name);
    expect(Object.keys(engineAliases()).length).toBe(defs.reduce((n, d) => n + 1 + d.aliases.length, 0));
    expect(engineNames()).toEqual([...names, CUSTOM_ENGINE]);
    expect(PINNED).toEqual(Object.fromEntries(defs.map((d) => [d.name, d.testedVersion])));
    expect(contractEngines().map((d) => d.name)).toEqual(names);
  });

  it('the scripted model recognises each engine from its definition’s profile', () => {
    expectEachRecognised(defs);
    expect(detectChatEngine({ 'user-agent': 'curl/8' }, { messages: [{ role: 'user', content: 'hi' }] })).toBe(CUSTOM_ENGINE);
  });

  it('each definition loads its own adapter, which carries the definition’s facts', async () => {
    for (const d of defs) {
      const a = await getAdapter({ name: d.name, displayName: d.name, model: {}, kwargs: {} }, { skillDir: '/s' } as Suite);
      expect(a).toMatchObject({ name: d.name, skillDirs: [...d.skillDirs], supportsResume: d.supportsResume, envAllow: d.envAllow });
      expect(a).not.toHaveProperty('npmPackage');
    }
  });

  it('`engines list` shows every engine', async () => {
    expect((await listEngines({ PATH: '' })).map((r) => r.name)).toEqual(names);
    let out = '';
    expect(await runEnginesCommand(['--help'], { out: (t) => (out += t), err: () => {} })).toBe(0);
    for (const d of defs) expect(out).toContain(`${d.name} (${d.npmPackage})`);
  });

  it('the README engine table has exactly one row per engine, from its definition', () => {
    expect(readmeDisagreements(readme(), defs), 'README.md disagrees with engines/index.ts: run `npm run sync:engines`').toEqual([]);
  });

  it('schemas/eval.schema.json names exactly the registry’s engines and aliases', () => {
    expect(schemaDisagreements(schema(), defs), 'schemas/eval.schema.json disagrees with engines/index.ts: run `npm run sync:engines`').toEqual([]);
  });

  it('`npm run sync:engines` (scripts/sync-engines.mjs) leaves both copies as they are while they agree', () => {
    const text = readFileSync(join(REPO, 'schemas', 'eval.schema.json'), 'utf8');
    expect(syncReadme(readme(), defs)).toBe(readme());
    expect(syncSchema(text, defs)).toBe(text);
  });
});

describe('a new engine is one definition and one registry line', () => {
  let unregister: (() => void) | undefined;
  afterEach(() => {
    unregister?.();
    unregister = undefined;
  });

  /** A copy of Claude Code's definition under a new name, as a new folder's index.ts would declare it. */
  const copy: EngineDefinition = {
    ...claudeCode,
    name: 'claude_copy',
    aliases: ['claude-copy'],
    label: 'Claude Code (copy)',
    load: async () => cliEngine(copy, (await import('../../engines/claude-code/adapter.js')).claudeCodeSpec),
  };

  it('registered in-process, it appears in config validation, the static checks, `engines list`, the adapters and the contract suite', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\nengine: claude-copy\ncases:\n  files: [evals/cases/*.yaml]\n', 'evals/cases/hello.yaml': MINIMAL_CASE });
    // Before: an unknown engine (a bare unknown name is taken for a custom engine, which needs its block).
    expect(canonicalEngineName('claude-copy')).toBeUndefined();
    await expect(loadSuite(dir, { cwd: dir })).rejects.toThrow();

    unregister = registerEngine(copy);
    expect(findEngineDefinition('claude-copy')).toBe(copy);
    const { suite } = await loadSuite(dir, { cwd: dir });
    expect(suite.engines.map((e) => e.name)).toEqual(['claude_copy']);
    expect(unknownEngineMessage('claude-cop')).toMatch(/did you mean `claude[_-]copy`/);
    // The static copies now lack it, and the checks say so.
    expect(readmeDisagreements(readme(), engineDefinitions())).toEqual([`missing: ${readmeRow(copy)}`]);
    expect(schemaDisagreements(schema(), engineDefinitions())).toEqual(['examples lack claude_copy', 'examples lack claude-copy', 'description lacks claude_copy']);
    // `engines list` and `engines --help`.
    let out = '';
    await runEnginesCommand(['list', '--json'], { out: (t) => (out += t), err: () => {} });
    expect((JSON.parse(out) as { engines: { name: string }[] }).engines.map((e) => e.name)).toContain('claude_copy');
    // The adapter is built from the copy's own facts, and the contract suite would run it.
    const adapter = await getAdapter({ name: 'claude_copy', displayName: 'claude_copy', model: {}, kwargs: {} }, { skillDir: '/s' } as Suite);
    expect(adapter.name).toBe('claude_copy');
    expect(contractEngines().map((d) => d.name)).toContain('claude_copy');
    expect(engineNames()).toContain('claude_copy');

    unregister();
    unregister = undefined;
    expect(canonicalEngineName('claude-copy')).toBeUndefined();
  });

  it('`npm run sync:engines` writes the new engine into the README table and the schema, changing nothing else', () => {
    unregister = registerEngine(copy);
    const defs = engineDefinitions();
    const schemaText = readFileSync(join(REPO, 'schemas', 'eval.schema.json'), 'utf8');
    const newReadme = syncReadme(readme(), defs);
    const newSchemaText = syncSchema(schemaText, defs);
    // The new row stands after the built-in ones, before the custom-engine row; the checks pass on the result.
    expect(newReadme).toContain(`${readmeRow(defs.at(-2)!)}\n${readmeRow(copy)}\n| any other name`);
    expect(readmeDisagreements(newReadme, defs)).toEqual([]);
    const newSchema = JSON.parse(newSchemaText) as Record<string, any>;
    expect(newSchema.$defs.engine.properties.name.examples.slice(-2)).toEqual(['claude_copy', 'claude-copy']);
    expect(schemaDisagreements(newSchema, defs)).toEqual([]);
    // Nothing else moved: one README line added, and the schema differs only in that property.
    expect(newReadme.split('\n').length).toBe(readme().split('\n').length + 1);
    expect(newReadme.replace(`${readmeRow(copy)}\n`, '')).toBe(readme());
    const changed = newSchemaText.split('\n').filter((l, i) => l !== schemaText.split('\n')[i]);
    expect(changed.map((l) => l.trim().split(':')[0])).toEqual(['"description"', '"examples"']);
    // Back to the registry without it, the sync restores the files exactly.
    unregister();
    unregister = undefined;
    expect(syncReadme(newReadme, engineDefinitions())).toBe(readme());
    expect(syncSchema(newSchemaText, engineDefinitions())).toBe(schemaText);
  });

  it('a copy sharing a protocol without marks is told apart by its job; with marks by them too, and the original keeps its requests', async () => {
    unregister = registerEngine(copy); // anthropic, like claude_code, and no marks
    // Neither declares a mark: a request with no job is no one's in particular, never silently the first engine's.
    expect(recogniseEngine('anthropic', 'claude-cli/2.1.332', [])).toBe(CUSTOM_ENGINE);
    expect(recogniseEngine('anthropic', 'claude-cli/2.1.332', [], 'claude_copy')).toBe('claude_copy');
    expect(recogniseEngine('anthropic', 'claude-cli/2.1.332', [], 'claude_code')).toBe('claude_code');
    // A job whose engine speaks another protocol does not decide.
    expect(recogniseEngine('anthropic', 'claude-cli/2.1.332', [], 'codex')).toBe(CUSTOM_ENGINE);
    unregister();

    // Declaring a mark, as README "Adding an engine" asks: both are recognised without a job.
    const marked: EngineDefinition = { ...copy, model: { protocol: 'anthropic', userAgent: ['claude-copy'], systemPrompt: /^You are Claude Copy\b/ } };
    unregister = registerEngine(marked);
    expectEachRecognised(engineDefinitions());
    expect(recogniseEngine('anthropic', 'claude-cli/2.1.332', [{ role: 'system', text: 'You are Claude Copy, an agent' }])).toBe('claude_copy');
    expect(recogniseEngine('anthropic', 'claude-cli/2.1.332', [{ role: 'system', text: 'You are Claude Code' }])).toBe('claude_code');

    // Over HTTP: the server files a request under the engine its job noted (the API key carries the job id).
    const server = await startModelServer({ script: parseModelScript('rules:\n  - reply: [ { say: hi } ]\n', 'model.yaml') });
    try {
      noteJobEngine(server.url, 'copy-job', 'claude_copy');
      const post = (key: string) =>
        fetch(`${server.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'user-agent': 'claude-cli/2.1.332' },
          body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] }),
        });
      expect((await post('skill-up-job:copy-job')).status).toBe(200);
      expect((await post('skill-up-job:other-job')).status).toBe(200);
      expect(server.requestsFor('copy-job').map((e) => e.conversation?.engine)).toEqual(['claude_copy']);
      expect(server.requestsFor('other-job').map((e) => e.conversation?.engine)).toEqual(['claude_code']);
    } finally {
      await server.close();
    }
  });

  it('a taken name or alias is refused', () => {
    expect(() => registerEngine({ ...copy, name: 'codex' })).toThrow(/already registered/);
    expect(() => registerEngine({ ...copy, aliases: ['gemini'] })).toThrow(/already registered/);
    expect(() => registerEngine({ ...copy, name: 'custom', aliases: [] })).toThrow(/already registered/);
  });
});
