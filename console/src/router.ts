// A small router over the History API. The URL is the state: the path picks
// the page, the query holds filters, tabs and options, so every view is a
// link that can be shared or reloaded.
import { signal, computed } from '@preact/signals';

export const BASE = '/ui';

interface Loc {
  path: string; // below BASE, always starting with '/'
  query: URLSearchParams;
}

function read(): Loc {
  let p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  if (!p.startsWith('/')) p = '/' + p;
  return { path: p, query: new URLSearchParams(location.search) };
}

export const loc = signal<Loc>(read());
export const path = computed(() => loc.value.path);

export function href(p: string, query?: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return BASE + p + (s ? '?' + s : '');
}

export function navigate(url: string, opts: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  loc.value = read();
}

/** Change query parameters of the current view (null removes one). */
export function setQuery(changes: Record<string, string | null>, opts: { replace?: boolean } = { replace: true }): void {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  navigate(location.pathname + (s ? '?' + s : ''), opts);
}

/** Match `pattern` ("/w/:ws/runs") against a path; the parameters, or null. */
export function match(pattern: string, p: string): Record<string, string> | null {
  const a = pattern.split('/').filter(Boolean);
  const b = p.split('/').filter(Boolean);
  if (a.length !== b.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const seg = a[i]!;
    const val = b[i]!;
    if (seg.startsWith(':')) out[seg.slice(1)] = decodeURIComponent(val);
    else if (seg !== val) return null;
  }
  return out;
}

export function startRouter(): void {
  addEventListener('popstate', () => {
    loc.value = read();
  });
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(BASE)) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}
