/**
 * `builtin: filesystem`: the tools `list_directory {path}`, `read_file {path}` and
 * `write_file {path, content}`, confined to one folder (the job's workspace). Every path is
 * resolved inside the root after symbolic links (src/util/contain.ts: the real path of the
 * nearest existing ancestor must stay inside), so `..`, an absolute path elsewhere, and a link
 * (to a file or to a parent folder) pointing out are refused; files are opened with
 * `O_NOFOLLOW`, so a link swapped in after the check is not followed either. Sizes are bounded.
 */
import { constants } from 'node:fs';
import { open, opendir } from 'node:fs/promises';
import path from 'node:path';
import { ContainmentError, mkdirNoFollow, openInside, resolveInside } from '../../util/contain.js';

/** Largest file `read_file` returns and `write_file` writes, in bytes (1 MiB). */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Most entries `list_directory` lists; the answer says when it stopped there. */
export const MAX_LIST_ENTRIES = 1000;

/** A tool's answer: its text, and whether it is an MCP tool error (`isError: true`). */
export interface ToolAnswer {
  text: string;
  isError: boolean;
}

/** The tool definitions (`tools/list` entries) of the filesystem mock. */
export const FILESYSTEM_TOOL_DEFS = [
  {
    name: 'list_directory',
    description: 'List the files and folders of a folder in the workspace, one per line as `[FILE] name` or `[DIR] name`.',
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'folder, relative to the workspace (`.` for the workspace itself)' } }, required: ['path'] },
  },
  {
    name: 'read_file',
    description: `Read a text file of the workspace (at most ${MAX_FILE_BYTES} bytes).`,
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'file, relative to the workspace' } }, required: ['path'] },
  },
  {
    name: 'write_file',
    description: `Create or overwrite a file of the workspace (at most ${MAX_FILE_BYTES} bytes); missing parent folders are created.`,
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'file, relative to the workspace' }, content: { type: 'string', description: 'the whole new content' } },
      required: ['path', 'content'],
    },
  },
] as const;

const fail = (text: string): ToolAnswer => ({ text, isError: true });

function stringArg(args: Record<string, unknown>, name: string): string | ToolAnswer {
  const v = args[name];
  if (typeof v !== 'string') return fail(`argument \`${name}\` must be a string, got ${v === undefined ? 'nothing' : JSON.stringify(v)?.slice(0, 80)}`);
  return v;
}

/** The error text of a failed file operation: containment messages as they are, others with the path and code. */
function describe(e: unknown, p: string): string {
  if (e instanceof ContainmentError) return `refused: ${e.message}`;
  const err = e as NodeJS.ErrnoException;
  const why: Record<string, string> = { ENOENT: 'does not exist', ENOTDIR: 'is not a folder', EISDIR: 'is a folder', ELOOP: 'is a symbolic link', EACCES: 'is not accessible' };
  return `path \`${p}\` ${why[err.code ?? ''] ?? `cannot be used: ${err.code ?? err.message}`}`;
}

async function listDirectory(root: string, p: string): Promise<ToolAnswer> {
  const real = await resolveInside(root, p, 'path');
  const dir = await opendir(real);
  const lines: string[] = [];
  let cut = false;
  try {
    for await (const e of dir) {
      if (lines.length === MAX_LIST_ENTRIES) {
        cut = true;
        break;
      }
      lines.push(`${e.isDirectory() ? '[DIR]' : '[FILE]'} ${e.name}`);
    }
  } finally {
    // A `break` out of the iterator closes the folder itself; closing again would throw.
    await dir.close().catch(() => undefined);
  }
  lines.sort((a, b) => (a.slice(a.indexOf(' ')) < b.slice(b.indexOf(' ')) ? -1 : 1));
  if (cut) lines.push(`(listing cut at ${MAX_LIST_ENTRIES} entries: the folder has more)`);
  return { text: lines.length ? lines.join('\n') : '(empty folder)', isError: false };
}

async function readFile(root: string, p: string): Promise<ToolAnswer> {
  const fh = await openInside(root, p, 'path');
  try {
    const st = await fh.stat();
    if (!st.isFile()) return fail(`path \`${p}\` is not a regular file`);
    if (st.size > MAX_FILE_BYTES) return fail(`file \`${p}\` has ${st.size} bytes, more than read_file returns (${MAX_FILE_BYTES} bytes, 1 MiB)`);
    // Read at most one byte past the cap: a file growing after the stat is still bounded.
    const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_FILE_BYTES) return fail(`file \`${p}\` has more than ${MAX_FILE_BYTES} bytes (1 MiB), the most read_file returns`);
    return { text: buf.subarray(0, bytesRead).toString('utf8'), isError: false };
  } finally {
    await fh.close();
  }
}

async function writeFile(root: string, p: string, content: string): Promise<ToolAnswer> {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_FILE_BYTES) return fail(`content for \`${p}\` has ${bytes} bytes, more than write_file writes (${MAX_FILE_BYTES} bytes, 1 MiB)`);
  const real = await resolveInside(root, p, 'path');
  const realRoot = await resolveInside(root, '.', 'root');
  // Parent folders are made one by one, never through a link (the check above saw them as they were).
  const parent = path.relative(realRoot, path.dirname(real));
  if (parent) await mkdirNoFollow(realRoot, parent);
  const fh = await open(real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    await fh.writeFile(content, 'utf8');
  } finally {
    await fh.close();
  }
  return { text: `wrote ${bytes} bytes to ${p}`, isError: false };
}

/**
 * Runs filesystem tool `tool` with `args` inside `root`. Never throws: a refused or failed
 * operation is an answer with `isError: true` that names the path.
 * @returns undefined when `tool` is not a filesystem tool.
 */
export async function callFilesystemTool(root: string, tool: string, args: Record<string, unknown>): Promise<ToolAnswer | undefined> {
  if (tool !== 'list_directory' && tool !== 'read_file' && tool !== 'write_file') return undefined;
  const p = stringArg(args, 'path');
  if (typeof p !== 'string') return p;
  if (p === '' && tool !== 'list_directory') return fail('argument `path` is empty');
  try {
    if (tool === 'list_directory') return await listDirectory(root, p || '.');
    if (tool === 'read_file') return await readFile(root, p);
    const content = stringArg(args, 'content');
    if (typeof content !== 'string') return content;
    return await writeFile(root, p, content);
  } catch (e) {
    return fail(describe(e, p));
  }
}
