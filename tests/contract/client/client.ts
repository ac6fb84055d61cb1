// A small typed client of the taugate REST API, as a web console would
// write it: openapi-fetch over the types openapi-typescript generates from
// the SERVED contract (GET /v1/openapi.json). tests/integration/
// test_typescript_client.py generates ./schema.d.ts, compiles this file
// under tsc --strict and runs it against a live gateway, so a contract
// change that breaks such a client fails the build.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type RunChange = Schemas["RunChange"];
type StreamPosition = Schemas["StreamPosition"];
type StreamEnd = Schemas["StreamEnd"];

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`check failed: ${what}`);
}

// Server-Sent Events, typed by event name (the stream's contentSchema).
type ChangeEvent =
  | { event: "ready" | "reset"; id: string; data: StreamPosition }
  | { event: "run"; id: string; data: RunChange }
  | { event: "end"; id: string; data: StreamEnd };

function parseEvents(text: string): ChangeEvent[] {
  const out: ChangeEvent[] = [];
  for (const block of text.split("\n\n")) {
    let event = "message";
    let id = "";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("id: ")) id = line.slice(4);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (!data.length) continue;
    const parsed: unknown = JSON.parse(data.join("\n"));
    if (event === "run") out.push({ event, id, data: parsed as RunChange });
    else if (event === "ready" || event === "reset")
      out.push({ event, id, data: parsed as StreamPosition });
    else if (event === "end") out.push({ event, id, data: parsed as StreamEnd });
  }
  return out;
}

// Operations the console calls that need a cluster: compiled, not run here.
export async function drainForMaintenance(
  api: ReturnType<typeof createClient<paths>>,
  node: string,
): Promise<Schemas["PodEviction"][]> {
  await api.POST("/v1/admin/nodes/{name}:cordon", {
    params: { path: { name: node } },
    body: { reason: "maintenance" },
  });
  const { data, error } = await api.POST("/v1/admin/nodes/{name}:drain", {
    params: { path: { name: node } },
    body: { reason: "maintenance", grace_period_seconds: 30 },
  });
  if (error) throw new Error(error.detail);
  const source: "admin" | "automation" | undefined = data.node.cordon?.source;
  check(source === "admin", "a drain is an admin's cordon");
  await api.POST("/v1/admin/nodes/{name}:uncordon", { params: { path: { name: node } } });
  return data.pods.filter((p) => p.outcome !== "skipped");
}

export async function main(base: string, token: string, ws: string): Promise<number> {
  const api = createClient<paths>({
    baseUrl: base,
    headers: { Authorization: `Bearer ${token}` },
    // arrays as the contract declares them (style form, explode false): ids=a,b
    querySerializer: { array: { style: "form", explode: false } },
  });
  let calls = 0;

  const doc = await api.GET("/v1/openapi.json");
  calls++;
  check(doc.data?.openapi.startsWith("3.1") === true, "the served contract is OpenAPI 3.1");

  const list = await api.GET("/v1/workspaces/{ws}/runs", {
    params: { path: { ws }, query: { sort: "updated_at", limit: 200 } },
  });
  calls++;
  if (list.error) throw new Error(list.error.detail);
  const runs: Schemas["Run"][] = list.data.items;
  check(runs.length >= 2, "the seeded runs are listed");
  const first = runs[0];
  const state: Schemas["RunState"] = first.state;

  const counts = await api.GET("/v1/workspaces/{ws}/run-counts", {
    params: { path: { ws }, query: { engine: "job" } },
  });
  calls++;
  if (!counts.data) throw new Error("no counts");
  const byState: number = counts.data.by_state[state];
  check(counts.data.total === runs.length && byState >= 1, "counts match the list");
  check(counts.data.by_owner.every((o) => o.count === Object.values(o.by_state).reduce((a, b) => a + b, 0)),
        "owner counts add up");

  const exps = await api.GET("/v1/workspaces/{ws}/experiments", { params: { path: { ws } } });
  calls++;
  const groups: (string | null)[] = (exps.data?.items ?? []).flatMap((e) => e.groups.map((g) => g.name));
  check(groups.length >= 1, "experiments have groups");

  const cmp = await api.GET("/v1/workspaces/{ws}/runs:compare", {
    params: { path: { ws }, query: { ids: [runs[0].id, runs[1].id] } },
  });
  calls++;
  if (cmp.error) throw new Error(cmp.error.detail);
  const paths: string[] = cmp.data.config_differences.map((d) => d.path);
  check(paths.includes("name"), "the compared runs differ by name");
  const exp: Schemas["ExperimentRef"] = cmp.data.runs[0].experiment;
  check(exp.name === null || typeof exp.name === "string", "experiment identity");

  const one = await api.GET("/v1/runs/{id}", { params: { path: { id: first.id } } });
  calls++;
  const etag = one.response.headers.get("ETag");
  check(one.data?.id === first.id && etag !== null, "a run view with an ETag");
  const again = await api.GET("/v1/runs/{id}", {
    params: { path: { id: first.id }, header: { "If-None-Match": etag ?? "" } },
  });
  calls++;
  check(again.response.status === 304, "304 while the run is unchanged");

  const metrics = await api.GET("/v1/runs/{id}/metrics", {
    params: { path: { id: first.id }, query: { name: "loss", max_points: 100 } },
  });
  calls++;
  const m = metrics.data;
  if (m && "items" in m && "name" in m) {
    const reduced: boolean | undefined = m.reduced;
    check(reduced === false && m.items.length === 0, "an empty series is not reduced");
  } else {
    throw new Error("a series was expected");
  }

  const events = await api.GET("/v1/runs/{id}/events", { params: { path: { id: first.id } } });
  calls++;
  const data: { [key: string]: unknown } | undefined = events.data?.items[0]?.data;
  check(data !== undefined, "events carry typed data");

  // the change stream through plain fetch (openapi-fetch buffers bodies)
  const res = await fetch(`${base}/v1/workspaces/${ws}/run-changes?follow=false&after=0`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  calls++;
  const stream = parseEvents(await res.text());
  const created = stream.filter((e): e is Extract<ChangeEvent, { event: "run" }> => e.event === "run");
  check(created.length >= runs.length, "one change at least per run");
  const last = stream[stream.length - 1];
  check(last.event === "end" && last.data.reason === "complete", "the stream ends complete");

  const key = await api.GET("/v1/evidence/public-key");
  calls++;
  check(key.data?.algorithm === "Ed25519", "the evidence key");

  const bad = await api.GET("/v1/workspaces/{ws}/runs", {
    params: { path: { ws }, query: { limit: 1000 } },
  });
  calls++;
  check(bad.error?.status === 400 && bad.error.errors?.[0]?.path === "limit", "a problem names the field");
  return calls;
}

// Run by node (the test); typed here so the file needs no @types/node.
declare const process: { env: { [k: string]: string | undefined }; exitCode?: number };
const env = process.env;
if (env.TAUGATE_URL && env.TAUGATE_TOKEN && env.TAUGATE_WS) {
  main(env.TAUGATE_URL, env.TAUGATE_TOKEN, env.TAUGATE_WS).then(
    (n) => console.log(`${n} typed calls behaved as documented`),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    },
  );
}
