/**
 * Starts skill-up's scripted model server for a run whose engines use
 * `engine.model: { provider: scripted, script: … }` (design.md, "The scripted model").
 * One server serves every job of the run; each engine reaches it through its base URL,
 * and each exchange is logged under the job's own folder.
 */
import { chmod, rm } from 'node:fs/promises';
import type { EngineConfig } from '../config/types.js';
// Not the model/index.js barrel: checking scripts (a dry run, `validate`) must not load the HTTP server and its protocols.
import { loadModelScript } from '../model/script.js';
import type { ModelServer } from '../model/server.js';
import type { ModelScript } from '../model/types.js';

/**
 * The scripts of the scripted engines of a run (its engine list) or of a suite (its
 * `engines`), by engine name, loaded and validated. @throws ConfigError
 */
export async function loadScripts(from: readonly EngineConfig[] | { engines: readonly EngineConfig[] }): Promise<Map<string, ModelScript>> {
  const scripts = new Map<string, ModelScript>();
  const engines = 'engines' in from ? from.engines : from;
  for (const e of engines) {
    if (e.model.provider === 'scripted' && e.model.script) scripts.set(e.name, await loadModelScript(e.model.script));
  }
  return scripts;
}

/**
 * Starts one server when any engine is scripted; undefined otherwise. With several scripted
 * engines using different scripts, the first engine's script serves the run (the script's
 * `engine:` condition tells engines apart). With `socketPath`, it also listens on that Unix
 * socket (mode 0666), for containers without a network (src/runtime/docker/runtime.ts).
 */
export async function startScriptedModel(scripts: Map<string, ModelScript>, logDir: string, socketPath?: string): Promise<ModelServer | undefined> {
  const first = [...scripts.values()][0];
  if (!first) return undefined;
  const { startModelServer } = await import('../model/server.js');
  // A run's iterations reuse the socket path; the last server's socket file may still be there.
  if (socketPath) await rm(socketPath, { force: true });
  const server = await startModelServer({ script: first, logDir, ...(socketPath ? { socketPath } : {}) });
  // Containers may run as another user than skill-up: connecting needs write permission on the socket.
  if (socketPath) await chmod(socketPath, 0o666);
  return server;
}
