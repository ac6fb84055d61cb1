// A page or widget loaded on first use, in its own chunk (charts, admin pages).
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Loading } from './common';

export function lazy<P extends object>(load: () => Promise<FunctionComponent<P>>, what: string): FunctionComponent<P> {
  let cached: FunctionComponent<P> | null = null;
  return function Lazy(props: P) {
    const [C, setC] = useState<FunctionComponent<P> | null>(() => cached);
    const [err, setErr] = useState<string | null>(null);
    useEffect(() => {
      if (C) return;
      load()
        .then((c) => {
          cached = c;
          setC(() => c);
        })
        .catch((e: unknown) => setErr(String(e)));
    }, []);
    if (err) return <p role="alert">Could not load {what}: {err}</p>;
    return C ? <C {...props} /> : <Loading what={what} />;
  };
}
