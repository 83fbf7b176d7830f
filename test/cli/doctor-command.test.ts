import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";

let home: string;

beforeEach(async () => {
  home = await tempHome();
});

const configure = (text: string) => writeFile(path.join(home, "switchboard.json5"), text);

describe("switchboard doctor", () => {
  it("prints the DM scope, the owners of each account and where they came from, and no warning for a one-person bot", async () => {
    await configure(`{ channels: { telegram: { allowFrom: ["42"], commandAllowFrom: ["7"], accounts: { work: { owners: [] } } } } }`);
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain(`DM sessions: dmScope "main": every DM shares agent:main:main`);
    expect(stdout).toContain("  telegram: owners 42 (from allowFrom: no owners list); command users 7; DMs from 42");
    expect(stdout).toContain("  telegram (account work): owners nobody; command users 7; DMs from 42");
    expect(stdout).toContain("no warnings");
  });

  it("warns, exit 0, when several people may DM a bot whose DMs share one session", async () => {
    await configure(`{ channels: { telegram: { dmPolicy: "open", owners: ["42"] } } }`);
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("DMs from everyone");
    expect(stdout).toMatch(/warning: session\.dmScope is "main".*telegram \(dmPolicy is "open"\).*dmScope: "per-channel-peer"/);
  });

  it("prints the same as JSON with --json", async () => {
    await configure(`{ session: { dmScope: "per-channel-peer" }, channels: { telegram: { allowFrom: ["42", "43"] } } }`);
    const { code, stdout } = await cli(["doctor", "--json"], { home });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      config: { path: path.join(home, "switchboard.json5"), exists: true, valid: true },
      session: { dmScope: "per-channel-peer", mainKey: "main", scope: "per-sender", mainSession: "agent:main:main" },
      accounts: [{ channel: "telegram", accountId: "default", dmPolicy: "allowlist", owners: ["42", "43"], ownersFrom: "allowFrom", commandUsers: [], dmSenders: ["42", "43"], manyDmSenders: true }],
      warnings: [],
    });
  });

  it("exits 2 on an invalid config, as config validate does", async () => {
    await configure(`{ session: { dmScope: "everyone" } }`);
    expect((await cli(["doctor"], { home })).code).toBe(2);
  });
});
