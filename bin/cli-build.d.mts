/** True when `outDir` holds a build whose every input still has the size and time it was built from. */
export function isBuildFresh(outDir?: string, root?: string): boolean;
/** Builds bin/entry.ts into `outDir` (written beside it, then renamed over it, so a reader never sees half). */
export function buildCli(outDir?: string, root?: string): Promise<void>;
