import { afterEach } from "vitest";

/**
 * Wraps `start` so that whatever a test starts with it is closed after that test: the one
 * bookkeeping behind each `use...()` of the harnesses (call it where vitest's `afterEach` registers).
 */
export function closedAfterEach<Options, Started extends { close(): Promise<unknown> }>(
  start: (options?: Options) => Promise<Started>,
): (options?: Options) => Promise<Started> {
  const open: Started[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((started) => started.close()));
  });
  return async (options) => {
    const started = await start(options);
    open.push(started);
    return started;
  };
}

/** A list to push closers on: run after each test of the calling file, the last pushed first. */
export function closersAfterEach(): Array<() => Promise<unknown>> {
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  return closing;
}
