/**
 * The Docker runtime's test infrastructure (issue 14), through dockerode as the runtime will use
 * it: the daemon answers, the test image built by scripts/docker/build-test-image.sh runs the
 * host's own Node, the busybox image has no node, `NetworkMode: 'none'` leaves only loopback and
 * no route, and a bind mount is shared with the host.
 *
 * Daemons: DOCKER_HOST (dockerd from scripts/docker/start-dockerd.sh) and
 * SKILL_UP_TEST_PODMAN_HOST (Podman's API service from scripts/docker/start-podman.sh); .ci/run
 * starts both and sets both. A contributor without them sees these tests skipped, with the reason
 * in the suite's name. Images: SKILL_UP_TEST_NODE_IMAGE (default skill-up-test/node:<node major>)
 * and SKILL_UP_TEST_BUSYBOX_IMAGE (default skill-up-test/busybox:latest).
 *
 * Every container names its network: Podman's compat API would otherwise pick a bridge, which
 * start-podman.sh disables so the host's network is never changed.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const NODE_IMAGE = process.env.SKILL_UP_TEST_NODE_IMAGE ?? `skill-up-test/node:${process.versions.node.split('.')[0] ?? ''}`;
const BUSYBOX_IMAGE = process.env.SKILL_UP_TEST_BUSYBOX_IMAGE ?? 'skill-up-test/busybox:latest';
const RUN_LABEL = 'skill-up.test-run';
const runId = `docker-daemon-${process.pid}-${Date.now()}`;

/** dockerode's connection options for a DOCKER_HOST-style address: unix:///path or tcp://host:port. */
function connect(host: string): Docker {
  const url = new URL(host);
  if (url.protocol === 'unix:') return new Docker({ socketPath: url.pathname });
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
}

interface Output { stdout: string; stderr: string; exitCode: number | null }

/** Runs cmd in a running container through exec (as `user`, "uid[:gid]", when given), stdout and stderr demultiplexed. */
async function exec(container: Docker.Container, cmd: string[], user?: string): Promise<Output> {
  const ex = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, ...(user ? { User: user } : {}) });
  const stream = await ex.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const err = new PassThrough();
  const o: Buffer[] = [];
  const e: Buffer[] = [];
  out.on('data', (d: Buffer) => o.push(d));
  err.on('data', (d: Buffer) => e.push(d));
  container.modem.demuxStream(stream, out, err);
  await new Promise<void>((resolve, reject) => {
    stream.on('end', () => resolve());
    stream.on('error', reject);
  });
  const info = await ex.inspect();
  return { stdout: Buffer.concat(o).toString(), stderr: Buffer.concat(e).toString(), exitCode: info.ExitCode };
}

const daemons: [name: string, host: string | undefined, unset: string][] = [
  ['dockerd', process.env.DOCKER_HOST, 'DOCKER_HOST'],
  ['podman', process.env.SKILL_UP_TEST_PODMAN_HOST, 'SKILL_UP_TEST_PODMAN_HOST'],
];

for (const [name, host, variable] of daemons) {
  const title = host
    ? `Docker test infrastructure on ${name} (${host})`
    : `Docker test infrastructure on ${name} (skipped: ${variable} is not set; .ci/run starts the daemon with scripts/docker/)`;
  describe.skipIf(!host)(title, () => {
    let docker: Docker;
    let tmp: string;
    // One long-lived container per image, each test an exec in it: a container start costs 100-300 ms.
    let nodeBox: Docker.Container;
    let busyBox: Docker.Container;

    beforeAll(async () => {
      docker = connect(host ?? '');
      tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-docker-'));
      await writeFile(path.join(tmp, 'from-host.txt'), 'written on the host\n');
      const start = async (image: string, binds: string[]): Promise<Docker.Container> => {
        const c = await docker.createContainer({
          Image: image,
          Cmd: ['sleep', '120'],
          Labels: { [RUN_LABEL]: runId },
          HostConfig: { NetworkMode: 'none', Binds: binds, Memory: 256 * 1024 * 1024, PidsLimit: 64 },
        });
        await c.start();
        return c;
      };
      nodeBox = await start(NODE_IMAGE, [`${tmp}:/ws:rw`, `${tmp}:/ro:ro`]);
      busyBox = await start(BUSYBOX_IMAGE, []);
    });

    afterAll(async () => {
      // Found by label, as the runtime will find a killed run's leftovers.
      if (docker) {
        const left = await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=${runId}`] } });
        await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true })));
      }
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it('the daemon answers a ping and lists this run\'s two containers by label', async () => {
      expect(String(await docker.ping())).toBe('OK');
      const mine = await docker.listContainers({ filters: { label: [`${RUN_LABEL}=${runId}`] } });
      // Podman names them with the registry it assumed: docker.io/skill-up-test/node:20.
      expect(mine.map((c) => c.Image.replace(/^docker\.io\//, '')).sort()).toEqual([BUSYBOX_IMAGE, NODE_IMAGE].sort());
    });

    it('a missing image is a 404 from getImage().inspect()', async () => {
      await expect(docker.getImage('skill-up-test/no-such-image:0').inspect()).rejects.toMatchObject({ statusCode: 404 });
      await expect(docker.getImage(NODE_IMAGE).inspect()).resolves.toMatchObject({ Config: { Labels: { 'skill-up.test-image.node': process.version } } });
    });

    it('the node image runs the host\'s Node, as root and as uid 1000', async () => {
      const r = await exec(nodeBox, ['node', '-e', 'console.log(process.version); console.error("to stderr"); process.exit(3)']);
      expect(r).toEqual({ stdout: `${process.version}\n`, stderr: 'to stderr\n', exitCode: 3 });
      const agent = await exec(nodeBox, ['/usr/bin/env', 'sh', '-c', 'id -un; cd && pwd && touch ok && node -p "os.userInfo().uid"'], '1000:1000');
      expect(agent).toEqual({ stdout: 'agent\n/home/agent\n1000\n', stderr: '', exitCode: 0 });
    });

    it('the busybox image has a shell but no node', async () => {
      const r = await exec(busyBox, ['sh', '-c', 'command -v node || echo "no node"']);
      expect(r.stdout).toBe('no node\n');
      const direct = await exec(busyBox, ['node', '-v']);
      expect([126, 127]).toContain(direct.exitCode); // dockerd says 126, podman 127
    });

    it('network none has loopback only and no route', async () => {
      const r = await exec(busyBox, ['sh', '-c', 'ls /sys/class/net; echo routes=$(ip route | wc -l)']);
      expect(r.stdout).toBe('lo\nroutes=0\n');
    });

    it('a read-write bind mount is shared with the host, a read-only one refuses writes', async () => {
      const r = await exec(nodeBox, ['sh', '-c', 'cat /ws/from-host.txt && echo from-container > /ws/out.txt && ! echo x 2>/dev/null > /ro/no.txt']);
      expect(r).toMatchObject({ stdout: 'written on the host\n', exitCode: 0 });
      expect(await readFile(path.join(tmp, 'out.txt'), 'utf8')).toBe('from-container\n');
    });
  });
}
