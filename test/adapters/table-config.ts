// Config parsing with the channel table, as the CLI and the gateway do it: `channels.<id>` checked
// by each channel's own schema (strict, did-you-mean) and its groups found under its own name.
import { CHANNELS } from "../../adapters/index.js";
import { parseConfig as parseWithTable } from "../../src/config/index.js";

/** `parseConfig` of src/config with the channel table of adapters/index.ts. */
export function parseConfig(raw: unknown, source = "config") {
  return parseWithTable(raw, source, CHANNELS);
}
