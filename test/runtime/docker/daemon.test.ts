/**
 * src/runtime/docker/daemon.ts: DOCKER_HOST parsing and the unreachable-daemon message need no
 * daemon; the rest runs against the real one named by DOCKER_HOST (dockerd from
 * scripts/docker/start-dockerd.sh; .ci/run sets it) with the images of
 * scripts/docker/build-test-image.sh (SKILL_UP_TEST_NODE_IMAGE, SKILL_UP_TEST_BUSYBOX_IMAGE).
 */
import path from 'node:path';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { connectDocker, dockerEndpoint, DockerUnavailable, imageNodeVersion, inspectImage, type DockerConnection } from '../../../src/runtime/docker/daemon.js';

const NODE_IMAGE = process.env.SKILL_UP_TEST_NODE_IMAGE ?? `skill-up-test/node:${process.versions.node.split('.')[0] ?? ''}`;
const BUSYBOX_IMAGE = process.env.SKILL_UP_TEST_BUSYBOX_IMAGE ?? 'skill-up-test/busybox:latest';
const IMAGE_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin';

describe('dockerEndpoint', () => {
  it('unset or empty: the default socket; unix:// paths; tcp with and without TLS, default ports', () => {
    expect(dockerEndpoint({})).toEqual({ kind: 'unix', socketPath: '/var/run/docker.sock' });
    expect(dockerEndpoint({ DOCKER_HOST: '' })).toEqual({ kind: 'unix', socketPath: '/var/run/docker.sock' });
    expect(dockerEndpoint({ DOCKER_HOST: 'unix:///tmp/x/docker.sock' })).toEqual({ kind: 'unix', socketPath: '/tmp/x/docker.sock' });
    expect(dockerEndpoint({ DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toEqual({ kind: 'tcp', host: '10.0.0.5', port: 2375, tls: false });
    expect(dockerEndpoint({ DOCKER_HOST: 'tcp://docker.example' })).toEqual({ kind: 'tcp', host: 'docker.example', port: 2375, tls: false });
    expect(dockerEndpoint({ DOCKER_HOST: 'tcp://docker.example', DOCKER_TLS_VERIFY: '1' })).toEqual({ kind: 'tcp', host: 'docker.example', port: 2376, tls: true });
    expect(dockerEndpoint({ DOCKER_HOST: 'tcp://h:1234', DOCKER_TLS_VERIFY: '0' })).toEqual({ kind: 'tcp', host: 'h', port: 1234, tls: false });
    expect(dockerEndpoint({ DOCKER_HOST: 'tcp://[::1]:2375' })).toEqual({ kind: 'tcp', host: '::1', port: 2375, tls: false });
  });

  it('other forms are a DockerUnavailable naming the value', () => {
    expect(() => dockerEndpoint({ DOCKER_HOST: 'ssh://me@box' })).toThrow(new DockerUnavailable('DOCKER_HOST=ssh://me@box is not usable: skill-up does not support ssh:// addresses (use unix:///path/to/docker.sock or tcp://host:port)'));
    expect(() => dockerEndpoint({ DOCKER_HOST: '/var/run/docker.sock' })).toThrow(/DOCKER_HOST=\/var\/run\/docker.sock is not usable: no scheme/);
    expect(() => dockerEndpoint({ DOCKER_HOST: 'unix://relative.sock' })).toThrow(/must be absolute/);
  });
});

describe('connectDocker without a daemon', () => {
  it('a socket that does not exist: one line saying where and what to do', async () => {
    const sock = path.join(os.tmpdir(), 'no-such-dir', 'docker.sock');
    const e = await connectDocker({ DOCKER_HOST: `unix://${sock}` }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DockerUnavailable);
    expect((e as Error).message).toBe(`cannot reach the Docker daemon at unix://${sock}: connect ENOENT (start dockerd, or set DOCKER_HOST)`);
  });

  it('TLS without certificates says which folder it read', async () => {
    const dir = path.join(os.tmpdir(), 'no-certs');
    await expect(connectDocker({ DOCKER_HOST: 'tcp://127.0.0.1:1', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: dir })).rejects.toThrow(`from ${dir}`);
  });
});

const host = process.env.DOCKER_HOST;
describe.skipIf(!host)(host ? `daemon.ts against ${host}` : 'daemon.ts against a daemon (skipped: DOCKER_HOST is not set; .ci/run starts dockerd with scripts/docker/start-dockerd.sh)', () => {
  let conn: DockerConnection;
  it('connectDocker: pings, names the engine and its version', async () => {
    conn = await connectDocker(process.env);
    expect(conn.endpoint).toBe(host);
    expect(conn.engine).toBe(process.env.DOCKER_HOST?.includes('podman') ? 'podman' : 'docker'); // start-podman.sh's socket is podman.sock
    expect(conn.version).toMatch(/^\d+\.\d+/);
  });

  it('inspectImage: the image config and PATH; a missing image is a DockerUnavailable with the fix', async () => {
    const info = await inspectImage(conn.docker, NODE_IMAGE, conn.endpoint);
    expect(info.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(info.path).toBe(IMAGE_PATH);
    expect(info.env.PATH).toBe(IMAGE_PATH);
    expect(info.user).toBeUndefined();
    const e = await inspectImage(conn.docker, 'skill-up-test/nope:1', conn.endpoint).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DockerUnavailable);
    expect((e as Error).message).toBe(`image \`skill-up-test/nope:1\` is not on the daemon at ${host}: docker pull skill-up-test/nope:1 (or docker load / docker import)`);
  });

  it("imageNodeVersion: the image's node; an image without node says what it lacks; no container is left", async () => {
    expect(await imageNodeVersion(conn.docker, NODE_IMAGE, IMAGE_PATH)).toBe(process.version);
    const e = await imageNodeVersion(conn.docker, BUSYBOX_IMAGE, IMAGE_PATH).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DockerUnavailable);
    expect((e as Error).message).toBe(`image \`${BUSYBOX_IMAGE}\` has no \`node\` on its PATH (${IMAGE_PATH}): skill-up runs engine CLIs on the image's Node; use an image with Node 20+`);
    const left = await conn.docker.listContainers({ all: true, filters: { label: [`skill-up.probe=node-version`, `skill-up.pid=${process.pid}`] } });
    expect(left).toEqual([]);
  });
});
