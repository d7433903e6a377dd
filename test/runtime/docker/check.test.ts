/**
 * `skill-up engines check --runtime docker --image <image>` (src/runtime/docker/check.ts): the
 * daemon, the image and its Node, then each engine's `--version` inside a container of the
 * image. Needs a daemon (DOCKER_HOST, which .ci/run sets) for the checks that reach one.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/helpers.js';

const NODE_IMAGE = process.env.SKILL_UP_TEST_NODE_IMAGE ?? 'skill-up-test/node:20';
const BUSYBOX_IMAGE = process.env.SKILL_UP_TEST_BUSYBOX_IMAGE ?? 'skill-up-test/busybox:latest';

describe('engines check --runtime docker: usage and no daemon', () => {
  it('refuses a runtime it does not know and a missing --image (exit 2)', async () => {
    const r = await runCli(['engines', 'check', 'claude_code', '--runtime', 'podmn']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown runtime "podmn"/);
    const noImage = await runCli(['engines', 'check', 'claude_code', '--runtime', 'docker']);
    expect(noImage.code).toBe(2);
    expect(noImage.stderr).toMatch(/needs `--image <image>`/);
  });

  it('a daemon that is not there is one line and exit 3', async () => {
    const r = await runCli(['engines', 'check', 'claude_code', '--runtime', 'docker', '--image', NODE_IMAGE], { env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' } });
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toEqual(['skill-up engines check: cannot reach the Docker daemon at unix:///nonexistent/docker.sock: connect ENOENT (start dockerd, or set DOCKER_HOST)']);
  });
});

describe.skipIf(!process.env.DOCKER_HOST)(`engines check --runtime docker against the daemon${process.env.DOCKER_HOST ? '' : ' (skipped: DOCKER_HOST is not set; .ci/run starts a daemon)'}`, () => {
  it('runs the engine inside the image: ok with its version', async () => {
    const r = await runCli(['engines', 'check', 'claude_code', '--runtime', 'docker', '--image', NODE_IMAGE]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^docker: ok \\S+ \\S+ at unix://\\S+; image ${NODE_IMAGE.replace(/[/.]/g, '\\$&')}: node v\\d+`));
    expect(r.stdout).toMatch(/claude_code: ok \d+\.\d+\.\d+ \(Claude Code\) in .*mounted read-only/);
  });

  it('an image without node, and an image that is not there, are exit 3 naming the image', async () => {
    const busybox = await runCli(['engines', 'check', 'claude_code', '--runtime', 'docker', '--image', BUSYBOX_IMAGE]);
    expect(busybox.code).toBe(3);
    expect(busybox.stderr).toMatch(/has no `node` on its PATH/);
    const missing = await runCli(['engines', 'check', 'claude_code', '--runtime', 'docker', '--image', 'skill-up-test/not-there:1']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/image `skill-up-test\/not-there:1` is not on the daemon/);
  });
});
