import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig, resolvePaths } from "../../../src/config/index.js";
import { localHomeTables, localTablePath } from "../../../src/migrate/home-tables.js";
import { recordingPort } from "../../support/recording-port.js";
import { createTestCore, homeForTest } from "../../support/test-core.js";

describe("the migrator's list of a home's tables", () => {
  it("names every table a gateway opens, at the path the gateway keeps it (a new store not listed fails here)", async () => {
    const home = await homeForTest("home-tables");
    const { port, opened } = recordingPort(path.join(home, "state"));
    const { config } = parseConfig({ agents: { list: [{ id: "main" }, { id: "work" }] } });
    const core = await createTestCore(config, home, { state: port });
    await core.sessions.forAgent("main");
    await core.sessions.forAgent("work");
    await core.stop(0);
    const layout = {
      config,
      paths: resolvePaths({ homeDir: home, cwd: home, env: { SWITCHBOARD_HOME: home } }),
      homeDir: home,
    };
    expect([...opened.keys()].sort()).toEqual((await localHomeTables(layout)).sort());
    for (const [name, file] of opened) expect(path.resolve(file), name).toBe(localTablePath(layout, name));
  });
});
