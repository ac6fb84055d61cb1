// Runs: a virtualized table over cursor pages (only the rows in view are in
// the DOM, pages of 200 load as the user scrolls), filters kept in the URL,
// live updates, multi-select with bulk cancel, and a quick-look drawer.
import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { loc, href, setQuery, navigate } from '../router';
import { usePoll } from '../lib/data';
import { ProblemView, StateBadge, Time, isTerminal, Loading } from '../ui/common';
import { Dialog } from '../ui/dialog';
import { useVirtual } from '../ui/virtual';
import { formatDuration } from '../state/prefs';
import { RUN_STATES, type Run, type RunState } from '../api/types';
import { RunSummary } from './RunPage';

const ROW_PX = 36;
const FIRST_PAGE = 50;
const PAGE = 200;
const LIVE_MS = 1000;

interface Filters {
  state?: RunState;
  owner?: string;
  engine?: 'job' | 'rayjob';
  name?: string;
  since?: string;
  until?: string;
}

function filtersFrom(q: URLSearchParams): Filters {
  const f: Filters = {};
  const st = q.get('state');
  if (st && (RUN_STATES as string[]).includes(st)) f.state = st as RunState;
  const eng = q.get('engine');
  if (eng === 'job' || eng === 'rayjob') f.engine = eng;
  for (const k of ['owner', 'name', 'since', 'until'] as const) {
    const v = q.get(k);
    if (v) f[k] = v;
  }
  return f;
}

/** The loaded rows of one filter set: pages appended as they come, live changes merged in. */
class RunList {
  items: Run[] = [];
  index = new Map<string, number>();
  cursor: string | null = null;
  done = false;
  loading = false;
  error: ApiError | undefined;
  private ctl = new AbortController();

  constructor(readonly ws: string, readonly filters: Filters, readonly changed: () => void) {}

  dispose() {
    this.ctl.abort();
  }

  async more(): Promise<void> {
    if (this.loading || this.done) return;
    this.loading = true;
    this.changed();
    try {
      const page = await ok(
        api.GET('/v1/workspaces/{ws}/runs', {
          params: { path: { ws: this.ws }, query: { ...this.filters, limit: this.items.length ? PAGE : FIRST_PAGE, ...(this.cursor ? { cursor: this.cursor } : {}) } },
          signal: this.ctl.signal,
        }),
      );
      for (const r of page.items) {
        if (this.index.has(r.id)) continue;
        this.index.set(r.id, this.items.length);
        this.items.push(r);
      }
      this.cursor = page.next_cursor ?? null;
      this.done = !page.next_cursor;
      this.error = undefined;
    } catch (e) {
      if (e instanceof ApiError) this.error = e;
    } finally {
      this.loading = false;
      if (!this.ctl.signal.aborted) this.changed();
    }
  }

  /** Merge the newest page: changed rows update in place, new runs go on top. */
  async refresh(): Promise<void> {
    if (!this.items.length && !this.done) return;
    let page;
    try {
      page = await ok(api.GET('/v1/workspaces/{ws}/runs', { params: { path: { ws: this.ws }, query: { ...this.filters, limit: FIRST_PAGE } }, signal: this.ctl.signal }));
    } catch {
      return;
    }
    let dirty = false;
    const fresh: Run[] = [];
    for (const r of page.items) {
      const i = this.index.get(r.id);
      if (i === undefined) fresh.push(r);
      else if (this.items[i]!.updated_at !== r.updated_at || this.items[i]!.state !== r.state) {
        this.items[i] = r;
        dirty = true;
      }
    }
    if (fresh.length) {
      this.items = [...fresh, ...this.items];
      this.index = new Map(this.items.map((r, i) => [r.id, i]));
      dirty = true;
    }
    if (dirty) this.changed();
  }
}

function duration(r: Run): string {
  if (!r.started_at) return '—';
  const end = r.finished_at ? Date.parse(r.finished_at) : Date.now();
  return formatDuration(end - Date.parse(r.started_at));
}

function FilterBar({ f }: { f: Filters }) {
  const [name, setName] = useState(f.name ?? '');
  const [owner, setOwner] = useState(f.owner ?? '');
  useEffect(() => setName(f.name ?? ''), [f.name]);
  useEffect(() => setOwner(f.owner ?? ''), [f.owner]);
  const apply = (e: Event) => {
    e.preventDefault();
    setQuery({ name: name.trim() || null, owner: owner.trim() || null }, { replace: false });
  };
  const chips = Object.entries(f).filter(([, v]) => v);
  return (
    <form class="filters" onSubmit={apply} role="search" aria-label="Filter runs">
      <label>
        State
        <select value={f.state ?? ''} onChange={(e) => setQuery({ state: (e.target as HTMLSelectElement).value || null }, { replace: false })}>
          <option value="">any</option>
          {RUN_STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Engine
        <select value={f.engine ?? ''} onChange={(e) => setQuery({ engine: (e.target as HTMLSelectElement).value || null }, { replace: false })}>
          <option value="">any</option>
          <option value="job">job</option>
          <option value="rayjob">rayjob</option>
        </select>
      </label>
      <label>
        Name
        <input id="runs-filter-name" type="search" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="exact name" />
      </label>
      <label>
        Owner
        <input type="search" value={owner} onInput={(e) => setOwner((e.target as HTMLInputElement).value)} placeholder="subject" />
      </label>
      <button type="submit">Apply</button>
      {chips.length ? (
        <ul class="chips" aria-label="Active filters">
          {chips.map(([k, v]) => (
            <li key={k}>
              <button type="button" class="chip" aria-label={`Remove filter ${k} ${v}`} onClick={() => setQuery({ [k]: null }, { replace: false })}>
                {k}: {v} ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}

function BulkCancel({ runs, onClose }: { runs: Run[]; onClose(done: boolean): void }) {
  const [results, setResults] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const finished = Object.keys(results).length === runs.length;
  const go = async () => {
    setBusy(true);
    for (const r of runs) {
      try {
        await ok(api.POST('/v1/runs/{id}:cancel', { params: { path: { id: r.id } } }));
        setResults((x) => ({ ...x, [r.id]: 'cancelled' }));
      } catch (e) {
        setResults((x) => ({ ...x, [r.id]: e instanceof ApiError ? `${e.problem.detail} (request ${e.requestId})` : String(e) }));
      }
    }
    setBusy(false);
  };
  return (
    <Dialog
      open
      title={`Cancel ${runs.length} run${runs.length === 1 ? '' : 's'}?`}
      onClose={() => onClose(finished)}
      actions={
        finished ? (
          <button type="button" class="primary" onClick={() => onClose(true)}>
            Done
          </button>
        ) : (
          <>
            <button type="button" onClick={() => onClose(false)} disabled={busy}>
              Keep them
            </button>
            <button type="button" class="danger" onClick={go} disabled={busy}>
              {busy ? 'Cancelling…' : 'Cancel runs'}
            </button>
          </>
        )
      }
    >
      <ul class="plain" aria-live="polite">
        {runs.map((r) => (
          <li key={r.id}>
            {r.name} <StateBadge state={r.state} /> {results[r.id] ? <strong>{results[r.id]}</strong> : null}
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

export function Runs({ ws }: { ws: string }) {
  const query = loc.value.query;
  const qs = query.toString();
  const filters = useMemo(() => filtersFrom(query), [qs, ws]);
  const fkey = JSON.stringify(filters);
  const [, bump] = useReducer((x: number) => x + 1, 0);
  const list = useMemo(() => new RunList(ws, filters, () => bump(0)), [ws, fkey]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [cancelling, setCancelling] = useState(false);
  const scroller = useRef<HTMLDivElement>(null);
  const peek = query.get('peek');

  useEffect(() => {
    setSelected(new Set());
    void list.more();
    return () => list.dispose();
  }, [list]);
  usePoll(() => void list.refresh(), LIVE_MS);

  const items = list.items;
  const v = useVirtual({
    count: items.length + (list.done ? 0 : 1),
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    overscan: 12,
  });
  const virtual = v.getVirtualItems();
  const last = virtual[virtual.length - 1];
  useEffect(() => {
    if (last && last.index >= items.length - 40 && !list.done && !list.loading && !list.error) void list.more();
  }, [last?.index, items.length, list.loading]);

  const toggle = (id: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  const onKey = (e: KeyboardEvent) => {
    const t = e.target as HTMLElement;
    if (t.matches('input, select, textarea')) return;
    const row = t.closest('[role=row][data-index]');
    const i = row ? Number(row.getAttribute('data-index')) : -1;
    const focusRow = (n: number) => {
      if (n < 0 || n >= items.length) return;
      v.scrollToIndex(n, { align: 'auto' });
      requestAnimationFrame(() => scroller.current?.querySelector<HTMLElement>(`[role=row][data-index="${n}"] a.run-link`)?.focus());
    };
    if (e.key === 'j' || e.key === 'ArrowDown') {
      e.preventDefault();
      focusRow(i + 1);
    } else if (e.key === 'k' || e.key === 'ArrowUp') {
      e.preventDefault();
      focusRow(Math.max(0, i - 1));
    } else if (e.key === 'x' && i >= 0) {
      e.preventDefault();
      toggle(items[i]!.id);
    } else if (e.key === 'Home') {
      e.preventDefault();
      focusRow(0);
    }
  };

  useEffect(() => {
    const onSlash = (e: KeyboardEvent) => {
      if (e.key !== '/' || (e.target as HTMLElement).matches('input, textarea, select')) return;
      e.preventDefault();
      document.getElementById('runs-filter-name')?.focus();
    };
    document.addEventListener('keydown', onSlash);
    return () => document.removeEventListener('keydown', onSlash);
  }, []);

  const selectedRuns = items.filter((r) => selected.has(r.id));
  const cancellable = selectedRuns.filter((r) => !isTerminal(r.state));
  const peekRun = peek ? items[list.index.get(peek) ?? -1] : undefined;
  const top = virtual[0]?.start ?? 0;

  return (
    <div class="page runs-page">
      <div class="page-head">
        <h1>Runs</h1>
        <div class="actions">
          <a class="button" href={href(`/w/${ws}/submit`)}>
            Submit a run
          </a>
          <button type="button" disabled={selected.size < 2 || selected.size > 10} onClick={() => navigate(href(`/w/${ws}/compare`, { runs: [...selected].join(',') }))}>
            Compare {selected.size >= 2 ? selected.size : ''}
          </button>
          <button type="button" class="danger" disabled={!cancellable.length} onClick={() => setCancelling(true)}>
            Cancel {cancellable.length ? cancellable.length : ''} selected
          </button>
        </div>
      </div>
      <FilterBar f={filters} />
      <ProblemView error={list.error} />
      <p class="muted small" role="status" aria-live="polite">
        {list.loading && !items.length ? 'Loading runs…' : `${items.length}${list.done ? '' : '+'} runs${list.done ? '' : ' (more load as you scroll)'}`}
        {selected.size ? ` · ${selected.size} selected` : ''}
      </p>
      <div class="scroller" ref={scroller} onKeyDown={onKey} tabIndex={-1}>
        {/* A table by ARIA roles: rows are slots in a window moved by one
            transform, so scrolling updates text in place instead of
            creating and removing rows (and no table layout runs). */}
        <div role="table" aria-label="Runs" aria-rowcount={list.done ? items.length + 1 : -1} class="vtable runs">
          <div role="rowgroup" class="vhead">
            <div role="row" aria-rowindex={1} class="vrow">
              <div role="columnheader" class="sel">
                <span class="sr-only">Select</span>
              </div>
              <div role="columnheader">Name</div>
              <div role="columnheader">State</div>
              <div role="columnheader">Reason</div>
              <div role="columnheader">Owner</div>
              <div role="columnheader">Engine</div>
              <div role="columnheader">Attempt</div>
              <div role="columnheader">Created</div>
              <div role="columnheader">Duration</div>
              <div role="columnheader">
                <span class="sr-only">Quick look</span>
              </div>
            </div>
          </div>
          <div role="rowgroup" class="vbody" style={{ height: `${v.getTotalSize()}px` }}>
            <div class="vwindow" style={{ transform: `translateY(${top}px)` }}>
              {virtual.map((vi, slot) => {
                const r = items[vi.index];
                if (!r)
                  return (
                    <div role="row" key={slot} data-index={vi.index} class="vrow">
                      <div role="cell" class="muted more">
                        {list.error ? 'Could not load more runs.' : 'Loading more runs…'}
                      </div>
                    </div>
                  );
                return (
                  <div role="row" key={slot} data-index={vi.index} aria-rowindex={vi.index + 2} aria-selected={selected.has(r.id)} class={selected.has(r.id) ? 'vrow selected' : 'vrow'}>
                    <div role="cell" class="sel">
                      <input type="checkbox" checked={selected.has(r.id)} onChange={() => toggle(r.id)} aria-label={`Select ${r.name}`} />
                    </div>
                    <div role="cell">
                      <a class="run-link" href={href(`/runs/${r.id}`)}>
                        {r.name}
                      </a>
                    </div>
                    <div role="cell">
                      <StateBadge state={r.state} />
                    </div>
                    <div role="cell" title={r.message ?? undefined}>
                      {r.reason ?? ''}
                    </div>
                    <div role="cell">{r.owner}</div>
                    <div role="cell">{r.engine}</div>
                    <div role="cell">{r.attempt}</div>
                    <div role="cell">
                      <Time at={r.created_at} />
                    </div>
                    <div role="cell">{duration(r)}</div>
                    <div role="cell">
                      <button type="button" class="small" aria-label={`Peek at ${r.name}`} onClick={() => setQuery({ peek: r.id })}>
                        Peek
                      </button>
                    </div>
                  </div>
                );
              })}
            </div>
          </div>
        </div>
        {list.done && !items.length ? <p class="muted empty">No runs match these filters.</p> : null}
      </div>
      {!items.length && list.loading ? <Loading what="runs" /> : null}
      {cancelling ? (
        <BulkCancel
          runs={cancellable}
          onClose={(done) => {
            setCancelling(false);
            if (done) {
              setSelected(new Set());
              void list.refresh();
            }
          }}
        />
      ) : null}
      {peek ? (
        <Dialog open drawer title={peekRun ? peekRun.name : 'Run'} onClose={() => setQuery({ peek: null })}>
          <RunSummary id={peek} />
          <p>
            <a href={href(`/runs/${peek}`)}>Open the full page</a>
          </p>
        </Dialog>
      ) : null}
    </div>
  );
}
