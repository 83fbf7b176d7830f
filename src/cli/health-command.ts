import type { Command } from "commander";
import { findGateway } from "./gateway-target.js";
import { type CliIo, CliExit, ExitCode, loadCliConfig, out } from "./cli-io.js";

/** One part of the gateway's readiness, as `GET /readyz` reports it. */
interface ReadinessPart {
  kind: string;
  name: string;
  ok: boolean;
  reason: string;
}

/** The body of `GET /readyz` for an authorized caller. */
interface Readiness {
  ready: boolean;
  phase: string;
  parts?: ReadinessPart[];
}

/** Asks `GET <url>/readyz`; an error when no gateway answers, or something else does. */
async function fetchReadiness(url: string, token: string | undefined): Promise<Readiness | { error: string }> {
  try {
    const res = await fetch(`${url}/readyz`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(3_000),
    });
    const body = (await res.json()) as Readiness & { error?: { message?: string } };
    if (typeof body.ready !== "boolean")
      return { error: `HTTP ${res.status}: ${body.error?.message ?? "not a readiness report"}` };
    return body;
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function printReadiness(io: CliIo, url: string, readiness: Readiness): void {
  out(io, `gateway ${url}: ${readiness.ready ? "ready" : "NOT READY"} (${readiness.phase})`);
  if (!readiness.parts)
    out(io, "  (no details: pass the gateway token with --token or SWITCHBOARD_GATEWAY_TOKEN to see each part)");
  const width = Math.max(0, ...(readiness.parts ?? []).map((part) => part.kind.length + part.name.length + 1));
  for (const part of readiness.parts ?? [])
    out(io, `  ${part.ok ? "ok  " : "FAIL"}  ${`${part.kind} ${part.name}`.padEnd(width)}  ${part.reason}`);
}

/** `switchboard health [--json]`: the running gateway's readiness, part by part; exit 1 unless ready. */
export function registerHealthCommand(program: Command, io: CliIo): void {
  program
    .command("health")
    .description("ask the running gateway whether it is ready, with each channel account and MCP server")
    .option("--json", "print the readiness report as JSON")
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action(async (flags: { json?: boolean; url?: string; token?: string }, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const { config } = await loadCliConfig(io, configFlag);
      // The gateway of this home (its gateway.lock names the port, e.g. after `--port N`), unless --url says.
      const target = await findGateway(io, config, configFlag, flags);
      const url = target.url.replace(/^ws/, "http").replace(/\/+$/, "");
      const token = target.token;
      const readiness = await fetchReadiness(url, token);
      if ("error" in readiness) {
        if (flags.json)
          out(io, JSON.stringify({ ready: false, phase: "unreachable", error: readiness.error }, null, 2));
        else out(io, `gateway ${url}: not reachable (${readiness.error}); is it running? (switchboard gateway run)`);
        throw new CliExit(ExitCode.failure);
      }
      if (flags.json) out(io, JSON.stringify(readiness, null, 2));
      else printReadiness(io, url, readiness);
      if (!readiness.ready) throw new CliExit(ExitCode.failure);
    });
}
