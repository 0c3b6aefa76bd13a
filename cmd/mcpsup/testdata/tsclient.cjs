// A client of the TypeScript MCP SDK (@modelcontextprotocol/sdk), driven
// line by line from stdin for the gateway's tests: each line is a JSON
// command, each answer one JSON line on stdout.
//
//   {"op":"list"}                          -> {"ok":true,"tools":[names]}
//   {"op":"call","name":…,"arguments":{}}  -> {"ok":true,"result":…} or {"ok":false,"error":{code,message,data}}
//   {"op":"waitChanged"}                   -> {"ok":true} once notifications/tools/list_changed came (30 s at most)
//   {"op":"exit"}                          -> closes the client and exits 0
//
// Usage: node tsclient.cjs <sdk dir> <url>
const path = require("path");
const readline = require("readline");
const [sdkDir, url] = process.argv.slice(2);
const { Client } = require(path.join(sdkDir, "dist/cjs/client/index.js"));
const { StreamableHTTPClientTransport } = require(path.join(sdkDir, "dist/cjs/client/streamableHttp.js"));
const { ToolListChangedNotificationSchema } = require(path.join(sdkDir, "dist/cjs/types.js"));

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

async function main() {
  const client = new Client({ name: "ts-e2e", version: "1.0.0" });
  let changed = 0;
  let wake = null;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
    if (wake) wake();
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const cmd = JSON.parse(line);
    try {
      switch (cmd.op) {
        case "list": {
          const res = await client.listTools();
          out({ ok: true, tools: res.tools.map((t) => t.name) });
          break;
        }
        case "call": {
          const result = await client.callTool({ name: cmd.name, arguments: cmd.arguments || {} });
          out({ ok: true, result });
          break;
        }
        case "waitChanged": {
          if (changed === 0) {
            await new Promise((resolve, reject) => {
              wake = resolve;
              setTimeout(() => reject(new Error("no tools/list_changed in 30 s")), 30000);
            });
          }
          changed = 0;
          wake = null;
          out({ ok: true });
          break;
        }
        case "exit":
          await client.close();
          process.exit(0);
      }
    } catch (e) {
      out({ ok: false, error: { code: e.code, message: e.message, data: e.data } });
    }
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
