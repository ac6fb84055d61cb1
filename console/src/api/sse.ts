// Server-Sent Events over fetch(): EventSource cannot send a bearer token.
// The stream is resumed after a cut with Last-Event-ID (the id of the last
// event received whole), so no event is lost or repeated, until the server
// sends `event: end` or the caller aborts.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { rawFetch } from './client';
import { ApiError } from './problem';
import { streamOpened } from '../state/conn';

export interface StreamOptions {
  path: string;
  signal: AbortSignal;
  /** Resume after this event id (a reopened page, a chosen point). */
  lastEventId?: string;
  onEvent(ev: EventSourceMessage): void;
  /** Called on each (re)connection; `resumed` is false for the first. */
  onConnect?(resumed: boolean): void;
  /** Called when the connection dropped and a reconnect is scheduled. */
  onDrop?(attempt: number): void;
}

export interface StreamEnd {
  /** The `event: end` data, parsed ({reason: ...}), or null when aborted. */
  end: Record<string, unknown> | null;
  reconnects: number;
}

const RETRYABLE = new Set([0, 429, 502, 503, 504]);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

export async function stream(opts: StreamOptions): Promise<StreamEnd> {
  let lastId = opts.lastEventId;
  let reconnects = 0;
  let backoff = 200;
  const closeIndicator = streamOpened();
  try {
    for (;;) {
      if (opts.signal.aborted) return { end: null, reconnects };
      let end: Record<string, unknown> | null = null;
      try {
        const headers: Record<string, string> = { Accept: 'text/event-stream' };
        if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
        const res = await rawFetch(opts.path, { headers, signal: opts.signal, cache: 'no-store' });
        opts.onConnect?.(reconnects > 0);
        backoff = 200;
        const parser = createParser({
          onEvent(ev) {
            if (ev.event === 'end') {
              try {
                end = JSON.parse(ev.data) as Record<string, unknown>;
              } catch {
                end = { reason: ev.data };
              }
              return;
            }
            opts.onEvent(ev);
            if (ev.id !== undefined) lastId = ev.id;
          },
        });
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
          if (end) {
            await reader.cancel().catch(() => undefined);
            break;
          }
        }
        if (end) return { end, reconnects };
      } catch (e) {
        if (opts.signal.aborted) return { end: null, reconnects };
        if (e instanceof ApiError && !RETRYABLE.has(e.status)) throw e;
      }
      // The stream ended without `end`, or the connection failed: resume.
      reconnects++;
      opts.onDrop?.(reconnects);
      await sleep(backoff, opts.signal);
      backoff = Math.min(backoff * 2, 5000);
    }
  } finally {
    closeIndicator();
  }
}
