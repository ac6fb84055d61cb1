// @tanstack/virtual-core bound to Preact: only the rows in view (plus a few)
// are in the DOM, whatever the list's length.
import { useEffect, useLayoutEffect, useReducer, useState } from 'preact/hooks';
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect, type VirtualizerOptions } from '@tanstack/virtual-core';

type Opts = Pick<VirtualizerOptions<HTMLElement, HTMLElement>, 'count' | 'estimateSize' | 'overscan' | 'getScrollElement'>;

export function useVirtual(opts: Opts): Virtualizer<HTMLElement, HTMLElement> {
  const [, rerender] = useReducer((x: number) => x + 1, 0);
  const full: VirtualizerOptions<HTMLElement, HTMLElement> = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...opts,
    onChange: () => rerender(0),
  };
  const [v] = useState(() => new Virtualizer<HTMLElement, HTMLElement>(full));
  v.setOptions(full);
  useEffect(() => v._didMount(), [v]);
  useLayoutEffect(() => v._willUpdate());
  return v;
}
