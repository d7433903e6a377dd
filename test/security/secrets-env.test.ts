/**
 * The allow-listed environment (src/engine/env.ts): what each engine's processes, setup steps
 * and script judges receive of skill-up's environment, `environment.env` templates, and the
 * suite values the redactor learns.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineConfig, Suite } from '../../src/config/types.js';
import { agentEnv, BASE_ENV_ALLOW, childProcessEnv, expandSuiteEnv, minimalEnv, prepareSuiteEnv, SuiteEnvError } from '../../src/engine/env.js';
import type { EngineContext } from '../../src/engine/types.js';
import { Redactor, redactor, resetRedactor, REDACTED } from '../../src/util/redact.js';
import { buildClaudeEnv, claudeCodeAdapter } from '../../engines/claude-code/adapter.js';
import { buildCodexEnv, codexAdapter } from '../../engines/codex/adapter.js';
import { buildGeminiEnv, geminiCliAdapter } from '../../engines/gemini-cli/adapter.js';
import { buildOpencodeEnv, opencodeAdapter } from '../../engines/opencode/adapter.js';
import { buildQwenEnv, qwenCodeAdapter } from '../../engines/qwen-code/adapter.js';
import { createCustomAdapter } from '../../engines/custom/adapter.js';
import { workspaceEnv } from '../../src/runtime/workspace.js';

/** skill-up's environment in these tests: the base, every engine's credentials, and bystanders. */
const PARENT: Record<string, string> = {
  PATH: '/usr/bin:/bin',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'UTC',
  TERM: 'xterm',
  TMPDIR: '/tmp/x',
  HTTPS_PROXY: 'http://proxy:3128',
  no_proxy: 'localhost',
  NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
  HOME: '/home/user',
  ANTHROPIC_API_KEY: 'sk-ant-parent-key',
  ANTHROPIC_BASE_URL: 'https://gateway.example',
  CLAUDE_CODE_OAUTH_TOKEN: 'oauth-parent',
  OPENAI_API_KEY: 'sk-openai-parent',
  OPENAI_BASE_URL: 'https://openai-gw.example/v1',
  CODEX_API_KEY: 'codex-parent',
  GEMINI_API_KEY: 'gemini-parent',
  GOOGLE_API_KEY: 'google-parent',
  DASHSCOPE_API_KEY: 'dashscope-parent',
  OPENROUTER_API_KEY: 'openrouter-parent',
  AWS_ACCESS_KEY_ID: 'AKIAPARENT0000000000',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-parent',
  GITHUB_TOKEN: 'ghp_parentparentparent',
  DATABASE_URL: 'postgres://u:dbpw-parent@h/db',
  UNRELATED: 'value',
  SKILL_UP_CACHE_DIR: '/cache',
};

const BYSTANDERS = ['HOME', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'DATABASE_URL', 'UNRELATED', 'SKILL_UP_CACHE_DIR'];

function engine(provider: string | undefined, extra: Partial<EngineConfig> = {}): EngineConfig {
  return { name: 'x', displayName: 'x', model: provider ? { provider } : {}, kwargs: {}, ...extra };
}

function ctx(e: EngineConfig, over: Partial<EngineContext> = {}): EngineContext {
  return {
    jobId: 'c/with_skill/run-1',
    engine: e,
    case: { id: 'c', maxTurns: 5 } as EngineContext['case'],
    variant: 'with_skill',
    trial: 1,
    workspace: '/w',
    homeDir: '/h',
    outputDir: '/o',
    installedSkills: [],
    baseEnv: { ...PARENT },
    suiteEnv: { SUITE_VAR: 'suite-value' },
    signal: new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: 'http://127.0.0.1:1/',
    ...over,
  };
}

/** Names of `env` that come from PARENT unchanged (what was inherited, not set by the adapter). */
function inherited(env: Record<string, string | undefined>): string[] {
  return Object.keys(env).filter((k) => PARENT[k] !== undefined && env[k] === PARENT[k]).sort();
}

const BASE_NAMES = ['HTTPS_PROXY', 'LANG', 'LC_ALL', 'NODE_EXTRA_CA_CERTS', 'PATH', 'TERM', 'TMPDIR', 'TZ', 'no_proxy'];

afterEach(() => resetRedactor());

describe('the common base', () => {
  it('is PATH, locale, terminal, temp, proxies and TLS trust; never credentials, HOME or skill-up settings', () => {
    expect(Object.keys(minimalEnv(PARENT)).sort()).toEqual(BASE_NAMES);
    expect(BASE_ENV_ALLOW).toContain('PATH');
  });

  it('setup steps get the base, environment.env and git isolation', () => {
    const env = workspaceEnv({ dir: '/ws/a', homeDir: '/ws/a-home' }, { SUITE_VAR: 'x' });
    expect(env.SUITE_VAR).toBe('x');
    expect(env.HOME).toBe('/ws/a-home');
    for (const k of Object.keys(env)) expect(['PATH', 'LANG', 'LANGUAGE', 'SHELL', 'USER', 'LOGNAME', 'TERM', 'TMPDIR', 'TZ', 'SUITE_VAR', 'HOME', 'NODE_OPTIONS', 'COLORTERM'].includes(k) || /^(GIT_|LC_|SSL_|NODE_|TMP|TEMP)/.test(k) || /_proxy$/i.test(k), k).toBe(true);
  });

  it('script judges get the base, the running suite’s environment.env and their extras', () => {
    resetRedactor(new Redactor());
    prepareSuiteEnv(suite({ env: { JUDGE_SEES: 'this-value' } }), PARENT);
    const env = childProcessEnv({ EVAL_CASE_ID: 'c' }, PARENT);
    expect(Object.keys(env).sort()).toEqual([...BASE_NAMES, 'EVAL_CASE_ID', 'JUDGE_SEES'].sort());
  });
});

describe('each engine declares what it needs', () => {
  it('claude_code: ANTHROPIC_*/CLAUDE_* with a real model only; AWS_* only for Bedrock', () => {
    const scripted = buildClaudeEnv(ctx(engine('scripted')), '/h/cfg');
    expect(inherited(scripted)).toEqual(BASE_NAMES);
    expect(scripted.ANTHROPIC_API_KEY).toBe('skill-up-job:c/with_skill/run-1');
    expect(scripted.SUITE_VAR).toBe('suite-value');
    const real = buildClaudeEnv(ctx(engine('anthropic')), '/h/cfg');
    expect(inherited(real)).toEqual([...BASE_NAMES, 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_OAUTH_TOKEN'].sort());
    const bedrock = buildClaudeEnv(ctx(engine('anthropic'), { baseEnv: { ...PARENT, CLAUDE_CODE_USE_BEDROCK: '1' } }), '/h/cfg');
    expect(bedrock.AWS_SECRET_ACCESS_KEY).toBe(PARENT.AWS_SECRET_ACCESS_KEY);
    expect(claudeCodeAdapter.envAllow).toBeDefined();
  });

  it('codex: OPENAI_*/CODEX_* with a real model only', () => {
    expect(inherited(buildCodexEnv(ctx(engine('scripted')), '/h/codex'))).toEqual(BASE_NAMES);
    expect(inherited(buildCodexEnv(ctx(engine('openai')), '/h/codex'))).toEqual([...BASE_NAMES, 'CODEX_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'].sort());
    expect(codexAdapter.envAllow).toBeDefined();
  });

  it('gemini_cli: GEMINI_*/GOOGLE_* with a real model only', () => {
    expect(inherited(buildGeminiEnv(ctx(engine('scripted')))).filter((k) => k !== 'TMPDIR')).toEqual(BASE_NAMES.filter((k) => k !== 'TMPDIR'));
    expect(inherited(buildGeminiEnv(ctx(engine('google')))).filter((k) => k !== 'TMPDIR')).toEqual([...BASE_NAMES, 'GEMINI_API_KEY', 'GOOGLE_API_KEY'].filter((k) => k !== 'TMPDIR').sort());
    expect(geminiCliAdapter.envAllow).toBeDefined();
  });

  it('qwen_code: OPENAI_*/DASHSCOPE_*/QWEN_* with a real model, plus the auth type’s own', () => {
    expect(inherited(buildQwenEnv(ctx(engine('scripted')), '/h/.qwen'))).toEqual(BASE_NAMES);
    expect(inherited(buildQwenEnv(ctx(engine('openai')), '/h/.qwen'))).toEqual([...BASE_NAMES, 'DASHSCOPE_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'].sort());
    expect(inherited(buildQwenEnv(ctx(engine('anthropic')), '/h/.qwen'))).toContain('ANTHROPIC_API_KEY');
    expect(qwenCodeAdapter.envAllow).toBeDefined();
  });

  it('opencode: the model provider’s variables only', () => {
    expect(inherited(buildOpencodeEnv(ctx(engine('scripted'))))).toEqual(BASE_NAMES);
    expect(inherited(buildOpencodeEnv(ctx(engine('openrouter'))))).toEqual([...BASE_NAMES, 'OPENROUTER_API_KEY'].sort());
    expect(inherited(buildOpencodeEnv(ctx(engine(undefined, { model: { name: 'anthropic/claude-x' } }))))).toEqual([...BASE_NAMES, 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'].sort());
    expect(inherited(buildOpencodeEnv(ctx(engine('amazon-bedrock'))))).toEqual([...BASE_NAMES, 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].sort());
    expect(opencodeAdapter.envAllow).toBeDefined();
  });

  it('custom: the base, environment.env and engine.custom.env (templates still see everything)', async () => {
    const cfg = { transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: { GH: '${GITHUB_TOKEN}', LIT: 'literal' }, kwargs: {}, local: { command: 'true', args: [] } } as never;
    const adapter = createCustomAdapter(cfg, '/skill');
    const prep = (await adapter.prepare(ctx(engine(undefined)))) as { env: Record<string, string | undefined> };
    expect(prep.env.GH).toBe(PARENT.GITHUB_TOKEN);
    expect(prep.env.LIT).toBe('literal');
    expect(prep.env.SUITE_VAR).toBe('suite-value');
    expect(prep.env.HOME).toBe('/h');
    for (const k of BYSTANDERS.filter((b) => b !== 'HOME')) expect(prep.env[k], k).toBeUndefined();
  });

  it('no engine inherits a bystander', () => {
    const envs = [
      buildClaudeEnv(ctx(engine('anthropic')), '/c'),
      buildCodexEnv(ctx(engine('openai')), '/c'),
      buildGeminiEnv(ctx(engine('google'))),
      buildQwenEnv(ctx(engine('openai')), '/c'),
      buildOpencodeEnv(ctx(engine('openai'))),
      agentEnv(ctx(engine('openai')), undefined),
    ];
    for (const env of envs) for (const k of BYSTANDERS) expect(env[k] === PARENT[k], k).toBe(false);
  });
});

function suite(opts: { env?: Record<string, string>; custom?: Record<string, unknown> } = {}): Suite {
  const e = { name: 'custom', displayName: 'agent', model: {}, kwargs: {}, ...(opts.custom ? { custom: opts.custom } : {}) };
  return { environment: { type: 'none', env: opts.env ?? {}, setupSteps: [], workspaceMount: '/workspace' }, engine: e, engines: [e] } as unknown as Suite;
}

describe('environment.env', () => {
  it('expands ${VAR}, ${VAR:-default} and ${VAR?message} from skill-up’s environment; the rest is literal', () => {
    expect(expandSuiteEnv({ A: '${UNRELATED}', B: 'x-${MISSING:-dflt}-y', C: '${MISSING}', D: 'plain $HOME {x}' }, PARENT)).toEqual({ A: 'value', B: 'x-dflt-y', C: '', D: 'plain $HOME {x}' });
    expect(() => expandSuiteEnv({ A: '${MISSING?set MISSING first}' }, PARENT)).toThrow(SuiteEnvError);
    expect(() => expandSuiteEnv({ A: '${MISSING:?}' }, PARENT)).toThrow(/environment.env.A: \$\{MISSING\} is not set/);
  });

  it('teaches the redactor every value the suite hands out (not paths of named template variables)', () => {
    resetRedactor(new Redactor());
    prepareSuiteEnv(
      suite({
        env: { PASS: '${UNRELATED_LONG}', LIT: 'literal-suite-value-9', SHORT: 'short', VARIANT_LABEL: 'with_skill', LABEL: 'production', KEYNAME: 'final_message', DB_PASS: 'hunter_two' },
        custom: {
          env: { TOKEN: '${OPAQUE_REF}', WS: '${workspace}/sub', MIX: 'prefix-${OTHER_REF}' },
          http: { url: 'https://user:urlpass-1234@agent.example/run', headers: { authorization: 'Bearer ${HDR_TOKEN}' } },
        },
      }),
      { ...PARENT, UNRELATED_LONG: 'passed-through-value', OPAQUE_REF: 'opaque-ref-value', OTHER_REF: 'other-ref-value-7', HDR_TOKEN: 'header-token-value' },
    );
    const r = redactor();
    for (const v of ['passed-through-value', 'literal-suite-value-9', 'opaque-ref-value', 'prefix-other-ref-value-7', 'other-ref-value-7', 'Bearer header-token-value', 'header-token-value', 'urlpass-1234', 'hunter_two']) {
      expect(r.redact(`[${v}]`), v).toBe(`[${REDACTED}]`);
    }
    expect(r.redact('short /w/sub')).toBe('short /w/sub');
    // Plain words under non-credential names are no secrets (and skill-up's own words never are).
    expect(r.redact('with_skill production final_message')).toBe('with_skill production final_message');
  });
});
