import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");
let home: string;

beforeEach(async () => {
  home = await tempHome();
});

describe("switchboard config validate", () => {
  it("exits 2 from the real binary, naming session.dmScop and suggesting dmScope, without a stack trace", async () => {
    await writeFile(path.join(home, "switchboard.json5"), `{ session: { dmScop: "per-peer" } }`);
    const run = promisify(execFile)(bin, ["config", "validate"], { env: { ...process.env, SWITCHBOARD_HOME: home } });
    const failure = await run.then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain("session.dmScop: unknown key (did you mean dmScope?)");
    expect(failure?.stderr).not.toMatch(/\n\s+at /);
  });

  it("warns in one paragraph, and still exits 0, when several people may DM a bot whose DMs share the main session", async () => {
    await writeFile(path.join(home, "switchboard.json5"), `{ channels: { telegram: { allowFrom: ["42", "43"] } } }`);
    const { code, stdout, stderr } = await cli(["config", "validate"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain(": valid");
    expect(stderr).toMatch(
      /^warning: session\.dmScope is "main".*telegram \(42, 43 may all DM it\).*share one conversation.*dmScope: "per-channel-peer".*\n$/,
    );
  });

  it("does not warn for a bot only its owner may DM", async () => {
    await writeFile(path.join(home, "switchboard.json5"), `{ channels: { telegram: { allowFrom: ["42"] } } }`);
    expect((await cli(["config", "validate"], { home })).stderr).toBe("");
  });

  it("reports a missing file as valid with every default", async () => {
    const { code, stdout } = await cli(["config", "validate"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("not found, every default applies");
  });

  it("refuses a --config or SWITCHBOARD_CONFIG file that does not exist instead of applying defaults", async () => {
    const flag = await cli(["--config", "nope.json5", "config", "validate"], { home });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("nope.json5 does not exist (named by --config)");
    const env = await cli(["config", "print"], { home, env: { SWITCHBOARD_CONFIG: "missing.json5" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("missing.json5 does not exist (named by SWITCHBOARD_CONFIG)");
  });

  it("reports an unknown model provider and a non-loopback bind without a token, which the gateway would refuse", async () => {
    await writeFile(
      path.join(home, "switchboard.json5"),
      `{ agents: { defaults: { model: "foo/bar" } }, gateway: { bind: "0.0.0.0" } }`,
    );
    const { code, stderr } = await cli(["config", "validate"], { home });
    expect(code).toBe(2);
    expect(stderr).toContain('agents.defaults.model: unknown model provider "foo" in "foo/bar"');
    expect(stderr).toContain("gateway.bind: 0.0.0.0 is reachable from other machines");
    await writeFile(path.join(home, "switchboard.json5"), `{ gateway: { bind: "0.0.0.0" } }`);
    expect(
      (await cli(["config", "validate"], { home, env: { SWITCHBOARD_GATEWAY_TOKEN: "a-token-of-16-chars-or-more" } }))
        .code,
    ).toBe(0);
  });

  it("reads the file named by --config, and SWITCHBOARD_CONFIG when there is no flag", async () => {
    await writeFile(path.join(home, "bad.json5"), `{ gateway: { port: "x" } }`);
    await writeFile(path.join(home, "good.json5"), `{ gateway: { port: 1234 } }`);
    const flag = await cli(["--config", "bad.json5", "config", "validate"], {
      home,
      env: { SWITCHBOARD_CONFIG: "good.json5" },
    });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("gateway.port: expected number, got string");
    const env = await cli(["config", "validate"], { home, env: { SWITCHBOARD_CONFIG: "good.json5" } });
    expect(env.code).toBe(0);
    expect(env.stdout).toContain("good.json5: valid");
  });

  it("exits 2 on a JSON5 syntax error", async () => {
    await writeFile(path.join(home, "switchboard.json5"), `{ session: `);
    const { code, stderr } = await cli(["config", "validate"], { home });
    expect(code).toBe(2);
    expect(stderr).toMatch(/switchboard\.json5:1:\d+: not valid JSON5/);
  });
});

describe("switchboard config print", () => {
  it("prints the resolved config with defaults and masked secrets", async () => {
    await writeFile(
      path.join(home, "switchboard.json5"),
      `{ channels: { telegram: { botToken: "123:SECRET" } }, session: { sendPolicy: { rules: [{ action: "deny", match: { provider: "discord" } }] } } }`,
    );
    const { code, stdout, stderr } = await cli(["config", "print", "--json"], { home });
    expect(code).toBe(0);
    const printed = JSON.parse(stdout);
    expect(printed.channels.telegram.botToken).toBe("********");
    expect(printed.session.dmScope).toBe("main");
    expect(printed.session.sendPolicy.rules[0].match).toEqual({ channel: "discord" });
    expect(stdout).not.toContain("SECRET");
    expect(stderr).toContain("warning: session.sendPolicy.rules[0].match.provider: legacy name");
  });
});

describe("switchboard", () => {
  it("prints the help and exits 0 with no command", async () => {
    const { code, stdout } = await cli([], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: switchboard");
    expect(stdout).toContain("route");
  });

  it("exits 2 on an unknown command", async () => {
    const { code, stderr } = await cli(["rout"], { home });
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command 'rout'/);
  });
});
