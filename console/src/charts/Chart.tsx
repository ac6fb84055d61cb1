// A uPlot line chart (its own lazy chunk: list pages never load it):
// several series on a shared x axis, vertical marks (attempt boundaries),
// and markers for non-finite points. The canvas is created once and fed
// new data, so zoom survives updates.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  xs: number[];
  ys: (number | null)[];
}

export interface ChartProps {
  title: string;
  xLabel: string;
  series: ChartSeries[];
  /** x positions of vertical marks, with a label each (attempt starts). */
  marks?: { x: number; label: string }[];
  /** x positions of non-finite points, drawn as red ticks at the top. */
  nonFinite?: number[];
}

const COLORS = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626', '#4b5563', '#9333ea'];

/** One x column for every series; `extraXs` (marks, non-finite points) widen the axis to show them. */
function align(series: ChartSeries[], extraXs: number[] = []): uPlot.AlignedData {
  const xs = [...new Set([...series.flatMap((s) => s.xs), ...extraXs])].sort((a, b) => a - b);
  const pos = new Map(xs.map((x, i) => [x, i]));
  const cols = series.map((s) => {
    const col: (number | null)[] = new Array(xs.length).fill(null);
    s.xs.forEach((x, i) => (col[pos.get(x)!] = s.ys[i] ?? null));
    return col;
  });
  return [xs, ...cols] as uPlot.AlignedData;
}

function extras(p: ChartProps): number[] {
  return [...(p.marks ?? []).map((m) => m.x), ...(p.nonFinite ?? [])];
}

export function Chart(props: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const propsRef = useRef(props);
  propsRef.current = props;
  const shape = props.series.map((s) => s.label).join('\u0000');

  useEffect(() => {
    const el = host.current!;
    const dark = document.documentElement.dataset['theme'] === 'dark';
    const axisStroke = dark ? '#d1d5db' : '#374151';
    const grid = { stroke: dark ? '#374151' : '#e5e7eb' };
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth),
      height: 260,
      title: props.title,
      scales: { x: { time: false } },
      axes: [
        { label: props.xLabel, stroke: axisStroke, grid },
        { stroke: axisStroke, grid },
      ],
      series: [{ label: props.xLabel }, ...props.series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length]!, width: 1.5, spanGaps: true }))],
      hooks: {
        draw: [
          (u: uPlot) => {
            const { ctx } = u;
            const { top, height } = u.bbox;
            ctx.save();
            ctx.lineWidth = 1;
            ctx.setLineDash([4, 4]);
            ctx.strokeStyle = dark ? '#9ca3af' : '#6b7280';
            ctx.fillStyle = ctx.strokeStyle;
            ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
            for (const m of propsRef.current.marks ?? []) {
              const x = Math.round(u.valToPos(m.x, 'x', true));
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + height);
              ctx.stroke();
              ctx.fillText(m.label, x + 3, top + 12 * devicePixelRatio);
            }
            ctx.setLineDash([]);
            ctx.strokeStyle = '#dc2626';
            ctx.lineWidth = 2;
            for (const x0 of propsRef.current.nonFinite ?? []) {
              const x = Math.round(u.valToPos(x0, 'x', true));
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + 8 * devicePixelRatio);
              ctx.stroke();
            }
            ctx.restore();
          },
        ],
      },
    };
    const u = new uPlot(opts, align(props.series, extras(props)), el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(320, el.clientWidth), height: 260 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(align(props.series, extras(props)), false);
    plot.current?.redraw(false, true);
  }, [props.series]);

  return <div ref={host} class="chart" role="img" aria-label={`${props.title}: chart of ${props.series.map((s) => s.label).join(', ')}; the table below has the numbers`} />;
}

export default Chart;
