/**
 * The Docker runtime of a run (`environment.type: docker`, issue 14): one fresh container per
 * job, around a workspace prepared on this machine exactly as for the local runtime.
 *
 * - Paths are the same inside and out: the workspace, the engine's home and the job folder are
 *   bind-mounted read-write at their own paths (so engine config files, transcripts, judges and
 *   reports name the same files), the engine's installed package read-only at its own path
 *   (`EngineAdapter.containerPaths`), the suite's `mounts` read-only; `workdir` mounts the
 *   workspace a second time there and makes it the engine's working folder.
 * - The engine runs on the image's Node with the image's PATH; nothing of this machine's
 *   environment but what the adapter puts into the process's own environment reaches it.
 * - The scripted model server: with `network: host` the container reaches 127.0.0.1 as the
 *   engine would here; with any other network a relay inside the container listens on the same
 *   127.0.0.1 port and forwards to the server's Unix socket, mounted read-only, so the engine's
 *   base URL is the same string in both runtimes.
 * - Setup steps run inside, with `sh -c` (an image need not have bash), in the working folder.
 * - Containers carry the run's id; they are removed after each job, on interrupt (the job's
 *   abort), and at the next run's start when a killed run left them (src/runtime/docker/container.ts).
 */
import { rmSync } from 'node:fs';
import { chmod, lchown, mkdtemp, readdir, readFile } from 'node:fs/promises';
import type * as Net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, relative, sep } from 'node:path';
import type { DockerSettings } from '../../config/types.js';
import type { ProcessRunner, ProcResult } from '../../engine/proc.js';
import { readTail } from '../../engine/proc.js';
import { startJobContainer, removeOrphanContainers, removeRunContainers, type JobContainer } from './container.js';
import { connectDocker, dockerEndpoint, DockerUnavailable, imageMissingCommands, imageNodeVersion, inspectImage, type DockerConnection, type ImageInfo } from './daemon.js';

/** Variables naming files of this machine, which a container does not have. */
const HOST_PATH_VARS = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'];

/** Where the model server's socket folder appears in every container. */
const SOCKET_DIR_IN_CONTAINER = '/run/skill-up-model';
/** Milliseconds the relay may take to listen before the job is an error. */
const RELAY_READY_MS = 10_000;

/**
 * The relay's program (run as `node -e <source> <port> <socket>` on the image's Node): listens
 * on the container's 127.0.0.1:<port> and pipes each connection to the Unix socket. Self-contained:
 * only what it is given and `require('node:net')`.
 */
function relayMain(net: typeof Net, port: number, socketPath: string): void {
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
}

/** What a run's Docker runtime found before its first job (`prepareDockerRun`). */
export interface DockerRun {
  connection: DockerConnection;
  settings: DockerSettings;
  image: ImageInfo;
  /** The image's `node --version`. */
  nodeVersion: string;
  /** Orphaned containers of killed runs removed at the start. */
  orphansRemoved: number;
  /** True when the scripted model server must also listen on a socket for the containers. */
  needsModelSocket: boolean;
  /** A fresh folder for the model server's socket (`model.sock` in it), when {@link needsModelSocket}. */
  socketDir?: string;
  /** Starts a job's container. @throws Error (the daemon's message) when none can be made. */
  startJob(o: StartJobOptions): Promise<DockerJob>;
  /** Removes every container of this run still there (after each iteration; jobs remove their own). */
  sweep(): Promise<number>;
}

/** What a job's container is started with. */
export interface StartJobOptions {
  jobId: string;
  workspace: string;
  homeDir: string;
  outputDir: string;
  /** Host paths the engine needs (EngineAdapter.containerPaths), mounted read-only. */
  enginePaths: string[];
  /** The scripted model server's port, when the job's engine uses it. */
  modelPort?: number;
  signal?: AbortSignal;
}

/** A job's running container. */
export interface DockerJob {
  container: JobContainer;
  /** Runs processes inside (the engine's `ctx.runProcess`): the workspace path is mapped to `workdir`. */
  runner: ProcessRunner;
  /** The workspace's path inside the container (the engine's working folder). */
  workdir: string;
  /**
   * Runs the setup steps inside, in order, each `sh -c <run>` in the working folder, output in
   * the job folder's `outputs/setup-<n>.{stdout,stderr}.txt`.
   * @throws Error naming the step, how it ended and its last output lines.
   */
  setup(steps: { run: string }[], env: Record<string, string>, signal?: AbortSignal): Promise<void>;
  /** Set when a process was killed by the kernel for the memory limit: the words for the job's reason. */
  outOfMemory?: string;
  /** Force-removes the container; resolves to the daemon's error message, if any. */
  remove(): Promise<string | undefined>;
}

/**
 * Connects to the daemon (DOCKER_HOST or the default socket), checks the image and its Node,
 * and removes containers killed runs left. Runs before the first job: a run that cannot have
 * its containers stops here, never falling back to this machine.
 * @param scripted whether any engine of the run uses the scripted model server.
 * @param needs each engine's commands the image must have (EngineDefinition.imageCommands).
 * @throws DockerUnavailable (src/runtime/docker/daemon.ts) with a one-line message.
 */
export async function prepareDockerRun(
  settings: DockerSettings,
  env: Record<string, string | undefined>,
  runId: string,
  scripted: boolean,
  needs: { engine: string; commands: readonly string[] }[] = [],
): Promise<DockerRun> {
  const endpoint = dockerEndpoint(env);
  // Bind mounts name this machine's folders: a daemon elsewhere would mount its own, empty ones.
  if (endpoint.kind === 'tcp' && !['localhost', '127.0.0.1', '::1', '[::1]'].includes(endpoint.host)) {
    throw new DockerUnavailable(
      `the Docker daemon at tcp://${endpoint.host}:${endpoint.port} is on another machine: skill-up bind-mounts each job's workspace from this machine, which a remote daemon cannot see (copying workspaces in and out is not supported yet); run the daemon here, or skill-up on the daemon's machine`,
    );
  }
  const connection = await connectDocker(env);
  const image = await inspectImage(connection.docker, settings.image, connection.endpoint);
  const nodeVersion = await imageNodeVersion(connection.docker, settings.image, image.path);
  const wanted = [...new Set(needs.flatMap((n) => n.commands))];
  const missing = await imageMissingCommands(connection.docker, settings.image, image.path, wanted);
  if (missing.length > 0) {
    const who = missing.map((c) => `\`${c}\` (${needs.filter((n) => n.commands.includes(c)).map((n) => n.engine).join(', ')})`).join(', ');
    throw new DockerUnavailable(`image \`${settings.image}\` has no ${who} on its PATH (${image.path}), which the engine's tools need: every job would fail for the image's sake; add it to the image`);
  }
  const orphansRemoved = await removeOrphanContainers(connection.docker).catch(() => 0);
  const needsModelSocket = scripted && settings.network !== 'host';
  // A short path: a Unix socket's path holds at most 107 bytes.
  const socketDir = needsModelSocket ? await mkdtemp(join(tmpdir(), 'skill-up-model-')) : undefined;
  if (socketDir) {
    await chmod(socketDir, 0o755);
    process.once('exit', () => rmSync(socketDir, { recursive: true, force: true }));
  }
  const run: DockerRun = {
    connection,
    settings,
    image,
    nodeVersion,
    orphansRemoved,
    needsModelSocket,
    ...(socketDir ? { socketDir } : {}),
    startJob: (o) => startJob(run, runId, o),
    sweep: () => removeRunContainers(connection.docker, runId).catch(() => 0),
  };
  return run;
}

/** The user a container runs as: the suite's, else this process's own uid:gid, so files the agent writes stay this user's. */
function containerUser(settings: DockerSettings): string | undefined {
  if (settings.user) return settings.user;
  return typeof process.getuid === 'function' && typeof process.getgid === 'function' ? `${process.getuid()}:${process.getgid()}` : undefined;
}

async function startJob(run: DockerRun, runId: string, o: StartJobOptions): Promise<DockerJob> {
  const { settings, image } = run;
  const rw = (p: string) => ({ host: p, container: p, readOnly: false });
  const ro = (p: string, at = p) => ({ host: p, container: at, readOnly: true });
  const workdir = settings.workdir ?? o.workspace;
  const binds = [rw(o.workspace), rw(o.homeDir), rw(o.outputDir)];
  if (settings.workdir) binds.push({ host: o.workspace, container: settings.workdir, readOnly: false });
  // An engine path under a folder already mounted needs no mount of its own.
  const mounted = (p: string) => binds.some((b) => b.host === p || p.startsWith(b.host + sep));
  // A numeric user other than root cannot pass through the image's private folders (its /root is
  // 0700, where skill-up's engine cache lives when skill-up runs as root): that user gets the
  // engine's package under /opt/skill-up/ instead, and the executable's path is mapped to it.
  const asOther = settings.user !== undefined && !/^0(:|$)/.test(settings.user);
  const enginePlaces = new Map<string, string>();
  for (const [i, p] of [...new Set(o.enginePaths)].sort().entries()) {
    if (mounted(p)) continue;
    const at = asOther ? `/opt/skill-up/engine-${i}-${basename(p)}` : p;
    enginePlaces.set(p, at);
    binds.push(ro(p, at));
  }
  for (const m of settings.mounts) binds.push(ro(m.source, m.target));
  const relay = run.socketDir !== undefined && o.modelPort !== undefined;
  if (relay) binds.push(ro(run.socketDir!, SOCKET_DIR_IN_CONTAINER));
  const user = containerUser(settings);
  if (asOther) await giveTo(settings.user!, [o.workspace, o.homeDir, o.outputDir]);
  const container = await startJobContainer(
    run.connection.docker,
    {
      image: settings.image,
      runId,
      jobId: o.jobId,
      binds,
      network: settings.network,
      ...(settings.memoryBytes ? { memoryBytes: settings.memoryBytes } : {}),
      ...(settings.cpus ? { nanoCpus: Math.round(settings.cpus * 1e9) } : {}),
      ...(settings.pidsLimit ? { pidsLimit: settings.pidsLimit } : {}),
      ...(user ? { user } : {}),
      path: image.path,
    },
    o.signal,
  );
  const inside = (p: string) => {
    for (const [host, at] of enginePlaces) if (host !== at && (p === host || p.startsWith(host + sep))) return join(at, relative(host, p));
    if (!settings.workdir) return p;
    if (p === o.workspace) return settings.workdir;
    return p.startsWith(o.workspace + sep) ? join(settings.workdir, relative(o.workspace, p)) : p;
  };
  const job: DockerJob = {
    container,
    workdir,
    runner: async (file, args, opts) => {
      const env = { ...opts.env };
      if (env.PWD !== undefined) env.PWD = inside(env.PWD);
      // Paths of this machine that mean nothing inside: the temp folder is the container's own
      // (a host TMPDIR beside a mount is a root-owned mount point there), certificates the image's.
      for (const v of HOST_PATH_VARS) delete env[v];
      for (const v of ['TMPDIR', 'TMP', 'TEMP']) if (env[v] !== undefined) env[v] = '/tmp';
      const r = await container.run(inside(file), args, { ...opts, cwd: inside(opts.cwd), env });
      await noteOutOfMemory(job, r, settings);
      return r;
    },
    setup: (steps, env, signal) => runSetupSteps(job, o.workspace, o.outputDir, steps, env, signal),
    remove: () => container.remove(),
  };
  try {
    if (asOther) await checkWritable(job, o, settings.user!);
    if (relay) await startRelay(job, o.outputDir, o.modelPort!, settings.network);
  } catch (e) {
    await container.remove();
    throw e;
  }
  return job;
}

/**
 * Gives the job's folders to the container's numeric `user` (`uid[:gid]`, gid defaulting to uid),
 * every entry, links not followed. @throws Error naming the user and why (EPERM: skill-up is not root).
 */
async function giveTo(user: string, roots: string[]): Promise<void> {
  const [uid, gid = uid] = user.split(':').map(Number) as [number, number?];
  const walk = async (p: string): Promise<void> => {
    await lchown(p, uid, gid);
    const entries = await readdir(p, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (e.isDirectory()) await walk(join(p, e.name));
      else await lchown(join(p, e.name), uid, gid);
    }
  };
  try {
    for (const r of roots) await walk(r);
  } catch (e) {
    throw new Error(
      `cannot give the job's workspace to the container's user ${user} (environment.user): ${(e as Error).message}; a user other than skill-up's own needs skill-up to run as root, or leave \`user\` unset to run as your own uid`,
      { cause: e },
    );
  }
}

/** Before the agent: the container's `user` can write the workspace and its home (else the job would fail for no fault of the agent's). */
async function checkWritable(job: DockerJob, o: StartJobOptions, user: string): Promise<void> {
  const probe = join(o.outputDir, 'outputs', 'user-check.txt');
  const r = await job.runner('sh', ['-c', 'test -w . && test -w "$HOME" && echo ok'], { cwd: o.workspace, env: { HOME: o.homeDir }, stdoutFile: probe, stderrFile: `${probe}.stderr`, timeoutMs: 30_000 });
  const said = await readFile(probe, 'utf8').catch(() => '');
  if (r.exitCode !== 0 || !said.startsWith('ok')) {
    throw new Error(`the container's user ${user} (environment.user) cannot write the workspace ${job.workdir} or its home ${o.homeDir} inside the container${r.startError ? `: ${r.startError}` : ''}; check that the image lets that user reach those paths`);
  }
}

/**
 * After each process under a memory limit: whether the kernel's OOM killer killed a process in the
 * container. Asked after every exit, not only the process's own SIGKILL: an agent whose child (a
 * tool's command) was killed lives on and may exit 0 (one `docker exec`, ~60–140 ms, only with
 * `memory` set). Not after a timeout or cancel: the container was killed then.
 */
async function noteOutOfMemory(job: DockerJob, r: ProcResult, settings: DockerSettings): Promise<void> {
  if (job.outOfMemory || !settings.memoryBytes || r.timedOut || r.cancelled || r.startError) return;
  if (await job.container.oomKilled()) {
    job.outOfMemory = `a process in the container was killed for the memory limit (environment.memory: ${Math.round(settings.memoryBytes / 1048576)} MB)`;
  }
}

/** Starts the model relay inside and waits until it listens. @throws Error when it does not within RELAY_READY_MS. */
async function startRelay(job: DockerJob, outputDir: string, port: number, network: string): Promise<void> {
  const stdoutFile = join(outputDir, 'outputs', 'model-relay.stdout.txt');
  const stderrFile = join(outputDir, 'outputs', 'model-relay.stderr.txt');
  const source = `(${relayMain.toString()})(require('node:net'), Number(process.argv[1]), process.argv[2])`;
  const ended = job.container
    .run('node', ['-e', source, String(port), `${SOCKET_DIR_IN_CONTAINER}/model.sock`], { cwd: '/', env: {}, stdoutFile, stderrFile, timeoutMs: Infinity })
    .then(
      (r) => r,
      (e: Error) => e,
    );
  let done: ProcResult | Error | undefined;
  void ended.then((r) => (done = r));
  const until = Date.now() + RELAY_READY_MS;
  while (Date.now() < until) {
    const out = await readFile(stdoutFile, 'utf8').catch(() => '');
    if (out.startsWith('ready')) return;
    if (done !== undefined) break;
    await new Promise((r) => setTimeout(r, 15));
  }
  const why = done instanceof Error ? done.message : (await readTail(stderrFile, 2000)).trim() || (done ? `it ended (exit ${done.exitCode ?? done.signal ?? '?'})` : `it did not listen within ${RELAY_READY_MS / 1000} s`);
  throw new Error(`the scripted model's relay inside the container could not start (the container's network is \`${network}\`, so the engine reaches skill-up's model server through a Unix socket): ${why}`);
}

async function runSetupSteps(job: DockerJob, workspace: string, outputDir: string, steps: { run: string }[], env: Record<string, string>, signal?: AbortSignal): Promise<void> {
  for (const [i, step] of steps.entries()) {
    const label = `setup step ${i + 1} (\`${step.run.replace(/\s+/g, ' ').slice(0, 80)}\`)`;
    const stdoutFile = join(outputDir, 'outputs', `setup-${i + 1}.stdout.txt`);
    const stderrFile = join(outputDir, 'outputs', `setup-${i + 1}.stderr.txt`);
    const r = await job.runner('sh', ['-c', step.run], { cwd: workspace, env, stdoutFile, stderrFile, timeoutMs: Infinity, ...(signal ? { signal } : {}) });
    if (r.exitCode === 0) continue;
    if (r.cancelled) throw new Error(`${label} was cancelled`);
    const how = r.startError ? `could not start: ${r.startError}` : r.exitCode !== null ? `exited with code ${r.exitCode}` : `was killed by ${r.signal ?? 'a signal'}`;
    const out = (await readTail(stderrFile, 4000)).trim() || (await readTail(stdoutFile, 4000)).trim();
    const lines = out.split('\n').slice(-20).join('\n');
    throw new Error(`${label} in the container ${how}${job.outOfMemory ? ` (${job.outOfMemory})` : ''}${lines ? `; last output:\n${lines}` : ''}`);
  }
}
