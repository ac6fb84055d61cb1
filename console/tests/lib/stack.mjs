// The stack for the suite: tests/stack.py (PostgreSQL + kubesim + gateway,
// from the project's harness) behind a loopback TCP proxy that can cut every
// open connection (how the suite cuts log streams mid-flight).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export class Stack {
  static async start() {
    const s = new Stack();
    s.proc = spawn(process.env.PYTHON ?? '/usr/bin/python3', [path.join(HERE, '..', 'stack.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    s.lines = createInterface({ input: s.proc.stdout })[Symbol.asyncIterator]();
    const first = await s.lines.next();
    if (first.done) throw new Error('stack.py exited before it was ready');
    Object.assign(s, JSON.parse(first.value));
    s.gateway = s.url;
    await s.startProxy();
    return s;
  }

  async startProxy() {
    const target = new URL(this.gateway);
    this.sockets = new Set();
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      const pair = [client, upstream];
      for (const sock of pair) {
        this.sockets.add(sock);
        sock.on('close', () => this.sockets.delete(sock));
        sock.on('error', () => pair.forEach((x) => x.destroy()));
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    /** What the browser talks to. */
    this.url = `http://127.0.0.1:${this.server.address().port}`;
  }

  /** Cut every open connection through the proxy (streams included). */
  cutAll() {
    const n = this.sockets.size;
    for (const s of this.sockets) s.destroy();
    return n;
  }

  async cmd(op, args = {}) {
    this.proc.stdin.write(JSON.stringify({ op, ...args }) + '\n');
    const r = await this.lines.next();
    const out = JSON.parse(r.value);
    if (out.error) throw new Error(`stack ${op}: ${out.error}`);
    return out;
  }

  /** An API call straight to the gateway (not through the proxy). */
  async api(method, p, { token = this.admin, body, headers = {} } = {}) {
    const h = { Authorization: `Bearer ${token}`, ...headers };
    let b = body;
    if (body !== undefined && typeof body !== 'string') {
      b = JSON.stringify(body);
      h['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(this.gateway + p, { method, headers: h, body: b });
    return res;
  }

  async json(method, p, opts) {
    const res = await this.api(method, p, opts);
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return JSON.parse(text);
  }

  /** Submit jobSpec(name, script, opts) to workspace ray as `token`; returns the run. */
  async submit(name, script, token = this.admin, opts = {}) {
    return this.json('POST', '/v1/workspaces/ray/runs', { token, body: jobSpec(name, script, opts) });
  }

  async runState(id) {
    return (await this.json('GET', `/v1/runs/${id}`)).state;
  }

  async waitState(id, states, ms = 60_000) {
    return until(async () => states.includes(await this.runState(id)), ms, `run ${id} in ${states}`);
  }

  async waitSealed(id, ms = 90_000) {
    return until(async () => {
      const r = await this.api('GET', `/v1/runs/${id}/evidence`);
      return r.ok && (await r.json()).sealed;
    }, ms, `evidence of ${id} sealed`);
  }

  async stop() {
    this.cutAll();
    await new Promise((r) => this.server.close(r));
    this.proc.stdin.end();
    await new Promise((r) => this.proc.on('exit', r));
  }
}

/** Poll `fn` until it returns a truthy value or `ms` pass. */
export async function until(fn, ms, what) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

export function b64(s) {
  return Buffer.from(s).toString('base64');
}

/** A Job run in workspace `ray` running `script` on kubesim (its own experiment unless told). */
export function jobSpec(name, script, { experiment = name, group = 'suite', cpu = '10m' } = {}) {
  return {
    spec: `name: ${name}\nengine: job\nentrypoint: run.sh\ncompute:\n  gpus: 0\n  cpu_request: ${cpu}\n  memory_request: 32Mi\nruntime:\n  image: bash:5.2\npolicy:\n  namespace: ray\n  profile: kind-cpu-job\n  queue: kind-cpu\nexperiment:\n  project: Console\n  name: ${experiment}\n  group: ${group}\n`,
    files: { 'run.sh': b64(`#!/usr/bin/env bash\n${script}\n`) },
  };
}
