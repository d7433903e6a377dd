/**
 * Shared pieces of the engine tests (test/engines/contract.test.ts, engines/<name>/adapter.test.ts):
 * a minimal case, a /proc scan proving that no engine process outlives its turn, and the
 * contract suite's engine list.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { CaseSpec } from '../../src/config/types.js';
import type { EngineDefinition } from '../../src/engine/definition.js';
import { engineDefinitions } from '../../engines/index.js';

/** A case with nothing but an id and a turn limit, for driving an adapter directly. */
export function adapterTestCase(id: string, maxTurns = 10): CaseSpec {
  return {
    id,
    file: '/dev/null',
    tags: [],
    turns: [],
    context: { files: {} },
    timeoutSeconds: -1,
    maxTurns,
    trials: 1,
    expect: { mustContain: [], mustNotContain: [], filesExist: [], filesNotExist: [], fileContains: [], skillInvoked: [], skillNotInvoked: [] },
    judges: [],
    collectArtifacts: [],
  };
}

/** PIDs of live processes (zombies excluded, this process excluded) for which `match` holds. */
function liveProcesses(match: (p: { cwd: string; read: (file: string) => string }) => boolean): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const read = (file: string) => readFileSync(`/proc/${name}/${file}`, 'utf8');
      if (/State:\s+(\w)/.exec(read('status'))?.[1] === 'Z') continue;
      if (match({ cwd: readlinkSync(`/proc/${name}/cwd`), read })) found.push(Number(name));
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return found;
}

/** PIDs of live processes whose cwd is `dir` or whose command line mentions `marker`. */
export function processesIn(dir: string, marker: string): number[] {
  return liveProcesses((p) => p.cwd === dir || p.read('cmdline').includes(marker));
}

/** PIDs of live processes whose cwd is `dir` or whose environment has `HOME=home`. */
export function processesOf(dir: string, home: string): number[] {
  return liveProcesses((p) => p.cwd === dir || p.read('environ').includes(`HOME=${home}\0`));
}

/**
 * The engines the shared contract suite (test/engines/contract.test.ts) runs against: every
 * CLI engine in the registry (engines/index.ts), read when called, so a registered engine is in it.
 */
export function contractEngines(): readonly EngineDefinition[] {
  return engineDefinitions();
}
