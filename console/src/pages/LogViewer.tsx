// A run's logs: SSE follow resumed with Last-Event-ID after a cut, the lines
// virtualized (a few dozen elements in the DOM however many arrive), search
// with next/previous, copy, and a full plain-text download with no line cap.
import { useEffect, useRef, useState, useReducer } from 'preact/hooks';
import { stream } from '../api/sse';
import { rawFetch } from '../api/client';
import { ApiError } from '../api/problem';
import { loc, setQuery } from '../router';
import { ProblemView } from '../ui/common';
import { useVirtual } from '../ui/virtual';
import type { RunDetail } from '../api/types';

const LINE_PX = 20;
/** Lines kept in memory for the viewer; the download has them all. */
const MAX_LINES = 200_000;

const END_TEXT: Record<string, string> = {
  complete: 'The log is complete.',
  idle: 'No new lines for a while; the stream was closed. Follow again to keep watching.',
  shutdown: 'The gateway is shutting down; follow again in a moment.',
  overflow: 'Too many followers on this gateway; follow again later or download the log.',
  revoked: 'Your access to this run was withdrawn.',
};

class LogBuffer {
  lines: string[] = [];
  dropped = 0;
  private pending: string[] = [];
  private frame = 0;
  constructor(private readonly onFlush: () => void) {}
  push(text: string) {
    for (const l of text.split('\n')) this.pending.push(l);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }
  flush() {
    this.frame = 0;
    if (!this.pending.length) return;
    this.lines.push(...this.pending);
    this.pending = [];
    if (this.lines.length > MAX_LINES) {
      const cut = this.lines.length - MAX_LINES;
      this.lines.splice(0, cut);
      this.dropped += cut;
    }
    this.onFlush();
  }
  dispose() {
    if (this.frame) cancelAnimationFrame(this.frame);
  }
  text(): string {
    this.flush();
    return this.lines.length ? this.lines.join('\n') + '\n' : '';
  }
}

function logQuery(q: URLSearchParams, run: RunDetail, extra: Record<string, string>): string {
  const p = new URLSearchParams();
  p.set('attempt', q.get('attempt') ?? String(run.attempt));
  for (const k of ['pod', 'container', 'tail', 'since'] as const) {
    const v = q.get(k);
    if (v) p.set(k, v);
  }
  if (q.get('timestamps') === '1') p.set('timestamps', 'true');
  if (q.get('prefix') === '1') p.set('prefix', 'true');
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  return p.toString();
}

function Highlight({ text, term }: { text: string; term: string }) {
  if (!term) return <>{text}</>;
  const parts: preact.ComponentChildren[] = [];
  let i = 0;
  for (;;) {
    const j = text.indexOf(term, i);
    if (j < 0) break;
    parts.push(text.slice(i, j), <mark key={j}>{term}</mark>);
    i = j + term.length;
  }
  parts.push(text.slice(i));
  return <>{parts}</>;
}

export function LogViewer({ run }: { run: RunDetail }) {
  const q = loc.value.query;
  const follow = q.get('follow') !== '0';
  const qkey = logQuery(q, run, {});
  const [, bump] = useReducer((x: number) => x + 1, 0);
  const buf = useRef<LogBuffer>();
  const [status, setStatus] = useState('Connecting…');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [stick, setStick] = useState(true);
  const [term, setTerm] = useState('');
  const [hit, setHit] = useState(-1);
  const [dl, setDl] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const b = new LogBuffer(() => bump(0));
    buf.current = b;
    setError(undefined);
    setStick(true);
    const ctl = new AbortController();
    setStatus('Connecting…');
    stream({
      path: `/v1/runs/${run.id}/logs?${logQuery(q, run, follow ? { follow: 'true' } : {})}`,
      signal: ctl.signal,
      onEvent: (ev) => b.push(ev.data),
      onConnect: (resumed) => setStatus(resumed ? 'Reconnected; resumed after the last line received.' : follow ? 'Following.' : 'Loading.'),
      onDrop: (n) => setStatus(`Connection lost; reconnecting (${n})…`),
    })
      .then((r) => {
        b.flush();
        if (r.end) {
          const reason = String(r.end['reason'] ?? '');
          setStatus(END_TEXT[reason] ?? `The stream ended (${reason}).`);
        }
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError) setError(e);
        setStatus('Stopped.');
      });
    return () => {
      ctl.abort();
      b.dispose();
    };
  }, [run.id, qkey, follow]);

  const lines = buf.current?.lines ?? [];
  const v = useVirtual({ count: lines.length, getScrollElement: () => scroller.current, estimateSize: () => LINE_PX, overscan: 20 });
  useEffect(() => {
    if (stick && lines.length) v.scrollToIndex(lines.length - 1, { align: 'end' });
  }, [lines.length, stick]);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < LINE_PX * 2;
    if (atEnd !== stick) setStick(atEnd);
  };

  const find = (dir: 1 | -1) => {
    if (!term) return;
    const n = lines.length;
    for (let k = 1; k <= n; k++) {
      const i = (((hit < 0 ? (dir > 0 ? -1 : 0) : hit) + dir * k) % n + n) % n;
      if (lines[i]!.includes(term)) {
        setHit(i);
        setStick(false);
        v.scrollToIndex(i, { align: 'center' });
        return;
      }
    }
    setHit(-1);
  };

  const download = async () => {
    setDl('Preparing the download…');
    try {
      const res = await rawFetch(`/v1/runs/${run.id}/logs?${logQuery(q, run, {})}`.replace(/([?&])(tail|since)=[^&]*/g, '$1'), { headers: { Accept: 'text/plain' } });
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = `${run.name}-${run.id.slice(0, 8)}-attempt${q.get('attempt') ?? run.attempt}.log`;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setDl(`Downloaded ${blob.size.toLocaleString()} bytes.`);
    } catch (e) {
      setDl(null);
      if (e instanceof ApiError) setError(e);
    }
  };

  const attempts = run.attempts ?? [];
  const items = v.getVirtualItems();
  return (
    <div class="logs">
      <div class="log-controls">
        <label>
          Attempt
          <select value={q.get('attempt') ?? String(run.attempt)} onChange={(e) => setQuery({ attempt: (e.target as HTMLSelectElement).value })}>
            {(attempts.length ? attempts.map((a) => a.attempt) : [run.attempt]).map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(e) => setQuery({ follow: (e.target as HTMLInputElement).checked ? null : '0' })} /> Follow
        </label>
        <label class="check">
          <input type="checkbox" checked={q.get('timestamps') === '1'} onChange={(e) => setQuery({ timestamps: (e.target as HTMLInputElement).checked ? '1' : null })} /> Timestamps
        </label>
        <label class="check">
          <input type="checkbox" checked={q.get('prefix') === '1'} onChange={(e) => setQuery({ prefix: (e.target as HTMLInputElement).checked ? '1' : null })} /> Pod prefix
        </label>
        <form
          class="inline"
          role="search"
          aria-label="Search the log"
          onSubmit={(e) => {
            e.preventDefault();
            find(1);
          }}
        >
          <label>
            Search
            <input type="search" value={term} onInput={(e) => { setTerm((e.target as HTMLInputElement).value); setHit(-1); }} />
          </label>
          <button type="button" onClick={() => find(-1)} aria-label="Previous match">
            ↑
          </button>
          <button type="submit" aria-label="Next match">
            ↓
          </button>
        </form>
        <button type="button" onClick={() => void navigator.clipboard.writeText(buf.current?.text() ?? '')}>
          Copy loaded text
        </button>
        <button type="button" onClick={() => void download()}>
          Download full log
        </button>
      </div>
      <p class="muted small log-status" role="status" aria-live="polite">
        {status} {lines.length.toLocaleString()} lines{buf.current?.dropped ? ` (the first ${buf.current.dropped.toLocaleString()} were dropped from view; the download has them)` : ''}
        {hit >= 0 ? ` · match at line ${hit + 1 + (buf.current?.dropped ?? 0)}` : ''}
        {dl ? ` · ${dl}` : ''}
      </p>
      <ProblemView error={error} />
      <div class="log-scroller" ref={scroller} onScroll={onScroll} tabIndex={0} role="log" aria-live="off" aria-label="Log lines">
        <div class="log-inner" style={{ height: `${v.getTotalSize()}px` }}>
          {items.map((vi) => (
            <div key={vi.index} class={vi.index === hit ? 'line hit' : 'line'} style={{ transform: `translateY(${vi.start}px)` }}>
              <Highlight text={lines[vi.index] ?? ''} term={term} />
            </div>
          ))}
        </div>
      </div>
      {!stick ? (
        <button type="button" class="jump" onClick={() => setStick(true)}>
          Jump to the end and follow
        </button>
      ) : null}
    </div>
  );
}
