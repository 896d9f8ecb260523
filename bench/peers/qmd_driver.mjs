// QMD (@tobilu/qmd) behind JSON lines on stdin/stdout, driven by the Qmd adapter (adapters.py).
//   node qmd_driver.mjs NPM_PREFIX DB_PATH NOTES_DIR
// One request a line, one answer a line ({"ok": ...} or {"error": ...}):
//   {"op": "update"}                      index the notes folder (store.update(): rescans every file)
//   {"op": "add", "name", "text"}         write one markdown file, then store.update()
//   {"op": "search", "q", "k"}            store.searchLex(q, {limit: k}): file names, best first
//   {"op": "close"}
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [prefix, dbPath, notes] = process.argv.slice(2);
console.log = console.error; // stdout carries the answers only
// the driver lives outside the npm prefix, so import QMD by path
const { createStore } = await import(pathToFileURL(join(prefix, "node_modules/@tobilu/qmd/dist/index.js")).href);
const store = await createStore({ dbPath, config: { collections: { zzmem: { path: notes, pattern: "**/*.md" } } } });

const ops = {
  update: async () => (await store.update()).indexed,
  add: async (r) => {
    writeFileSync(join(notes, r.name), r.text + "\n");
    return (await store.update()).indexed;
  },
  search: async (r) => (await store.searchLex(r.q, { limit: r.k })).map((h) => h.displayPath.split("/").pop()),
  close: async () => {
    await store.close();
    return true;
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const r = JSON.parse(line);
  let out;
  try {
    out = { ok: await ops[r.op](r) };
  } catch (e) {
    out = { error: String(e && e.stack ? e.stack : e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  if (r.op === "close") break;
}
process.exit(0);
