// Loading data for a view: abort on leave, optional polling that pauses
// while the tab is hidden and catches up once when it shows again.
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
import { ApiError } from '../api/problem';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): void;
}

export function useFetch<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  opts: { pollMs?: number } = {},
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;

  useEffect(() => {
    setData(undefined);
    setError(undefined);
  }, deps);

  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    fnRef
      .current(ctl.signal)
      .then((d) => {
        if (ctl.signal.aborted) return;
        setData(d);
        setError(undefined);
      })
      .catch((e: unknown) => {
        if (ctl.signal.aborted) return;
        if (e instanceof ApiError) setError(e);
        else if (!(e instanceof DOMException)) setError(new ApiError(0, { type: 'about:blank', title: 'Error', status: 0, detail: String(e), instance: '' }, ''));
      })
      .finally(() => {
        if (!ctl.signal.aborted) setLoading(false);
      });
    return () => ctl.abort();
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  usePoll(reload, opts.pollMs);
  return { data, error, loading, reload };
}

/** Call `fn` every `ms` while the page is visible; once more on becoming visible. */
export function usePoll(fn: () => void, ms: number | undefined): void {
  const fnRef = useRef(fn);
  fnRef.current = fn;
  useEffect(() => {
    if (!ms) return;
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      if (timer === undefined) timer = setInterval(() => fnRef.current(), ms);
    };
    const stop = () => {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    };
    const onVis = () => {
      if (document.hidden) stop();
      else {
        fnRef.current();
        start();
      }
    };
    if (!document.hidden) start();
    document.addEventListener('visibilitychange', onVis);
    return () => {
      stop();
      document.removeEventListener('visibilitychange', onVis);
    };
  }, [ms]);
}
