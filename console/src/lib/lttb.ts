// Largest-Triangle-Three-Buckets: keep a series' shape in `threshold`
// points. Non-finite points (null) are kept apart by the caller.
export function lttb(xs: number[], ys: number[], threshold: number): [number[], number[]] {
  const n = xs.length;
  if (threshold >= n || threshold < 3) return [xs, ys];
  const ox: number[] = [xs[0]!];
  const oy: number[] = [ys[0]!];
  const every = (n - 2) / (threshold - 2);
  let a = 0;
  for (let i = 0; i < threshold - 2; i++) {
    const start = Math.floor((i + 1) * every) + 1;
    const end = Math.min(Math.floor((i + 2) * every) + 1, n);
    let avgX = 0;
    let avgY = 0;
    for (let j = start; j < end; j++) {
      avgX += xs[j]!;
      avgY += ys[j]!;
    }
    const len = Math.max(1, end - start);
    avgX /= len;
    avgY /= len;
    const rs = Math.floor(i * every) + 1;
    const re = Math.floor((i + 1) * every) + 1;
    let best = rs;
    let bestArea = -1;
    for (let j = rs; j < re; j++) {
      const area = Math.abs((xs[a]! - avgX) * (ys[j]! - ys[a]!) - (xs[a]! - xs[j]!) * (avgY - ys[a]!));
      if (area > bestArea) {
        bestArea = area;
        best = j;
      }
    }
    ox.push(xs[best]!);
    oy.push(ys[best]!);
    a = best;
  }
  ox.push(xs[n - 1]!);
  oy.push(ys[n - 1]!);
  return [ox, oy];
}
