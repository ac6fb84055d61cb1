// A workspace's run changes, shared by every view of that workspace: one
// run-change stream (watchRunChanges, SSE over fetch, resumed after a cut
// with Last-Event-ID so no change is lost or repeated) while any view
// listens. When the stream cannot be had (it keeps failing, or the gateway
// refuses it), the same changes come from polling the runs list with
// `updated_since` until the stream is back. Views see one kind of change
// either way, and are told to resync when the feed switches or the server
// says its history no longer reaches back (`reset`).
import { useEffect, useRef } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { stream } from '../api/sse';
import type { Run, RunChange } from '../api/types';

export interface ChangeListener {
  onChange(c: RunChange): void;
  /** Changes may have been missed: reload what the view shows. */
  onResync(): void;
}

const POLL_MS = 2000;
/** Failed reconnects before polling stands in for the stream. */
const DROPS_BEFORE_POLLING = 2;
/** How long a refused stream waits before it is tried again. */
const REFUSED_RETRY_MS = 30_000;
const REAUTH_RETRY_MS = 2000;
/** A feed outlives its last listener this long (list → run page → list). */
const LINGER_MS = 5000;

class Feed {
  readonly listeners = new Set<ChangeListener>();
  private ctl = new AbortController();
  private lastId: string | undefined;
  private polling = false;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  /** The polling mark: runs updated at or after it are fetched. */
  private since: string | undefined;
  private seen = new Map<string, string>();
  lingerTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly ws: string) {
    void this.follow();
  }

  close(): void {
    this.ctl.abort();
    this.stopPolling();
  }

  private emit(c: RunChange): void {
    if (c.at > (this.since ?? '')) this.since = c.at;
    for (const l of this.listeners) l.onChange(c);
  }

  private resync(): void {
    for (const l of this.listeners) l.onResync();
  }

  private async follow(): Promise<void> {
    const signal = this.ctl.signal;
    while (!signal.aborted) {
      let wait = 250;
      try {
        await stream({
          path: `/v1/workspaces/${encodeURIComponent(this.ws)}/run-changes`,
          signal,
          ...(this.lastId !== undefined ? { lastEventId: this.lastId } : {}),
          onConnect: () => {
            if (this.polling) {
              // Polling may have run behind or ahead: start clean from the stream.
              this.stopPolling();
              this.resync();
            }
          },
          onDrop: (attempt) => {
            if (attempt >= DROPS_BEFORE_POLLING) this.startPolling();
          },
          onEvent: (ev) => {
            if (ev.id !== undefined) this.lastId = ev.id;
            if (ev.event === 'run') this.emit(JSON.parse(ev.data) as RunChange);
            else if (ev.event === 'reset') this.resync();
          },
        });
        // `end`: shutdown, overflow, revoked or idle. Reconnect from where it
        // stopped; a revoked caller is answered 401/403 on the way back in.
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof ApiError && e.status === 401) {
          // The sign-in dialog is up; the stream comes back with the new token.
          wait = REAUTH_RETRY_MS;
        } else {
          // Refused (no such endpoint on this gateway, no access): poll, and
          // ask for the stream again now and then.
          this.startPolling();
          wait = REFUSED_RETRY_MS;
        }
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  private startPolling(): void {
    if (this.polling || this.ctl.signal.aborted) return;
    this.polling = true;
    // What changed while the stream was away is not known: resync once.
    this.resync();
    const tick = async () => {
      try {
        await this.poll();
      } catch {
        /* the indicator shows why; the next tick tries again */
      }
      if (this.polling) this.pollTimer = setTimeout(() => void tick(), POLL_MS);
    };
    void tick();
  }

  private stopPolling(): void {
    this.polling = false;
    clearTimeout(this.pollTimer);
  }

  private async poll(): Promise<void> {
    const path = { ws: this.ws };
    const signal = this.ctl.signal;
    if (this.since === undefined) {
      // The server's clock: the newest change it has, not this browser's time.
      const newest = await ok(api.GET('/v1/workspaces/{ws}/runs', { params: { path, query: { sort: '-updated_at', limit: 1 } }, signal }));
      this.since = newest.items[0]?.updated_at ?? '1970-01-01T00:00:00Z';
      return;
    }
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await ok(api.GET('/v1/workspaces/{ws}/runs', { params: { path, query: { updated_since: this.since, sort: 'updated_at', limit: 200, ...(cursor ? { cursor } : {}) } }, signal }));
      for (const run of r.items) {
        // updated_since is inclusive: the runs at the mark come again.
        if (this.seen.get(run.id) === run.updated_at) continue;
        this.seen.set(run.id, run.updated_at);
        this.emit(changeOf(run));
      }
      if (this.seen.size > 5000) this.seen.clear();
      if (!r.next_cursor) break;
      cursor = r.next_cursor;
    }
  }
}

/** A run as a change (what polling finds, in the stream's shape). */
export function changeOf(r: Run): RunChange {
  return {
    id: 0,
    kind: 'changed',
    run_id: r.id,
    workspace: r.workspace,
    name: r.name,
    owner: r.owner,
    engine: r.engine,
    state: r.state,
    reason: r.reason,
    message: r.message,
    attempt: r.attempt,
    previous: null,
    at: r.updated_at,
  };
}

const feeds = new Map<string, Feed>();

/** Listen to `ws`'s run changes until the returned function is called. */
export function subscribeChanges(ws: string, l: ChangeListener): () => void {
  let f = feeds.get(ws);
  if (!f) {
    f = new Feed(ws);
    feeds.set(ws, f);
  }
  clearTimeout(f.lingerTimer);
  f.listeners.add(l);
  const feed = f;
  return () => {
    feed.listeners.delete(l);
    if (feed.listeners.size) return;
    feed.lingerTimer = setTimeout(() => {
      if (feed.listeners.size) return;
      feed.close();
      feeds.delete(ws);
    }, LINGER_MS);
  };
}

/** Call `reloads` (debounced) whenever a run of `ws` changes or the feed resyncs. */
export function useReloadOnChanges(ws: string, reloads: (() => void)[], debounceMs = 500): void {
  const ref = useRef(reloads);
  ref.current = reloads;
  useEffect(() => {
    let t: ReturnType<typeof setTimeout> | undefined;
    const again = () => {
      clearTimeout(t);
      t = setTimeout(() => ref.current.forEach((f) => f()), debounceMs);
    };
    const stop = subscribeChanges(ws, { onChange: again, onResync: again });
    return () => {
      stop();
      clearTimeout(t);
    };
  }, [ws]);
}
