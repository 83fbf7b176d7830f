/**
 * Each section's value when the config leaves it out (what its schema gives for nothing), written into
 * the CLI's build by bin/cli-build.mjs so a command builds no schema for a section the file does not
 * have. From the sources it is undefined, and every section's schema is built.
 */
export const BUILT_SECTION_DEFAULTS: Readonly<Record<string, unknown>> | undefined = undefined;
