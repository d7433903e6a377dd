/**
 * Shared pieces of the engine tests (test/engines/contract.test.ts, engines/<name>/adapter.test.ts):
 * a minimal case, the scripted model every engine test talks to, a harness that drives one
 * engine's REAL binary against it (`realEngineHarness`), builders for the pure parts (an engine
 * config, a context with fake paths, a process outcome), a /proc scan proving that no engine
 * process outlives its turn, and the contract suite's engine list.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { CaseSpec, EngineConfig } from '../../src/config/types.js';
import type { EngineDefinition } from '../../src/engine/definition.js';
import { binOverrideVar } from '../../src/engine/known.js';
import type { ProcResult } from '../../src/engine/proc.js';
import type { EngineAdapter, EngineContext, TranscriptTurn } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { engineDefinitions, findEngineDefinition } from '../../engines/index.js';

/** A case with nothing but an id and a turn limit, for driving an adapter directly. */
export function adapterTestCase(id: string, maxTurns = 10): CaseSpec {
  return {
    id,
    file: '/dev/null',
    tags: [],
    turns: [],
    context: { files: {} },
    timeoutSeconds: -1,
    maxTurns,
    trials: 1,
    expect: { mustContain: [], mustNotContain: [], filesExist: [], filesNotExist: [], fileContains: [], skillInvoked: [], skillNotInvoked: [] },
    judges: [],
    collectArtifacts: [],
  };
}

/** PIDs of live processes (zombies excluded, this process excluded) for which `match` holds. */
function liveProcesses(match: (p: { cwd: string; read: (file: string) => string }) => boolean): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const read = (file: string) => readFileSync(`/proc/${name}/${file}`, 'utf8');
      if (/State:\s+(\w)/.exec(read('status'))?.[1] === 'Z') continue;
      if (match({ cwd: readlinkSync(`/proc/${name}/cwd`), read })) found.push(Number(name));
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return found;
}

/** PIDs of live processes whose cwd is `dir` or whose command line mentions `marker`. */
export function processesIn(dir: string, marker: string): number[] {
  return liveProcesses((p) => p.cwd === dir || p.read('cmdline').includes(marker));
}

/** PIDs of live processes whose cwd is `dir` or whose environment has `HOME=home`. */
export function processesOf(dir: string, home: string): number[] {
  return liveProcesses((p) => p.cwd === dir || p.read('environ').includes(`HOME=${home}\0`));
}

/**
 * The engines the shared contract suite (test/engines/contract.test.ts) runs against: every
 * CLI engine in the registry (engines/index.ts), read when called, so a registered engine is in it.
 */
export function contractEngines(): readonly EngineDefinition[] {
  return engineDefinitions();
}


/**
 * The scripted model (src/model/script.ts) of every engine test: one rule per behaviour a test
 * provokes through its prompt (`please fail` → HTTP 500, `bad request` → HTTP 400, `be slow` →
 * no answer for 120 s, `greet` → the `hello` skill when listed, `narrate`, `quietly`,
 * `write hello`, `run a command`, `loop forever`, `echo:`), turn 2 of a session, and a fallback.
 */
export const ENGINE_TEST_SCRIPT = `
rules:
  - name: fail
    when: { prompt_contains: "please fail" }
    error: { status: 500, message: "scripted failure for the engine test" }
  - name: bad-request
    when: { prompt_contains: "bad request" }
    error: { status: 400, message: "scripted bad request" }
  - name: slow
    when: { prompt_contains: "be slow" }
    delay_ms: 120000
    reply: [ { say: "too late" } ]
  - name: load-skill
    when: { prompt_contains: "greet", skill_listed: hello, skill_loaded: false }
    reply: [ { use_skill: hello } ]
  - name: after-skill
    when: { skill_loaded: hello }
    reply:
      - { write_file: { path: greeting.txt, content: "Hello, World!\\n" } }
      - { say: "Greeted as the skill says." }
  - name: narrate
    when: { prompt_contains: "narrate" }
    reply:
      - { say: "PROGRESS: I'll write notes.txt first." }
      - { write_file: { path: notes.txt, content: "noted\\n" } }
      - { say: "All done." }
  - name: quiet-end
    when: { prompt_contains: "quietly" }
    reply:
      - { say: "PROGRESS: I'll run ls first." }
      - { run: "ls" }
      - { say: "" }
  - name: write
    when: { prompt_contains: "write hello" }
    reply:
      - { write_file: { path: hello.txt, content: "hi\\n" } }
      - { say: "Wrote hello.txt" }
  - name: run
    when: { prompt_contains: "run a command" }
    reply:
      - { say: "Running it." }
      - { run: "mkdir -p sub && printf 'it%s' \\"'s\\" > sub/ran.txt && cat sub/ran.txt" }
      - { say: "Ran: {{prompt}}" }
  - name: loop
    when: { prompt_contains: "loop forever" }
    reply:
      - { run: "true" }
      - { run: "true" }
      - { run: "true" }
      - { run: "true" }
      - { say: "never reached" }
  - name: second-turn
    when: { turn: 2 }
    reply: [ { say: "Turn {{turn}}: earlier I wrote hello.txt." } ]
  - name: echo
    when: { prompt_contains: "echo:" }
    reply: [ { say: "You said <{{prompt}}>" } ]
  - reply: [ { say: "I don't know how to do that." } ]
`;

/** The SKILL.md of the `hello` skill the engine tests install (the script's `load-skill` rule loads it). */
export const HELLO_SKILL_MD = `---
name: hello
description: Greets the user warmly. Use when the user asks for a greeting.
---
# Hello
Write greeting.txt with "Hello, World!".
`;

/** The registry's definition of `name`. @throws Error when no engine has that name. */
function definitionOf(name: string): EngineDefinition {
  const def = findEngineDefinition(name);
  if (!def) throw new Error(`no engine \`${name}\` in engines/index.ts`);
  return def;
}

/** `engine:` of a suite for `name` at its pinned `testedVersion` with the scripted model, `over` applied. */
export function engineConfig(name: string, over: Partial<EngineConfig> = {}): EngineConfig {
  return { name, displayName: name, version: definitionOf(name).testedVersion, model: { provider: 'scripted' }, kwargs: {}, ...over };
}

/**
 * A context for an engine's pure parts (argv, environment, config builders): job
 * `case/with_skill/run-1`, workspace `/w`, home `/h`, output `/o`, scripted server
 * `http://127.0.0.1:1234/`, skill-up's environment `baseEnv`; `over` applied last.
 */
export function pureCtx(name: string, baseEnv: Record<string, string | undefined>, over: Partial<EngineContext> = {}): EngineContext {
  return {
    jobId: 'case/with_skill/run-1',
    engine: engineConfig(name),
    case: adapterTestCase(`${name}-pure`),
    variant: 'with_skill',
    trial: 1,
    workspace: '/w',
    homeDir: '/h',
    outputDir: '/o',
    installedSkills: [],
    baseEnv,
    signal: new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: 'http://127.0.0.1:1234/',
    ...over,
  };
}

/** A process outcome: exit 0 after 1 ms, no output; `over` applied. */
export function procResult(over: Partial<ProcResult> = {}): ProcResult {
  return { exitCode: 0, timedOut: false, cancelled: false, durationMs: 1, stdoutBytes: 0, stderrBytes: 0, ...over };
}

/** What a harness job's context is made of. */
export interface HarnessCtxOptions {
  /** Install the `hello` skill (`HELLO_SKILL_MD`) and run as `with_skill`. */
  skill?: boolean;
  /** Workspace folder the skill goes into (default: the engine's first skill folder). */
  skillDir?: string;
  /** The case's `max_turns` (default 10). */
  maxTurns?: number;
  signal?: AbortSignal;
  engine?: EngineConfig;
  /** Model server URL (default: the harness's scripted server). */
  modelBaseUrl?: string;
}

/** One engine's real binary against the shared scripted model; see `realEngineHarness`. */
export interface EngineHarness {
  readonly def: EngineDefinition;
  /** The engine's adapter (after the harness's `beforeAll`). */
  readonly adapter: EngineAdapter;
  /** The scripted model server running `ENGINE_TEST_SCRIPT` (after `beforeAll`). */
  readonly server: ModelServer;
  /** The temporary folder all jobs live under (removed in `afterAll`). */
  readonly root: string;
  /** `engineConfig` of this engine. */
  engine(over?: Partial<EngineConfig>): EngineConfig;
  /** A fresh job: its folders under `root` (workspace created, the skill installed when asked). */
  makeCtx(opts?: HarnessCtxOptions): Promise<EngineContext>;
  /** `prepare` then turn 1 with `prompt` (time limit `timeoutMs`, default 90 s). */
  oneTurn(ctx: EngineContext, prompt: string, timeoutMs?: number): Promise<TranscriptTurn>;
  /**
   * `prepare`, then a function that runs the session's next turn with a prompt: index, history
   * and the previous turn's session id carried along.
   */
  session(ctx: EngineContext, timeoutMs?: number): Promise<(prompt: string) => Promise<TranscriptTurn>>;
  /**
   * The resumed pair every engine must manage, in one session: turn 1 `write hello please`,
   * turn 2 `What did you do?`. Asserts what the contract requires (no error, the same session id,
   * turn 2 answered by the script's turn-2 rule, which needs turn 1 sent along, with no tool call)
   * and returns both turns and the session's next-turn function for engine-specific checks.
   */
  resumedPair(ctx: EngineContext, timeoutMs?: number): Promise<{ t1: TranscriptTurn; t2: TranscriptTurn; next: (prompt: string) => Promise<TranscriptTurn> }>;
  /** Asserts no process of the job is left: none in its workspace, none with its HOME (after 200 ms for the kernel to reap). */
  expectNoProcessLeft(ctx: EngineContext): Promise<void>;
}

/**
 * Registers, in the calling `describe`, a `beforeAll` that starts the scripted model server,
 * makes a temporary root and loads engine `name`'s adapter (failing, never skipping, when the
 * global set-up, test/setup/engines.ts, did not install the binary as `SKILL_UP_<ENGINE>_BIN`),
 * and an `afterAll` that stops and removes them. Nothing leaves 127.0.0.1.
 * @param label Prefix of the job ids (`<label>/job-<n>`), under which the server files each exchange.
 * @throws Error (at once) when no engine has that name.
 */
export function realEngineHarness(name: string, label = `${name}-adapter-test`, before?: () => Promise<void>): EngineHarness {
  const def = definitionOf(name);
  let adapter: EngineAdapter | undefined;
  let server: ModelServer | undefined;
  let root: string | undefined;
  let jobs = 0;
  const started = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`the harness's ${what} is not ready: use it inside a test`);
    return v;
  };

  beforeAll(async () => {
    const variable = binOverrideVar(def.name);
    if (!process.env[variable]) throw new Error(`${variable} is not set: run the tests through vitest.config.ts (its global set-up installs ${def.label})`);
    await before?.();
    adapter = await def.load();
    server = await startModelServer({ script: parseModelScript(ENGINE_TEST_SCRIPT, `${label}.yaml`) });
    root = await mkdtemp(join(tmpdir(), `skill-up-${label.replace(/[^\w-]/g, '-')}-`));
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const h: EngineHarness = {
    def,
    get adapter() {
      return started(adapter, 'adapter');
    },
    get server() {
      return started(server, 'model server');
    },
    get root() {
      return started(root, 'root folder');
    },
    engine: (over) => engineConfig(def.name, over),
    async makeCtx(opts = {}) {
      const n = ++jobs;
      const dir = join(h.root, `job-${n}`);
      const ctx: EngineContext = {
        jobId: `${label}/job-${n}`,
        engine: opts.engine ?? h.engine(),
        case: adapterTestCase(label, opts.maxTurns),
        variant: opts.skill ? 'with_skill' : 'without_skill',
        trial: 1,
        workspace: join(dir, 'workspace'),
        homeDir: join(dir, 'home'),
        outputDir: join(dir, 'out'),
        installedSkills: opts.skill ? ['hello'] : [],
        // An inherited PWD naming another folder, as when skill-up runs from a shell: it must not win.
        baseEnv: { PATH: process.env.PATH, LANG: 'C.UTF-8', PWD: h.root },
        signal: opts.signal ?? new AbortController().signal,
        deadline: Infinity,
        modelBaseUrl: opts.modelBaseUrl ?? h.server.url,
      };
      await mkdir(ctx.workspace, { recursive: true });
      if (opts.skill) {
        const at = join(ctx.workspace, opts.skillDir ?? def.skillDirs[0]!, 'hello');
        await mkdir(at, { recursive: true });
        await writeFile(join(at, 'SKILL.md'), HELLO_SKILL_MD);
      }
      return ctx;
    },
    async oneTurn(ctx, prompt, timeoutMs = 90_000) {
      const prepared = await h.adapter.prepare(ctx);
      return h.adapter.runTurn(ctx, prepared, { index: 1, prompt, history: [prompt], timeoutMs });
    },
    async session(ctx, timeoutMs = 90_000) {
      const prepared = await h.adapter.prepare(ctx);
      const history: string[] = [];
      let sessionId: string | undefined;
      return async (prompt) => {
        history.push(prompt);
        const turn = await h.adapter.runTurn(ctx, prepared, { index: history.length, prompt, sessionId, history: [...history], timeoutMs });
        sessionId = turn.sessionId ?? sessionId;
        return turn;
      };
    },
    async resumedPair(ctx, timeoutMs) {
      const next = await h.session(ctx, timeoutMs);
      const t1 = await next('write hello please');
      expect(t1.error).toBeUndefined();
      const t2 = await next('What did you do?');
      expect(t2.error).toBeUndefined();
      expect(t2.sessionId).toBe(t1.sessionId);
      expect(t2.finalText).toBe('Turn 2: earlier I wrote hello.txt.');
      expect(t2.toolCalls).toEqual([]);
      return { t1, t2, next };
    },
    async expectNoProcessLeft(ctx) {
      await new Promise((r) => setTimeout(r, 200));
      expect(processesOf(ctx.workspace, ctx.homeDir)).toEqual([]);
    },
  };
  return h;
}
