/**
 * The Docker runtime end to end (issue 14): the BUILT CLI (`npm run build` first) runs suites with
 * `environment.type: docker` against the real daemon in DOCKER_HOST (dockerd from
 * scripts/docker/start-dockerd.sh: networks `none` and `host`, no bridge; .ci/run sets it) and,
 * when SKILL_UP_TEST_PODMAN_HOST is set, Podman's API service (scripts/docker/start-podman.sh).
 * Images from scripts/docker/build-test-image.sh: SKILL_UP_TEST_NODE_IMAGE (default
 * skill-up-test/node:<node major>: the host's node + busybox, no bash) and
 * SKILL_UP_TEST_BUSYBOX_IMAGE (default skill-up-test/busybox:latest: no node).
 *
 * What is proven: a custom agent and two real engines (Claude Code, Codex; scripted model) run
 * inside fresh containers — they see the image's filesystem and hostname, the setup steps ran
 * there, the skill is installed only in with_skill — with the same verdicts as `type: none`;
 * `network: none` reaches the scripted model through the relay, `host` directly; a missing
 * daemon, image or node stops the run before any job (exit 3); memory, pids and network limits
 * hold; Ctrl-C exits 130; `workdir` moves the agent's working folder; no container of a run is
 * left behind (found through dockerode by the labels `skill-up.run` and `skill-up.pid`, the
 * CLI's own pid, so other tests sharing the daemon do not disturb the count).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import { join, resolve } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, writeSkill, type CliRun } from '../../cli/helpers.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const HOST = process.env.DOCKER_HOST;
const PODMAN = process.env.SKILL_UP_TEST_PODMAN_HOST;
const NODE_IMAGE = process.env.SKILL_UP_TEST_NODE_IMAGE ?? `skill-up-test/node:${process.versions.node.split('.')[0] ?? ''}`;
const BUSYBOX_IMAGE = process.env.SKILL_UP_TEST_BUSYBOX_IMAGE ?? 'skill-up-test/busybox:latest';
/** This machine's hostname as a process here reads it (/etc/hostname), to tell a container's from it. */
const HOST_HOSTNAME = (() => {
  try {
    return readFileSync('/etc/hostname', 'utf8').trim();
  } catch {
    return os.hostname();
  }
})();

/** dockerode for a DOCKER_HOST-style address (unix:///path or tcp://host:port). */
function dockerAt(host: string): Dockerode {
  const url = new URL(host);
  if (url.protocol === 'unix:') return new Dockerode({ socketPath: url.pathname });
  return new Dockerode({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
}

/** Names of the containers (running or not) that skill-up process `pid` made: labels `skill-up.run` and `skill-up.pid=<pid>`. */
async function containersOf(host: string, pid: number): Promise<string[]> {
  const list = await dockerAt(host).listContainers({ all: true, filters: { label: ['skill-up.run', `skill-up.pid=${pid}`] } });
  return list.map((c) => c.Names.join(',') || c.Id);
}

interface Job {
  id: string;
  case_id: string;
  engine: string;
  variant: string;
  status: string;
  reason?: string;
  final_message: string;
  output_dir: string;
}

interface Run extends CliRun {
  out: string;
  /** The CLI's pid (the `skill-up.pid` label of its containers). */
  pid: number;
  jobs: Job[];
}

/** A suite: eval.yaml and case files written as JSON (YAML's subset), the agent script as given. */
function suite(evalDoc: object, cases: Record<string, object>, files: Record<string, string> = {}): string {
  const all: Record<string, string> = { ...files, 'evals/eval.yaml': JSON.stringify(evalDoc, null, 1) };
  for (const [name, c] of Object.entries(cases)) all[`evals/cases/${name}.yaml`] = JSON.stringify(c);
  return writeSkill(all);
}

/** A custom agent: `evals/agent.sh` (sh: the test image has no bash), its stdout the final message. */
const CUSTOM = { name: 'shell-agent', custom: { transport: 'local', response_format: 'text', local: { command: './evals/agent.sh', args: [] } } };

function dockerEnv(extra: object = {}): object {
  return { type: 'docker', image: NODE_IMAGE, ...extra };
}

/**
 * Runs `skill-up run <skill> --output-dir <fresh> ...args` and reads its result.json (jobs: [] when
 * there is none). `host` is the DOCKER_HOST it gets; `onChild` sees the child once it has written to stderr.
 */
async function run(skill: string, args: string[] = [], host = HOST!, onChild?: (child: ChildProcess) => void): Promise<Run> {
  const out = join(skill, '..', `out-${Math.random().toString(36).slice(2, 8)}`);
  let pid = 0;
  const r = await runCli(['run', skill, '--output-dir', out, ...args], {
    env: { DOCKER_HOST: host, NO_COLOR: '1' },
    onStderr: (_t, child) => {
      if (!pid) {
        pid = child.pid ?? 0;
        onChild?.(child);
      }
    },
  });
  const file = join(out, 'iteration-1', 'result.json');
  const jobs = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { jobs: Job[] }).jobs : [];
  return { ...r, out, pid, jobs };
}

/** Job id → status. */
const statuses = (r: Run) => Object.fromEntries(r.jobs.map((j) => [j.id, j.status]));
const jobOf = (r: Run, id: string) => {
  const j = r.jobs.find((x) => x.id === id);
  if (!j) throw new Error(`no job ${id} in ${r.out}: ${r.stderr.slice(-2000)}`);
  return j;
};
/** `key=value` lines of a custom agent's answer. */
const said = (j: Job): Record<string, string> =>
  Object.fromEntries(
    j.final_message.split('\n').flatMap((l) => {
      const m = /^([a-z-]+)=(.*)$/.exec(l);
      return m ? [[m[1]!, m[2]!]] : [];
    }),
  );

/**
 * Test 1 (and 7 on Podman): a custom agent in a container, with and without the skill, against
 * the same suite with `type: none`.
 */
async function customAgentInContainer(host: string): Promise<void> {
  const agent = [
    '#!/bin/sh',
    'echo "hostname=$(cat /etc/hostname)"',
    `if [ -e '${ROOT}/package.json' ]; then echo repo=visible; else echo repo=absent; fi`,
    'if [ -f .agents/skills/demo-skill/SKILL.md ]; then echo skill=installed; echo yes > used-skill.txt; else echo skill=absent; fi',
    'echo "setup=$(cat setup-marker.txt)"',
  ].join('\n');
  const cases = { look: { input: { prompt: 'look around' }, expect: { files_exist: ['used-skill.txt', 'setup-marker.txt'] } } };
  const setup = { setup_steps: [{ run: 'echo "in $(cat /etc/hostname)" > setup-marker.txt' }] };
  const evalOf = (environment: object) => ({ schema_version: 'v1alpha1', engine: CUSTOM, environment, cases: { files: ['evals/cases/*.yaml'], parallelism: 2 } });
  const [docker, local] = await Promise.all([
    run(suite(evalOf(dockerEnv(setup)), cases, { 'evals/agent.sh': agent }), ['--baseline'], host),
    run(suite(evalOf({ type: 'none', ...setup }), cases, { 'evals/agent.sh': agent }), ['--baseline'], host),
  ]);
  expect(docker.code, docker.stderr.slice(-3000)).toBe(0);
  expect(docker.stderr).toMatch(/^docker: (docker|podman) .* image .* network none/m);
  const withSkill = said(jobOf(docker, 'look/with_skill/run-1'));
  const without = said(jobOf(docker, 'look/without_skill/run-1'));
  for (const s of [withSkill, without]) {
    // The image's filesystem: the repository is not there, the hostname is the container's.
    expect(s.repo).toBe('absent');
    expect(s.hostname).toMatch(/^[0-9a-f]{12}$/);
    expect(s.hostname).not.toBe(HOST_HOSTNAME);
    // The setup step ran in the same container, before the agent.
    expect(s.setup).toBe(`in ${s.hostname}`);
  }
  expect(withSkill.hostname, 'a fresh container per job').not.toBe(without.hostname);
  expect(withSkill.skill).toBe('installed');
  expect(without.skill).toBe('absent');
  expect(statuses(docker)).toEqual({ 'look/with_skill/run-1': 'pass', 'look/without_skill/run-1': 'fail' });
  // The same suite on this machine: the same verdicts and exit code, but the host's files and name.
  expect(statuses(local)).toEqual(statuses(docker));
  expect(local.code).toBe(docker.code);
  const here = said(jobOf(local, 'look/with_skill/run-1'));
  expect([here.repo, here.hostname, here.setup]).toEqual(['visible', HOST_HOSTNAME, `in ${HOST_HOSTNAME}`]);
  expect(await containersOf(host, docker.pid)).toEqual([]);
}

describe.skipIf(!HOST)(`skill-up run with environment.type: docker (built CLI, real daemon${HOST ? '' : '; skipped: DOCKER_HOST is unset (scripts/docker/start-dockerd.sh)'})`, () => {
  it('1. a custom agent runs in a fresh container per job: the image filesystem, setup inside, the skill only in with_skill, the verdicts of type: none, no container left', async () => {
    await customAgentInContainer(HOST!);
  });

  it('2. Claude Code (network none through the relay, and host) and Codex run inside containers with the scripted model and pass, as on this machine', async () => {
    const model = ['rules:', '  - when: { prompt_contains: notes }', '    reply:', '      - read_file: /etc/passwd', '      - write_file: { path: notes.md, content: "# Notes\\n" }', '      - say: "Created notes.md"', ''].join('\n');
    const scripted = { provider: 'scripted', script: 'evals/model.yaml' };
    // No bypass_sandbox: under Docker the Codex adapter turns its own sandbox off (it cannot write in a container).
    const engines = [
      { name: 'claude_code', model: scripted },
      { name: 'codex', model: scripted },
    ];
    const cases = { notes: { input: { prompt: 'Create notes.md with a Notes heading.' }, expect: { files_exist: ['notes.md'] } } };
    const mk = (environment: object) => suite({ schema_version: 'v1alpha1', engines, environment, cases: { files: ['evals/cases/*.yaml'], parallelism: 2 } }, cases, { 'evals/model.yaml': model });
    const none = await run(mk(dockerEnv({ network: 'none' })));
    const host = await run(mk(dockerEnv({ network: 'host' })));
    const local = await run(mk({ type: 'none' }));
    const ids = ['claude_code/notes/with_skill/run-1', 'codex/notes/with_skill/run-1'];
    for (const r of [none, host, local]) {
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(statuses(r), r.jobs.map((j) => `${j.id}: ${j.reason ?? ''}`).join('\n')).toEqual(Object.fromEntries(ids.map((id) => [id, 'pass'])));
    }
    /** What the engine's tool read from /etc/passwd (its tool call's output). */
    const readPasswd = (r: Run, id: string): string => {
      const t = JSON.parse(readFileSync(join(r.out, 'iteration-1', jobOf(r, id).output_dir, 'transcript.json'), 'utf8')) as { turns: { toolCalls?: { name: string; input: unknown; output?: string }[] }[] };
      return t.turns.flatMap((u) => u.toolCalls ?? []).find((c) => JSON.stringify(c.input).includes('/etc/passwd'))?.output ?? '';
    };
    // The test image's own user (scripts/docker/build-test-image.sh), which this machine lacks.
    // (Not the hostname: with network host a container has this machine's.)
    const imageUser = 'agent:x:1000:1000:agent:/home/agent:/bin/sh';
    expect(readFileSync('/etc/passwd', 'utf8')).not.toContain(imageUser);
    for (const id of ids) {
      for (const r of [none, host]) expect(readPasswd(r, id), `${id} reads the image's /etc/passwd`).toContain(imageUser);
      expect(readPasswd(local, id)).toMatch(/root:x:0:0:/);
      expect(readPasswd(local, id)).not.toContain(imageUser);
      const relay = (r: Run) => join(r.out, 'iteration-1', jobOf(r, id).output_dir, 'outputs', 'model-relay.stdout.txt');
      // network none: the model server is reached through the relay in the container; host: directly.
      expect(readFileSync(relay(none), 'utf8')).toBe('ready\n');
      expect(existsSync(relay(host))).toBe(false);
    }
    expect(none.stderr).toMatch(/network none/);
    expect(host.stderr).toMatch(/network host/);
    for (const r of [none, host]) expect(await containersOf(HOST!, r.pid)).toEqual([]);
  }, 120_000);

  it('3. no daemon, a missing image or an image without node: exit 3 before any job with one line; validate needs no daemon', async () => {
    const evalOf = (image: string) => ({ schema_version: 'v1alpha1', engine: CUSTOM, environment: dockerEnv({ image }), cases: { files: ['evals/cases/*.yaml'] } });
    const files = { 'evals/agent.sh': '#!/bin/sh\necho hi\n' };
    const cases = { a: { input: { prompt: 'hi' } } };
    const ok = suite(evalOf(NODE_IMAGE), cases, files);
    const [noDaemon, noImage, noNode, validate] = await Promise.all([
      run(ok, [], 'unix:///nonexistent.sock'),
      run(suite(evalOf('skill-up-test/no-such-image:1'), cases, files)),
      run(suite(evalOf(BUSYBOX_IMAGE), cases, files)),
      runCli(['validate', ok], { env: { DOCKER_HOST: 'unix:///nonexistent.sock' } }),
    ]);
    const oneLine = (r: Run) => {
      expect(r.code, r.stderr).toBe(3);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      // Stopped before the first job: no job folder, no result, nothing ran here.
      expect(existsSync(join(r.out, 'iteration-1', 'a'))).toBe(false);
      expect(r.jobs).toEqual([]);
      return lines[0]!;
    };
    expect(oneLine(noDaemon)).toMatch(/cannot reach the Docker daemon at unix:\/\/\/nonexistent\.sock/);
    expect(oneLine(noImage)).toMatch(/image `skill-up-test\/no-such-image:1` is not on the daemon/);
    expect(oneLine(noNode)).toMatch(new RegExp(`image \`${BUSYBOX_IMAGE.replace(/[/.]/g, '\\$&')}\` has no \`node\` on its PATH`));
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout + validate.stderr).toMatch(/is valid/);
  });

  describe('4. limits', () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((_q, s) => s.end('hello-from-host'));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('memory: a hog is killed, the job is an error naming the memory limit; pids_limit: forks past it fail', async () => {
      const evalOf = (environment: object) => ({ schema_version: 'v1alpha1', engine: CUSTOM, environment, cases: { files: ['evals/cases/*.yaml'] } });
      // Buffers live outside V8's heap: the kernel's OOM killer, not V8's heap limit, stops this.
      const hog = '#!/bin/sh\nexec node -e "const a = []; for (;;) a.push(Buffer.alloc(4 << 20, 1))"\n';
      const forks = [
        '#!/bin/sh',
        `node -e "`,
        "const { spawn } = require('node:child_process'); let ok = 0, failed = 0, n = 0; const kids = [];",
        "const done = () => { if (++n === 60) { console.log('spawned=' + ok); console.log('failed=' + failed); for (const k of kids) k.kill(); } };",
        "for (let i = 0; i < 60; i++) { const k = spawn('sleep', ['5']); kids.push(k); k.once('spawn', () => { ok++; done(); }); k.once('error', () => { failed++; done(); }); }",
        '"',
      ].join('\n');
      const cases = { a: { input: { prompt: 'go' } } };
      const forkCases = { a: { input: { prompt: 'go' }, expect: { must_contain: ['spawned='] } } };
      // The hog as the agent's child (a tool's command): the agent lives on and exits 0.
      const childHog = hog.replace('exec node', 'node') + 'echo survived\n';
      const [mem, memChild, pids, pidsLocal] = await Promise.all([
        run(suite(evalOf(dockerEnv({ memory: '64m' })), cases, { 'evals/agent.sh': hog })),
        run(suite(evalOf(dockerEnv({ memory: '64m' })), cases, { 'evals/agent.sh': childHog })),
        run(suite(evalOf(dockerEnv({ pids_limit: 32 })), forkCases, { 'evals/agent.sh': forks })),
        run(suite(evalOf({ type: 'none' }), forkCases, { 'evals/agent.sh': forks })),
      ]);
      const m = jobOf(mem, 'a/with_skill/run-1');
      expect(m.status, m.reason).toBe('error');
      expect(m.reason).toMatch(/killed for the memory limit \(environment\.memory: 64 MB\)/);
      const c = jobOf(memChild, 'a/with_skill/run-1');
      expect(c.final_message).toContain('survived');
      // The agent lived on and exited 0, but the limit broke the job: an error, never a pass or fail.
      expect(c.status, c.reason).toBe('error');
      expect(c.reason).toMatch(/killed for the memory limit \(environment\.memory: 64 MB\)/);
      const p = said(jobOf(pids, 'a/with_skill/run-1'));
      expect(Number(p.failed), JSON.stringify(p)).toBeGreaterThan(0);
      expect(Number(p.spawned)).toBeLessThan(32);
      const l = said(jobOf(pidsLocal, 'a/with_skill/run-1'));
      expect([l.spawned, l.failed], 'no such limit on this machine').toEqual(['60', '0']);
      for (const r of [mem, memChild, pids]) expect(await containersOf(HOST!, r.pid)).toEqual([]);
    });

    it("network none cannot reach a server on this machine's 127.0.0.1; network host can", async () => {
      const agent = `#!/bin/sh\nnode -e "fetch('http://127.0.0.1:${port}/').then((r) => r.text()).then((t) => console.log('got=' + t), (e) => console.log('error=' + (e.cause?.code ?? e.message)))"\n`;
      const evalOf = (network: string) => ({ schema_version: 'v1alpha1', engine: CUSTOM, environment: dockerEnv({ network }), cases: { files: ['evals/cases/*.yaml'] } });
      const cases = { a: { input: { prompt: 'go' }, expect: { must_contain: ['hello-from-host'] } } };
      const [none, host] = await Promise.all([run(suite(evalOf('none'), cases, { 'evals/agent.sh': agent })), run(suite(evalOf('host'), cases, { 'evals/agent.sh': agent }))]);
      const n = jobOf(none, 'a/with_skill/run-1');
      expect(said(n).error, n.final_message).toBe('ECONNREFUSED');
      expect(n.status).toBe('fail');
      const h = jobOf(host, 'a/with_skill/run-1');
      expect(said(h).got, h.final_message).toBe('hello-from-host');
      expect(h.status).toBe('pass');
    });
  });

  it('5. SIGINT while the agent sleeps: exit 130 and no container of the run is left', async () => {
    const skill = suite({ schema_version: 'v1alpha1', engine: CUSTOM, environment: dockerEnv(), cases: { files: ['evals/cases/*.yaml'], parallelism: 2 } }, { a: { input: { prompt: 'sleep' } }, b: { input: { prompt: 'sleep' } } }, { 'evals/agent.sh': '#!/bin/sh\necho started > started.txt\nsleep 300\n' });
    let seen: string[] = [];
    const r = await run(skill, [], HOST, (child) => {
      // Once both jobs' containers run (and their agents had a moment to start), Ctrl-C.
      const poll = async () => {
        const list = await dockerAt(HOST!).listContainers({ filters: { label: [`skill-up.pid=${child.pid}`] } });
        if (list.length >= 2) {
          seen = list.map((c) => c.Id);
          setTimeout(() => child.kill('SIGINT'), 1000);
        } else setTimeout(() => void poll(), 100);
      };
      void poll();
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(130);
    expect(seen).toHaveLength(2);
    expect(await containersOf(HOST!, r.pid)).toEqual([]);
  }, 60_000);

  it('8. user "1000:1000": the workspace is given to that user, and Claude Code (its package mounted under /opt/skill-up/) runs and passes', async () => {
    const model = ['rules:', '  - when: { prompt_contains: notes }', '    reply:', '      - write_file: { path: notes.md, content: "# Notes\\n" }', '      - say: "Created notes.md"', ''].join('\n');
    const cases = { notes: { input: { prompt: 'Create notes.md with a Notes heading.' }, expect: { files_exist: ['notes.md'] } } };
    const evalDoc = { schema_version: 'v1alpha1', engine: { name: 'claude_code', model: { provider: 'scripted', script: 'evals/model.yaml' } }, environment: dockerEnv({ user: '1000:1000' }), cases: { files: ['evals/cases/*.yaml'] } };
    const r = await run(suite(evalDoc, cases, { 'evals/model.yaml': model }), ['--keep-workspaces']);
    const j = jobOf(r, 'notes/with_skill/run-1') as Job & { workspace?: string };
    expect(j.status, `${j.reason ?? ''}\n${r.stderr.slice(-2000)}`).toBe('pass');
    // The agent wrote as that user, into the workspace it was given.
    const ws = (JSON.parse(readFileSync(join(r.out, 'iteration-1', 'result.json'), 'utf8')) as { jobs: { workspace?: string }[] }).jobs[0]!.workspace!;
    expect(statSync(join(ws, 'notes.md')).uid).toBe(1000);
    expect(await containersOf(HOST!, r.pid)).toEqual([]);
  });

  it('9. an image without the bash Claude Code\'s shell tool needs: exit 3 before any job, naming bash and the engine', async () => {
    // The test image without /usr/bin/bash, made here with a container commit.
    const docker = dockerAt(HOST!);
    const c = await docker.createContainer({ Image: NODE_IMAGE, Entrypoint: ['/bin/sh', '-c', 'rm -f /usr/bin/bash'], HostConfig: { NetworkMode: 'none' } });
    await c.start();
    await c.wait();
    await c.commit({ repo: 'skill-up-test/node-nobash', tag: 'latest' });
    await c.remove({ force: true });
    const evalDoc = { schema_version: 'v1alpha1', engine: { name: 'claude_code', model: { provider: 'scripted', script: 'evals/model.yaml' } }, environment: dockerEnv({ image: 'skill-up-test/node-nobash:latest' }), cases: { files: ['evals/cases/*.yaml'] } };
    const r = await run(suite(evalDoc, { a: { input: { prompt: 'hi' } } }, { 'evals/model.yaml': 'rules:\n  - reply:\n      - say: hi\n' }));
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/has no `bash` \(claude_code\) on its PATH/);
    expect(r.jobs).toEqual([]);
  });

  it('6. workdir: /workspace: the agent works there and what it writes is in the job workspace (files_exist, collected artifacts)', async () => {
    const skill = suite(
      { schema_version: 'v1alpha1', engine: CUSTOM, environment: dockerEnv({ workdir: '/workspace' }), cases: { files: ['evals/cases/*.yaml'] } },
      { a: { input: { prompt: 'write' }, expect: { files_exist: ['made-here.txt'] }, collect_artifacts: ['where.txt', 'made-here.txt'] } },
      { 'evals/agent.sh': '#!/bin/sh\npwd > where.txt\necho made > /workspace/made-here.txt\necho "pwd=$(pwd)"\n' },
    );
    const r = await run(skill);
    const j = jobOf(r, 'a/with_skill/run-1');
    expect(j.status, j.reason).toBe('pass');
    expect(said(j).pwd).toBe('/workspace');
    const collected = join(r.out, 'iteration-1', j.output_dir, 'outputs', 'workspace');
    expect(readFileSync(join(collected, 'where.txt'), 'utf8')).toBe('/workspace\n');
    expect(readFileSync(join(collected, 'made-here.txt'), 'utf8')).toBe('made\n');
    expect(await containersOf(HOST!, r.pid)).toEqual([]);
  });
});

describe.skipIf(!PODMAN)(`skill-up run with environment.type: docker on Podman's API service${PODMAN ? '' : ' (skipped: SKILL_UP_TEST_PODMAN_HOST is unset; scripts/docker/start-podman.sh)'}`, () => {
  it('7. test 1 against Podman: the custom agent in a container, the verdicts of type: none, no container left', async () => {
    await customAgentInContainer(PODMAN!);
  });
});
