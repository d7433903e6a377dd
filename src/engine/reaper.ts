/**
 * The reaper: engine processes die with skill-up, even when skill-up is killed with SIGKILL.
 *
 * Node has no `prctl(PR_SET_PDEATHSIG)`, and engines run in process groups of their own (so a
 * timeout can kill a whole tree), which a signal to skill-up's group does not reach. So, at
 * the first process group registered, skill-up starts one tiny `sh` (detached: its own
 * session and group) whose stdin is a pipe from skill-up, and tells it `+<pgid>` when a
 * group starts and `-<pgid>` when it ends. However skill-up ends (normal exit, crash,
 * SIGKILL, OOM killer), the kernel closes the pipe; the reaper reads EOF, sends SIGKILL to
 * every group still listed, and exits. After a normal exit the list is empty and it just exits.
 * Groups the spawn helper started are listed too: the helper kills them itself when skill-up
 * goes away, but a `pkill -9 -f skill-up` kills the helper at the same moment.
 *
 * The reaper never keeps skill-up alive (the child and its stdin are unref'ed), holds no
 * other descriptor of skill-up's (Node opens pipes close-on-exec), and runs in `/`. When it
 * cannot be started (no `sh`, out of descriptors) or dies, the next registration tries
 * again and re-sends the groups alive then; until then a SIGKILL of skill-up leaves those
 * groups running, as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/** The reaper's program: keep a list of groups from stdin; at EOF kill them all. POSIX sh (dash's kill takes no `--`). */
const SCRIPT = `
groups=" "
while IFS= read -r line; do
  case $line in
    +*) groups="$groups\${line#+} " ;;
    -*) g=\${line#-}; case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
`;

/** Groups to kill if skill-up dies, as told to the reaper. */
const watched = new Set<number>();
let reaper: { child: ChildProcess; stdin: Socket } | undefined;

function start(): void {
  if (process.platform === 'win32') return;
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], cwd: '/' });
  } catch {
    return;
  }
  const stdin = child.stdin as Socket | null;
  const lost = () => {
    if (reaper?.child === child) reaper = undefined;
  };
  child.once('error', lost); // could not start (EMFILE, ENOENT): the next registration retries
  child.once('exit', lost);
  child.unref();
  if (!stdin || !child.pid) return;
  stdin.on('error', lost); // EPIPE: the reaper died
  stdin.unref();
  reaper = { child, stdin };
  if (watched.size) send([...watched].map((g) => `+${g}`));
}

function send(lines: string[]): void {
  if (!reaper || reaper.stdin.destroyed) return;
  reaper.stdin.write(`${lines.join('\n')}\n`);
}

/** Tells the reaper to kill process group `pgid` if skill-up dies before {@link unwatchGroup}. Starts the reaper when needed. */
export function watchGroup(pgid: number): void {
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
  watched.add(pgid);
  if (!reaper) start();
  else send([`+${pgid}`]);
}

/** Group `pgid` has ended (or was killed): the reaper forgets it. */
export function unwatchGroup(pgid: number): void {
  if (!watched.delete(pgid)) return;
  send([`-${pgid}`]);
}
