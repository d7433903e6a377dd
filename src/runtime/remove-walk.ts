/**
 * The recursive delete behind src/runtime/removal.ts `removeTree`, as one self-contained
 * function: it uses only its parameters and Node's globals, so the spawn helper
 * (src/engine/spawn-helper.ts) runs the same text (src/engine/spawner.ts passes its source) and
 * removes finished workspaces off skill-up's main thread, with exactly the rules skill-up uses
 * when it removes them itself. Types are imported for checking only (erased).
 */
import type * as FsModule from 'node:fs';

/**
 * Deletes `dir` and everything under it; a missing `dir` is nothing to do, a file or link at
 * `dir` is unlinked (a link is never followed: an agent may have put a link to a folder outside
 * in place of its workspace, its home or a folder in them). One `lstat` and one `readdir` (with
 * file types) per folder, one `unlink` per file or link, one `rmdir` per folder: no `lstat` per
 * file and no failed `rmdir` first, as Node 20's `fs.rm` makes (measured with strace: 39 calls
 * instead of 53 for a workspace holding an installed 3-file skill, and its home). A folder the
 * agent made read-only is made writable (0700) and tried again. What is left (an entry that
 * appears meanwhile, an error this walk does not handle) is handed to `fs.rm` with retries.
 * Synchronous calls, giving the event loop back (`yieldNow`) after every `batch` of them, which
 * bounds how long a big tree (an agent's node_modules) holds it.
 *
 * @param join path.join
 * @throws the file-system error when the tree cannot be removed (EACCES on a folder that
 *   cannot be made writable, EBUSY, …).
 */
export async function removeWalk(fs: typeof FsModule, join: (a: string, b: string) => string, dir: string, batch: number, yieldNow: () => Promise<void>): Promise<void> {
  let calls = 0;
  const tick = async (n = 1): Promise<void> => {
    calls += n;
    if (calls >= batch) {
      calls = 0;
      await yieldNow();
    }
  };
  const removeFolder = async (folder: string): Promise<void> => {
    // readdir and chmod follow links: whatever is at `folder` now must be a real folder.
    if (!fs.lstatSync(folder).isDirectory()) throw Object.assign(new Error(`${folder} is not a folder`), { code: 'ENOTDIR' });
    let entries: FsModule.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
      fs.chmodSync(folder, 0o700);
      entries = fs.readdirSync(folder, { withFileTypes: true });
    }
    await tick(2);
    let madeWritable = false;
    for (const e of entries) {
      const child = join(folder, e.name);
      const once = async (): Promise<void> => {
        if (e.isDirectory()) return removeFolder(child);
        fs.unlinkSync(child);
        await tick();
      };
      try {
        await once();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue;
        // A read-only folder refuses unlinking its entries (as a non-root user).
        if ((code === 'EACCES' || code === 'EPERM') && !madeWritable) {
          madeWritable = true;
          fs.chmodSync(folder, 0o700);
          await once();
          continue;
        }
        throw err;
      }
    }
    fs.rmdirSync(folder);
    await tick();
  };
  try {
    await removeFolder(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') {
      await fs.promises.unlink(dir).catch((u: NodeJS.ErrnoException) => {
        if (u.code !== 'ENOENT') throw u;
      });
      return;
    }
    // Something this walk does not handle: Node's own remover, which retries (EBUSY, ENOTEMPTY).
    await fs.promises.rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
