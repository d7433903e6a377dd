/**
 * The Docker runtime's daemon side (issue 14): where the daemon is (`DOCKER_HOST`), connecting
 * to it with a bounded ping, and what skill-up needs to know about an image before the first job
 * (its config, and the Node on its PATH that engine CLIs run on). Podman's API service answers
 * the same Docker-compatible API and is handled here too.
 *
 * dockerode is CommonJS and loaded with `require` only when {@link connectDocker} is first called
 * (src/util/cjs.ts), so commands that never use Docker never load it. Every failure a user can fix
 * is a {@link DockerUnavailable} with a one-line message: what failed, where, what to do.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Dockerode from 'dockerode';
import { requireCjs } from '../../util/cjs.js';

/** The daemon's address, from `DOCKER_HOST`: a Unix socket, or TCP (with TLS or not). */
export type DockerEndpoint = { kind: 'unix'; socketPath: string } | { kind: 'tcp'; host: string; port: number; tls: boolean };

/** The socket a Docker client uses when `DOCKER_HOST` is unset or empty. */
export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

/** How long {@link connectDocker} waits for the daemon's ping and version, ms. */
export const CONNECT_TIMEOUT_MS = 5000;

/** The oldest Node major an image may have: skill-up's own `engines.node` (package.json, >=20.5). */
export const MIN_IMAGE_NODE_MAJOR = 20;

/** The PATH Docker gives a container whose image sets none (moby's default). */
export const DEFAULT_IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * A Docker daemon or image skill-up needs is not usable: the daemon does not answer, an image is
 * missing, the image has no (recent enough) Node. The message is one line a user can act on; the
 * run stops before its first job (exit 3) and never falls back to the host.
 */
export class DockerUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DockerUnavailable';
  }
}

/**
 * Where the daemon is, as the Docker CLI reads it:
 * - `DOCKER_HOST` unset or empty → the Unix socket {@link DEFAULT_DOCKER_SOCKET};
 * - `unix:///path/docker.sock` → that socket;
 * - `tcp://host[:port]` → TCP; TLS when `DOCKER_TLS_VERIFY` is set to anything but `''`/`0`, or
 *   `DOCKER_TLS` is (certificates from `DOCKER_CERT_PATH`, see {@link connectDocker}); the port
 *   defaults to 2376 with TLS and 2375 without.
 *
 * @param env the environment to read (normally `process.env`).
 * @throws DockerUnavailable for any other form (`ssh://`, `npipe://`, a bare path, a bad port).
 */
export function dockerEndpoint(env: Record<string, string | undefined>): DockerEndpoint {
  const raw = (env.DOCKER_HOST ?? '').trim();
  if (raw === '') return { kind: 'unix', socketPath: DEFAULT_DOCKER_SOCKET };
  const bad = (why: string) => new DockerUnavailable(`DOCKER_HOST=${raw} is not usable: ${why} (use unix:///path/to/docker.sock or tcp://host:port)`);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === 'unix') {
    const socketPath = raw.slice('unix://'.length);
    if (!socketPath.startsWith('/')) throw bad('the socket path must be absolute');
    return { kind: 'unix', socketPath };
  }
  if (scheme === 'tcp') {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('not a valid address');
    }
    const flag = (v: string | undefined) => v !== undefined && v !== '' && v !== '0';
    const tls = flag(env.DOCKER_TLS_VERIFY) || flag(env.DOCKER_TLS);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!host) throw bad('no host');
    const port = url.port === '' ? (tls ? 2376 : 2375) : Number(url.port);
    return { kind: 'tcp', host, port, tls };
  }
  throw bad(scheme ? `skill-up does not support ${scheme}:// addresses` : 'no scheme');
}

/** The endpoint as a DOCKER_HOST-style address, for messages: `unix:///path` or `tcp://host:port`. */
export function describeEndpoint(e: DockerEndpoint): string {
  if (e.kind === 'unix') return `unix://${e.socketPath}`;
  return `tcp://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;
}

/** A connected daemon (see {@link connectDocker}). */
export interface DockerConnection {
  docker: Dockerode;
  /** The daemon's address, DOCKER_HOST-style (`unix:///var/run/docker.sock`), for messages. */
  endpoint: string;
  /** Which daemon answered: Podman's service names itself in the version's components. */
  engine: 'docker' | 'podman';
  /** The daemon's version, e.g. `20.10.24+dfsg1` or `4.3.1`. */
  version: string;
}

/**
 * Connects to the daemon `env` names ({@link dockerEndpoint}) and checks that it answers: a ping
 * and a version request, each bounded by {@link CONNECT_TIMEOUT_MS}. Loads dockerode on the first
 * call. With TLS, the client certificates are `ca.pem`, `cert.pem`, `key.pem` in
 * `DOCKER_CERT_PATH` (default `~/.docker`), as the Docker CLI reads them.
 *
 * @throws DockerUnavailable e.g. "cannot reach the Docker daemon at unix:///var/run/docker.sock:
 *   connect ENOENT (start dockerd, or set DOCKER_HOST)"; also for an unusable DOCKER_HOST or
 *   missing TLS certificates.
 */
export async function connectDocker(env: Record<string, string | undefined>): Promise<DockerConnection> {
  const ep = dockerEndpoint(env);
  const endpoint = describeEndpoint(ep);
  const Docker = requireCjs('dockerode') as typeof Dockerode;
  let docker: Dockerode;
  if (ep.kind === 'unix') docker = new Docker({ socketPath: ep.socketPath });
  else if (!ep.tls) docker = new Docker({ host: ep.host, port: ep.port, protocol: 'http' });
  else {
    const dir = env.DOCKER_CERT_PATH || path.join(os.homedir(), '.docker');
    let certs: { ca: Buffer; cert: Buffer; key: Buffer };
    try {
      certs = { ca: readFileSync(path.join(dir, 'ca.pem')), cert: readFileSync(path.join(dir, 'cert.pem')), key: readFileSync(path.join(dir, 'key.pem')) };
    } catch (e) {
      throw new DockerUnavailable(`cannot read the TLS certificates for the Docker daemon at ${endpoint} from ${dir}: ${(e as Error).message} (set DOCKER_CERT_PATH to the folder holding ca.pem, cert.pem and key.pem)`);
    }
    docker = new Docker({ host: ep.host, port: ep.port, protocol: 'https', ...certs });
  }
  const unreachable = (why: string) => new DockerUnavailable(`cannot reach the Docker daemon at ${endpoint}: ${why} (start dockerd, or set DOCKER_HOST)`);
  let version: Dockerode.DockerVersion;
  try {
    await bounded(docker.ping(), CONNECT_TIMEOUT_MS);
    version = await bounded(docker.version(), CONNECT_TIMEOUT_MS);
  } catch (e) {
    throw unreachable(e instanceof TimedOut ? `no answer in ${CONNECT_TIMEOUT_MS / 1000} s` : connectReason(e));
  }
  const components = (version as { Components?: { Name?: string }[] }).Components ?? [];
  const podman = components.some((c) => /podman/i.test(c.Name ?? '')) || /podman/i.test((version as { Platform?: { Name?: string } }).Platform?.Name ?? '');
  return { docker, endpoint, engine: podman ? 'podman' : 'docker', version: version.Version };
}

/** A request did not answer in time ({@link bounded}). */
class TimedOut extends Error {}

/** `p`, or a TimedOut rejection after `ms`. */
async function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimedOut()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failed connection in a few words: `connect ENOENT`, `connect ECONNREFUSED`, or the daemon's message. */
function connectReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException & { statusCode?: number };
  if (err.code && err.syscall) return `${err.syscall} ${err.code}`;
  if (err.code) return err.code;
  return daemonMessage(e);
}

/**
 * The daemon's own words for a failed request: the JSON body's `message` (dockerode's `reason`
 * is its own guess per endpoint and sometimes wrong, e.g. "no such container" for a missing
 * image), else the error's message; one line.
 */
export function daemonMessage(e: unknown): string {
  const err = e as { json?: { message?: unknown } | string | null; message?: string; statusCode?: number };
  const json = err.json;
  const m = json && typeof json === 'object' && typeof json.message === 'string' ? json.message : typeof json === 'string' && json.trim() ? json : err.message ?? String(e);
  return m.replace(/\s+/g, ' ').trim();
}

/** What skill-up uses of an image's config ({@link inspectImage}). */
export interface ImageInfo {
  /** The image id (`sha256:…`). */
  id: string;
  /** The image's ENV, name → value (an entry without `=` is a name with the empty value). */
  env: Record<string, string>;
  /** The image's USER, when it sets one. */
  user?: string;
  /** The image's PATH (its ENV PATH, else Docker's default {@link DEFAULT_IMAGE_PATH}). */
  path: string;
}

/**
 * The config of `image` on the daemon. Never pulls: no registry need be reachable.
 *
 * @param endpoint the daemon's address for the message (DockerConnection.endpoint).
 * @throws DockerUnavailable "image `x` is not on the daemon at …: docker pull x (or docker load /
 *   docker import)" when the daemon does not have it; "cannot inspect image `x` …" for other errors.
 */
export async function inspectImage(docker: Dockerode, image: string, endpoint = 'the daemon'): Promise<ImageInfo> {
  let info: Dockerode.ImageInspectInfo;
  try {
    info = await docker.getImage(image).inspect();
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 404) {
      throw new DockerUnavailable(`image \`${image}\` is not on the daemon at ${endpoint}: docker pull ${image} (or docker load / docker import)`);
    }
    throw new DockerUnavailable(`cannot inspect image \`${image}\` on the daemon at ${endpoint}: ${daemonMessage(e)}`);
  }
  const env: Record<string, string> = {};
  for (const entry of info.Config?.Env ?? []) {
    const eq = entry.indexOf('=');
    if (eq < 0) env[entry] = '';
    else env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  const user = info.Config?.User?.trim();
  return { id: info.Id, env, ...(user ? { user } : {}), path: env.PATH || DEFAULT_IMAGE_PATH };
}

/**
 * The version of the Node on `image`'s PATH (`v20.20.2`): runs `node --version` as the
 * entrypoint of a throwaway container (network `none`, PATH = `imagePath`, removed afterwards).
 *
 * @param imagePath the PATH inside (ImageInfo.path).
 * @throws DockerUnavailable "image `x` has no `node` on its PATH (/usr/local/bin:…): skill-up runs
 *   engine CLIs on the image's Node; use an image with Node 20+" — also when its Node is older than
 *   {@link MIN_IMAGE_NODE_MAJOR} or does not run; and for a daemon error, with the daemon's message.
 */
export async function imageNodeVersion(docker: Dockerode, image: string, imagePath: string): Promise<string> {
  const lacks = (what: string) => new DockerUnavailable(`image \`${image}\` ${what}: skill-up runs engine CLIs on the image's Node; use an image with Node ${MIN_IMAGE_NODE_MAJOR}+`);
  let container: Dockerode.Container | undefined;
  try {
    try {
      container = await docker.createContainer({
        Image: image,
        Entrypoint: ['node'],
        Cmd: ['--version'],
        Env: [`PATH=${imagePath}`],
        Labels: { 'skill-up.probe': 'node-version', 'skill-up.pid': String(process.pid), 'skill-up.host': os.hostname() },
        HostConfig: { NetworkMode: 'none' },
      });
    } catch (e) {
      throw new DockerUnavailable(`cannot create a container of image \`${image}\`: ${daemonMessage(e)}`);
    }
    try {
      await container.start();
    } catch (e) {
      // dockerd: 400 "… exec: "node": executable file not found in $PATH"; podman: 500 "… not found".
      const m = daemonMessage(e);
      if (/not found|no such file/i.test(m)) throw lacks(`has no \`node\` on its PATH (${imagePath})`);
      throw new DockerUnavailable(`cannot start a container of image \`${image}\`: ${m}`);
    }
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const logs = demuxBuffer(await container.logs({ stdout: true, stderr: true, follow: false }));
    const version = logs.stdout.trim();
    if (StatusCode !== 0 || !/^v\d+\./.test(version)) {
      const said = (logs.stderr || logs.stdout).trim().split('\n')[0]?.slice(0, 200);
      throw lacks(`has a \`node\` on its PATH (${imagePath}) that does not run (exit ${StatusCode}${said ? `: ${said}` : ''})`);
    }
    const major = Number(version.slice(1).split('.')[0]);
    if (major < MIN_IMAGE_NODE_MAJOR) throw lacks(`has Node ${version} on its PATH (${imagePath})`);
    return version;
  } finally {
    await container?.remove({ force: true, v: true }).catch(() => undefined);
  }
}

/**
 * Which of `commands` the image lacks on its PATH (`sh -c 'command -v …'` in a throwaway
 * container, network none, removed after): what an engine needs besides Node (bash for Claude
 * Code's, Gemini CLI's and Qwen Code's shell tools, rg for OpenCode). Empty when it has them all.
 * @throws DockerUnavailable when the probe itself cannot run (the daemon's message).
 */
export async function imageMissingCommands(docker: Dockerode, image: string, imagePath: string, commands: readonly string[]): Promise<string[]> {
  if (commands.length === 0) return [];
  // Names only ([a-z0-9._-]): they go into a shell line.
  const names = commands.filter((c) => /^[A-Za-z0-9._-]+$/.test(c));
  const script = names.map((c) => `command -v ${c} >/dev/null 2>&1 || echo ${c}`).join('; ');
  let container: Dockerode.Container | undefined;
  try {
    container = await docker.createContainer({
      Image: image,
      Entrypoint: ['/bin/sh', '-c'],
      Cmd: [script],
      Env: [`PATH=${imagePath}`],
      Labels: { 'skill-up.probe': 'commands', 'skill-up.pid': String(process.pid), 'skill-up.host': os.hostname() },
      HostConfig: { NetworkMode: 'none' },
    });
    await container.start();
    await container.wait();
    const logs = demuxBuffer(await container.logs({ stdout: true, stderr: true, follow: false }));
    return logs.stdout.split('\n').map((l) => l.trim()).filter((l) => names.includes(l));
  } catch (e) {
    if (e instanceof DockerUnavailable) throw e;
    throw new DockerUnavailable(`cannot check the commands of image \`${image}\` (${names.join(', ')}): ${daemonMessage(e)}`);
  } finally {
    await container?.remove({ force: true, v: true }).catch(() => undefined);
  }
}

/**
 * A multiplexed log buffer (non-TTY container: frames of [stream 1|2, 0, 0, 0, size uint32 BE]
 * then the payload) split into stdout and stderr text. For small outputs only (held whole).
 */
function demuxBuffer(buf: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const kind = buf[i];
    const size = buf.readUInt32BE(i + 4);
    const payload = buf.subarray(i + 8, i + 8 + size);
    (kind === 2 ? err : out).push(payload);
    i += 8 + size;
  }
  return { stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
