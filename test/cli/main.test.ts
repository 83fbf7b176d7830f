// runCli defines only the command it runs (`switchboard status` needs no other): what a person sees
// must be what the whole program shows, which it defines when the first word is not a command.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";

describe("runCli with the one command it runs", () => {
  it("prints the help, the usage errors and the result the whole program prints", async () => {
    const home = await tempHome();
    await writeFile(path.join(home, "switchboard.json5"), "{ gateway: { port: 19000 } }");
    // `--config <the default file>` first: the same run, through the program with every command defined
    const whole = ["--config", path.join(home, "switchboard.json5")];
    for (const argv of [
      ["status", "--help"],
      ["sessions", "prune", "--help"],
      ["sessions", "--bogus"],
      ["cron", "add"],
      ["route", "--channel", "telegram", "--peer", "dm:42"],
      ["sessions", "--json"],
    ]) {
      const alone = await cli(argv, { home });
      expect(alone, argv.join(" ")).toEqual(await cli([...whole, ...argv], { home }));
    }
  });

  it("still lists every command and suggests the nearest one for a typo", async () => {
    const home = await tempHome();
    const help = await cli(["--help"], { home });
    for (const command of ["config", "sessions", "status", "gateway", "chat", "cron", "inbox", "state", "workspace"])
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    const typo = await cli(["sesions"], { home });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("(Did you mean sessions?)");
  });
});
