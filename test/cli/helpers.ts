import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the built CLI, the file the `skill-up` command runs (npm test builds before vitest runs). */
export const BIN = fileURLToPath(new URL('../../dist/src/cli/skill-up.cjs', import.meta.url));

/** The `skill-up` command package.json names: the POSIX sh launcher that runs {@link BIN}. */
export const LAUNCHER = fileURLToPath(new URL('../../bin/skill-up', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI; `onStderr` sees stderr as it arrives (for interrupt tests). `bin`: a
 * JavaScript file run with this Node (default {@link BIN}), or an executable run as it is (the
 * launcher, an installed `skill-up`). A variable set to undefined in `env` is removed.
 */
export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined>; bin?: string; onStderr?: (text: string, child: ReturnType<typeof spawn>) => void } = {}): Promise<CliRun> {
  return new Promise((res) => {
    const bin = opts.bin ?? BIN;
    const [command, argv] = /\.[cm]?js$/.test(bin) ? [process.execPath, [bin, ...args]] : [bin, args];
    const env: NodeJS.ProcessEnv = { ...process.env, CI: '1', ...opts.env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    const child = spawn(command, argv, { cwd: opts.cwd ?? process.cwd(), env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      opts.onStderr?.(stderr, child);
    });
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Writes a skill folder from a map of relative path → content (`.sh` files made executable). */
export function writeSkill(files: Record<string, string>, name = 'demo-skill'): string {
  const root = mkdtempSync(join(tmpdir(), 'su-cli-'));
  const dir = join(root, name);
  const all = { 'SKILL.md': `---\nname: ${name}\ndescription: A skill used by skill-up's own tests.\n---\n\n# Demo\n`, ...files };
  for (const [rel, content] of Object.entries(all)) {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    if (rel.endsWith('.sh')) chmodSync(p, 0o755);
  }
  return dir;
}

/** The test CA and a server certificate it signed for 127.0.0.1 and localhost (test/fixtures/tls/README.md). */
export const TLS_FIXTURES = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));

/** An HTTPS server on 127.0.0.1 with the test certificate, answering with `handler`; `url` ends in `/`. */
export async function serveHttps(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer({ key: readFileSync(join(TLS_FIXTURES, 'server-key.pem')), cert: readFileSync(join(TLS_FIXTURES, 'server.pem')) }, handler);
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((res) => {
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
}
