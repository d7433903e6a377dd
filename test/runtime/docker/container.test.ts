/**
 * src/runtime/docker/container.ts against the real daemon named by DOCKER_HOST (dockerd from
 * scripts/docker/start-dockerd.sh: no bridge, networks `none` and `host`; .ci/run sets it) with
 * the test images of scripts/docker/build-test-image.sh. `run` is held to runProcess's contract
 * (test/engine/proc.test.ts): files, counts, the cap, stdin, timeouts, cancels, start errors.
 * Containers made here carry this file's run id and are all removed afterwards.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type Dockerode from 'dockerode';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProcOptions } from '../../../src/engine/proc.js';
import { isTransient, LABELS, removeOrphanContainers, removeRunContainers, setStartConcurrency, startJobContainer, DEFAULT_START_CONCURRENCY, type ContainerSpec, type JobContainer } from '../../../src/runtime/docker/container.js';
import { connectDocker } from '../../../src/runtime/docker/daemon.js';

const NODE_IMAGE = process.env.SKILL_UP_TEST_NODE_IMAGE ?? `skill-up-test/node:${process.versions.node.split('.')[0] ?? ''}`;
const IMAGE_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin';
const runId = `container-test-${process.pid}-${Date.now()}`;
const host = process.env.DOCKER_HOST;

describe('isTransient', () => {
  it("retries 5xx, reset and hung-up connections, 'already in progress'; not 4xx or a 500 that names the request's fault", () => {
    expect(isTransient({ statusCode: 500, json: { message: 'context deadline exceeded' } })).toBe(true);
    expect(isTransient({ statusCode: 503, message: 'x' })).toBe(true);
    expect(isTransient({ code: 'ECONNRESET', message: 'read ECONNRESET' })).toBe(true);
    expect(isTransient(new Error('socket hang up'))).toBe(true);
    expect(isTransient({ statusCode: 409, json: { message: 'removal of container x is already in progress' } })).toBe(true);
    expect(isTransient({ statusCode: 404, json: { message: 'No such image: x' } })).toBe(false);
    expect(isTransient({ statusCode: 400, json: { message: 'invalid mount config' } })).toBe(false);
    expect(isTransient({ statusCode: 500, json: { message: 'plugin type="bridge" failed (add): failed to find plugin "bridge"' } })).toBe(false);
  });
});

describe('startJobContainer without a daemon (a stand-in dockerode)', () => {
  const base: ContainerSpec = { image: 'img', runId: 'r', jobId: 'j', binds: [], network: 'none', path: '/bin' };
  /** A dockerode stand-in: createContainer takes 30 ms and fails with `failures` (in order) first. */
  function fake(failures: unknown[] = []) {
    const seen = { inFlight: 0, most: 0, creates: [] as string[], removed: [] as string[] };
    const docker = {
      async createContainer(o: { name: string }) {
        seen.creates.push(o.name);
        seen.inFlight++;
        seen.most = Math.max(seen.most, seen.inFlight);
        await new Promise((r) => setTimeout(r, 30));
        seen.inFlight--;
        const f = failures.shift();
        if (f) throw Object.assign(new Error('daemon error'), f);
        return { id: `id-${o.name}`, start: async () => undefined, remove: async () => void seen.removed.push(o.name) };
      },
      getContainer: (name: string) => ({ remove: async () => void seen.removed.push(name) }),
    };
    return { docker: docker as unknown as Dockerode, seen };
  }

  it('at most the concurrency limit at once (default 4)', async () => {
    expect(DEFAULT_START_CONCURRENCY).toBe(4);
    const { docker, seen } = fake();
    setStartConcurrency(2);
    try {
      await Promise.all([1, 2, 3, 4, 5].map((i) => startJobContainer(docker, { ...base, jobId: `j${i}` })));
    } finally {
      setStartConcurrency(DEFAULT_START_CONCURRENCY);
    }
    expect(seen.creates).toHaveLength(5);
    expect(seen.most).toBe(2);
  });

  it("retries the daemon's transient errors with a new name, removing the half-made one; gives up after 3 tries or at once on a lasting error", async () => {
    const transient = { statusCode: 500, json: { message: 'context deadline exceeded' } };
    const ok = fake([transient, { code: 'ECONNRESET', message: 'read ECONNRESET' }]);
    const c = await startJobContainer(ok.docker, base);
    expect(ok.seen.creates).toHaveLength(3);
    expect(new Set(ok.seen.creates).size).toBe(3);
    expect(ok.seen.removed).toEqual(ok.seen.creates.slice(0, 2));
    expect(c.id).toBe(`id-${ok.seen.creates[2]}`);
    const never = fake([transient, transient, transient]);
    await expect(startJobContainer(never.docker, base)).rejects.toThrow('cannot start a container of image img for job j: context deadline exceeded');
    expect(never.seen.creates).toHaveLength(3);
    const lasting = fake([{ statusCode: 404, json: { message: 'No such image: img' } }]);
    await expect(startJobContainer(lasting.docker, base)).rejects.toThrow('cannot start a container of image img for job j: No such image: img');
    expect(lasting.seen.creates).toHaveLength(1);
    const ac = new AbortController();
    ac.abort();
    await expect(startJobContainer(fake().docker, base, ac.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe.skipIf(!host)(host ? `job containers on ${host}` : 'job containers (skipped: DOCKER_HOST is not set; .ci/run starts dockerd with scripts/docker/start-dockerd.sh)', () => {
  let docker: Dockerode;
  let dir: string;
  /** One long-lived container for the tests that leave it running (a start costs 200-300 ms). */
  let box: JobContainer;
  const saved = process.env.SKILL_UP_MAX_OUTPUT_BYTES;
  const spec = (o: Partial<ContainerSpec> = {}): ContainerSpec => ({ image: NODE_IMAGE, runId, jobId: 'case/1 with spaces', binds: [{ host: dir, container: '/out', readOnly: false }], network: 'none', path: IMAGE_PATH, ...o });
  const opts = (o: Partial<ProcOptions> = {}): ProcOptions => ({ cwd: '/', env: { PATH: process.env.PATH }, stdoutFile: path.join(dir, 'out.txt'), stderrFile: path.join(dir, 'err.txt'), timeoutMs: 20_000, ...o });
  const out = () => readFileSync(path.join(dir, 'out.txt'), 'utf8');
  const err = () => readFileSync(path.join(dir, 'err.txt'), 'utf8');

  beforeAll(async () => {
    docker = (await connectDocker(process.env)).docker;
    dir = mkdtempSync(path.join(os.tmpdir(), 'su-docker-'));
    box = await startJobContainer(docker, spec());
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.SKILL_UP_MAX_OUTPUT_BYTES;
    else process.env.SKILL_UP_MAX_OUTPUT_BYTES = saved;
  });
  afterAll(async () => {
    if (docker) await removeRunContainers(docker, runId);
  });

  it('labels and name; PID 1 idles; the cwd, the given env with the image PATH, stdin text then EOF', async () => {
    const info = await docker.getContainer(box.id).inspect();
    expect(info.Name).toMatch(/^\/skill-up-case-1-with-spaces-[0-9a-f]{8}$/);
    expect(info.Config.Labels).toMatchObject({ [LABELS.run]: runId, [LABELS.job]: 'case/1 with spaces', [LABELS.pid]: String(process.pid), [LABELS.host]: os.hostname() });
    expect(info.State.Running).toBe(true);
    process.env.SU_DOCKER_LEAK = 'from-skill-up';
    const script = 'pwd; echo "FOO=$FOO LEAK=${SU_DOCKER_LEAK:-none} PATH=$PATH"; cat; echo "[eof]"';
    const r = await box.run('/bin/sh', ['-c', script], opts({ cwd: '/tmp', env: { PATH: '/host/only', FOO: 'bar', GONE: undefined }, input: 'line one\nline two' }));
    delete process.env.SU_DOCKER_LEAK;
    expect(r).toEqual({ exitCode: 0, signal: undefined, timedOut: false, cancelled: false, durationMs: expect.any(Number), stdoutBytes: Buffer.byteLength(out()), stderrBytes: 0 });
    expect(out()).toBe(`/tmp\nFOO=bar LEAK=none PATH=${IMAGE_PATH}\nline one\nline two[eof]\n`);
  });

  it('no input: stdin is empty, never left open', async () => {
    const r = await box.run('/bin/sh', ['-c', 'cat; echo "[eof]"'], opts());
    expect(r.exitCode).toBe(0);
    expect(out()).toBe('[eof]\n');
  });

  it('exit codes; stdout and stderr into their own host files, counted', async () => {
    const r = await box.run('/bin/sh', ['-c', 'echo to-out; echo to-err >&2; exit 3'], opts());
    expect(r).toMatchObject({ exitCode: 3, timedOut: false, cancelled: false, stdoutBytes: 7, stderrBytes: 7 });
    expect([out(), err()]).toEqual(['to-out\n', 'to-err\n']);
    expect((await box.run('/bin/sh', ['-c', 'exit 127'], opts())).exitCode).toBe(127); // the process's own 127 is no start error
  });

  it('the cap: each file keeps SKILL_UP_MAX_OUTPUT_BYTES, the counts are whole, stderr says where it was cut', async () => {
    process.env.SKILL_UP_MAX_OUTPUT_BYTES = String(64 * 1024);
    const r = await box.run('node', ['-e', 'process.stdout.write("o".repeat(300000)); process.stderr.write("e".repeat(200000))'], opts());
    expect(r).toMatchObject({ exitCode: 0, stdoutBytes: 300000, stderrBytes: 200000, stdoutTruncated: true, stderrTruncated: true });
    expect(out()).toBe('o'.repeat(65536));
    expect(err()).toBe(`${'e'.repeat(65536)}\n[skill-up: cut here at 65536 bytes; the process wrote more, which was drained and counted]\n`);
  });

  it('a missing or non-executable file is a startError in runProcess words, never a throw', async () => {
    const r = await box.run('no-such-agent', ['--x'], opts());
    expect(r).toMatchObject({ exitCode: null, timedOut: false, cancelled: false, startErrorCode: 'ENOENT' });
    expect(r.startError).toMatch(/^command not found: no-such-agent \(/);
    const abs = await box.run('/opt/none/agent', [], opts());
    expect(abs.startError).toMatch(/^command not found: \/opt\/none\/agent/);
    const notExec = await box.run('/etc/passwd', [], opts());
    expect(notExec).toMatchObject({ exitCode: null, startErrorCode: 'EACCES', startError: 'permission denied: /etc/passwd is not executable in the container (chmod +x /etc/passwd)' });
    const badCwd = await box.run('true', [], opts({ cwd: '/no/such/dir' }));
    expect(badCwd.startError).toBe('cannot start true: the working folder /no/such/dir does not exist in the container');
  });

  it('a background child holding stdout does not hold the run: its pipes are let go shortly after the exit', async () => {
    const r = await box.run('/bin/sh', ['-c', 'sleep 30 & echo hi'], opts());
    expect(r).toMatchObject({ exitCode: 0, stdoutBytes: 3 });
    expect(r.durationMs).toBeLessThan(10_000);
  });

  it('an abort before the start runs nothing', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await box.run('/bin/sh', ['-c', 'echo ran > /out/ran'], opts({ signal: ac.signal }))).toEqual({ exitCode: null, timedOut: false, cancelled: true, durationMs: 0, stdoutBytes: 0, stderrBytes: 0 });
  });

  it('network none: loopback only; a bind mounted read-only refuses writes, a read-write one shows them on the host', async () => {
    writeFileSync(path.join(dir, 'ro.txt'), 'host\n');
    const c = await startJobContainer(docker, spec({ binds: [{ host: dir, container: '/out', readOnly: false }, { host: dir, container: '/ro', readOnly: true }] }));
    const r = await c.run('/bin/sh', ['-c', 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; cat /ro/ro.txt; echo x > /ro/new.txt || echo refused; echo w > /out/rw.txt'], opts());
    expect(r.exitCode).toBe(0);
    expect(out()).toBe('lo\nhost\nrefused\n');
    expect(err()).toMatch(/Read-only file system/);
    expect(readFileSync(path.join(dir, 'rw.txt'), 'utf8')).toBe('w\n');
    expect(await c.remove()).toBeUndefined();
    expect(await c.remove(), 'idempotent').toBeUndefined();
    await expect(docker.getContainer(c.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  it("network host reaches a server on the host's 127.0.0.1; the user is spec.user", async () => {
    const server: Server = createServer((_q, s) => s.end('hello from the host'));
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    const port = (server.address() as { port: number }).port;
    try {
      const c = await startJobContainer(docker, spec({ network: 'host', user: '1000:1000', binds: [] }));
      const r = await c.run('node', ['-e', `fetch("http://127.0.0.1:${port}/").then(r => r.text()).then(t => console.log(t, process.getuid()))`], opts({ cwd: '/tmp' }));
      expect(r.exitCode).toBe(0);
      expect(out()).toBe('hello from the host 1000\n');
      const none = await box.run('node', ['-e', `fetch("http://127.0.0.1:${port}/").catch(e => console.log(e.cause.code))`], opts());
      expect(none.exitCode).toBe(0);
      expect(out()).toBe('ECONNREFUSED\n');
      await c.remove();
    } finally {
      server.close();
    }
  });

  it('a timeout kills the whole container: timedOut, no exit code; later runs say the container is gone', async () => {
    const c = await startJobContainer(docker, spec({ binds: [] }));
    const t = performance.now();
    const r = await c.run('/bin/sh', ['-c', 'echo started; sleep 30'], opts({ timeoutMs: 500 }));
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true, cancelled: false, stdoutBytes: 8 });
    expect(performance.now() - t).toBeLessThan(10_000);
    expect((await docker.getContainer(c.id).inspect()).State.Running).toBe(false);
    const after = await c.run('true', [], opts());
    expect(after.startError).toMatch(/^cannot start true: the job's container case\/1 with spaces no longer runs/);
    await c.remove();
  });

  it('an abort while running kills the container: cancelled', async () => {
    const c = await startJobContainer(docker, spec({ binds: [] }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 400);
    const r = await c.run('sleep', ['30'], opts({ signal: ac.signal }));
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: true });
    expect(r.durationMs).toBeLessThan(10_000);
    await c.remove();
  });

  it('a memory hog under memoryBytes is killed by the OOM killer, and oomKilled says so', async () => {
    const c = await startJobContainer(docker, spec({ memoryBytes: 64 * 1024 * 1024, binds: [] }));
    expect(await c.oomKilled()).toBe(false);
    const r = await c.run('node', ['-e', 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))'], opts());
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: false });
    expect(await c.oomKilled()).toBe(true);
    expect(await box.oomKilled(), 'another container').toBe(false);
    await c.remove();
  });

  it('pidsLimit bounds the processes: forks beyond it fail', async () => {
    const c = await startJobContainer(docker, spec({ pidsLimit: 20, binds: [] }));
    // ash gives up (exit 2, "can't fork") at the first fork the limit refuses.
    const script = 'read m < /sys/fs/cgroup/pids/pids.max || read m < /sys/fs/cgroup/pids.max; echo "$m"; i=0; while [ $i -lt 40 ]; do sleep 5 >/dev/null 2>&1 & i=$((i+1)); echo $i; done';
    const r = await c.run('/bin/sh', ['-c', script], opts());
    const [max, ...started] = out().trim().split('\n');
    expect(max).toBe('20');
    expect(started.length).toBeGreaterThan(5);
    expect(started.length).toBeLessThan(20);
    expect(r.exitCode).toBe(2);
    expect(err()).toMatch(/can't fork|Resource temporarily unavailable/);
    await c.remove();
  });

  it('a container that cannot be made throws the daemon message and leaves nothing behind', async () => {
    const job = `bad-${Date.now()}`;
    await expect(startJobContainer(docker, spec({ jobId: job, image: 'skill-up-test/nope:1' }))).rejects.toThrow(/^cannot start a container of image skill-up-test\/nope:1 for job bad-\d+: .*No such image/i);
    await expect(startJobContainer(docker, spec({ jobId: job, binds: [{ host: path.join(dir, 'missing'), container: '/m', readOnly: true }] }))).rejects.toThrow(`for job ${job}: the bind mount's source ${path.join(dir, 'missing')} does not exist`);
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABELS.job}=${job}`] } })).toEqual([]);
  });

  it("removeOrphanContainers removes a container of a dead skill-up on this host, keeps a live one's; removeRunContainers removes a run's", async () => {
    const gone = spawn('true');
    await new Promise((res) => gone.once('exit', res));
    const live = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const make = async (pid: number) => {
        const c = await docker.createContainer({ Image: NODE_IMAGE, Cmd: ['true'], Labels: { [LABELS.run]: runId, [LABELS.host]: os.hostname(), [LABELS.pid]: String(pid) }, HostConfig: { NetworkMode: 'none' } });
        return c.id;
      };
      const dead = await make(gone.pid!);
      const alive = await make(live.pid!);
      expect(await removeOrphanContainers(docker)).toBe(1);
      await expect(docker.getContainer(dead).inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await docker.getContainer(alive).inspect()).Id).toBe(alive);
      expect((await docker.getContainer(box.id).inspect()).State.Running, "this process's own").toBe(true);
      const mine = await docker.listContainers({ all: true, filters: { label: [`${LABELS.run}=${runId}`] } });
      expect(await removeRunContainers(docker, runId)).toBe(mine.length);
      expect(await docker.listContainers({ all: true, filters: { label: [`${LABELS.run}=${runId}`] } })).toEqual([]);
    } finally {
      live.kill('SIGKILL');
    }
  });
});
