/**
 * `nanobot mcp login <server>` / `nanobot mcp logout <server>`: OAuth for a remote MCP server.
 * Login prints the authorization URL, waits for the browser's redirect on a loopback callback and
 * stores the tokens in `<home>/mcp-oauth/<server>.json` (0600); logout deletes that file.
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";

interface LoginOpts {
  timeout: string;
}

export function registerMcpLoginCommands(mcp: Command, ctx: CliContext): void {
  mcp
    .command("login")
    .description("authorise nanobot at a remote MCP server (OAuth): prints a URL to open, waits for the redirect")
    .argument("<server>", "the server's name in mcpServers")
    .option("--timeout <seconds>", "how long to wait for the browser", "300")
    .action(async (server: string, opts: LoginOpts, command: Command) => {
      const seconds = Number(opts.timeout);
      if (!Number.isFinite(seconds) || seconds <= 0) {
        ctx.io.stderr.write(`error: --timeout expects a positive number of seconds, got ${JSON.stringify(opts.timeout)}\n`);
        ctx.exitCode = 2;
        return;
      }
      const loaded = await ctx.loadConfig(command);
      ctx.printWarnings(loaded.warnings);
      const spec = loaded.config.mcpServers[server];
      if (!spec) {
        ctx.io.stderr.write(`error: no MCP server '${server}' in ${loaded.path ?? "the config"} (mcpServers)\n`);
        ctx.exitCode = 2;
        return;
      }
      const { loginToServer } = await import("../../mcp/oauth/login.js");
      const c = ctx.colors.out;
      try {
        const result = await loginToServer(server, spec, {
          home: loaded.home,
          env: ctx.io.env,
          timeoutSeconds: seconds,
          onAuthorizationUrl: (url, redirect) => {
            ctx.io.stdout.write(`Open this URL in a browser to authorise nanobot at ${c.bold(server)}:\n\n  ${url.href}\n\nWaiting for the redirect to ${redirect} …\n`);
          },
        });
        if (result.authorized) ctx.io.stdout.write(`${c.green("Logged in")} to ${server} (${result.tools} tool${result.tools === 1 ? "" : "s"}); tokens in ${result.tokenFile ?? "memory"}\n`);
        else ctx.io.stdout.write(`${server} let nanobot in without asking for authorisation (${result.tools} tools); nothing stored\n`);
      } catch (err) {
        ctx.io.stderr.write(`error: login to ${server} failed: ${err instanceof Error ? err.message : String(err)}\n`);
        ctx.exitCode = 1;
      }
    });
  mcp
    .command("logout")
    .description("delete the OAuth tokens nanobot holds for a remote MCP server")
    .argument("<server>", "the server's name in mcpServers")
    .action(async (server: string, _opts: unknown, command: Command) => {
      const loaded = await ctx.loadConfig(command);
      ctx.printWarnings(loaded.warnings);
      const { logoutFromServer } = await import("../../mcp/oauth/login.js");
      const removed = await logoutFromServer(server, loaded.config.mcpServers[server], { home: loaded.home, env: ctx.io.env });
      ctx.io.stdout.write(removed ? `Logged out of ${server}: tokens deleted\n` : `${server}: no stored tokens\n`);
    });
}
