/**
 * `mcp.servers[]` of eval.yaml and case files (src/config/mcp.ts): alibaba/skill-up's fields load,
 * a case's list merges with the suite's by name, `config_ref` fills what the entry leaves out,
 * and every mistake is one message at its file and line.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadErrors, loadOk, MINIMAL_CASE, MINIMAL_EVAL, show, writeSkill } from './helpers.js';

const SERVERS = `mcp:
  servers:
    - name: fs
      command: npx
      args: [-y, "@modelcontextprotocol/server-filesystem", "."]
      env: {TOKEN: "\${FS_TOKEN}"}
      required_env: [FS_TOKEN]
    - name: tickets
      mode: mocked
      tool_responses:
        get_ticket:
          default: "ticket {{params.id}} not found"
`;

describe('mcp.servers', () => {
  it('loads real and mocked servers with their fields and defaults, identical for every case', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': `${MINIMAL_EVAL}${SERVERS}`, 'evals/cases/a.yaml': MINIMAL_CASE, 'evals/cases/b.yaml': MINIMAL_CASE });
    const { suite, warnings } = await loadOk(dir);
    expect(warnings).toEqual([]);
    const [a, b] = suite.cases;
    expect(a!.mcpServers).toEqual([
      { name: 'fs', mode: 'real', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], env: { TOKEN: '${FS_TOKEN}' }, headers: {}, requiredEnv: ['FS_TOKEN'], at: 'evals/eval.yaml:6' },
      expect.objectContaining({ name: 'tickets', mode: 'mocked', transport: 'stdio', toolResponses: { get_ticket: expect.objectContaining({ default: 'ticket {{params.id}} not found' }) }, at: 'evals/eval.yaml:11' }),
    ]);
    expect(b!.mcpServers).toEqual(a!.mcpServers);
  });

  it("merges a case's servers by name: the case's entry replaces the suite's, new ones are added", async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}${SERVERS}`,
      'evals/cases/a.yaml': `${MINIMAL_CASE}mcp:\n  servers:\n    - {name: tickets, mode: mocked, builtin: filesystem}\n    - {name: remote, transport: http, endpoint: "http://127.0.0.1:9/mcp", headers: {Authorization: "Bearer \${T}"}}\n`,
      'evals/cases/b.yaml': MINIMAL_CASE,
    });
    const { suite } = await loadOk(dir);
    const a = suite.cases.find((c) => c.id === 'a')!;
    expect(a.mcpServers!.map((s) => [s.name, s.mode, s.transport, s.builtin ?? null, s.at])).toEqual([
      ['fs', 'real', 'stdio', null, 'evals/eval.yaml:6'],
      ['tickets', 'mocked', 'stdio', 'filesystem', 'evals/cases/a.yaml:5'],
      ['remote', 'real', 'http', null, 'evals/cases/a.yaml:6'],
    ]);
    expect(a.mcpServers![2]).toMatchObject({ endpoint: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${T}' } });
    expect(suite.cases.find((c) => c.id === 'b')!.mcpServers!.map((s) => s.name)).toEqual(['fs', 'tickets']);
  });

  it("takes a mocked server's tool_responses and a real one's transport, endpoint and headers from config_ref (the entry's own fields win)", async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}mcp:\n  servers:\n    - {name: project, mode: mocked, config_ref: evals/fixtures/mcp/project.yaml}\n    - {name: api, config_ref: evals/fixtures/mcp/api.yaml, headers: {X-Own: "1"}}\n`,
      'evals/fixtures/mcp/project.yaml': 'tool_responses:\n  list_issues:\n    default: "[]"\n',
      'evals/fixtures/mcp/api.yaml': 'transport: http\nendpoint: https://example.test/mcp\nheaders: {X-Ref: "2"}\nrequired_env: [API_KEY]\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const { suite } = await loadOk(dir);
    const [project, api] = suite.cases[0]!.mcpServers!;
    expect(project).toMatchObject({ mode: 'mocked', toolResponses: { list_issues: expect.objectContaining({ default: '[]' }) } });
    expect(api).toMatchObject({ mode: 'real', transport: 'http', endpoint: 'https://example.test/mcp', headers: { 'X-Own': '1' }, requiredEnv: ['API_KEY'] });
  });

  it('an empty `mcp.servers` (alibaba’s default) configures nothing and warns nothing', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': `${MINIMAL_EVAL}mcp:\n  servers: []\n`, 'evals/cases/a.yaml': MINIMAL_CASE });
    const { suite, warnings } = await loadOk(dir);
    expect(warnings).toEqual([]);
    expect(suite.cases[0]!.mcpServers).toBeUndefined();
  });

  it('reports each mistake at its file and line', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}mcp:
  servers:
    - {name: "bad__name", command: x}
    - {name: nocmd}
    - {name: web, transport: http, endpoint: "ftp://x"}
    - {name: m, mode: mocked}
    - {name: m2, mode: mocked, command: node, builtin: filesystem}
    - {name: dup, command: a}
    - {name: dup, command: b}
    - {name: r, command: a, required_env: ["1X"], tool_responses: {}}
    - {name: ref, mode: mocked, config_ref: evals/nope.yaml}
    - {name: t, mode: mocked, transport: http, builtin: filesystem}
    - {name: k, command: a, colour: red}
`,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const lines = show(await loadErrors(dir), dir).map((l) => l.replace(/:\d+: /, ': '));
    // One message per mistake: none reported twice, none caused by another.
    expect(lines).toHaveLength(11);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^evals\/eval\.yaml:6: mcp\.servers\[0\]\.name: mcp server name `bad__name` must be 1–64 letters/),
        expect.stringMatching(/^evals\/eval\.yaml:7: .*mcp server `nocmd` \(real, stdio\) needs `command`/),
        expect.stringMatching(/^evals\/eval\.yaml:8: .*endpoint `ftp:\/\/x` is not an http\(s\) URL/),
        expect.stringMatching(/^evals\/eval\.yaml:9: .*mocked mcp server `m` offers nothing/),
        expect.stringMatching(/^evals\/eval\.yaml:10: .*`command` is for `mode: real` servers/),
        expect.stringMatching(/^evals\/eval\.yaml:12: .*mcp server `dup` is listed twice/),
        expect.stringMatching(/^evals\/eval\.yaml:13: .*required_env `1X` is not a variable name/),
        expect.stringMatching(/^evals\/eval\.yaml:13: .*`tool_responses` is for `mode: mocked` servers/),
        expect.stringMatching(/^evals\/eval\.yaml:14: .*config_ref/),
        expect.stringMatching(/^evals\/eval\.yaml:15: .*a mocked server is served over stdio/),
        expect.stringMatching(/^evals\/eval\.yaml:16: mcp\.servers\[10\]\.colour: unknown key `colour`; expected one of `name`/),
      ]),
    );
  });

  it('points a mistake inside a config_ref file at that file', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}mcp:\n  servers:\n    - {name: project, mode: mocked, config_ref: evals/fixtures/p.yaml}\n`,
      'evals/fixtures/p.yaml': 'tool_responses: {}\nendpont: x\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const errors = await loadErrors(dir);
    expect(errors.some((d) => path.relative(dir, d.file) === 'evals/fixtures/p.yaml' && d.line === 2 && /unknown key `endpont` in a config_ref file/.test(d.message))).toBe(true);
  });

  it('is refused with `environment.type: docker`, in eval.yaml and in a case', async () => {
    const docker = 'environment: {type: docker, image: "node:20"}\n';
    const inEval = writeSkill({ 'evals/eval.yaml': `${MINIMAL_EVAL}${docker}mcp:\n  servers:\n    - {name: fs, mode: mocked, builtin: filesystem}\n`, 'evals/cases/a.yaml': MINIMAL_CASE });
    expect(show(await loadErrors(inEval), inEval)).toEqual([expect.stringMatching(/^evals\/eval\.yaml:5:1: mcp: MCP servers are not supported with `environment\.type: docker` yet/)]);
    const inCase = writeSkill({ 'evals/eval.yaml': `${MINIMAL_EVAL}${docker}`, 'evals/cases/a.yaml': `${MINIMAL_CASE}mcp:\n  servers:\n    - {name: fs, mode: mocked, builtin: filesystem}\n` });
    expect(show(await loadErrors(inCase), inCase)).toEqual([expect.stringMatching(/^evals\/cases\/a\.yaml:3:1: mcp: MCP servers are not supported with `environment\.type: docker` yet/)]);
  });

  it('is refused when every engine is a custom one (skill-up cannot configure its MCP servers)', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}engine: {name: my-agent, custom: {transport: http, http: {url: "http://127.0.0.1:9/agent"}}}\nmcp:\n  servers:\n    - {name: fs, mode: mocked, builtin: filesystem}\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    expect(show(await loadErrors(dir), dir)).toEqual([expect.stringMatching(/^evals\/eval\.yaml:5:1: mcp: MCP servers need an engine whose MCP configuration skill-up writes/)]);
  });
});

describe('MCP rules against the servers a case offers', () => {
  it('a rule naming a server the case does not offer is an error at its line; the eval-level servers count', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}mcp:\n  servers:\n    - {name: tickets, mode: mocked, builtin: filesystem}\n`,
      'evals/cases/a.yaml': 'input:\n  prompt: hi\njudge:\n  type: rule_based\n  success:\n    - mcp_tool_called: {server: tickets}\n    - mcp_tool_called: {server: tikets}\n',
    });
    const errors = await loadErrors(dir);
    expect(errors.map((d) => [path.relative(dir, d.file), d.line])).toEqual([['evals/cases/a.yaml', 7]]);
    expect(errors[0]!.message).toMatch(/tikets/);
  });
});

describe('one message per mistake', () => {
  it('a server with a problem is still one a rule may name: only its own problem is reported', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}mcp:\n  servers:\n    - {name: tickets, mode: mocked, tool_responses: {get: {default: "{{param.id}}"}}}\n`,
      'evals/cases/a.yaml': 'input:\n  prompt: hi\njudge:\n  type: rule_based\n  success:\n    - mcp_tool_called: {server: tickets}\n',
    });
    const errors = await loadErrors(dir);
    expect(errors.map((d) => [path.relative(dir, d.file), d.line])).toEqual([['evals/eval.yaml', 6]]);
    expect(errors[0]!.message).toMatch(/`\{\{param\.id\}\}` is not a parameter/);
  });
});
