/** Waiting for a long-running command (a server) to be told to stop. */

/**
 * Resolves at the first SIGINT or SIGTERM, or when `signal` aborts (at once when it already
 * has), and then removes its listeners: the server commands (`model-server`, `mcp-mock`) await
 * this before closing.
 */
export function untilStopped(signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}
