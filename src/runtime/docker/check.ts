/**
 * `skill-up engines check --runtime docker --image <image>` (issue 14): whether a suite with
 * `environment.type: docker` and that image can run, without running one: the daemon answers,
 * the image is there with Node on its PATH, and each engine, resolved on this machine, starts
 * inside a container of the image as a job would start it (its package mounted read-only at
 * the same path, no network) and answers `--version`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageFolders } from '../../engine/cli-engine.js';
import type { EngineCheck } from '../../engine/resolve.js';
import { startJobContainer } from './container.js';
import { connectDocker, imageMissingCommands, imageNodeVersion, inspectImage } from './daemon.js';
import { findEngineDefinition } from '../../../engines/index.js';

/** The daemon part of the check: ok with what answered, or the one-line reason. */
export type DaemonCheck =
  | { ok: true; endpoint: string; engine: 'docker' | 'podman'; version: string; nodeVersion: string }
  | { ok: false; message: string };

/** The check's result: the daemon and image, then each engine inside (engines: empty when the daemon part failed). */
export interface DockerCheck {
  image: string;
  daemon: DaemonCheck;
  engines: EngineCheck[];
}

/** Milliseconds an engine's `--version` may take inside. */
const VERSION_TIMEOUT_MS = 60_000;

/**
 * Checks `image` on the daemon of `env` and runs each of `engines` (already resolved here by
 * src/engine/resolve.ts `checkEngine`; a failed one stays failed) with `--version` inside a
 * throwaway container of it. Never throws: problems are in the result.
 */
export async function checkEnginesInImage(image: string, engines: EngineCheck[], env: Record<string, string | undefined>): Promise<DockerCheck> {
  let conn;
  let nodeVersion: string;
  let path: string;
  try {
    conn = await connectDocker(env);
    path = (await inspectImage(conn.docker, image, conn.endpoint)).path;
    nodeVersion = await imageNodeVersion(conn.docker, image, path);
  } catch (e) {
    return { image, daemon: { ok: false, message: (e as Error).message }, engines: [] };
  }
  const out: EngineCheck[] = [];
  for (const e of engines) {
    if (!e.ok || !e.path) {
      out.push(e);
      continue;
    }
    const dir = await mkdtemp(join(tmpdir(), 'skill-up-check-'));
    try {
      const container = await startJobContainer(conn.docker, {
        image,
        runId: `check-${process.pid}`,
        jobId: `check-${e.name}`,
        binds: packageFolders(e.path).map((p) => ({ host: p, container: p, readOnly: true })),
        network: 'none',
        path,
      });
      try {
        const stdoutFile = join(dir, 'stdout.txt');
        const stderrFile = join(dir, 'stderr.txt');
        const r = await container.run(e.path, ['--version'], { cwd: '/', env: { HOME: '/tmp' }, stdoutFile, stderrFile, timeoutMs: VERSION_TIMEOUT_MS });
        const text = (await readFile(stdoutFile, 'utf8')).trim();
        const lacks = r.exitCode === 0 && text ? await imageMissingCommands(conn.docker, image, path, findEngineDefinition(e.name)?.imageCommands ?? []) : [];
        if (lacks.length > 0) out.push({ name: e.name, ok: false, path: e.path, ...(e.source ? { source: e.source } : {}), message: `the image has no ${lacks.map((c) => `\`${c}\``).join(', ')} on its PATH (${path}), which ${e.name}'s tools need` });
        else if (r.exitCode === 0 && text) out.push({ ...e, version: text.split('\n')[0]!.trim() });
        else {
          const why = r.startError ?? ((await readFile(stderrFile, 'utf8')).trim().split('\n').slice(-3).join(' ') || `exit ${r.exitCode ?? r.signal}`);
          out.push({ name: e.name, ok: false, path: e.path, ...(e.source ? { source: e.source } : {}), message: `\`${e.path} --version\` failed inside the image: ${why}` });
        }
      } finally {
        await container.remove();
      }
    } catch (err) {
      out.push({ name: e.name, ok: false, path: e.path, message: (err as Error).message });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { image, daemon: { ok: true, endpoint: conn.endpoint, engine: conn.engine, version: conn.version, nodeVersion }, engines: out };
}
