// A client of the TypeScript MCP SDK (@modelcontextprotocol/sdk), driven
// line by line from stdin for the gateway's tests: each line is a JSON
// command, each answer one JSON line on stdout. It declares the
// elicitation capability (form mode) and answers elicitation/create with
// the answer last armed.
//
//   {"op":"list"}                          -> {"ok":true,"tools":[names]}
//   {"op":"call","name":…,"arguments":{}}  -> {"ok":true,"result":…} or {"ok":false,"error":{code,message,data}}
//   {"op":"waitChanged"}                   -> {"ok":true} once notifications/tools/list_changed came (30 s at most)
//   {"op":"start","key":k,"name":…,"arguments":{}}
//                                          -> {"ok":true} at once: the call runs in the background with an
//                                             onprogress handler (so a progress token) and an AbortSignal
//   {"op":"progress","key":k,"count":n}    -> {"ok":true,"events":[…]} once call k got n progress
//                                             notifications (30 s at most)
//   {"op":"cancel","key":k,"reason":r}     -> {"ok":true}: aborts call k's AbortSignal with reason r
//   {"op":"await","key":k}                 -> call k's end, as "call" answers, plus "events": what call k saw,
//                                             in order: "progress:<value>" per notification, then "result"
//                                             or "error"
//   {"op":"arm","answer":{action,content}} -> {"ok":true}: the answer to the next elicitation/create
//   {"op":"asked"}                         -> {"ok":true,"asked":[messages of the elicitations answered]}
//   {"op":"exit"}                          -> closes the client and exits 0
//
// Usage: node tsclient.cjs <sdk dir> <url>
const path = require("path");
const readline = require("readline");
const [sdkDir, url] = process.argv.slice(2);
const { Client } = require(path.join(sdkDir, "dist/cjs/client/index.js"));
const { StreamableHTTPClientTransport } = require(path.join(sdkDir, "dist/cjs/client/streamableHttp.js"));
const { ToolListChangedNotificationSchema, ElicitRequestSchema } = require(path.join(sdkDir, "dist/cjs/types.js"));

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const failure = (e) => ({ code: e.code, message: e.message, data: e.data });

// waitFor resolves once cond() holds, checked whenever wake() is called;
// it rejects after 30 s.
function waiter() {
  const waiting = new Set();
  return {
    wake: () => waiting.forEach((f) => f()),
    waitFor: (cond, what) =>
      new Promise((resolve, reject) => {
        if (cond()) return resolve();
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`no ${what} in 30 s`));
        }, 30000);
        const check = () => {
          if (!cond()) return;
          clearTimeout(timer);
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
      }),
  };
}

async function main() {
  const client = new Client({ name: "ts-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const w = waiter();
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
    w.wake();
  });
  let answer = { action: "decline" };
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    return answer;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));

  const calls = new Map(); // key -> {events, progress, abort, done}
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
          await w.waitFor(() => changed > 0, "tools/list_changed");
          changed = 0;
          out({ ok: true });
          break;
        }
        case "start": {
          const c = { events: [], progress: 0, abort: new AbortController() };
          const onprogress = (p) => {
            c.events.push(`progress:${p.progress}`);
            c.progress++;
            w.wake();
          };
          c.done = client
            .callTool({ name: cmd.name, arguments: cmd.arguments || {} }, undefined, { onprogress, signal: c.abort.signal })
            .then(
              (result) => (c.events.push("result"), { ok: true, result }),
              (e) => (c.events.push("error"), { ok: false, error: failure(e) }),
            );
          calls.set(cmd.key, c);
          out({ ok: true });
          break;
        }
        case "progress": {
          const c = calls.get(cmd.key);
          await w.waitFor(() => c.progress >= cmd.count, `${cmd.count} progress notifications for ${cmd.key}`);
          out({ ok: true, events: c.events });
          break;
        }
        case "cancel": {
          calls.get(cmd.key).abort.abort(cmd.reason);
          out({ ok: true });
          break;
        }
        case "await": {
          const c = calls.get(cmd.key);
          const res = await c.done;
          calls.delete(cmd.key);
          out({ ...res, events: c.events });
          break;
        }
        case "arm": {
          answer = cmd.answer;
          out({ ok: true });
          break;
        }
        case "asked": {
          out({ ok: true, asked });
          break;
        }
        case "exit":
          await client.close();
          process.exit(0);
      }
    } catch (e) {
      out({ ok: false, error: failure(e) });
    }
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
