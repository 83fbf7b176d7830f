import { describe, expect, it } from "vitest";
import { MASK, maskSecrets } from "../../src/config/index.js";
import { parseConfig } from "../adapters/table-config.js";

describe("maskSecrets", () => {
  it("hides tokens and secrets at any depth and leaves everything else", () => {
    const { config } = parseConfig({
      channels: {
        telegram: {
          botToken: "123:SECRETa",
          webhookSecret: "s3",
          tokenFile: "/run/tg",
          accounts: { ops: { botToken: "456:SECRETb" } },
        },
        discord: { token: "Bot SECRETc" },
      },
      gateway: { auth: { token: "SECRETd-0123456789abcdef" } },
    });
    const masked = maskSecrets(config);
    expect(masked.channels.telegram).toMatchObject({
      botToken: MASK,
      webhookSecret: MASK,
      tokenFile: "/run/tg",
      accounts: { ops: { botToken: MASK } },
    });
    expect(masked.channels.discord?.token).toBe(MASK);
    expect(masked.gateway.auth.token).toBe(MASK);
    expect(JSON.stringify(masked)).not.toMatch(/SECRET/);
    expect(config.channels.telegram?.botToken).toBe("123:SECRETa");
  });

  it("hides every value of an MCP server's env and headers, keeping the names", () => {
    const { config } = parseConfig({
      mcp: {
        servers: {
          gh: { command: "npx", args: ["server-github"], env: { GITHUB_TOKEN: "SECRETe" } },
          web: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer SECRETf" } },
        },
      },
    });
    const masked = maskSecrets(config);
    expect(masked.mcp.servers).toEqual({
      gh: { command: "npx", args: ["server-github"], env: { GITHUB_TOKEN: MASK } },
      web: { url: "https://mcp.example.com/mcp", headers: { Authorization: MASK } },
    });
  });
});
